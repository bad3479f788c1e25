"""Permission profiles: what an agent may do, on four axes.

Built-in profiles: ``readonly`` (production investigation), ``developer`` (local editing) and
``eval`` (sandboxed benchmarks; ``unrestricted`` is an alias). Custom profiles are loaded from
YAML at the entry layer and arrive here as validated ``PermissionProfile`` values.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any

import attrs

from rho_domain.config_checks import paths_text, several_strings
from rho_domain.errors import ConfigError
from rho_domain.lazy_names import lazy_names
from rho_domain.limits import ResourceLimits, development_limits, readonly_limits
from rho_domain.reach import OutsideReads
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.mcp_config import McpServerConfig as McpServerConfig

# MCP servers' values and checks load with the first profile or config naming a server
# (``config.resolve_field_types`` resolves the annotation for cattrs).
__getattr__ = lazy_names(__name__, {"McpServerConfig": "rho_domain.mcp_config"})


def _named_servers(
    instance: object, attribute: attrs.Attribute[Any], value: Mapping[str, Any]
) -> None:
    """``mcp_config.check_named_servers``, imported with the first profile naming a server."""
    if value:
        from rho_domain.mcp_config import check_named_servers

        check_named_servers(instance, attribute, value)


def _timeout(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A positive, finite number of seconds: 0 or less stopped every command at once
    ('timed out after -5 s'), NaN left commands without a deadline."""
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is None or not 0 < number < float("inf"):
        raise ConfigError(
            f"{attribute.name} must be a number of seconds, more than 0; got {value!r}"
        )


class ShellMode(Enum):
    """What the shell may run."""

    RESTRICTED = "restricted"  # allowlisted read-only programs, no shell
    UNRESTRICTED = "unrestricted"  # any command through bash


class FileWriteMode(Enum):
    """What file tools and the executor may write."""

    OFF = "off"
    CREATE_ONLY = "create-only"
    FULL = "full"


class DatabaseMode(Enum):
    """Whether SQL runs in read-only transactions or may change data."""

    READONLY = "readonly"
    MUTATIONS = "mutations"


class ApprovalMode(Enum):
    """Which calls wait for a human. A tool's risk is declared once, by its handler's
    ``policy_for``; DANGEROUS refers to it, GRANULAR also asks before every call of the tools
    a profile names (it never asks less than DANGEROUS: a tool left off the list still asks
    when its handler declares the call dangerous)."""

    ALL = "all"  # every tool call
    DANGEROUS = "dangerous"  # calls whose handler's policy says dangerous
    GRANULAR = "granular"  # those, and every call of the tools in approval_required_tools
    NONE = "none"  # never (sandboxes)


DEFAULT_DANGEROUS_PATTERNS: tuple[str, ...] = (
    "rm -rf",
    "rm -r",
    "drop table",
    "drop database",
    "truncate",
    "delete from",
    "> /dev/",
    ":(){",
    "mkfs",
    "dd if=",
)


