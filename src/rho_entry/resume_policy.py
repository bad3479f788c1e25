"""Resuming a stored session: the session directory proposes, the user resuming it decides.

A session directory is data: whoever can write it (a shared or copied directory, a session
given as ``--resume ./path``, a server's store) writes its ``config.yaml``. So nothing in it
grants authority on resume (CLI ``--resume`` and ``fork``, ``Session.resume``, the runtime and
the server all come through ``authorise``):

- **Profile.** A stored profile is compared by what it grants (``profile_grants``), never by
  its name: it must be within one of the profiles the resumer allows now (the CLI: the profile
  it runs with, readonly by default; a server: its allowed profiles). One that grants more is
  refused, saying how to allow it. A profile the resumer gives now replaces the stored one.
- **Endpoint.** ``base_url``, ``provider`` and ``api_key_env`` decide where an API key (and the
  conversation, with every file a tool read) is sent. They come from the resumer's
  configuration now; a stored value that differs is refused unless given again. Without a
  provider or base URL the model's name chooses the provider (``claude-...``: Anthropic): a
  stored ``model`` whose name would send the conversation to another provider than the
  resumer's own model goes to is refused unless given again.
- **Databases.** A stored alias list names hosts and the variables their passwords are read
  from: it must equal the resumer's, or be given again.
- **Backend.** A stored ``backend`` (local or daytona) is where the tools run and whose
  account pays for it: it must be the resumer's, or be given again. A session stored as
  ``daytona`` is not run on this machine, nor one stored as ``local`` by a resumer whose
  tools run in a sandbox.
- **Workspace.** A stored ``working_dir`` is where every tool reads and writes: on the local
  machine (the backend the session runs with now, not the one it was stored with) it must be
  the resumer's workspace or inside it (the CLI: the directory it runs in, or
  ``--working-dir``), or be given again; ``working_dir: /`` would open the whole machine to
  the tools.
- **Hooks.** A stored ``hooks`` names code to import and run (``module:function``): it is
  never imported from the directory. The resumer's hooks apply (its configuration, or given
  again); a stored session naming hooks the resumer does not give is refused, so a
  redaction hook is not silently dropped either.
- **System prompt.** A stored ``system_prompt`` naming a template file (``x.md``) is a file
  the resumer would read and send to the model: it is read only when it is the resumer's own
  system prompt (the same file) or given again; ``system_prompt: ~/notes/keys.md``, or a link
  named ``.md`` to any file, would hand that file to whoever wrote the directory.
- **Budget.** A stored ``budget`` (or none) is held to the resumer's, limit by limit, the
  tighter winning: a directory with ``budget: {}`` does not spend past the cap the resumer
  runs with; a limit the resumer does not set keeps the stored one. ``max_turns`` and
  ``repeat_limit`` (how long a run goes, and how long it may repeat itself) likewise: the
  tighter of the stored and the resumer's (0: no limit); and ``tool_output_limit`` (how much
  of each tool result reaches the model), the smaller.
- **Auto-approval** is never inherited: it is on only when the resumer turns it on now; nor
  are the approvals the trace records (``State.forget_recorded_approvals``, applied by
  ``Session.resume``, and to a sub-agent continued from the store): a call approved but not
  run is asked again, "always" is forgotten.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from rho_domain.config import AgentConfig, HookConfig
from rho_domain.errors import ConfigError
from rho_domain.ports.store import SessionRecord
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.config.home import absolute, expanded
from rho_entry.resume_authority import ResumeAuthority, default_authority, resolve_profiles
from rho_entry.resume_endpoint import held_endpoint
from rho_entry.resume_hints import StoredWord
from rho_entry.resume_limits import DEADLINES, held_deadline, tighter_budget, tighter_count
from rho_entry.resume_profile import allowed_profile

# ResumeAuthority and its builders are imported from here by the CLI, the runtime, the server
# and users' code: re-exported.
__all__ = [
    "Authorised",
    "ResumeAuthority",
    "authorise",
    "default_authority",
    "resolve_profiles",
]


@attrs.frozen(kw_only=True)
class Authorised:
    """The config a resumed session runs with, and what the resumer should be told."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    config: AgentConfig
    notices: tuple[str, ...] = ()


