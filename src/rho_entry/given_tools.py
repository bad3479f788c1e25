"""The tools given to ``Agent(tools=[...])``, checked when the agent is built: each a tool
handler (not a name), readable, with a parameters schema a model API takes, each name once.

Each refusal is a ``TypeError`` (a value of the wrong kind) or a ``ConfigError`` naming the
tool, the member and what to fix; before, each failed later, deep in a run or at the
provider, naming no tool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rho_domain.tools.base import ToolHandler
    from rho_entry.seed_api.tools import ToolHandler as DocumentToolHandler


def check_tools(tools: Sequence[ToolHandler | DocumentToolHandler]) -> None:
    """Raise ``TypeError`` or ``ConfigError`` unless ``tools`` is a list of tool handlers
    whose members can be read, whose schemas a model API takes, each name given once."""
    _refuse_non_tools(tools)
    _refuse_twice_named(tools)


def _refuse_non_tools(tools: object) -> None:
    """Refuse a ``tools=`` that is not a list of tool handlers: a tool's name (``["bash"]``),
    a bare string, or one handler not in a list failed deep inside with
    ``AttributeError: 'str' object has no attribute 'name'``."""
    from rho_domain.tools.base import ToolHandler as DomainToolHandler
    from rho_entry.seed_api.tools import ToolHandler as DocumentToolHandler

    members = DomainToolHandler.__abstractmethods__
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise TypeError(
            f"Agent(tools=...): give a list of tool handlers (tools=[MyTool()]), not "
            f"{type(tools).__name__} {tools!r:.80}"
        )
    for tool in tools:
        if isinstance(tool, DocumentToolHandler) or all(_has(tool, m) for m in members):
            if _has(tool, "parameters"):  # a document handler's too, named when it raises
                _check_schema(tool)
            continue
        raise TypeError(
            f"Agent(tools=...): {type(tool).__name__} {tool!r:.60} is not a tool handler (a "
            "subclass of rho_entry.seed_api.tools.ToolHandler, or of "
            "rho_domain.tools.base.ToolHandler); the profile's own tools (bash, read...) "
            "come with AgentConfig(profile=...)"
        )


def _has(tool: object, member: str) -> bool:
    """True when ``tool`` has ``member``; one whose reading raised (a ``parameters`` property
    building the schema) is a ``ConfigError`` naming the tool and the member. Before, its
    exception came out of ``Agent(...)`` as it was, naming neither, and a ``SystemExit``
    raised there ended the process."""
    from rho_domain.errors import ConfigError
    from rho_domain.plugged import described

    try:
        getattr(tool, member)
    except AttributeError:
        return False
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit too: a tool's own bug, not the process's end
        raise ConfigError(
            f"Agent(tools=...): reading {type(tool).__name__}.{member} raised "
            f"{described(exc)}; the model is shown each tool's name, description "
            "and parameters, so they must be readable when the Agent is built"
        ) from exc
    return True


def _check_schema(tool: ToolHandler | DocumentToolHandler) -> None:
    """Refuse a tool whose ``parameters`` is not a JSON object schema the model can be sent:
    a value JSON cannot hold (a set, a class) ended every run at its first model call with
    "TypeError: Object of type set is not JSON serializable", naming no tool; a known
    keyword's wrong value (``"type": "strin"``, ``"required": "x"``) passed, and a model API
    refused every request carrying it (``schema_kinds.misfit``, as for an MCP tool)."""
    import json

    from rho_domain.errors import ConfigError
    from rho_domain.schema_kinds import misfit

    parameters: object = tool.parameters  # typed a Mapping; a caller's code returns anything
    where = f"Agent(tools=...): {type(tool).__name__}.parameters (tool {tool.name!r})"
    try:
        json.dumps(parameters, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        problem: str | None = f"not JSON: {exc}"
    else:
        problem = None
    if not isinstance(parameters, Mapping) or problem is not None:
        raise ConfigError(
            f"{where} is {problem or f'a {type(parameters).__name__}'}; give a JSON Schema "
            "object of dicts, lists, strings, numbers, true, false and null"
        )
    if parameters.get("type", "object") != "object":  # the arguments are always an object
        problem = f'has type {parameters["type"]!r} at its top, not "object"'
    if problem := problem or misfit(parameters):
        raise ConfigError(f"{where}: {problem}")


def _refuse_twice_named(tools: Sequence[ToolHandler | DocumentToolHandler]) -> None:
    """Refuse two of ``tools=`` with one name: the registry keeps a name once, so the
    earlier was silently dropped and the model saw only the later. One replacing a built-in
    tool is meant (an embedder's own ``read``)."""
    from rho_domain.errors import ConfigError

    seen: dict[str, ToolHandler | DocumentToolHandler] = {}
    for handler in tools:
        first = seen.setdefault(handler.name, handler)
        if first is not handler:
            raise ConfigError(
                f"Agent(tools=...): two tools are named {handler.name!r} "
                f"({type(first).__name__} and {type(handler).__name__}); the model calls a "
                "tool by its name, so each name may be given once: rename one"
            )
