"""Session listings for ``--list``, ``/sessions`` and ``/resume``."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from rho_domain.ports.store import SessionInfo
from rho_entry.cli.session_json import placement_line
from rho_entry.cli.terminal_text import visible

UNREAD = "? ("
"""How a store's listing labels the profile of a session whose config.yaml it cannot read
(``? (StoredConfigInvalid)``: rho_adapters.store.files)."""
HEADER = f"{'ID':<14} {'STATUS':<18} {'ACTIVE':>8}  {'MODEL':<18} {'PROFILE':<10} FIRST PROMPT"


def format_sessions(infos: Sequence[SessionInfo], *, now: float | None = None) -> list[str]:
    """A header, then one line per session, newest first: id, status (or liveness while a
    process drives it), when it was last active, model in use, profile, first prompt. A
    profile that is not exactly the built-in of its name is marked ``*`` and followed by a
    line saying what it grants. No sessions: no lines."""
    current = time.time() if now is None else now  # display only
    lines = [HEADER] if infos else []
    for info in infos:
        prompt = visible(" ".join(info.first_prompt.split()), newlines=False)
        if len(prompt) > 60:
            prompt = prompt[:59] + "…"
        active = _ago(current - info.updated_at)
        name, marked, grants = info.profile.partition("*")
        shown = name[:9] + "*" if marked else name[:10]
        unread = name.startswith(UNREAD)  # the file store's label of an unreadable config.yaml
        if unread:
            shown = "?"
        # Every field comes from a session directory (a stored config names the model and
        # the profile): escaped like the prompt.
        lines.append(
            visible(
                f"{info.id:<14} {info.liveness[:18]:<18} {active:>8}  "
                f"{info.model[:18]:<18} {shown:<10} {prompt}",
                newlines=False,
            )
        )
        if unread:  # the column showed '? (StoredC', the error's name cut, and nothing more
            why = name.removeprefix(UNREAD).rstrip(")")
            lines.append(
                visible(
                    f"{'':<14} └ profile unknown: its config.yaml cannot be read ({why}); "
                    f"`rho-agent export {info.id}` says why and what to fix",
                    newlines=False,
                )
            )
        elif marked:  # not a built-in profile: say what it grants, whatever its name
            grant = f"{'':<14} └ profile {name}: {grants.strip().strip('()')}"
            lines.append(visible(grant, newlines=False))
        if (where := placement_line(info)) is not None:
            lines.append(visible(where, newlines=False))
    return lines


def _ago(seconds: float) -> str:
    return f"{_age(seconds)} ago" if seconds >= 1 else "now"


def _age(seconds: float) -> str:
    seconds = max(seconds, 0)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def print_sessions(infos: Sequence[SessionInfo], *, as_json: bool) -> None:
    """``--list``'s output on stdout: ``format_sessions``'s lines (``no saved sessions``
    when there are none), or with ``as_json`` the objects ``monitor ps --json`` prints."""
    if as_json:
        import json

        from rho_entry.cli.session_json import info_dict

        now = time.time()
        sys.stdout.write(json.dumps([info_dict(i, now) for i in infos], indent=2) + "\n")
        return
    lines = format_sessions(infos)
    if not lines:
        sys.stdout.write("no saved sessions\n")
    for line in lines:
        sys.stdout.write(line + "\n")
