"""An MCP call's full output is saved inside the session directory, never through a link.

A capped call's whole output went to ``<session>/mcp-output/<server>__<tool>__<call>.txt``
with ``mkdir`` and ``write_text``, both following links: a session directory written by
someone else, with ``mcp-output`` linked to a directory of the user's (or the file's name
linked to ``~/.bashrc``), had the server's output written there. The store opens every other
session file without following a link (``store/confined.py``); the saved output now goes the
same way, and a refused save leaves the call's answer cut, saying the file was not written.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp_support import reference

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import MemoryExecutor
from rho_adapters.mcp import McpToolSource
from rho_domain.permissions import readonly_profile
from rho_domain.tools.base import ToolContext

ENV = {"PATH": "/usr/bin:/bin"}


def _context() -> ToolContext:
    return ToolContext(
        session_id="s1",
        call_id="call-1",
        executor=MemoryExecutor(),
        profile=readonly_profile(),
        clock=SystemClock(),
    )


async def _call_capped(session: Path) -> str:
    tools = McpToolSource(
        {"web": reference()},
        environ=ENV,
        output_limit=2_000,
        output_dir=lambda session_id: session / "mcp-output",
    )
    try:
        await tools.current()
        output = await tools.call("web", "echo", {"text": "x" * 5_000}, _context())
    finally:
        await tools.aclose()
    return output.content


async def test_a_linked_output_directory_is_not_written_through(tmp_path: Path) -> None:
    session, elsewhere = tmp_path / "session", tmp_path / "elsewhere"
    session.mkdir()
    elsewhere.mkdir()
    (session / "mcp-output").symlink_to(elsewhere)
    content = await _call_capped(session)
    assert os.listdir(elsewhere) == []  # the output was written there before
    assert "[output cut to 2000 of 5006 characters" in content
    assert "could not be saved" in content


async def test_a_linked_output_file_is_not_written_through(tmp_path: Path) -> None:
    session, target = tmp_path / "session", tmp_path / "bashrc"
    (session / "mcp-output").mkdir(parents=True)
    target.write_text("# the user's file\n")
    (session / "mcp-output" / "web__echo__call-1.txt").symlink_to(target)
    content = await _call_capped(session)
    assert target.read_text() == "# the user's file\n"  # overwritten before
    assert "could not be saved" in content


async def test_the_full_output_is_saved_in_the_session(tmp_path: Path) -> None:
    session = tmp_path / "session"
    session.mkdir()
    content = await _call_capped(session)
    saved = session / "mcp-output" / "web__echo__call-1.txt"
    assert saved.read_text() == "echo: " + "x" * 5_000
    assert f"the full output is saved in {saved}" in content
