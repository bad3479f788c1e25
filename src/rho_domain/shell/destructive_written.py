"""A file the command line wrote, then handed to a program that may run it, in the
destructive-command check (``shell.destructive``).

A line that writes a file and then runs a program runs what it wrote, when that program reads
code from files: named (``m4 x.m4``, ``gdb -x s.gdb``, ``uv run x.py``, ``sftp -b batch``) or
by the name it looks for in the working directory (``make`` reads ``Makefile``, ``npm run``
``package.json``, ``pip install .`` ``setup.py``, ``direnv allow`` ``.envrc``, ``pytest``
``conftest.py``, ``cargo`` ``build.rs``...). Listing those programs and their files one by
one would never end, so the rule is the other way round: after the line wrote a file, every
later command asks unless its program only reads, moves or prints data (``DATA_ONLY``: it
runs no file as code), or every file written so far is plain output (``build.log``,
``notes.txt``, ``out.csv``: no tool reads such a name as code) and none of them is named to
that program. Programs that run code handed to them (shells, interpreters, ``sed``, ``awk``,
``find -exec``...) are judged by their own rules too.

Contract: ``written_reason(name, words, earlier) -> str``: why ``name words`` asks, given
the paths ``earlier`` commands of the line wrote (normalised), or "".
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence, Set

from rho_domain.shell.destructive_words import Arg

# Programs that read, move, compare or print files and run none of them as code (shells,
# interpreters, build tools, package managers and anything unknown are not here). sed, awk,
# find and tar run code only through options their own rules judge.
DATA_ONLY = frozenset(
    [
        "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "ls",
        "tree", "find", "wc", "sort", "uniq", "cut", "tr", "paste", "join", "comm", "diff",
        "cmp", "file", "stat", "du", "df", "echo", "printf", "true", "false", ":", "cd",
        "pwd", "test", "[", "sleep", "mkdir", "touch", "cp", "mv", "rm", "rmdir", "ln",
        "chmod", "tee", "base64", "xxd", "od", "hexdump", "strings", "md5sum", "sha1sum",
        "sha256sum", "sha512sum", "basename", "dirname", "realpath", "readlink", "date",
        "jq", "yq", "curl", "wget", "gzip", "gunzip", "zcat", "bzip2", "xz", "zip",
        "unzip", "tar", "sed", "awk", "gawk", "mawk", "column", "nl", "fold", "fmt", "rev",
        "tac", "iconv", "split", "seq", "whoami", "id", "uname", "which", "type", "export",
        "unset", "wait", "ps", "git",
    ]
)  # fmt: skip
# Names no tool reads as code: what a line writes to keep output (a log, text, a table)
# (not .diff nor .patch: git apply and patch turn them into any file)
_PLAIN = (".log", ".txt", ".out", ".err", ".csv", ".tsv", ".md")
_DEVICES = ("/dev/",)
_CODE_NAMES = frozenset(["cmakelists.txt"])  # plain by its suffix, read as code by cmake


# Programs whose words name what they write (every word is taken: an option or a URL named
# as written only adds a reason to ask); the in-place editors and sort only with their option
_WRITERS = frozenset(
    [
        "curl", "wget", "tee", "cp", "mv", "install", "ln", "scp", "rsync", "aria2c", "unzip",
        "tar", "patch",
    ]
)  # fmt: skip
_IN_PLACE = {"sed": ("-i", "--in-place"), "perl": ("-i", "-pi", "-ni"), "sort": ("-o", "--output")}


def written_by(name: str | None, words: Sequence[Arg]) -> list[str]:
    """The words of ``name words`` that may name a file it writes."""
    known = [w for w in words if w is not None]
    if name in _WRITERS:
        return known
    marks = _IN_PLACE.get(name or "")
    if marks and any(w.startswith(marks) for w in known):
        return known
    return []


def written_reason(name: str, words: Sequence[Arg], earlier: Set[str]) -> str:
    """Why ``name`` run with ``words`` asks because an earlier command of the line wrote a
    file it may read as code, or ""."""
    files = sorted(p for p in earlier if p and not p.startswith(_DEVICES))
    if not files or name in DATA_ONLY:
        return ""
    for word in (w for w in words if w):
        named = {posixpath.normpath(w) for w in (word, word.split("=", 1)[-1]) if w}
        if hit := next((path for path in files if path in named), None):
            return f"{name} reads {hit}, which this command line writes first"
    if code := [path for path in files if not _plain(path)]:
        shown = next((p for p in code if not p.startswith("-")), f"files ({code[0]} ...)")
        return (
            f"{name} runs after this command line writes {shown}, which it may read as code "
            "(a Makefile, package.json, setup.py, .envrc, a script it is given...)"
        )
    return ""


def _plain(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].casefold()
    return name.endswith(_PLAIN) and name not in _CODE_NAMES
