"""Option allowlists: the getopt-style grammar most read-only programs share.

An ``OptionSpec`` lists every option a program may receive in the restricted shell; anything
else is refused. This is deliberately an allowlist: GNU ``getopt_long`` accepts unambiguous
abbreviations (``--in-pl`` is ``--in-place``) and short flags combine (``-ni``), so denylists
of option spellings cannot be complete. Long options must be spelled out exactly.

Contract: ``split_options(program, args, spec) -> Parsed`` or ``CommandRefused``. What runs is
never the model's spelling: ``shell.rebuild`` builds the argv again from the ``Parsed`` form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import attrs

from rho_domain.errors import CommandRefused
from rho_domain.value_methods import value_eq, value_hash, value_repr

ValueCheck = Callable[[str], str | None]  # returns a refusal reason, or None when fine


# Where the harness puts "--" when it rebuilds the argv: before the operands (getopt programs),
# after the first operand (jq 1.6 takes "--" only after its filter), or nowhere (echo, ps:
# they would print it or refuse it; an operand of theirs may then not start with "-").
DashDash = Literal["first", "after-first", "none"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@attrs.frozen(kw_only=True)
class Spelling:
    """How a program wants its options written when the harness rebuilds its argv.

    ``glue``: a short option's value in the same word (``-n5``, so it can never be read as
    anything else); False for parsers that always take the next word (tree, ps, jq).
    ``long_eq``: ``--name=value``; False for jq, which knows only ``--name value``.
    ``numeric_as``: the long option ``-NUM`` stands for (head/tail read ``-20`` only as the
    first word). ``short_for``: options rebuilt as another short letter (mawk has no long
    names; ls's ``-a`` is rebuilt as ``-A``).
    ``long_for``: valued short letters rebuilt as ``--long=value`` (rg: its parser strips a
    ``=`` after a short option, so ``-e=x`` would lose it; the long form is exact).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    dashdash: DashDash = "first"
    glue: bool = True
    long_eq: bool = True
    numeric_as: str = ""
    short_for: Mapping[str, str] = attrs.field(factory=dict)
    long_for: Mapping[str, str] = attrs.field(factory=dict)


GNU = Spelling()


@attrs.frozen(kw_only=True)
class OptionSpec:
    """What one program accepts.

    ``flags``: short options without a value. ``valued``: short options that take one (glued,
    ``-n5``, or next word). ``long_flags`` / ``long_valued``: long names without the dashes;
    ``long_optional``: ``--name`` or ``--name=value`` only. ``numeric``: ``-20`` shorthand.
    ``max_operands``: None for unlimited. ``checks``: option or ``"operand"`` -> value check.
    ``long_pairs``: long options with two values (jq's ``--arg NAME VALUE``), each value its
    own entry in ``Parsed.options``. ``in_order``: options end at the first operand (xargs:
    what follows is the program it runs). ``forced``: safety flags the harness always puts
    first (``sed --sandbox``, ``rg --no-config``). ``spelling``: see ``Spelling``.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    flags: str = ""
    valued: str = ""
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    long_optional: frozenset[str] = frozenset()
    numeric: bool = False
    max_operands: int | None = None
    checks: Mapping[str, ValueCheck] = attrs.field(factory=dict)
    long_pairs: frozenset[str] = frozenset()
    in_order: bool = False
    forced: tuple[str, ...] = ()
    spelling: Spelling = GNU


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
    long_pairs: str = "",
    in_order: bool = False,
    forced: tuple[str, ...] = (),
    spelling: Spelling = GNU,
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
        long_pairs=_words(long_pairs),
        in_order=in_order,
        forced=forced,
        spelling=spelling,
    )


@attrs.frozen(kw_only=True)
class Parsed:
    """A command line split by a program's option table: options with values, then operands.

    ``positions``: for each option, how many operands came before it (git keeps the order:
    ``--not`` applies to the revisions after it). ``separator``: how many operands came before
    the model's own ``--`` (None without one); only git keeps it (revisions, then paths).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    options: tuple[tuple[str, str | None], ...]
    operands: tuple[str, ...]
    positions: tuple[int, ...] = ()
    separator: int | None = None

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
    positions: list[int] = []
    operands: list[str] = []
    separator: int | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            if spec.spelling.dashdash == "none":
                raise CommandRefused(
                    f"{program}: {program} has no '--' (it would read it as a word of its "
                    "own); leave it out"
                )
            separator = len(operands)
            operands.extend(args[i:])
            break
        if arg == "-" or not arg.startswith("-"):
            operands.append(arg)
            if spec.in_order:
                operands.extend(args[i:])
                break
        elif arg.startswith("--"):
            i = _long_option(program, arg, args, i, spec, options)
        elif spec.numeric and arg[1:].isdigit():
            options.append(("NUM", arg[1:]))
        else:
            i = _short_options(program, arg, args, i, spec, options)
        positions.extend([len(operands)] * (len(options) - len(positions)))
    _check_parsed(program, spec, options, operands)
    return Parsed(
        options=tuple(options),
        operands=tuple(operands),
        positions=tuple(positions),
        separator=separator,
    )


def _long_option(
    program: str,
    arg: str,
    args: Sequence[str],
    i: int,
    spec: OptionSpec,
    options: list[tuple[str, str | None]],
) -> int:
    """One ``--name[=value]`` (its value may be the next argument; a pair option takes the
    next two), appended to ``options``; returns the index of the next argument."""
    name, eq, value = arg[2:].partition("=")
    if name in spec.long_flags and not eq:
        options.append((name, None))
        return i
    if name in spec.long_optional:
        options.append((name, value if eq else None))
        return i
    if name in spec.long_pairs and not eq:
        if i + 2 > len(args):
            raise CommandRefused(f"{program}: option --{name} needs two values")
        options.extend([(name, args[i]), (name, args[i + 1])])
        return i + 2
    if name not in spec.long_valued:
        raise refuse_option(program, arg)
    if not eq:
        if i >= len(args):
            raise CommandRefused(f"{program}: option --{name} needs a value")
        value = args[i]
        i += 1
    options.append((name, value))
    return i


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
    # jq's filter comes before the harness's "--": starting with "-", it would be an option.
    # (A program with no "--" at all never has such an operand: the model's "--" is refused.)
    unmarked = operands[:1] if spec.spelling.dashdash == "after-first" else ()
    for operand in unmarked:
        if operand.startswith("-") and operand != "-":
            raise CommandRefused(
                f"{program}: operand {operand!r} starts with '-' and {program} has no '--' "
                f"to keep it an operand (name a file ./{operand})"
            )
    if (check := spec.checks.get("operand")) is not None:
        for operand in operands:
            if reason := check(operand):
                raise CommandRefused(f"{program}: {reason}")
