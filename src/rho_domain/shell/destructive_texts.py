r"""The texts in a command's words that a program could hand to a shell, in the
destructive-command check (``shell.destructive``).

``shell_texts(word)`` gives, for one parsed word: the word itself, the value of
``NAME=value`` (instead of the word) or of ``--option=value``, a value glued to a short option
(``su -c'rm -rf x'``), and what follows a shell escape (``!rm -rf x`` in vim, gdb, less or an
ftp client, ``:%!...``, ``shell ...``, ``\! ...`` in psql) or a running address (socat's
``EXEC:cmd``, ``SYSTEM:cmd``); only those with a blank or an operator. Each comes with
``escaped``: True for the text after a shell escape or in a running address, which is a
shell command by its very shape, so one the check cannot read asks (``!rm -rf ~``: the
restricted parser refuses ``~``, and the text was skipped as prose before). Other texts
merely may be command lines: one that does not parse is searched for quoted parts
(``quoted_parts``: ``os.system('rm -rf x')``).

Contract: ``shell_texts(word) -> list[tuple[str, bool]]``, ``quoted_parts(text) -> list[str]``;
``SHELL_STRING_TAKERS``, the programs known to hand such a word to a shell (one the check
cannot read asks), and ``PRINTERS``, those whose words are only text.
"""

from __future__ import annotations

import re

from rho_domain.shell.destructive_variables import ASSIGNMENT
from rho_domain.shell.destructive_words import Arg

# programs that hand a word to a shell (tmux new 'cmd', screen -X stuff, watchexec 'cmd',
# nodemon --exec, entr -s, xterm -e, socat EXEC:, rsync -e, scp -o ProxyCommand=, man -P;
# make's variables, CC='cmd', run in its recipes, and make --eval's rules):
# such a word the check cannot read asks
SHELL_STRING_TAKERS = frozenset(
    [
        "ssh", "su", "runuser", "watch", "script", "flock", "env", "sudo", "doas", "trap",
        "schtasks", "tmux", "screen", "byobu", "watchexec", "nodemon", "entr", "xterm",
        "konsole", "gnome-terminal", "kitty", "dtach", "abduco", "socat", "rsync", "scp",
        "man", "make", "gmake",
    ]
)  # fmt: skip
PRINTERS = frozenset({"echo", "printf", "git"})  # their words are text, never run here
_LINE_CHARACTERS = frozenset(" \t\n;|&()<>")
# A shell escape of an editor, debugger, pager or SQL client: [:][range][silent][r|w] ! text,
# or "shell text", "system text", "\! text"
_SHELL_ESCAPE = re.compile(
    r"^\s*[:+]?\s*(?:silent!?\s*)?[.%$0-9,]*\s*(?:r\s|read\s|w\s|write\s)?\s*"
    r"(?:\\!|!|shell\s|system\s)\s*(.+)$",
    re.DOTALL,
)
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")
# an address that runs a command: socat's EXEC:cmd and SYSTEM:cmd
_RUNNING_ADDRESS = re.compile(r"^(?:exec|system):(.+)$", re.IGNORECASE | re.DOTALL)


def shell_texts(word: Arg) -> list[tuple[str, bool]]:
    """The texts in ``word`` a program could hand to a shell, each with whether it follows a
    shell escape (see the module docstring)."""
    if word is None:
        return []
    match = ASSIGNMENT.match(word)
    texts = [match.group(2)] if match else [word]
    if not match and "=" in word:
        texts.append(word.split("=", 1)[1])
    if word.startswith("-") and not word.startswith("--") and len(word) > 2:
        texts.append(word[2:])
    found = [(text, False) for text in texts]
    found += [(m.group(1), True) for m in map(_SHELL_ESCAPE.match, texts) if m]
    found += [(m.group(1), True) for m in map(_RUNNING_ADDRESS.match, texts) if m]
    return [(text, escaped) for text, escaped in found if _LINE_CHARACTERS & set(text)]


def quoted_parts(text: str) -> list[str]:
    """The quoted parts of ``text`` (code of another language) that may be command lines."""
    parts = (a or b for a, b in _QUOTED.findall(text))
    return [part for part in parts if _LINE_CHARACTERS & set(part)]
