"""``$PWD`` read as the directory it names, for the destructive-command check.

The restricted shell's parser reads literal words only, so ``cp x "$PWD"/out`` and ``ls
$PWD/*`` asked with the parser's reason ("variable expansion $P is not allowed"). Yet
``$PWD`` is the command's own directory, as ``.`` is: bash sets it to the directory it starts
in (a ``PWD`` from the environment that names another is replaced), and only ``cd`` (which
the check follows: ``shell.destructive_cwd``) or an assignment changes it. So ``$PWD`` and
``${PWD}`` outside single quotes are read as ``.`` (``"$PWD"/*`` as ``./*``), and the line
is judged as the paths it names, unless any word of the line names ``PWD`` after its quotes
are removed (``PWD=/etc``, ``export PWD``, ``read PWD``, ``printf -v P''WD /etc``): then
nothing is replaced and the parser's reason stands.

``$(pwd)`` and a backquoted ``pwd`` are not replaced (``pwd`` may be a function the
environment exports, ``BASH_FUNC_pwd%%``); they ask with a reason that names them.

Contract: ``parse_reading_pwd(text) -> CommandList`` (raises ``CommandRefused``), which
the walk parses each line with; ``parsed_as_dot(text) -> CommandList | None``: the line
parsed with each ``$PWD`` outside single quotes as ``.``, or None; ``as_dot(text) -> str``;
``names_pwd(tree) -> bool``; ``unread_reason(text) -> str``: the reason for a ``$(pwd)``
the parser refused, or "".
"""

from __future__ import annotations

import re

from rho_domain.errors import CommandRefused
from rho_domain.shell.parser import parse
from rho_domain.shell.syntax_tree import CommandList, Subshell

_PWD = re.compile(r"\$(PWD|\{PWD\})(?![A-Za-z0-9_])")
_SUBSTITUTED = re.compile(r"\$\(\s*pwd\s*(-[LP]\s*)?\)|`\s*pwd\s*`")


def as_dot(text: str) -> str:
    """``text`` with every ``$PWD``/``${PWD}`` outside single quotes written ``.``."""
    if "PWD" not in text:
        return text
    out: list[str] = []
    quoted = escaped = False
    index = 0
    while index < len(text):
        char = text[index]
        match = None if quoted or escaped else _PWD.match(text, index)
        if match is not None:
            out.append(".")
            index = match.end()
            continue
        out.append(char)
        if escaped:
            escaped = False
        elif char == "\\" and not quoted:
            escaped = True
        elif char == "'":
            quoted = not quoted
        index += 1
    return "".join(out)


def parse_reading_pwd(text: str) -> CommandList:
    """``parse(text)``, or when it refuses, the text parsed with ``$PWD`` as ``.``
    (``parsed_as_dot``); raises ``CommandRefused`` naming ``$(pwd)`` or ``$PWD`` read as
    ``./`` when that is why it cannot be read (``unread_reason``)."""
    try:
        return parse(text)
    except CommandRefused as exc:
        if (tree := parsed_as_dot(text)) is not None:
            return tree
        if why := unread_reason(text):
            raise CommandRefused(why) from exc
        raise


def parsed_as_dot(text: str) -> CommandList | None:
    """``text`` parsed with each ``$PWD`` read as ``.``, or None: it holds none, a word
    names ``PWD``, or the text is still one the parser refuses."""
    dotted = as_dot(text)
    if dotted == text:
        return None
    try:
        tree = parse(dotted)
    except CommandRefused:
        return None
    return None if names_pwd(tree) else tree


def names_pwd(tree: CommandList) -> bool:
    """True when a word or a redirection's target of ``tree`` holds ``PWD`` (quotes
    removed): the line may set it, so ``$PWD`` is not the directory."""
    for _, pipeline in tree.items:
        for command in pipeline.commands:
            if isinstance(command, Subshell):
                if names_pwd(command.body):
                    return True
                continue
            texts = [*command.argv, *(r.target or "" for r in command.redirections)]
            texts += [r.heredoc or "" for r in command.redirections]
            if any("PWD" in text for text in texts):
                return True
    return False


def unread_reason(text: str) -> str:
    """Why a line holding ``$(pwd)`` asks: named, with what to write instead."""
    if found := _SUBSTITUTED.search(text):
        return (
            f"the approval check reads literal words only, and {found.group(0)} is a command "
            "it does not run: write ./ (or $PWD) for the current directory"
        )
    if (dotted := as_dot(text)) != text:
        try:
            parse(dotted)
        except CommandRefused as exc:
            return f"read with $PWD as the directory it is, ./: {exc}"
    return ""
