"""The settings read from the environment: which variables set which ``AgentConfig`` field
(``ENV_VARS``), and how their text is read (``parse_env``). ``settings.resolve_settings``
puts them below the flags and above the prompt template and the config file.

Environment variables (``RHO_AGENT_*`` wins over the ``OPENAI_*`` fallback):

==========================  ===============================  =====================
setting                     variables                        flag
==========================  ===============================  =====================
model                       RHO_AGENT_MODEL, OPENAI_MODEL    --model
base_url                    RHO_AGENT_BASE_URL,              --base-url
                            OPENAI_BASE_URL
api_key_env                 RHO_AGENT_API_KEY_ENV            --api-key-env
provider                    RHO_AGENT_PROVIDER               --provider
profile                     RHO_AGENT_PROFILE                --profile
working_dir                 RHO_AGENT_WORKING_DIR            --working-dir
backend                     RHO_AGENT_BACKEND                --backend
service_tier                RHO_AGENT_SERVICE_TIER           --service-tier
reasoning_effort            RHO_AGENT_REASONING_EFFORT       --reasoning-effort
max_turns                   RHO_AGENT_MAX_TURNS              --max-turns
repeat_limit                RHO_AGENT_REPEAT_LIMIT           --repeat-limit
context_window              RHO_AGENT_CONTEXT_WINDOW         --context-window
tool_choice                 RHO_AGENT_TOOL_CHOICE            --tool-choice
stream                      RHO_AGENT_STREAM                 --stream / --no-stream
auto_approve                RHO_AGENT_AUTO_APPROVE           --auto-approve
model_timeout               RHO_AGENT_TIMEOUT                --timeout
model_retries               RHO_AGENT_RETRIES                --retries
config file                 RHO_AGENT_CONFIG                 --config
config directory            RHO_AGENT_HOME, XDG_CONFIG_HOME
session store               RHO_AGENT_STORE                  --store (``rho_entry.config.stores``)
store staleness window      RHO_AGENT_STORE_STALE_AFTER      (PostgreSQL store; default 8 s)
==========================  ===============================  =====================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rho_domain.endpoint_url import check_endpoint_url
from rho_domain.errors import ConfigError

if TYPE_CHECKING:
    from rho_domain.config import AgentConfig

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})

# field -> environment variables, in precedence order
ENV_VARS: Mapping[str, tuple[str, ...]] = {
    "model": ("RHO_AGENT_MODEL", "OPENAI_MODEL"),
    "base_url": ("RHO_AGENT_BASE_URL", "OPENAI_BASE_URL"),
    "api_key_env": ("RHO_AGENT_API_KEY_ENV",),
    "provider": ("RHO_AGENT_PROVIDER",),
    "profile": ("RHO_AGENT_PROFILE",),
    "working_dir": ("RHO_AGENT_WORKING_DIR",),
    "backend": ("RHO_AGENT_BACKEND",),
    "service_tier": ("RHO_AGENT_SERVICE_TIER",),
    "reasoning_effort": ("RHO_AGENT_REASONING_EFFORT",),
    "max_turns": ("RHO_AGENT_MAX_TURNS",),
    "repeat_limit": ("RHO_AGENT_REPEAT_LIMIT",),
    "context_window": ("RHO_AGENT_CONTEXT_WINDOW",),
    "auto_approve": ("RHO_AGENT_AUTO_APPROVE",),
    "tool_choice": ("RHO_AGENT_TOOL_CHOICE",),
    "stream": ("RHO_AGENT_STREAM",),
    "model_timeout": ("RHO_AGENT_TIMEOUT",),
    "model_retries": ("RHO_AGENT_RETRIES",),
}
OTHER_VARIABLES = frozenset(
    {"RHO_AGENT_CONFIG", "RHO_AGENT_HOME", "RHO_AGENT_STORE", "RHO_AGENT_STORE_STALE_AFTER",
     "RHO_AGENT_DB_CONFIG", "RHO_AGENT_PREVIEW_LINES", "RHO_AGENT_BIRD_DATA",
     "RHO_AGENT_BIRD_WORKSPACE", "RHO_AGENT_DAYTONA_IMAGE", "RHO_AGENT_DAYTONA_SNAPSHOT",
     "RHO_AGENT_DAYTONA_WORKING_DIR", "RHO_AGENT_SERVER_TOKEN", "RHO_AGENT_SERVER_ROOTS",
     "RHO_AGENT_SERVER_PROFILES", "RHO_AGENT_SERVER_MAX_RUNS", "RHO_AGENT_SERVER_MAX_STREAMS",
     "RHO_AGENT_SERVER_CORS_ORIGINS", "RHO_AGENT_SERVER_ALLOW_HOSTS",
     "RHO_AGENT_SERVER_APPROVAL_HOLD", "RHO_AGENT_INSTALL_LOG", "RHO_AGENT_INSTALL_SPEC",
     "RHO_AGENT_PYTHON", "RHO_AGENT_PREFIX", "RHO_AGENT_BIN_DIR", "RHO_AGENT_PIP_ARGS"}
)  # fmt: skip
"""Every other ``RHO_AGENT_*`` variable rho-agent or its scripts read (a test greps the
sources for names missing here)."""

INT_FIELDS = frozenset({"max_turns", "repeat_limit", "context_window", "model_retries"})
FLOAT_FIELDS = frozenset({"model_timeout"})


def base_url_from(environ: Mapping[str, str]) -> str | None:
    """The endpoint the environment names (``RHO_AGENT_BASE_URL``, then ``OPENAI_BASE_URL``,
    as for the CLI), for a config that names none. Raises ConfigError naming the variable
    when its text is no http(s) URL (``check_endpoint_url``): checked later as the config's
    ``base_url``, the library's refusal named a key the user never wrote."""
    variable = next((v for v in ENV_VARS["base_url"] if environ.get(v)), None)
    if variable is None:
        return None
    check_endpoint_url(environ[variable], variable)
    return environ[variable]