@attrs.frozen(kw_only=True)
class PermissionProfile:
    """A validated permission profile.

    ``dangerous_patterns``: a call whose arguments contain one of these (case-insensitive)
    needs approval in every approval mode except NONE. ``approval_required_tools`` is read in
    GRANULAR mode only: every call of those tools asks, beside the calls DANGEROUS asks about.
    ``denied_tools`` are never run.
    ``extra_read_roots`` are directories outside the workspace that file tools may read (logs).
    ``read_outside_workspace``: whether reading tools (file tools, shell readers, the sandbox's
    view) may read the rest of the machine; ``deny`` (the default): the workspace and the read
    roots only. Secrets are refused either way (``rho_domain.reach``).
    ``limits`` bound every command the executor starts (memory, CPU, output; see
    ``rho_domain.limits``); the file-size limit holds the write and edit tools too.
    ``mcp_servers`` are MCP servers the profile defines or names (an entry with neither
    command nor url names the agent config's server): a read-only profile starts no other
    (``mcp_config.servers_to_start``).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    name: str
    description: str = ""
    shell: ShellMode = ShellMode.RESTRICTED
    file_write: FileWriteMode = FileWriteMode.OFF
    database: DatabaseMode = DatabaseMode.READONLY
    approval: ApprovalMode = ApprovalMode.DANGEROUS
    approval_required_tools: frozenset[str] = attrs.field(
        default=frozenset(), validator=several_strings
    )
    denied_tools: frozenset[str] = attrs.field(default=frozenset(), validator=several_strings)
    dangerous_patterns: tuple[str, ...] = attrs.field(
        default=DEFAULT_DANGEROUS_PATTERNS, validator=several_strings
    )
    shell_timeout: float = attrs.field(default=120.0, validator=_timeout)
    bash_only: bool = False
    extra_read_roots: tuple[str, ...] = attrs.field(
        default=(), converter=paths_text, validator=several_strings
    )
    read_outside_workspace: OutsideReads = OutsideReads.DENY
    limits: ResourceLimits = attrs.field(factory=readonly_limits)
    mcp_servers: Mapping[str, McpServerConfig] = attrs.field(factory=dict, validator=_named_servers)

    @property
    def starts_named_mcp_servers_only(self) -> bool:
        """True when sessions start only the MCP servers this profile names: a read-only
        profile (a server is a program or a service outside its walls) and a bash-only one
        (it promises bash alone)."""
        return self.read_only or self.bash_only

    @property
    def read_only(self) -> bool:
        """True when neither files nor the shell can change anything."""
        return self.file_write is FileWriteMode.OFF and self.shell is ShellMode.RESTRICTED

    # The design documents' constructors of the built-in profiles.
    @classmethod
    def readonly(cls) -> PermissionProfile:
        """The built-in ``readonly`` profile (``readonly_profile()``)."""
        return readonly_profile()

    @classmethod
    def developer(cls) -> PermissionProfile:
        """The built-in ``developer`` profile (``developer_profile()``)."""
        return developer_profile()

    @classmethod
    def eval(cls) -> PermissionProfile:
        """The built-in ``eval`` profile (``eval_profile()``)."""
        return eval_profile()


def readonly_profile() -> PermissionProfile:
    """The ``readonly`` profile: restricted shell, no writes, dangerous calls approved."""
    return PermissionProfile(
        name="readonly",
        description="Investigate without changing anything: read-only shell, files and SQL.",
    )


DEVELOPER_APPROVAL_TOOLS = frozenset({"bash", "write", "edit"})
"""The tools the ``developer`` profile names for approval (the design documents' GRANULAR row).
Every call of them asks; so does every other call whose handler declares it dangerous (SQL
that writes, a custom tool with ``requires_approval``): GRANULAR never asks less than
DANGEROUS."""


def developer_profile() -> PermissionProfile:
    """The ``developer`` profile: any command and file edits, each approved (GRANULAR: the
    shell, write and edit by name, and every other call its handler declares dangerous)."""
    return PermissionProfile(
        name="developer",
        description="Local development: any shell command and file edits, each approved.",
        shell=ShellMode.UNRESTRICTED,
        file_write=FileWriteMode.FULL,
        approval=ApprovalMode.GRANULAR,
        approval_required_tools=DEVELOPER_APPROVAL_TOOLS,
        shell_timeout=300.0,
        limits=development_limits(),
    )


def eval_profile() -> PermissionProfile:
    """The ``eval`` profile: everything allowed, nothing asked (sandboxes only)."""
    return PermissionProfile(
        name="eval",
        description="Sandboxed evaluation: everything allowed, nothing asked.",
        shell=ShellMode.UNRESTRICTED,
        file_write=FileWriteMode.FULL,
        database=DatabaseMode.MUTATIONS,
        approval=ApprovalMode.NONE,
        shell_timeout=300.0,
        limits=development_limits(),
    )


BUILTIN_PROFILES = {
    "readonly": readonly_profile,
    "developer": developer_profile,
    "eval": eval_profile,
    "unrestricted": eval_profile,
}


def builtin_profile(name: str) -> PermissionProfile:
    """Return a built-in profile by name; raise ConfigError naming the choices."""
    try:
        return BUILTIN_PROFILES[name]()
    except KeyError:
        choices = ", ".join(sorted(BUILTIN_PROFILES))
        raise ConfigError(
            f"unknown profile {name!r}: use one of {choices}, or a path to a profile YAML file"
        ) from None


def builtin_as_made(profile: PermissionProfile) -> bool:
    """True when ``profile`` is the built-in profile of its name exactly as ``builtin_profile``
    makes it (every field equal): its name then says what it grants, without comparing grants
    (``profile_grants.label`` does for any other). A built-in alias made under its canonical
    name (``unrestricted``, whose profile is named ``eval``) is never one."""
    make = BUILTIN_PROFILES.get(profile.name)
    return make is not None and profile == make()
