"""What earlier calls of a session wrote, as the approval policy and ``State`` share it.

``State.unreviewed_writes`` keeps the calls of ``WRITING_TOOLS`` that ran; a later bash line
that may run what they wrote asks (``shell.destructive_session``), with a reason that names
them by ``EARLIER_CALL`` and lists their files. A human who approves a call so asked about has
been told of the files the reason lists: ``State`` drops the calls that wrote only those
(``ApprovalRequested.reviews``, set by the loop, never read from the reason's text).
"""

from __future__ import annotations

WRITING_TOOLS = frozenset(["write", "edit", "bash"])
"""The tools whose calls show the files they write (a path, a command line)."""

READING_TOOLS = frozenset(
    ["read", "grep", "glob", "list", "read_excel", "sqlite", "postgres", "mysql", "oracle",
     "vertica"]
)  # fmt: skip
"""The agent's own tools that write no file: the readers, and the database tools (a
statement that writes a file, INTO OUTFILE, asks at every call). Every other tool's calls
that ran are kept: ``delegate`` (its sub-agent's writes), an MCP server's tool, a tool the
library was given, none of which shows what it wrote; ``shell.destructive_session`` counts
them as writing unknown files, and the loop leaves out those its tool now calls read-only."""


def may_write(tool: str) -> bool:
    """True when a call of ``tool`` that ran may have written files a later line runs."""
    return tool not in READING_TOOLS


EARLIER_CALL = "an earlier call of this session"
"""How a reason to ask names what earlier calls wrote."""
