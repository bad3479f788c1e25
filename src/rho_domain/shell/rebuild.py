"""The argv the harness runs, built again from the parsed, validated command.

The model's spelling never reaches a program. ``split_options`` reads a command into options
(each with its value) and operands; ``rebuild`` writes it out again in one normal spelling:

    program, forced safety flags, each option, "--", operands

* forced flags (``sed --sandbox``, ``rg --no-config``) always, first, whatever the model
  wrote: never "add X unless X is there", which a file named ``--sandbox`` after ``--`` beat;
* a short option's value glued to it (``-e--``), a long one after ``=`` (``--regexp=--``), so
  a value is one word that no parser can read as an option or as the end of the options;
  an empty short value is the next word (``-d ''``): the program takes it as the value;
* the model's own ``--`` is consumed by the parser; the harness places its own, so an operand
  (or an item ``xargs`` appends after the argv) is never read as an option. Programs that
  have no ``--`` (echo, ps) get none, and ``split_options`` refuses their operands that
  start with ``-``; jq takes it only after its filter.

``rebuild_in_order`` keeps the options among the operands where the model put them, and the
model's ``--`` where it was (git: revisions, then paths; ``--not`` applies to what follows).
"""

from __future__ import annotations

from rho_domain.shell.options import OptionSpec, Parsed


def option_words(name: str, value: str | None, spec: OptionSpec) -> tuple[str, ...]:
    """One parsed option (``name`` as ``Parsed`` holds it) in the program's normal spelling."""
    spelling = spec.spelling
    if name == "NUM":
        assert value is not None
        if spelling.numeric_as:
            return (f"--{spelling.numeric_as}={value}",)
        return (f"-{value}",)
    if value is not None and name in spelling.long_for:
        return (f"--{spelling.long_for[name]}={value}",)
    letter = spelling.short_for.get(name) or (name if len(name) == 1 else None)
    if letter is not None:
        if value is None:
            return (f"-{letter}",)
        if spelling.glue and value:
            return (f"-{letter}{value}",)
        return (f"-{letter}", value)
    if value is None:
        return (f"--{name}",)
    if spelling.long_eq or name in spec.long_optional:
        return (f"--{name}={value}",)
    return (f"--{name}", value)


def _options(parsed: Parsed, spec: OptionSpec, start: int, stop: int) -> list[str]:
    """The words of ``parsed.options[start:stop]``; a pair option's two entries are one, and
    a forced flag the model wrote too is left out (it is already first)."""
    out: list[str] = []
    i = start
    while i < stop:
        name, value = parsed.options[i]
        if name in spec.long_pairs and value is not None:
            second = parsed.options[i + 1][1]
            assert second is not None
            out += [f"--{name}", value, second]
            i += 2
            continue
        spelled = option_words(name, value, spec)
        if not (len(spelled) == 1 and spelled[0] in spec.forced):
            out += spelled
        i += 1
    return out


def rebuild(program: str, parsed: Parsed, spec: OptionSpec) -> tuple[str, ...]:
    """``program``, ``spec.forced``, every option, the harness's ``--``, the operands.

    An option the model wrote that is one of the forced flags (``sed --sandbox``) is not
    repeated, so a rebuilt argv rebuilds to itself."""
    words = [program, *spec.forced, *_options(parsed, spec, 0, len(parsed.options))]
    operands = list(parsed.operands)
    dashdash = spec.spelling.dashdash
    if dashdash == "after-first" and operands:
        words.append(operands.pop(0))
    if dashdash != "none" and spec.max_operands != 0:
        words.append("--")
    return (*words, *operands)


def rebuild_in_order(parsed: Parsed, spec: OptionSpec) -> tuple[str, ...]:
    """The options and operands of ``parsed`` in the model's order, each option in the normal
    spelling, with a ``--`` only where the model wrote one (git's revisions/paths split).
    ``spec.forced`` is not added: the caller places git's hardening."""
    words: list[str] = []
    i = 0
    for k in range(len(parsed.operands) + 1):
        stop = i
        while stop < len(parsed.options) and parsed.positions[stop] <= k:
            stop += 1
        words += _options(parsed, spec, i, stop)
        i = stop
        if parsed.separator == k:
            words.append("--")
        if k < len(parsed.operands):
            words.append(parsed.operands[k])
    return tuple(words)
