"""MCP servers as configuration: one frozen value per server, and which servers a session starts.

A server is a local program (``command``, an argv list, with ``env`` and ``cwd``) spoken to
over its stdin and stdout, or an HTTP endpoint (``url`` with ``headers``) speaking MCP's
Streamable HTTP transport. Values of ``env`` and ``headers`` may name environment variables
(``${NAME}``); ``bearer_token_env`` names the variable holding a bearer token. They are
resolved by the adapter when the server starts, never stored resolved.

The model sees a server's tool ``search`` of server ``tickets`` as ``mcp__tickets__search``
(``tool_name``: always within the 64 characters model APIs take, a name cut there made unique
by a hash of the whole). A deny entry (``tools.deny``, a profile's ``denied_tools``) names a
tool in any spelling that folds to it (``denies``): the server, not the operator, chooses the
spelling. Every MCP tool is dangerous (asked about under the readonly and developer profiles) unless
its server's ``read_only_tools`` names it: the operator, not the server, vouches for it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from rho_domain.endpoint_url import check_endpoint_url
from rho_domain.errors import ConfigError, several_strings
from rho_domain.value_methods import value_eq, value_hash, value_repr

DEFAULT_STARTUP_TIMEOUT = 10.0  # seconds to start, initialize and list a server's tools
DEFAULT_CALL_TIMEOUT = 60.0  # seconds for one tools/call
PREFIX = "mcp__"
# patterns compiled by re (and kept in its cache) when first used, not at import: most
# configs name no MCP server
_SERVER_NAME = r"[A-Za-z0-9][A-Za-z0-9-]*(_[A-Za-z0-9-]+)*"
_UNSAFE = r"[^A-Za-z0-9_-]"
_MAX_NAME = 64  # the longest function name OpenAI-compatible servers accept
MAX_SERVER_NAME = 40  # characters: mcp__<server>__ leaves every tool 17 of the 64
_HASHED = 8  # hex digits of a hash that end a tool name cut to fit


def _seconds(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is None or not 0 < number < float("inf"):
        raise ConfigError(
            f"{attribute.name} must be a number of seconds, more than 0; got {value!r}"
        )


def _limit(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(
            f"{attribute.name} must be a whole number of characters > 0, not {value!r}"
        )


@attrs.frozen(kw_only=True)
class McpToolFilter:
    """Which of a server's tools the model sees: ``allow`` (None: all) minus ``deny``."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    allow: tuple[str, ...] | None = attrs.field(default=None, validator=several_strings)
    deny: tuple[str, ...] = attrs.field(default=(), validator=several_strings)

    def admits(self, server: str, tool: str) -> bool:
        """True when the model may see ``tool`` of ``server`` (its name as the server gives
        it): ``allow`` names it exactly, and no ``deny`` entry names it in any spelling
        (``denies``). Exact for ``allow``: a server that renames a tool only loses it."""
        return (self.allow is None or tool in self.allow) and not denies(self.deny, server, tool)


@attrs.frozen(kw_only=True)
class McpServerConfig:
    """One MCP server. Exactly one of ``command`` (stdio) or ``url`` (Streamable HTTP); a
    profile may also list a server with neither, which permits the agent config's server of
    that name (``servers_to_start``).

    ``env`` is the stdio server's whole environment beside ``PATH`` (the agent's own
    variables, API keys included, are not passed). ``cwd`` is the directory it starts in
    (None: a private empty one; a config file gives its own directory). ``output_limit``
    caps one call's result in characters (None: the agent's ``tool_output_limit``); the full
    result is saved beside the session's trace and its path given in the result.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    command: tuple[str, ...] = attrs.field(default=(), validator=several_strings)
    env: Mapping[str, str] = attrs.field(factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    bearer_token_env: str | None = None
    tools: McpToolFilter = McpToolFilter()
    read_only_tools: tuple[str, ...] = attrs.field(default=(), validator=several_strings)
    startup_timeout: float = attrs.field(default=DEFAULT_STARTUP_TIMEOUT, validator=_seconds)
    call_timeout: float = attrs.field(default=DEFAULT_CALL_TIMEOUT, validator=_seconds)
    output_limit: int | None = attrs.field(default=None, validator=_limit)

    @property
    def is_reference(self) -> bool:
        """True for an entry that only names a server (neither ``command`` nor ``url``)."""
        return not self.command and not self.url

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command else "http"

    def check(self, name: str, *, where: str = "mcp_servers") -> None:
        """Raise ConfigError naming ``where.name`` when the entry is not a usable server."""
        check_server_name(name, where=where)
        if self.command and self.url:
            raise ConfigError(f"{where}.{name}: give command (a local program) or url, not both")
        if self.is_reference:
            raise ConfigError(
                f"{where}.{name}: give command (an argv list, e.g. [python, server.py]) or "
                "url (an http:// or https:// endpoint)"
            )
        if self.url:  # a bad port or host: said now, not as httpx's traceback at first use
            check_endpoint_url(self.url, f"{where}.{name}.url:")


def check_servers(
    _: object, attribute: attrs.Attribute[Any], value: Mapping[str, McpServerConfig]
) -> None:
    """Validate an AgentConfig's ``mcp_servers``: each a usable server."""
    for name, server in value.items():
        server.check(name, where=attribute.name)