def authorise(
    record: SessionRecord, authority: ResumeAuthority, *, config_dir: Path | None
) -> Authorised:
    """The config to resume ``record`` with under ``authority``.

    Raises ``ConfigError`` naming the session, what its directory asks for, and how to allow it
    (a profile granting more than allowed, a stored endpoint or database list that differs).
    Stored MCP servers are dropped (with a notice) unless ``given`` names them again.
    """
    stored = record.config
    given = dict(authority.given)
    notices: list[str] = []
    if not given.get("auto_approve") and stored.auto_approve:
        notices.append(
            f"session {record.id} was stored with auto-approval on; that is not inherited "
            "(pass -y to turn it on for this run)"
        )
    given.setdefault("auto_approve", False)
    _hold_limits(stored, authority, given)
    if "profile" not in given:
        given["profile"] = allowed_profile(record, authority, config_dir)
    if "backend" not in given:
        given["backend"] = _backend(record, authority)
    # a stored sandbox path is a local path once the session runs here: judged as one
    local = given["backend"] == "local"
    if authority.workspace is not None and "working_dir" not in given and local:
        _check_workspace(record, authority)
    given.update(held_endpoint(record, authority.endpoint, given, hint=authority.endpoint_hint))
    if authority.roots is not None and "working_dir" not in given and local:
        _check_working_dir(record, authority.roots)
    if "hooks" not in given:
        given["hooks"] = _hooks(record, authority)
    if "system_prompt" not in given:
        _check_system_prompt(record, authority)
    if authority.databases is not None and "databases" not in given:
        if dict(stored.databases) and dict(stored.databases) != dict(authority.databases):
            raise ConfigError(
                f"session {record.id} names databases ({', '.join(sorted(stored.databases))}) "
                "that differ from your database configuration now; a session directory does "
                "not choose where database passwords are sent: configure them again "
                "(the CLI: databases.yaml or --config; Session.resume: "
                "overrides={'databases': ...})"
            )
        given["databases"] = authority.databases
    if "mcp_servers" not in given:
        # a stored command line is data: it never starts a program on its own
        given["mcp_servers"] = {}
        if stored.mcp_servers:
            notices.append(
                f"session {record.id} was stored with MCP servers "
                f"({', '.join(sorted(stored.mcp_servers))}); a session directory does not "
                "choose which programs run, so they are not started (give them again: "
                "--mcp-config FILE, or overrides={'mcp_servers': ...})"
            )
    return Authorised(config=attrs.evolve(stored, **given), notices=tuple(notices))


def _hold_limits(stored: AgentConfig, authority: ResumeAuthority, given: dict[str, Any]) -> None:
    """Set in ``given`` the budget, ``max_turns``, ``repeat_limit``, ``tool_output_limit``
    and the deadlines held to the resumer's, each limit the tighter of the two."""
    if isinstance(given.get("budget"), Mapping):  # some limits given again: the others kept
        given["budget"] = attrs.evolve(stored.budget, **given["budget"])
    if authority.budget is not None and authority.budget.limits_anything:
        given["budget"] = tighter_budget(given.get("budget", stored.budget), authority.budget)
    for field in ("max_turns", "repeat_limit"):
        mine = getattr(authority, field)
        if mine is not None:
            given[field] = tighter_count(given.get(field, getattr(stored, field)), mine)
    if authority.tool_output_limit is not None:
        theirs = given.get("tool_output_limit", stored.tool_output_limit)
        given["tool_output_limit"] = min(theirs, authority.tool_output_limit)
    for field, mine in (authority.deadlines or {}).items():
        if field not in given:
            given[field] = held_deadline(getattr(stored, field), mine, DEADLINES[field])
    if authority.max_output_tokens is not None:  # a call's answer: the tighter cap (None: none)
        theirs = given.get("max_output_tokens", stored.max_output_tokens)
        given["max_output_tokens"] = min(
            theirs or authority.max_output_tokens, authority.max_output_tokens
        )
    for field, mine in (authority.held or {}).items():
        given.setdefault(field, mine)


