"""The files a git ``credential.helper`` command line may read: secrets by what names them.

git runs every helper with the shell: ``!cmd`` as written, ``/abs/helper args`` as written,
``name args`` as ``git credential-name args``. Before redshell26 only the ``--file`` and
``--socket`` of a helper were secrets, so a helper that is a shell string
(``!f() { cat .tokens/gh; }; f``, ``!echo password=$(cat deploy/token)``) or a program given
a file some other way (``/opt/vault-helper deploy/role.json``, ``aws-helper
--profile-file=deploy/p.ini``, ``store <deploy/x``) left that file readable by ``cat``.

Now every word of every command of the helper names a file (``helper_files``) but the
program that starts the line (``/usr/bin/gh auth git-credential`` does not hide ``gh``):
its options' values (``--x=VALUE``, ``key=VALUE``), its operands, its redirections'
targets, the words inside ``$(...)`` and backquotes, and the words of a quoted word with
blanks, which may be a command string (``sh -c 'cat deploy/t'``, ``"password=$(cat t)"``).
A word that names no file stays a name that no file has (a file made with that name later
is a secret; a directory never is).
A script the helper runs by path (``!sh bin/cred.sh``) or by a bare name on the ``PATH``
(``!cred get``, ``mystore``: ``git-credential-mystore``) is read as ssh wrappers are
(``helper_programs``): its lines' words name files too. What a helper computes (``cat
"$(cat where)"``) is not seen: the walls judge paths, and docs/security.md says so.
Pure: text in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping

from rho_domain.command_words import option_values, words_of
from rho_domain.first_use import FirstUse
from rho_domain.ssh_wrappers import wrapper_commands

__all__ = ["helper_files", "helper_programs"]

# what a shell word may carry that is not part of a file's name: a redirection's operator
# (``2>``, ``<``, ``&>``), a command substitution's or group's marks
_LEADING = FirstUse(r"^(?:\d*[<>]+&?|&>+|[`{}!]+)+")
_TRAILING = FirstUse(r"[`{}]+$")
# a helper that is one plain word (``store``, ``gcloud.sh``, ``/usr/bin/gh``: most machines'
# /etc/gitconfig names one) has no shell to read: its words are itself, at no parsing cost
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/+@:,-")
# The subcommand words the tools that are their own helpers write after their program (each
# vendor's `setup-git`): words, not files; a file named `auth` at the repository's top was
# hidden for `!/usr/bin/gh auth git-credential` (redfiles27). Only right after a program
# run as written (`!gh`, `/usr/bin/gh`): a plain `gh auth` is git's `git credential-gh auth`.
_SUBCOMMANDS: dict[str, tuple[str, ...]] = {
    "gh": ("auth", "git-credential"),
    "glab": ("auth", "git-credential"),
    "gcloud": ("auth", "git-helper"),
    "aws": ("codecommit", "credential-helper"),
}


def helper_files(value: str, env: Mapping[str, str]) -> list[str]:
    """The words of the helper command line ``value`` that may name a file it reads (see
    the module docstring), as written: ``placed`` makes each a path as git places it."""
    shell = value.startswith("!")
    text = value[1:] if shell else value
    if _PLAIN.issuperset(text):  # one word: the program, no file it reads
        return []
    found: list[str] = []
    for line in wrapper_commands(text.replace("`", " ` ")):
        words = [w for w in (_bare(word) for word in words_of(line, env)) if w]
        found += option_values(words, ("file", "socket"), ("--",))
        if any("netrc" in w.rpartition("/")[2] for w in words[:2]):  # contrib's, Getopt
            found += option_values(words, ("file",), ("-",))
        for word in words[
            1 + _subcommand_words(words, shell=shell) :
        ]:  # the program is no file it reads (``gh``)
            if " " in word:  # ``sh -c 'cat deploy/t'``, ``"password=$(cat deploy/t)"``
                found += helper_files(f"!_ {word}", env)  # its words too, each
            name, equals, given = word.partition("=")
            found += [given] if equals else []
            if not word.startswith("-") and not (equals and "/" not in name):
                found.append(word)
    return [w for w in dict.fromkeys(found) if w and not w.isdigit() and any(map(str.isalnum, w))]


def _subcommand_words(words: list[str], *, shell: bool) -> int:
    """How many words after the program of ``words`` are its subcommand (``_SUBCOMMANDS``),
    when the program runs as written (a ``shell`` line's, or a path), not as git's
    ``git credential-NAME``."""
    if not words or not (shell or "/" in words[0]):
        return 0
    tail = _SUBCOMMANDS.get(words[0].rpartition("/")[2], ())
    return len(tail) if tail and tuple(words[1 : 1 + len(tail)]) == tail else 0


def _bare(word: str) -> str:
    """``word`` without the shell's marks around a file's name (``<x``, ``2>x``, ``{``)."""
    return _TRAILING().sub("", _LEADING().sub("", word))


def helper_programs(value: str, env: Mapping[str, str]) -> list[str]:
    """The words of the helper command line ``value`` that may name a script it runs: a
    word with a ``/`` (``!bin/cred.sh``, ``!sh ./cred.sh get``, ``/opt/helper``) and the
    program each command starts by a bare name, which the shell finds on the ``PATH``
    (``!cred get``; ``mystore`` and ``mystore --x y`` as git runs them, ``git
    credential-mystore``: ``git-credential-mystore``). The executors read such a script's
    command lines as a helper's own (``helper_files``), as they read an ssh wrapper's, so
    ``cat deploy/token`` in it is seen (a bare name was not read before redfiles28)."""
    shell = value.startswith("!")
    text = value[1:] if shell else value
    if _PLAIN.issuperset(text):
        if not text or text.startswith("-"):
            return []
        return [text if shell or "/" in text else f"git-credential-{text}"]
    found: list[str] = []
    for line in wrapper_commands(text):
        words = [w for w in (_bare(word) for word in words_of(line, env)) if w]
        if words and "/" not in words[0] and not words[0].startswith("-"):
            found.append(words[0] if shell else f"git-credential-{words[0]}")
        found += (w for w in words if "/" in w and not w.startswith("-"))
    return list(dict.fromkeys(found))