def check_named_servers(
    _: object, attribute: attrs.Attribute[Any], value: Mapping[str, McpServerConfig]
) -> None:
    """Validate a profile's ``mcp_servers``: each a usable server or a reference
    (neither command nor url) to the agent config's server of that name."""
    for name, server in value.items():
        if server.is_reference:
            check_server_name(name, where=attribute.name)
        else:
            server.check(name, where=attribute.name)


def check_server_name(name: str, *, where: str = "mcp_servers") -> None:
    """Raise ConfigError unless ``name`` can be part of a tool name (letters, digits, ``-``,
    single ``_``; no ``__``, which separates the server from the tool)."""
    if not re.fullmatch(_SERVER_NAME, name):
        raise ConfigError(
            f"{where}: server name {name!r} must be letters, digits, '-' and single '_' "
            "(it becomes part of the tool names mcp__<server>__<tool>)"
        )


def check_name_room(name: str, *, where: str = "mcp_servers") -> None:
    """Raise ConfigError when the server ``name`` leaves its tools no room: over
    ``MAX_SERVER_NAME`` characters. Checked for the servers a session starts
    (``servers_to_start``), not for every stored config: a session stored with a longer
    name, whose servers a resume never starts, still resumes."""
    if len(name) > MAX_SERVER_NAME:
        raise ConfigError(
            f"{where}: server name {name[:MAX_SERVER_NAME]!r}... is {len(name)} characters; "
            f"use at most {MAX_SERVER_NAME} (the tool names mcp__<server>__<tool> must fit "
            f"the {_MAX_NAME} characters model APIs take, with room for each tool's name)"
        )


def tool_name(server: str, tool: str) -> str:
    """The name the model calls ``tool`` of ``server`` by: ``mcp__<server>__<tool>``, with
    full-width letters and ligatures decomposed, accents dropped (``déjà`` → ``deja``), and
    the characters a model API still refuses replaced by ``_``. One longer than 64
    characters is cut to end in ``_`` and 8 hex digits of the SHA-256 of ``tool`` ``folded``:
    two long names alike in their first characters stay two (``MAX_SERVER_NAME`` leaves
    room), and every spelling of one name ends alike, whatever the cut kept of it, so a
    deny entry naming the cut name holds them all (``denies``)."""
    name = PREFIX + server + "__" + re.sub(_UNSAFE, "_", _decomposed(tool))
    if len(name) <= _MAX_NAME:
        return name
    return name[: _MAX_NAME - _HASHED - 1] + "_" + _digest(tool)


def _digest(tool: str) -> str:
    """The hash a cut model name ends in: of ``tool`` as deny entries compare it."""
    return hashlib.sha256(folded(tool).encode("utf-8", "surrogatepass")).hexdigest()[:_HASHED]


def _cut_hash(name: str) -> str | None:
    """The hash a model name ``name`` ends in when it is cut to fit (64 characters, ``_``
    and 8 hex digits last), else None. A server may choose a name of that shape: that only
    adds an entry that holds it (every other comparison still applies)."""
    if len(name) == _MAX_NAME and re.fullmatch(r"[0-9a-f]+", name[-_HASHED:]):
        return name[-_HASHED:] if name[-_HASHED - 1] == "_" else None
    return None


def _decomposed(name: str) -> str:
    """``name`` compatibility-decomposed, its combining marks (accents) dropped."""
    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))


def folded(name: str) -> str:
    """``name`` as deny entries compare it: compatibility-decomposed (full-width letters,
    ligatures, accents apart), casefolded, and only its letters and digits kept
    (``Delete_All``, ``delete-all``, ``delete.all ``, ``deleteAll`` → ``deleteall``)."""
    return "".join(c for c in _decomposed(name).casefold() if c.isalnum())


