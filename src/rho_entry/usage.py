"""The argument parser class of ``rho-agent`` and every subcommand: usage errors exit 1.

Standard library only (and the domain's ``FirstUse``, itself ``re`` alone), and a leaf: the
CLI's parser, ``monitor``, ``export``, ``stats``, ``fork`` and ``serve`` import it without
importing each other.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping, Sequence
from typing import NoReturn

from rho_domain.first_use import FirstUse

USAGE_ERROR = 1  # exit_codes.USAGE: argparse's own code, 2, means "model error" here
# argparse's words for a subcommand's name it does not know, and the names it lists
_INVALID_CHOICE = FirstUse(r"invalid choice: '([^']*)' \(choose from (.*)\)")
_CHOICE = FirstUse(r"'?([^',\s]+)'?")


class UsageParser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors; rho-agent's documented code for them is 1. Every
    parser of rho-agent and its subcommands is one (subparsers inherit the class).

    An unknown option is answered with the nearest known one (``--modl``: did you mean
    ``--model``?); ``commands`` are the subcommands a first word may misspell, for a parser
    whose first positional is free text (``rho-agent monitr ps``: the task ``monitr`` and an
    unknown ``ps``). An option in ``from_environment`` is answered with its variable."""

    commands: Sequence[str] = ()
    # options this parser does not take because it reads them from the environment (``serve``:
    # ``--model`` -> ``RHO_AGENT_MODEL``), said instead of the nearest option it has
    from_environment: Mapping[str, str] = {}
    _words: Sequence[str] = ()

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """argparse's, after refusing a word that is not UTF-8 text (Python hands such bytes
        on as lone surrogates, which fail later, wherever the word is first written: the
        trace, config.yaml, a request)."""
        words = sys.argv[1:] if args is None else list(args)
        for word in words:
            problem = not_utf8(word)
            if problem is not None:
                shown = word.encode("utf-8", "surrogateescape")
                self.error(
                    f"argument {shown!r} is not UTF-8 text ({problem}); rho-agent reads its "
                    "arguments, paths included, as UTF-8"
                )
        self._words = words
        return super().parse_known_args(words, namespace)

    def error(self, message: str) -> NoReturn:
        """Print the usage and ``message`` (with what was probably meant), then exit 1."""
        self.print_usage(sys.stderr)
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}{self._meant(message)}\n")

    def long_options(self) -> list[str]:
        """The ``--`` options this parser knows, its subcommands' included (argparse reports
        a subcommand's unknown option from the parser above it)."""
        options = [o for o in self._option_string_actions if o.startswith("--")]
        for action in self._actions:
            choices = getattr(action, "choices", None)  # a subcommand's: name -> parser
            for sub in choices.values() if isinstance(choices, dict) else ():
                if isinstance(sub, UsageParser):
                    options += sub.long_options()
        return options

    def _meant(self, message: str) -> str:
        """'; did you mean ...' for the words of an 'unrecognized arguments' error, or for a
        subcommand's name that is not one of its choices."""
        import difflib

        choice = _INVALID_CHOICE().search(message)
        if choice is not None:
            given, known = choice.group(1), _CHOICE().findall(choice.group(2))
            near = difflib.get_close_matches(given, known, n=1, cutoff=0.6)
            return f"\n  {given!r} is not a command here: did you mean {near[0]!r}?" if near else ""
        unknown = message.removeprefix("unrecognized arguments: ")
        if unknown == message:
            return ""
        words = unknown.split()
        options = self.long_options()
        hints = []
        for at, word in enumerate(words):
            name, _, value = word.partition("=")
            variable = self.from_environment.get(name)
            if variable is not None:
                after = words[at + 1] if at + 1 < len(words) else "-"
                value = value or ("..." if after.startswith("-") else after)
                hints.append(
                    f"{name}: {self.prog} takes it from the environment, not as an option: "
                    f"{variable}={value} {self.prog}"
                )
            elif word.startswith("--"):
                near = difflib.get_close_matches(name, options, n=1)
                if near:
                    hints.append(f"{word}: did you mean {near[0]}?")
        if self.commands and self._words:
            first = self._words[0]  # where a subcommand's name goes
            command = difflib.get_close_matches(first, self.commands, n=1, cutoff=0.7)
            stray = [w for w in words if not w.startswith("-")]
            if command and first not in self.commands:
                hints.insert(0, f"{first!r} is not a subcommand: did you mean {command[0]!r}?")
            elif stray and not hints and (task := self._task_before(stray[0])) is not None:
                # (after a misspelt option, the stray words are likely its values)
                hints.append(
                    f'a task of several words is one argument: "{" ".join([task, *stray])}"'
                )
        return "".join(f"\n  {hint}" for hint in hints)

    def _task_before(self, stray: str) -> str | None:
        """The word argparse took as the task: the one before the first word left over
        (None when that is an option)."""
        for before, word in zip(self._words, self._words[1:], strict=False):
            if word == stray:
                return None if before.startswith("-") else before
        return None


def parsed(
    parser: argparse.ArgumentParser, words: Sequence[str], *, intermixed: bool = False
) -> argparse.Namespace | int:
    """``words`` parsed by ``parser`` (``intermixed``: options and positionals in any order),
    or the exit code when parsing ended the command: 0 after ``--help`` or ``--version``
    (printed), ``USAGE_ERROR`` after a usage error (printed, by ``UsageParser.error``)."""
    try:
        if intermixed:
            return parser.parse_intermixed_args(list(words))
        return parser.parse_args(list(words))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR


def not_utf8(text: str) -> str | None:
    """None when ``text`` (a command-line word, standard input) is UTF-8 text; else which
    byte is not (``"byte 0xff at offset 3"``). Python decodes such bytes to lone surrogates
    (``surrogateescape``), which no UTF-8 writer accepts."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return None
    try:
        data = text.encode("utf-8", "surrogateescape")
        data.decode("utf-8")
    except UnicodeEncodeError as exc:  # a surrogate that stands for no byte
        return f"character {exc.object[exc.start]!r} at {exc.start}"
    except UnicodeDecodeError as exc:
        return f"byte 0x{data[exc.start]:02x} at offset {exc.start}"
    return None  # pragma: no cover - escaped bytes that decode were never escaped


def seconds(text: str) -> float:
    """An argparse ``type``: a positive, finite number of seconds (a poll, a heartbeat, a
    window). Zero would spin a loop against the database; a negative or NaN window would take
    every live peer for dead."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def port(text: str) -> int:
    """An argparse ``type``: a TCP port, 0 to 65535 (0: any free one). The socket layer keeps
    a larger number's low 16 bits (70000 served on 4464), and refused a negative one naming
    the host."""
    word = text.strip()
    value = int(word) if word.isdigit() else -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(
            f"expected a port from 0 to 65535 (0: any free one), got {text!r}"
        )
    return value


def at_least_one(text: str) -> int:
    """An argparse ``type``: a whole number from 1 (runs or workers at once). ``serve
    --max-runs 0`` was refused naming $RHO_AGENT_SERVER_MAX_RUNS, a variable nobody set;
    ``worker --concurrency 0`` or ``-1`` ran one at a time, and ``serve --durable
    --concurrency 0`` took no run at all, without a word."""
    word = text.strip()
    value = int(word) if word.isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1, got {text!r}")
    return value