def base_url_of(config: AgentConfig, environ: Mapping[str, str]) -> str | None:
    """The base URL ``config``'s model calls go to when one is named: the config's own, else
    the environment's (``base_url_from``); None when neither names one (the provider's
    default then)."""
    return config.base_url or base_url_from(environ)


def parse_env(name: str, raw: str, variable: str) -> Any:
    """The value of setting ``name`` read from ``raw``, the text of ``variable``: an integer
    (``INT_FIELDS``), seconds (``FLOAT_FIELDS``), a yes/no, or the text itself. Raises
    ``ConfigError`` naming ``variable`` and what was expected, and for bytes not UTF-8."""
    if not raw.isascii():
        _refuse_bytes_not_utf8(raw, variable)
    if name in INT_FIELDS:
        try:
            return int(raw)
        except ValueError:
            raise ConfigError(f"{variable}={_shown(raw)}: expected an integer") from None
    if name in FLOAT_FIELDS:
        try:
            return float(raw)
        except ValueError:
            raise ConfigError(f"{variable}={_shown(raw)}: expected a number of seconds") from None
    if name in ("auto_approve", "stream"):
        lowered = raw.strip().lower()
        if lowered not in _TRUE | _FALSE:
            raise ConfigError(
                f"{variable}={_shown(raw)}: expected 1/0, true/false, yes/no or on/off"
            )
        return lowered in _TRUE
    return raw


def _shown(raw: str) -> str:
    """``raw`` quoted for an error, its start only when long: a value of 5,000 digits (past
    what ``int`` reads) was quoted whole, a screen of nines around the message."""
    if len(raw) <= 60:
        return repr(raw)
    return f"{raw[:40]!r}... ({len(raw):,} characters)"


def _refuse_bytes_not_utf8(raw: str, variable: str) -> None:
    """Raise ``ConfigError`` naming ``variable`` when ``raw`` holds bytes that are not UTF-8:
    Python decodes them to lone surrogates, which failed wherever the value was first
    written (config.yaml's "cannot hold a string with a lone surrogate ... at base_url")."""
    try:
        raw.encode("utf-8", "surrogateescape").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{variable} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
            f"{exc.start}); rho-agent reads its settings from the environment as UTF-8"
        ) from None


def misspelt_variables(env: Mapping[str, str]) -> list[str]:
    """A sentence for each ``RHO_AGENT_*`` variable of ``env`` that rho-agent does not read
    but that is near one it does (``PROFILE`` missing a letter): set, it was ignored without
    a word, and the run went on with the readonly profile the user meant to leave. A name
    near none is left alone (another tool's, or a script's of the user's)."""
    known = {name for names in ENV_VARS.values() for name in names} | OTHER_VARIABLES
    given = [name for name in env if name.startswith("RHO_AGENT_") and name not in known]
    if not given:
        return []
    import difflib

    said = []
    for name in sorted(given):
        near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.85)
        if near:
            said.append(
                f"{name} is set but rho-agent reads no such variable: did you mean "
                f"{near[0]}? (it was ignored)"
            )
    return said


def warn_misspelt(env: Mapping[str, str]) -> None:
    """Each of ``misspelt_variables(env)`` as a warning (the CLI shows it as a line)."""
    import logging

    for sentence in misspelt_variables(env):
        logging.getLogger("rho_entry.config.env_settings").warning("%s", sentence)
