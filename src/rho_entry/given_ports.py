"""Ports a caller passes to ``Session(...)`` by keyword, checked before anything uses them.

A port given as something else (``model="gpt-5-mini"``, the model's name where its adapter
belongs; ``executor="/srv/app"``, a directory) was accepted, and every run then ended
``error`` on ``AttributeError: 'str' object has no attribute 'stream'``, or, for an executor,
every tool call failed while the run still "completed". ``refuse_non_ports`` checks each port
given against the members its Protocol declares (by name: an object of the caller's own
class that has them all is a port, whatever it subclasses) and names the keyword and what
belongs there.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

__all__ = ["refuse_non_ports"]

# keyword -> (its Protocol's module and name, where what the caller probably meant goes). The
# Protocol is imported only to judge an object of a caller's own class: the wiring's own
# adapters (rho_adapters, rho_entry) subclass their ports, and a one-shot, which gives only
# those, imports no port module it does not use (tests/cli/test_cli_oneshot_imports.py).
_PORTS: dict[str, tuple[str, str, str]] = {
    "model": ("model", "ChatModel", "the model's name goes in AgentConfig(model=...)"),
    "executor": ("executor", "Executor", "the workspace goes in AgentConfig(working_dir=...)"),
    "store": (
        "store",
        "SessionStore",
        "a store may also be given as a URL or a directory (a str)",
    ),
    "clock": ("clock", "Clock", "leave it out for the system clock"),
    "signals": ("signals", "SignalSource", "leave it out: a store's sessions carry their own"),
    "approver": (
        "approver",
        "Approver",
        "a function (tool_name, args) -> bool goes in approval_callback=",
    ),
    "tool_source": ("", "ToolSource", "MCP servers go in AgentConfig(mcp_servers=...)"),
}
_OURS = ("rho_adapters.", "rho_entry.")


def refuse_non_ports(given: Mapping[str, object]) -> None:
    """Raise ``TypeError`` for a port in ``given`` (keyword -> value; None: not given) that
    lacks a member of its Protocol, naming the keyword, the members missing and what
    belongs there; ``databases`` is a mapping of alias -> ``Database``."""
    for keyword, value in given.items():
        if value is None:
            continue
        if keyword == "databases":
            if not isinstance(value, Mapping):
                raise TypeError(
                    f"Session(databases=...): give a mapping of alias -> Database, not "
                    f"{type(value).__name__}; configured databases go in "
                    f"AgentConfig(databases=...)"
                )
            for alias, database in value.items():
                _check(
                    f"databases[{alias!r}]",
                    database,
                    ("database", "Database"),
                    "databases to open go in AgentConfig(databases=...)",
                )
            continue
        module, name, hint = _PORTS[keyword]
        _check(keyword, value, (module, name), hint)


def _protocol(module: str, name: str) -> type:
    where = f"rho_domain.ports.{module}" if module else "rho_domain.tools.source"
    protocol: type = getattr(importlib.import_module(where), name)
    return protocol


def _check(keyword: str, value: object, port: tuple[str, str], hint: str) -> None:
    if type(value).__module__.startswith(_OURS):
        return  # the wiring's own adapters subclass their ports
    protocol = _protocol(*port)
    members: frozenset[str] = getattr(protocol, "__abstractmethods__", frozenset())
    missing = sorted(name for name in members if not hasattr(value, name))
    if missing:
        article = "an" if protocol.__name__[0] in "AEIOU" else "a"
        raise TypeError(
            f"Session({keyword}=...): {type(value).__name__} {value!r:.60} is not {article} "
            f"{protocol.__name__} (it has no {', '.join(missing)}); {hint}"
        )
