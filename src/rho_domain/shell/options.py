"""Option allowlists: the getopt-style grammar most read-only programs share.

An ``OptionSpec`` lists every option a program may receive in the restricted shell; anything
else is refused. This is deliberately an allowlist: GNU ``getopt_long`` accepts unambiguous
abbreviations (``--in-pl`` is ``--in-place``) and short flags combine (``-ni``), so denylists
of option spellings cannot be complete. Long options must be spelled out exactly.

Contract: ``split_options(program, args, spec) -> Parsed`` or ``CommandRefused``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from rho_domain.errors import CommandRefused

ValueCheck = Callable[[str], str | None]  # returns a refusal reason, or None when fine


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@attrs.frozen(kw_only=True)
class OptionSpec:
    """What one program accepts.

    ``flags``: short options without a value. ``valued``: short options that take one (glued,
    ``-n5``, or next word). ``long_flags`` / ``long_valued``: long names without the dashes;
    ``long_optional``: ``--name`` or ``--name=value`` only. ``numeric``: ``-20`` shorthand.
    ``max_operands``: None for unlimited. ``checks``: option or ``"operand"`` -> value check.
    """

    flags: str = ""
    valued: str = ""
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    long_optional: frozenset[str] = frozenset()
    numeric: bool = False
    max_operands: int | None = None
    checks: Mapping[str, ValueCheck] = attrs.field(factory=dict)


def spec(
    flags: str = "",
    valued: str = "",
    long_flags: str = "",
    long_valued: str = "",
    long_optional: str = "",
    *,
    numeric: bool = False,
    max_operands: int | None = None,
    checks: Mapping[str, ValueCheck] | None = None,
) -> OptionSpec:
    """Build an ``OptionSpec`` from space-separated long names (shorter tables to read)."""
    return OptionSpec(
        flags=flags,
        valued=valued,
        long_flags=_words(long_flags),
        long_valued=_words(long_valued),
        long_optional=_words(long_optional),
        numeric=numeric,
        max_operands=max_operands,
        checks=dict(checks or {}),
    )


@attrs.frozen(kw_only=True)
class Parsed:
    """A command line split by a program's option table: options with values, then operands."""

    options: tuple[tuple[str, str | None], ...]
    operands: tuple[str, ...]

    def has(self, *names: str) -> bool:
        """True when any of ``names`` was given."""
        return any(name in names for name, _ in self.options)


def refuse_option(program: str, option: str) -> CommandRefused:
    """The refusal for an option the program's allowlist does not name."""
    return CommandRefused(
        f"{program}: option {option!r} is not allowed in the restricted shell "
        "(only read-only options are accepted, long options spelled out in full)"
    )


def split_options(program: str, args: Sequence[str], spec: OptionSpec) -> Parsed:
    """Split ``args`` into checked options and operands (GNU order: options may follow operands)."""
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            operands.extend(args[i:])
            break
        if arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif arg.startswith("--"):
            option, i = _long_option(program, arg, args, i, spec)
            options.append(option)
        elif spec.numeric and arg[1:].isdigit():
            options.append(("NUM", arg[1:]))
        else:
            i = _short_options(program, arg, args, i, spec, options)
    _check_parsed(program, spec, options, operands)
    return Parsed(options=tuple(options), operands=tuple(operands))


def _long_option(
    program: str, arg: str, args: Sequence[str], i: int, spec: OptionSpec
) -> tuple[tuple[str, str | None], int]:
    """One ``--name[=value]`` (its value may be the next argument); returns it and the index
    of the next argument."""
    name, eq, value = arg[2:].partition("=")
    if name in spec.long_flags and not eq:
        return (name, None), i
    if name in spec.long_optional:
        return (name, value if eq else None), i
    if name not in spec.long_valued:
        raise refuse_option(program, arg)
    if not eq:
        if i >= len(args):
            raise CommandRefused(f"{program}: option --{name} needs a value")
        value = args[i]
        i += 1
    return (name, value), i


def _short_options(
    program: str,
    arg: str,
    args: Sequence[str],
    i: int,
    spec: OptionSpec,
    options: list[tuple[str, str | None]],
) -> int:
    """A cluster of short options (``-abc``, ``-fVALUE``, ``-f VALUE``), appended to
    ``options``; returns the index of the next argument."""
    j = 1
    while j < len(arg):
        ch = arg[j]
        j += 1
        if ch in spec.flags:
            options.append((ch, None))
        elif ch in spec.valued:
            value = arg[j:]
            if not value:
                if i >= len(args):
                    raise CommandRefused(f"{program}: option -{ch} needs a value")
                value = args[i]
                i += 1
            options.append((ch, value))
            break
        else:
            raise refuse_option(program, f"-{ch}" if len(arg) > 2 else arg)
    return i


def _check_parsed(
    program: str,
    spec: OptionSpec,
    options: Sequence[tuple[str, str | None]],
    operands: Sequence[str],
) -> None:
    """The operand count and the per-option and per-operand checks of ``spec``."""
    if spec.max_operands is not None and len(operands) > spec.max_operands:
        raise CommandRefused(
            f"{program}: at most {spec.max_operands} operand(s) allowed here, got {len(operands)}"
            " (an extra operand would name an output file)"
        )
    for option_name, option_value in options:
        option_check = spec.checks.get(option_name)
        if (
            option_check is not None
            and option_value is not None
            and (why := option_check(option_value))
        ):
            raise CommandRefused(f"{program}: {why}")
    if (check := spec.checks.get("operand")) is not None:
        for operand in operands:
            if reason := check(operand):
                raise CommandRefused(f"{program}: {reason}")
