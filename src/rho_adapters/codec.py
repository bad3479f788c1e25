"""The one serialisation edge: domain values <-> JSON-ready dicts.

Writing is a plain walk of the values (``plain.to_plain``: what cattrs' preconf json converter
gives, without building it: a one-shot that only writes events and its config never imports
cattrs); reading is cattrs (``converter.make_converter``), which checks every shape. Here: the
trace lines and the config, each read and written. ``make_converter`` is re-exported here, the
one converter the style guide names (``rho_entry`` builds its own readers with it), and
loaded with the first name asked for: a process that reads nothing never imports it.

Contracts:

- Events are tagged by their stable ``kind`` (``rho_domain.events.EVENTS_BY_KIND``), never by
  class name, and every encoded event carries the trace format version ``v``. Decoding a line of
  an unknown (future) version, an unknown kind or a malformed shape raises ``TraceFormatError``.
- Messages are tagged by their ``role``; the ``Message`` union is resolved through it.
- ``config_from_dict`` forbids unknown keys and raises ``ConfigError`` naming the source, the key
  path and the expected type. ``config_to_dict`` writes a ``PermissionProfile`` as a mapping and
  a profile name as a string; it never contains a secret (the config holds none by design).
- Sets are written sorted, so the same value always encodes to the same bytes.
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, get_origin

import attrs

from rho_adapters.plain import field_names, plain_fields, to_plain
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError, TraceFormatError
from rho_domain.shown_numbers import a_time

if TYPE_CHECKING:
    from cattrs.preconf.json import JsonConverter

    from rho_adapters.converter import make_converter as make_converter
    from rho_domain.events import Event

TRACE_FORMAT_VERSION = 1
"""Bump when an event's encoding changes incompatibly; readers refuse newer versions."""


class FutureTraceVersion(TraceFormatError):
    """A trace line written by a newer rho-agent (its ``v`` is above ``TRACE_FORMAT_VERSION``)."""


