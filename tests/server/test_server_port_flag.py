"""``rho-agent serve --port`` takes a port from 0 to 65535. ``--port 70000`` served on 4464
(the socket layer keeps the low 16 bits) without a word, and ``--port -1`` was refused as
"--host 127.0.0.1: Servname not supported for ai_socktype", naming the wrong flag. Each is now
a usage error (exit 1) naming ``--port`` before anything is bound; ``serve``'s parser is asked
directly, so that a port it would take is never served by this test."""

from __future__ import annotations

import pytest

from rho_entry.server.serve import main


@pytest.mark.parametrize("port", ["70000", "65536", "-1", "1e3", "x"])
def test_a_port_out_of_range_is_a_usage_error_naming_the_flag(
    port: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RHO_AGENT_MODEL", "demo")
    monkeypatch.setattr("rho_entry.server.serve.listen", _never)  # fails the test, not hangs
    assert main([f"--port={port}"]) == 1
    err = capsys.readouterr().err
    assert (
        f"argument --port: expected a port from 0 to 65535 (0: any free one), got {port!r}" in err
    )


def _never(*_: object) -> object:
    raise AssertionError("serve went on to bind a port")