def _backend(record: SessionRecord, authority: ResumeAuthority) -> str:
    """The stored backend when it is the resumer's (or the resumer does not say)."""
    stored = record.config.backend
    if authority.backend is None or stored == authority.backend:
        return stored
    raise ConfigError(
        f"session {record.id} was stored with backend {stored!r}; yours is "
        f"{authority.backend!r}. A session directory does not choose where the tools run "
        "(this machine or a sandbox, and whose account pays): "
        + authority.backend_hint.format(backend=stored)
    )


def _hooks(record: SessionRecord, authority: ResumeAuthority) -> HookConfig:
    """The resumer's hooks; refused when the stored session names references they lack."""
    stored, mine = record.config.hooks, authority.hooks
    known = {_dotted(ref) for ref in mine.references} | authority.hook_names
    missing = [ref for ref in stored.references if _dotted(ref) not in known]
    if missing:
        raise ConfigError(
            f"session {record.id} was stored with hooks {', '.join(missing)}; a session "
            "directory does not choose code to run, and resuming without them could skip a "
            f"check or a redaction: configure them again ({authority.hooks_hint})"
        )
    return mine


def _check_system_prompt(record: SessionRecord, authority: ResumeAuthority) -> None:
    """A stored template path is read only when it is the resumer's own (the same file)."""
    from rho_entry.config.system_prompt import template_path

    stored = template_path(record.config.system_prompt)
    if stored is None:
        return
    mine = template_path(authority.system_prompt)
    if mine is not None and _same_file(stored, mine):
        return
    raise ConfigError(
        f"session {record.id} was stored with the system prompt template {str(stored)!r}, a "
        "file that would be read and sent to the model; a session directory does not choose "
        "which files are read: " + authority.system_prompt_hint.format(path=StoredWord(stored))
    )


def _same_file(one: Path, other: Path) -> bool:
    try:
        return one.resolve() == other.resolve()
    except OSError:  # a link loop: no file to name
        return False


def _dotted(ref: str) -> str:
    """``pkg.mod:Class.fn`` as a function's ``module.qualname``: ``pkg.mod.Class.fn``."""
    return ref.replace(":", ".", 1)


def _check_working_dir(record: SessionRecord, roots: tuple[Path, ...]) -> None:
    """The stored working directory (symlinks followed) lies in one of ``roots``."""
    where = Path(absolute(record.config.working_dir or ".")).resolve()
    if not any(where == root or root in where.parents for root in roots):
        shown = ", ".join(str(r) for r in roots)
        raise ConfigError(
            f"session {record.id} works in {where}, outside the allowed directories ({shown}); "
            "a session directory does not choose where tools run"
        )


def _check_workspace(record: SessionRecord, authority: ResumeAuthority) -> None:
    """Refuse a stored ``working_dir`` outside the resumer's workspace (``..`` and links
    resolved; called when the session runs on the local machine)."""
    assert authority.workspace is not None
    stored = record.config.working_dir
    if stored is None:
        return
    mine = Path(authority.workspace).resolve()
    theirs = expanded(stored).resolve()
    if theirs == mine or mine in theirs.parents:
        return
    raise ConfigError(
        f"session {record.id} was stored with working_dir {stored!r}, outside your workspace "
        f"{str(mine)!r}; a session directory does not choose where the tools read and write: "
        + authority.workspace_hint.format(path=StoredWord(stored))
    )