def denies(entries: Collection[str], server: str, tool: str) -> bool:
    """True when one of ``entries`` names ``tool`` of ``server`` in some spelling: the
    server's name for it or its model name (``mcp__<server>__<tool>``, the server named
    exactly), compared ``folded``. A hostile server chooses its tools' names: ``Delete_All``
    or ``delete.all`` (shown as ``mcp__s__delete_all``) must not pass ``deny: [delete_all]``.
    A letter of another script (a Cyrillic ``\u0435`` for ``e``, a Greek ``\u03bf`` for
    ``o``) is ``_`` in the model name, and a ``_`` or ``-`` there may stand for any one
    letter of the entry (``_blanked``): ``d\u0435lete_all`` is ``mcp__s__d_lete_all`` and
    denied, without a table of look-alikes to ship. A new name (``wipe_all``) still passes:
    ``allow``, exact, is the safe form."""
    if not entries:
        return False
    own = PREFIX + server + "__"
    model = tool_name(server, tool)
    shown = model[len(own) :]
    plain = re.sub(_UNSAFE, "_", _decomposed(tool)).casefold()  # shown, uncut
    wanted = {folded(tool), folded(shown)}
    # a cut name keeps only the hash of the rest: compared by it, whatever the cut kept
    identity = _cut_hash(model) or _digest(tool)
    for entry in entries:
        part = entry.removeprefix(own)
        name = folded(part)
        if name in wanted or _blanked(plain, name) or _blanked(shown.casefold(), name):
            return True
        if identity == (_cut_hash(tool_name(server, part)) or _digest(part)):
            return True
    return False


def _blanked(shown: str, name: str) -> bool:
    """True when ``shown`` (a model name's tool part, casefolded) is ``name`` (a folded deny
    entry) with letters blanked: each ``_`` or ``-`` of ``shown`` stands for one character of
    ``name`` or none, every other character for itself. Walked position by position (linear
    in each: a pattern of optional characters would backtrack exponentially on a name a
    server chose)."""
    reached = {0}
    for char in shown:
        if char in "_-":
            reached |= {at + 1 for at in reached if at < len(name)}
        else:
            reached = {at + 1 for at in reached if at < len(name) and name[at] == char}
        if not reached:
            return False
    return len(name) in reached


def denied_name(entries: Collection[str], name: str) -> bool:
    """True when ``entries`` (a profile's ``denied_tools``) name the tool called ``name``:
    exactly, or, for an MCP tool, in a spelling ``denies`` matches (server named exactly)."""
    if name in entries:
        return True
    server = server_of(name)
    if server is None:
        return False
    named = [e for e in entries if server_of(e) == server]
    return denies(named, server, name[len(PREFIX) + len(server) + 2 :])


def server_of(name: str) -> str | None:
    """The server of an MCP tool name (``mcp__tickets__search`` → ``tickets``), else None."""
    if not name.startswith(PREFIX):
        return None
    server, sep, _ = name[len(PREFIX) :].partition("__")
    return server if sep and server else None


def servers_to_start(
    configured: Mapping[str, McpServerConfig],
    named: Mapping[str, McpServerConfig],
    *,
    only_named: bool,
) -> dict[str, McpServerConfig]:
    """The servers a session starts, by name.

    ``configured`` are the agent config's; ``named`` the profile's (a definition, or a
    reference permitting the configured server of that name). With ``only_named`` (a
    read-only or bash-only profile: ``PermissionProfile.starts_named_mcp_servers_only``) only
    the servers the profile names start: an MCP server is a program or a service outside the
    profile's confinement. A profile's own definition wins over the config's. Raises
    ConfigError for a reference to a server the config does not define, and for a server
    name that leaves its tools no room (``check_name_room``).
    """
    out: dict[str, McpServerConfig] = {}
    for name, server in configured.items():
        if not only_named or name in named:
            out[name] = server
    for name, server in named.items():
        if server.is_reference:
            if name not in configured:
                known = ", ".join(sorted(configured)) or "none"
                raise ConfigError(
                    f"the profile names MCP server {name!r}, which the agent config does not "
                    f"define (defined: {known})"
                )
            continue
        out[name] = server
    for name, server in out.items():
        server.check(name)
        check_name_room(name)
    return out
