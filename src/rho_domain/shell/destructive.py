r"""Which bash command lines ask again after "always": decided on the parsed command, not text.

A human who answers "always" for bash approves ordinary work for the session, not everything.
``destructive_reason(command)`` reads the line with the restricted shell's own lexer and parser
(quotes removed and escapes decoded, so ``'rm'``, ``r\\m`` and ``\\rm`` are rm; ``/bin/rm``
is rm by its last path component) and judges every simple command in it:

* every command of every list (``;``, ``&&``, ``||``, newlines), pipeline and subshell;
* every suffix of a command's words that starts with a program this check knows, since
  programs that run programs take the command as a suffix of their words (``env``,
  ``sudo``, ``nice``, ``timeout``, ``nohup``, ``exec``, ``command``, ``busybox``, ``ssh``,
  ``git bisect run``...). After ``xargs`` or ``parallel`` the suffix ends with an unknown word
  (what they append), and their ``{}`` is unknown, as is ``find -exec``'s;
* programs that run code handed to them (``shell.destructive_code``): shell ``-c`` strings,
  ``eval``, here-documents fed to a shell are parsed and judged in turn; a pipe into a shell
  (``curl ... | sh``), inline code of another language (``python -c``), editor commands
  (``vim -c``, ``emacs --eval``), sed's ``e`` command and flag and SQL that writes
  (``psql -c``) ask;
* a file this command line wrote (a redirection target, what curl, wget, tee, cp... name) run
  as a program or a script (``curl -o s.sh URL && sh s.sh``), or fed as code on standard
  input (``sh < s.sh``, ``python3 < s.py``, ``at now < job``), asks; so does any later
  command whose program may read it as code, named (``m4 x.m4``) or by the name it looks for
  (``> Makefile; make``, ``> package.json; npm run x``): every program but those that only
  read, move or print data, unless all the line wrote is plain output (``build.log``)
  (``shell.destructive_written``); the files earlier calls of the session wrote count too,
  when the loop judges a call (``shell.destructive_session``);
* every other word with a blank or an operator in it that parses as a command line (the
  string ``ssh host`` or ``watch`` hands to a shell; the value of ``NAME=value``,
  ``--option=value`` or of a short option it is glued to, ``su -c'...'``; what follows a
  shell escape, ``!cmd``, ``:%!cmd``, ``shell cmd``; a quoted part, ``system('cmd')``:
  ``shell.destructive_texts``); for ``ssh``, ``su``, ``watch``, ``trap``, ``schtasks``,
  ``tmux``, ``screen``, ``watchexec``, ``entr``, ``xterm``... such a word that cannot be
  parsed asks, and so does a shell escape's command anywhere (but in
  ``echo``, ``printf``, ``git``'s words: text);
* a variable that chooses what runs (``PATH=``, ``LD_PRELOAD=``, ``BASH_ENV=``,
  ``GIT_SSH_COMMAND=``, ``PAGER=``...) set for or by any command, and ``alias``, ``hash``,
  ``enable`` (they change what a later name runs) ask;
* redirections that write to a device (``> /dev/sda``; not ``/dev/null``, ``/dev/std*``,
  ``/dev/tty``, ``/dev/fd/*``) or inside a ``.git`` directory (hooks and config run later),
  a disk device named as an argument (``cp x /dev/sda``) and a path inside ``.git`` named
  to a program that may write it (``tee``, ``cp``, ``chmod``, ``sed``; not ``cat``, ``ls``,
  ``grep``, ``git``), ask (``shell.destructive_targets``);
* the programs of ``shell.destructive_table`` (rm, dd, mkfs, chmod -R, rsync --delete, tar
  --remove-files, ``kubectl delete``, ``docker rm``..., git push --force, reset --hard, ...).

Fail closed: a line, shell string or here-document the parser cannot read (variables,
``$(...)``, keywords, more than 8192 characters, control characters) asks again with the
parser's reason, and so does nesting deeper than ``MAX_DEPTH``; the walk over the parsed line is
``shell.destructive_walk``'s.

Not read, like any program's own behaviour: what a script or build tool does with files the
line did not write (``./deploy.sh``, ``make``, ``python script.py``), and plain overwrites
(``mv``, ``cp``, ``> file``, ``sed -i``, one file's ``rm``), which are ordinary work in a
developer profile.

Contract: ``destructive_reason(command) -> str``, the reason shown to the human, or "";
``line_reading(command) -> (reason, recognised)``: the same reason, and what the check
recognised in a line that may run unasked after "always" (the programs it runs, the files it
writes), which the approver of its first call is shown instead of the generic reason.
"""

from __future__ import annotations

from collections.abc import Iterable

from rho_domain.shell.destructive_ledger import WORK_BUDGET
from rho_domain.shell.destructive_walk import MAX_DEPTH, LineCheck

__all__ = ["MAX_DEPTH", "WORK_BUDGET", "destructive_reason", "line_reading"]


def destructive_reason(command: str) -> str:
    """Why ``command`` asks again after "always" (shown to the human), or "" when it may run
    unasked. See the module docstring for what is read."""
    return LineCheck().line(command, 0, "")


def line_reading(command: str) -> tuple[str, str]:
    """``destructive_reason(command)``, and when it is "", what the line was read to do:
    ``runs make, pytest; writes build.log`` (at most ``_SHOWN`` of each, then how many
    more), or "" when it runs nothing."""
    check = LineCheck()
    if why := check.line(command, 0, ""):
        return why, ""
    parts = [
        f"{verb} {_listed(names)}"
        for verb, names in (
            ("runs", dict.fromkeys(check.seen)),
            ("writes", sorted(check.files.line)),
        )
        if names
    ]
    if not parts:
        return "", ""
    return (
        "",
        f'bash {"; ".join(parts)} (ordinary work: "always" lets such a line run unasked)',
    )


_SHOWN = 8


def _listed(names: Iterable[str]) -> str:
    shown = list(names)
    more = f" and {len(shown) - _SHOWN} more" if len(shown) > _SHOWN else ""
    return ", ".join(shown[:_SHOWN]) + more
