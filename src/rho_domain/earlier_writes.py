"""What earlier calls of a session wrote, as the approval policy and ``State`` share it.

``State.unreviewed_writes`` keeps the calls of ``WRITING_TOOLS`` that ran; a later bash line
that may run what they wrote asks (``shell.destructive_session``), with a reason that names
them by ``EARLIER_CALL`` and lists their files. A human who approves a call so asked about has
been told of the files the reason lists: ``State`` drops the calls that wrote only those
(``ApprovalRequested.reviews``, set by the loop, never read from the reason's text).
A ``delegate`` call's result names what its sub-agent's unreviewed calls wrote
(``child_written``): ``narrowed`` puts those files in the call's place.
"""

from __future__ import annotations

import json

from rho_domain.messages import ToolCall

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


def narrowed(unreviewed: list[ToolCall], call_id: str, written: object) -> list[ToolCall]:
    """``unreviewed`` with the delegate call ``call_id`` replaced by what its sub-agent
    wrote (``written``, its result's ``child_written``: paths, or ``destructive_session``'s
    markers of unknown files): one ``write`` call per file, none when it wrote nothing (a
    child that only read). Without that list (a trace older than it, a value that is not a
    list of texts) the call stays, counted as writing unknown files."""
    if not isinstance(written, list) or not all(isinstance(p, str) for p in written):
        return unreviewed
    # by its exact id: a synthetic id below may equal a real call's, which the model chose
    # (``after_writes`` reviews an id given twice only when both are told)
    kept = [c for c in unreviewed if c.id != call_id]
    # added even when the call is not there: a sub-agent that waited for approval ends its
    # delegate call twice, and what it wrote after the wait counts
    files = [
        ToolCall(id=f"{call_id}/{n}", name="write", arguments=json.dumps({"path": path}))
        for n, path in enumerate(written)
    ]
    return [*kept, *files]
