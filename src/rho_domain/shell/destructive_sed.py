r"""sed in the destructive-command check: its ``e`` command and the ``e`` flag of ``s`` run
shell commands (``sed 's/.*/rm -rf x/e'``, ``sed '1e rm -rf x'``).

The scripts are the values of ``-e``/``--expression`` (glued or not, in a short cluster such as
``-ne``), else the first operand. A script is read command by command: addresses (numbers,
``$``, ``/regex/``, ``\cregexc``, ``first~step``, ``addr,+N``, ``!``), then the command letter;
``s`` and ``y`` skip their delimited parts (``s``'s flags are read: ``e`` asks, ``w FILE``
runs to the end of the line), ``a``/``i``/``c`` text and ``r``/``w``/``b``/``:``... arguments
are skipped, ``#`` comments too. A script file (``-f``, ``--file``), a glob or generated word,
or a script this reading cannot follow asks: fail closed.

Contract: ``sed_reason(name, args) -> str``, the reason to ask again or "".
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.shell.destructive_words import Arg

_TEXT = frozenset("aic")  # text to the end of the line
_TO_LINE_END = frozenset("aicrRwW")
_ARGUMENT = frozenset("btT:lLqQ")  # an argument to the end of the command
_SKIPPED = frozenset(" \t\n;{}!,~+$0123456789")


def sed_reason(name: str, args: Sequence[Arg]) -> str:
    """Why ``sed args`` asks again after "always", or ""."""
    scripts = _scripts(name, args)
    if isinstance(scripts, str):
        return scripts
    for script in scripts:
        if why := _runs(script):
            return f"{name}: {why}"
    return ""


def _scripts(name: str, args: Sequence[Arg]) -> list[str] | str:
    """The scripts given on the command line, or the reason to ask."""
    scripts: list[str] = []
    words = list(args)
    while words:
        arg = words.pop(0)
        if arg is None:
            return f"{name} with a glob or generated word"
        if arg == "--file" or arg.startswith("--file="):
            return f"{name} {arg}: runs a script file the approval check cannot read"
        if arg == "--expression" or arg.startswith("--expression="):
            scripts.append(arg.split("=", 1)[1] if "=" in arg else str(words.pop(0) or ""))
        elif arg == "--":
            if not scripts and words:
                scripts.append(str(words[0]))
            break
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            if why := _cluster(name, arg, words, scripts):
                return why
        elif not arg.startswith("-") and not scripts:
            scripts.append(arg)
            break  # the script, then the files
    return scripts


def _cluster(name: str, arg: str, words: list[Arg], scripts: list[str]) -> str:
    """Read a short cluster (``-ne SCRIPT``, ``-nf FILE``, ``-i.bak``) into ``scripts``."""
    for j, letter in enumerate(arg[1:], start=2):
        if letter == "f":
            return f"{name} {arg}: runs a script file the approval check cannot read"
        if letter in "el":
            value = arg[j:] or str(words.pop(0) if words else "")
            if letter == "e":
                scripts.append(value)
            return ""
        if letter == "i":
            return ""  # -i.bak: the rest is a suffix
    return ""


def _runs(script: str) -> str:
    """Why ``script`` may run a command, or ""; fails closed on what it cannot read."""
    i, n = 0, len(script)
    while i < n:
        ch = script[i]
        if ch in _SKIPPED:
            i += 1
        elif ch == "/":
            i = _closing(script, i + 1, "/")
        elif ch == "\\" and i + 1 < n:
            i = _closing(script, i + 2, script[i + 1])
        elif ch in "sy" and i + 1 < n:
            i, why = _substitution(script, i)
            if why:
                return why
        elif ch == "e":
            return "the e command runs a shell command"
        elif ch == "#" or ch in _TO_LINE_END:
            i = _after(script, i, "\n")
        elif ch in _ARGUMENT:
            i = _after(script, i, ";\n")
        elif ch.isalpha() or ch == "=":
            i += 1
        else:
            return f"a sed script the approval check cannot read ({ch!r})"
    return ""


def _substitution(script: str, i: int) -> tuple[int, str]:
    """Skip ``s/a/b/flags`` or ``y/a/b/`` at ``i``; (where reading goes on, the reason)."""
    delimiter, n = script[i + 1], len(script)
    end = _closing(script, _closing(script, i + 2, delimiter), delimiter)
    if end > n:
        return n, "a sed script the approval check cannot read (an unclosed s or y)"
    flags_end = end
    while flags_end < n and script[flags_end].isalnum():
        flags_end += 1
    flags = script[end:flags_end] if script[i] == "s" else ""
    if "e" in flags:
        return n, "the s command's e flag runs the result as a shell command"
    if "w" in flags:  # w FILE: the file name runs to the end of the line
        return _after(script, flags_end, "\n"), ""
    return flags_end, ""


def _closing(script: str, start: int, delimiter: str) -> int:
    """The index after the unescaped ``delimiter`` closing a part that starts at ``start``
    (past the end when there is none)."""
    j = start
    while j < len(script) and script[j] != delimiter:
        j += 2 if script[j] == "\\" else 1
    return j + 1


def _after(script: str, start: int, stops: str) -> int:
    """The index after the first of ``stops`` from ``start``, or the end."""
    ends = [found for stop in stops if (found := script.find(stop, start)) >= 0]
    return min(ends) + 1 if ends else len(script)