def __getattr__(name: str) -> Any:
    # ``make_converter``, re-exported lazily (see the module docstring)
    if name == "make_converter":
        from rho_adapters.converter import make_converter

        return make_converter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Settings older versions wrote (every stored session's config.yaml has them) but never read.
RETIRED_CONFIG_KEYS = frozenset({"extras"})


# The converters and the per-kind hooks are built on first use, not at import: a process that
# only writes events and its config never imports cattrs (writing is ``to_plain``), and one
# that reads no config never builds the strict converter (code generation for ~40 classes).
@functools.cache
def _events() -> JsonConverter:
    from rho_adapters.converter import make_converter

    return make_converter(detailed_validation=False, strict=False)


@functools.cache
def _config() -> JsonConverter:
    from rho_adapters.converter import make_converter

    return make_converter(forbid_extra_keys=True)


@functools.cache
def _event_hooks() -> Mapping[str, Any]:
    events = _events()
    return {kind: events.get_structure_hook(cls) for kind, cls in ev.EVENTS_BY_KIND.items()}


def event_to_dict(event: Event) -> dict[str, Any]:
    """``{"v": 1, "kind": ..., "at": ..., <fields>}`` for one event."""
    names = field_names(type(event))
    assert names is not None  # every event is an attrs class
    return plain_fields(event, names, {"v": TRACE_FORMAT_VERSION, "kind": event.kind})


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event; raise ``TraceFormatError`` for an unknown version, kind or shape."""
    from cattrs.errors import CattrsError

    kind = data.get("kind")
    hook = _event_hooks().get(kind) if isinstance(kind, str) else None
    if hook is None or data.get("v") != TRACE_FORMAT_VERSION:
        _check_header(data, known_kind=hook is not None)
    try:
        # Extra keys ("v", "kind", additive fields) are ignored by the event converter; calling
        # the per-class hook directly skips cattrs' dispatch, which matters for 100k-line replays.
        event: Event = hook(data, None)  # type: ignore[misc]
        if not a_time(event.at):
            raise ValueError(f"its time 'at' is {event.at!r}, not a time")
        return event
    except (CattrsError, TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
        # CattrsError: e.g. a value outside a Literal (an unknown status or reason);
        # OverflowError: a count written as 1e999, which no int holds
        raise TraceFormatError(f"malformed {kind!r} event: {_describe(exc)}") from exc


def _check_header(data: Mapping[str, Any], *, known_kind: bool) -> None:
    """The slow path of ``event_from_dict``: say precisely what is wrong with the header."""
    version = data.get("v")
    if not isinstance(version, int) or isinstance(version, bool):
        raise TraceFormatError(f"trace line has no format version 'v': {_preview(data)}")
    if version > TRACE_FORMAT_VERSION:
        raise FutureTraceVersion(
            f"trace format version {version} is newer than this rho-agent understands "
            f"(up to {TRACE_FORMAT_VERSION}); upgrade rho-agent to read this session"
        )
    if not known_kind:
        raise TraceFormatError(f"unknown event kind {data.get('kind')!r} in trace")


# json.dumps with options builds a new encoder per call; one shared encoder saves ~20% a line.
_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_ASCII_LINE_ENCODER = json.JSONEncoder(separators=(",", ":"))


def encode_event_line(event: Event) -> bytes:
    r"""One trace line: compact JSON, UTF-8, terminated by a newline. Never fails on the text
    it carries: a lone surrogate (a file name that is not UTF-8, as Python lists it; a
    ``\udcff`` escape in a model's JSON), which UTF-8 cannot hold, is written as a JSON
    escape, and the line reads back as the same text."""
    data = event_to_dict(event)
    try:
        return _LINE_ENCODER.encode(data).encode() + b"\n"
    except UnicodeEncodeError:  # rare: the whole line escaped, rather than the run ended
        return _ASCII_LINE_ENCODER.encode(data).encode() + b"\n"


def decode_event_line(line: bytes) -> Event:
    """Decode one trace line (with or without its newline); ``TraceFormatError`` if invalid."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep to decode
        raise TraceFormatError(f"trace line is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise TraceFormatError("trace line is not a JSON object")
    return event_from_dict(data)


def config_to_dict(config: AgentConfig) -> dict[str, Any]:
    """A plain mapping of the config (safe for ``yaml.safe_dump`` and JSON)."""
    data: dict[str, Any] = to_plain(config)  # a profile: a mapping; a profile name: a string
    return data


def config_from_dict(data: Any, *, source: str) -> AgentConfig:
    """Validate a mapping into an ``AgentConfig``; ``ConfigError`` names source, key and type."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: expected a mapping of settings, got {type(data).__name__}")
    import cattrs

    data = {k: v for k, v in data.items() if k not in RETIRED_CONFIG_KEYS}
    try:
        return _config().structure(data, AgentConfig)
    except cattrs.BaseValidationError as exc:
        refused = [e for e in exc.exceptions if isinstance(e, ConfigError)]
        if refused:  # AgentConfig's own validators refused a value: their message says why
            raise ConfigError(f"{source}: config.{refused[0]}") from exc
        problems = "; ".join(
            cattrs.transform_error(exc, path="config", format_exception=describe_config_error)
        )
        raise ConfigError(f"{source}: {problems}") from exc
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{source}: {exc}") from exc


def describe_config_error(exc: BaseException, type_: Any) -> str:
    """One problem of a config file, for ``cattrs.transform_error``: what would be right
    (``what_would_be_right``) where that is known, else cattrs' own words."""
    from cattrs.v import format_exception

    right = what_would_be_right(exc, type_)
    return right if right is not None else format_exception(exc, type_)


def what_would_be_right(exc: BaseException, type_: Any) -> str | None:
    """An unknown key with the closest known one (``unknown key 'modle' (did you mean
    'model'?)``), a bad choice with every valid value (``expected one of restricted,
    unrestricted (got 'sometimes')``), a value a nested class's own check refused in that
    check's words (``max_cost_usd must be an amount in USD, 0 or more; got -1.0``, not
    cattrs' "unknown error"); None for other problems."""
    import cattrs

    if isinstance(exc, ConfigError) or (
        isinstance(exc, TypeError) and str(exc).startswith("expected ")  # the strict hooks'
    ):
        return str(exc)
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        known = [f.name for f in attrs.fields(exc.cl)] if attrs.has(exc.cl) else []
        # YAML keys may be numbers, booleans or null (``1:``, ``yes:``, ``~:``): sorted and
        # matched as text, they crashed the message with a TypeError before
        return "; ".join(_unknown_key(key, known) for key in sorted(exc.extra_fields, key=str))
    if isinstance(type_, type) and issubclass(type_, enum.Enum):
        values = ", ".join(str(member.value) for member in type_)
        got = f" (got {exc.args[0].split(' is not')[0]})" if isinstance(exc, ValueError) else ""
        if got in (" (got True)", " (got False)"):
            # PyYAML reads YAML 1.1: an unquoted yes/no/on/off is a boolean, which "got
            # True" named as if the user had written the word True
            got = (
                f" (got {got[6:-1].lower()}: YAML reads an unquoted yes, no, on, off, true "
                "or false as a boolean)"
            )
        return f"expected one of {values}{got}"
    if get_origin(type_) in (tuple, list) and str(exc).endswith("object is not iterable"):
        # a number, a boolean or nothing where a list goes (``command: 5``) was "invalid
        # value for type, expected tuple": a Python type the file never shows
        got = str(exc).split("'")[1]
        return f"expected a list, got {'nothing (an empty value)' if got == 'NoneType' else got}"
    if attrs.has(type_) and isinstance(exc, TypeError | AttributeError):
        # a scalar or a list where a section goes (``budget: 5``) was "invalid value for
        # type, expected Budget": a class name the file never shows, and no keys
        keys = ", ".join(f.name for f in attrs.fields(type_))
        return f"expected a mapping (indented `key: value` lines) of {keys}"
    return None


def _unknown_key(key: object, known: list[str]) -> str:
    import difflib  # with the first unknown key, not with every run that writes a trace

    if not isinstance(key, str):
        kind = "null" if key is None else type(key).__name__
        return f"unknown key {key!r} (YAML read it as {kind}: a key here is a name)"
    close = difflib.get_close_matches(key, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key {key!r}{hint}"


def _describe(exc: BaseException) -> str:
    import cattrs

    if isinstance(exc, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(exc, path="event"))
    if isinstance(exc, KeyError) and exc.args:  # its str() was the bare name: "'run_id'"
        return f"its field {exc.args[0]!r} is missing"
    return str(exc)


def _preview(data: Mapping[str, Any]) -> str:
    text = json.dumps(data, default=str)
    return text if len(text) <= 120 else text[:117] + "..."
