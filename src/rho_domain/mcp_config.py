"""MCP servers as configuration: one frozen value per server, and which servers a session starts.

A server is a local program (``command``, an argv list, with ``env`` and ``cwd``) spoken to
over its stdin and stdout, or an HTTP endpoint (``url`` with ``headers``) speaking MCP's
Streamable HTTP transport. Values of ``env`` and ``headers``, and the ``url``'s path and query,
may name environment variables (``${NAME}``, ``REFERENCE``); ``bearer_token_env`` names the
variable holding a bearer token. They are resolved by the adapter when the server starts,
never stored resolved.

The model sees a server's tool ``search`` of server ``tickets`` as ``mcp__tickets__search``
(``mcp_names.tool_name``: always within the 64 characters model APIs take, a name cut there
made unique by a hash of the whole). A deny entry (``tools.deny``, a profile's
``denied_tools``) names a tool in any spelling that folds to it (``mcp_names.denies``): the
server, not the operator, chooses the spelling. Every MCP tool is dangerous (asked about under
the readonly and developer profiles) unless its server's ``read_only_tools`` names it: the
operator, not the server, vouches for it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from rho_domain.config_checks import path_text, paths_text, several_strings
from rho_domain.endpoint_url import check_endpoint_url
from rho_domain.errors import ConfigError
from rho_domain.header_names import check_header_names
from rho_domain.mcp_names import MAX_NAME, cut_entry, denies, server_of
from rho_domain.value_methods import value_eq, value_hash, value_repr

DEFAULT_STARTUP_TIMEOUT = 10.0  # seconds to start, initialize and list a server's tools
DEFAULT_CALL_TIMEOUT = 60.0  # seconds for one tools/call
# patterns compiled by re (and kept in its cache) when first used, not at import: most
# configs name no MCP server
_SERVER_NAME = r"[A-Za-z0-9][A-Za-z0-9-]*(_[A-Za-z0-9-]+)*"
MAX_SERVER_NAME = 40  # characters: mcp__<server>__ leaves every tool 17 of the 64


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

    command: tuple[str, ...] = attrs.field(
        default=(), converter=paths_text, validator=several_strings
    )
    env: Mapping[str, str] = attrs.field(factory=dict)
    cwd: str | None = attrs.field(default=None, converter=path_text)
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
            _check_url_references(self.url, f"{where}.{name}.url")
        _check_headers(self, f"{where}.{name}")


# Headers the Streamable HTTP transport sets itself: one from the config as well was sent
# twice (names ignore case), and any value of its own would break the exchange.
PROTOCOL_HEADERS = frozenset(
    {"accept", "content-type", "content-length", "host", "transfer-encoding", "connection"}
    | {"mcp-session-id", "mcp-protocol-version", "last-event-id"}
)


def _check_headers(server: McpServerConfig, where: str) -> None:
    """Raise ConfigError naming ``where.headers`` for headers that cannot be sent as given:
    on a local program's entry, not header names, two spellings of one name, one the
    transport sets, or ``Authorization`` beside ``bearer_token_env`` (two credentials)."""
    if not server.headers:
        return
    if server.command:
        raise ConfigError(
            f"{where}.headers: headers go to an HTTP server (url); a local program (command) "
            "takes env"
        )
    check_header_names(server.headers, f"{where}.headers")
    for header in server.headers:
        if header.lower() in PROTOCOL_HEADERS:
            raise ConfigError(
                f"{where}.headers.{header}: rho-agent sets this header itself (MCP's "
                "Streamable HTTP transport); remove it"
            )
        if header.lower() == "authorization" and server.bearer_token_env:
            raise ConfigError(
                f"{where}: headers.{header} and bearer_token_env both give the Authorization "
                "header; keep one"
            )


# ``${NAME}``: a variable a value names, read when the server starts (``rho_adapters.mcp``)
REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _check_url_references(url: str, key: str) -> None:
    """Raise ConfigError naming ``key`` for a ``${NAME}`` in ``url``'s scheme or authority:
    a variable's value is put in the URL percent-encoded (a key holding ``&`` or ``+`` stays
    one value of the query), which a host or port cannot be."""
    scheme_end = url.find("://") + 3
    authority_end = min(
        (at for c in "/?#" if (at := url.find(c, scheme_end)) >= 0), default=len(url)
    )
    if REFERENCE.search(url[:authority_end]):
        raise ConfigError(
            f"{key}: a ${{NAME}} may stand in the URL's path or query only (a key: "
            "?key=${NAME}); write its scheme and host out"
        )


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
            f"the {MAX_NAME} characters model APIs take, with room for each tool's name)"
        )


def servers_to_start(
    configured: Mapping[str, McpServerConfig],
    named: Mapping[str, McpServerConfig],
    *,
    only_named: bool,
    denied: Collection[str] = (),
) -> dict[str, McpServerConfig]:
    """The servers a session starts, by name.

    ``configured`` are the agent config's; ``named`` the profile's (a definition, or a
    reference permitting the configured server of that name). With ``only_named`` (a
    read-only or bash-only profile: ``PermissionProfile.starts_named_mcp_servers_only``) only
    the servers the profile names start: an MCP server is a program or a service outside the
    profile's confinement. A profile's own definition wins over the config's. Raises
    ConfigError for a reference to a server the config does not define, and for a server
    name that leaves its tools no room (``check_name_room``).

    ``denied`` (the profile's ``denied_tools``): each entry ``mcp__<server>__<tool>`` joins
    that server's ``tools.deny``, so the server's tools are judged against it by their names
    as the server gives them (``denies``), the one judgement ``tools.deny`` gets. The model
    name alone loses what a cut hides: a look-alike letter past the cut of a long name
    changes only its hash, and ``denied_name`` (the wall at each call) cannot see it.
    A deny entry that is itself a cut model name is refused (``check_deny_entries``).
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
        check_deny_entries(name, server.tools.deny, where=f"mcp_servers.{name}.tools.deny")
        if entries := tuple(e for e in denied if server_of(e) == name):
            check_deny_entries(name, entries, where="the profile's denied_tools")
            out[name] = attrs.evolve(
                server, tools=attrs.evolve(server.tools, deny=server.tools.deny + entries)
            )
    return out


def check_deny_entries(server: str, entries: Collection[str], *, where: str) -> None:
    """Raise ConfigError naming ``where`` for an entry of ``entries`` (denying tools of
    ``server``) that is a model name cut to fit (``mcp_names.cut_entry``): it ends in a hash
    of the whole name, which holds the spellings that fold alike but not a look-alike letter
    in the part cut off, so such a tool would pass it unseen. The whole name holds it."""
    for entry in entries:
        if cut_entry(entry, server):
            raise ConfigError(cut_entry_refusal(entry, where))


def cut_entry_refusal(entry: str, where: str) -> str:
    """What a deny entry that is a cut model name is told (``check_deny_entries``)."""
    return (
        f"{where}: {entry!r} is a tool name cut to fit {MAX_NAME} characters (it ends in a hash "
        "of the whole name), which denies only the spellings of that name, not one with a "
        "look-alike letter in the part cut off: write the tool's whole name as its server "
        "lists it (mcp__SERVER__NAME; with this entry removed, rho-agent mcp list shows it "
        "beside the cut name)"
    )
