"""DAYTONA_API_KEY is never quoted in an error, in any form a server may echo it back."""

from __future__ import annotations

import base64
import logging
import traceback
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from daytona_support import closing, make_rig

from rho_domain.errors import ExecutorError
from rho_domain.ports.executor import Command, Stage

KEY = "dtn_0123456789abcdef/+=0123"


async def test_the_key_is_hidden_encoded_and_in_the_cause_a_log_prints(tmp_path: Path) -> None:
    """A proxy's page quoting the key across the 300 characters an error keeps of it,
    URL-encoded, base64'd (a header echoed in a body), or
    a toolbox error in a stopped sandbox (the ``not_running`` error's ``__cause__``, which a
    logger's ``exc_info`` and a traceback print): each showed the key."""
    true = Command(pipeline=(Stage(argv=("true",)),))
    bodies = [
        "x" * 280 + KEY,  # the message is cut at 300 characters: the key's head was kept
        f"denied token={quote(KEY, safe='')}",
        f"denied token={quote_plus(KEY)}",
        "echo " + base64.b64encode(f"Authorization: Bearer {KEY}".encode()).decode(),
        "echo " + base64.b64encode(f"x{KEY}".encode()).decode(),
        "echo " + base64.urlsafe_b64encode(f"xy{KEY}".encode()).decode(),
    ]
    async for rig in closing(make_rig(tmp_path, api_key=KEY)):
        rig.fake.api_key = KEY
        await rig.executor.stat(".")
        for body in bodies:
            rig.fake.fail("POST", "/process/execute", 502, f"<html>{body}</html>")
            with pytest.raises(ExecutorError, match="502") as caught:
                await rig.executor.run(true)
            assert body not in str(caught.value), body
            assert KEY[:8] not in str(caught.value)
            assert "***" in str(caught.value)
        rig.fake.stop("sbx-1")
        rig.fake.fail("POST", "/process/execute", 502, f"<html>upstream sent {KEY}</html>")
        with pytest.raises(ExecutorError, match="is stopped") as caught:
            await rig.executor.run(true)
        printed = "".join(traceback.format_exception(caught.value))
        assert "upstream sent ***" in printed
        assert KEY not in printed
        rig.fake.stopped.clear()


async def test_a_lookup_answer_that_is_no_json_does_not_quote_the_key(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A resumed session's lookup answered 200 with a page that quoted the key: the error
    quoted the page's first 80 bytes, key included. The lookup of the sandbox its trace
    names raises; a label search (the trace names none) logs it and makes a new one."""
    for known in ("sbx-9", None):
        rig = make_rig(tmp_path, api_key=KEY, session_id="s1", reattach=True)
        rig.fake.api_key = KEY
        if known is not None:
            rig.executor.expect(known)
        rig.fake.fail("GET", f"/sandbox/{known}" if known else "/sandbox", 200, f"token {KEY}")
        with caplog.at_level(logging.WARNING, logger="rho_adapters.daytona.executor"):
            if known is not None:
                with pytest.raises(ExecutorError, match="no JSON") as caught:
                    await rig.executor.stat(".")
                assert KEY not in str(caught.value)
            else:
                await rig.executor.stat(".")
                assert "no JSON" in caplog.text
        assert KEY not in caplog.text
        await rig.executor.aclose()
