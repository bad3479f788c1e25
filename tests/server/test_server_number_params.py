"""Number parameters spelled with Unicode digits or too many digits are a 422 naming the
parameter, never an internal error: ``str.isdigit()`` is true for ``²`` (which ``int`` refuses)
and for 5,000 digits (past ``int``'s 4,300-digit limit), and both reached ``int()``."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_support import app_for, client_for, place
from test_server_stored_authority import craft

from rho_adapters.fakes import FunctionModel, text

BAD = ["\u00b2", "1\u00b3", "9" * 5000]


@pytest.mark.parametrize("raw", BAD, ids=["superscript", "mixed", "5000-digits"])
async def test_bad_numbers_are_422_naming_the_parameter(tmp_path: Path, raw: str) -> None:
    where = place(tmp_path)
    sid = craft(where)
    app = app_for(where, FunctionModel(lambda request: text("ok")), profiles=("readonly",))
    async with client_for(app) as client:
        listing = await client.get("/api/sessions", params={"limit": raw})
        after = await client.get(f"/api/sessions/{sid}/stream", params={"after": raw})
        header = await client.get(
            f"/api/sessions/{sid}/stream", headers={b"Last-Event-ID": raw.encode("latin-1")}
        )
    for answer, field in ((listing, "limit"), (after, "after"), (header, "Last-Event-ID")):
        assert answer.status_code == 422, (field, answer.status_code, answer.text[:200])
        assert answer.json()["error"]["field"] == field
