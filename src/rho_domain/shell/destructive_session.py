"""Files earlier calls of a session wrote, run by a later bash call: the destructive-command
check (``shell.destructive``) across calls.

Within one line, a file the line writes and a later command then runs asks
(``shell.destructive_written``): ``echo x > Makefile; make``. Split over two calls (a
``write`` of ``Makefile``, then ``make``; ``curl -o s.sh URL``, then ``sh s.sh``; a ``write``
of ``.envrc``, then ``direnv allow``), each call alone wrote or ran nothing of the other's, so
both ran unasked after "always". The session knows what it wrote: ``session_writes`` reads it
from the calls that ran (the ``write`` and ``edit`` tools' ``path``, what an unrestricted bash
line writes as the check reads it), and ``session_reason`` judges a bash line as if it had
written those files first, with the same rule: every later program but those that only read,
move or print data asks, unless all that was written is plain output (``notes.md``,
``build.log``). A bash line the check stopped early on (it asked, or could not be read) may
have written anything: it counts as writing unknown files. The reason names the files (up to
``_TOLD``); once a human approves the call, the earlier calls whose every file it named are
reviewed (``State`` drops them from ``unreviewed_writes``; the others still ask).

Contract: ``after_writes(call, earlier) -> (str, ids)``, the reason a bash call asks (or
""), naming the files earlier calls wrote, and the ids of the calls it names every file of;
``session_writes(calls) -> frozenset[str]``; ``session_reason(command, written,
working_dir) -> str``.
"""

from __future__ import annotations

import functools
import json
import posixpath
from collections.abc import Iterable, Sequence, Set

from rho_domain.earlier_writes import WRITING_TOOLS, may_write
from rho_domain.messages import ToolCall
from rho_domain.shell.destructive_ledger import WrittenFiles
from rho_domain.shell.destructive_walk import LineCheck

UNKNOWN = "the files of a line that asked (read up to its first reason)"
_TOLD = 12  # the files a reason names: an approval reviews the calls that wrote only those


def after_writes(call: ToolCall, earlier: Sequence[ToolCall]) -> tuple[str, tuple[str, ...]]:
    """Why the bash ``call`` asks because it may run what the ``earlier`` calls (that ran)
    wrote, or "", and the ids of the earlier calls whose every file the reason names: an
    approval reviews those, and only those (a question about ``a.sh`` is not one about the
    ``Makefile`` another call wrote)."""
    arguments = _arguments(call.arguments)
    command = arguments.get("command")
    if not isinstance(command, str):
        return "", ()
    here = str(arguments.get("working_dir") or ".")
    writes = [(c.id, _call_writes(c.name, c.arguments)) for c in earlier if may_write(c.name)]
    written = frozenset(p for _, paths in writes for p in paths)
    reason = session_reason(command, written, here)
    if not reason:
        return "", ()
    files = sorted(written)
    told = frozenset(files[:_TOLD])
    more = f" and {len(files) - _TOLD} more" if len(files) > _TOLD else ""
    reason = f"{reason} (the session's earlier calls wrote {', '.join(files[:_TOLD])}{more})"
    untold = {i for i, paths in writes if not paths <= told}  # an id given twice: both told
    return reason, tuple(dict.fromkeys(i for i, _ in writes if i not in untold))


def session_writes(calls: Iterable[ToolCall]) -> frozenset[str]:
    """The paths ``calls`` (calls that ran) wrote, each relative to the workspace (a bash
    call's joined with its ``working_dir``) or absolute."""
    written: set[str] = set()
    for call in calls:
        if may_write(call.name):
            written.update(_call_writes(call.name, call.arguments))
    return frozenset(written)


@functools.lru_cache(maxsize=1024)
def _call_writes(name: str, text: str) -> frozenset[str]:
    """What one call wrote (remembered: each later bash line reads every earlier call); a
    tool's that shows no path or command line (a sub-agent's, an MCP server's): unknown."""
    if name not in WRITING_TOOLS:
        return frozenset([f"the files a {name} call wrote (which the check cannot see)"])
    arguments = _arguments(text)
    if name in ("write", "edit") and isinstance(path := arguments.get("path"), str):
        return frozenset([posixpath.normpath(path)] if path else [])
    command = arguments.get("command")
    if name != "bash" or not isinstance(command, str):
        return frozenset()
    here = str(arguments.get("working_dir") or ".")
    check = LineCheck()
    unread = [UNKNOWN] if check.line(command, 0, "") else []  # stopped at its first reason
    written = (posixpath.normpath(posixpath.join(here, p)) for p in check.files.line if p)
    return frozenset([*unread, *written])


def session_reason(command: str, written: Set[str], working_dir: str = ".") -> str:
    """Why ``command`` (run in ``working_dir``, relative to the workspace) asks because it
    may run what earlier calls wrote, or "" (its own reasons are ``destructive_reason``'s)."""
    if not written:
        return ""
    here = posixpath.normpath(working_dir or ".")
    seen = frozenset(_from(here, path) for path in written)
    return LineCheck(files=WrittenFiles(session=seen)).line(command, 0, "")


def _from(here: str, path: str) -> str:
    """``path`` (relative to the workspace) as a command in ``here`` names it."""
    if path.startswith("/") or path == UNKNOWN or here == ".":
        return path
    return posixpath.relpath(path, here)


def _arguments(text: str) -> dict[str, object]:
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return decoded if isinstance(decoded, dict) else {}
