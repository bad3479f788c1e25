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
that program, which is not one that runs a Markdown file's code blocks (``runme``, ``mask``,
``xc``, ``mdsh`` find ``README.md`` or ``maskfile.md`` by name). A program is not data
only when it runs one (``find -exec``, ``git bisect run``, ``xargs`` with anything but a
data program) or hooks that may read what was written (``git commit``: a
``.pre-commit-config.yaml``, a ``.husky/`` script). A git command that puts another
revision's files in the work tree (``git checkout other``, ``git merge``, ``git stash pop``)
writes files it never names. A word names a written
file by itself, by the value of ``--option=`` or of a short option glued to it (``make
-fx.txt``), or by its last component (a ``cd`` or an absolute path reach it too); a glob or
what ``xargs`` appends may name any. Programs that run code handed to them (shells,
interpreters, ``sed``, ``awk``...) are judged by their own rules too.

Contract: ``written_reason(name, words, earlier) -> str``: why ``name words`` asks, given
the paths ``earlier`` commands of the line wrote (normalised), or ""; ``written_by(name,
words)``, the paths a command may write; ``data_only(name, words)``, whether it runs no file
as code.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence, Set

from rho_domain.earlier_writes import EARLIER_CALL
from rho_domain.shell.destructive_git import git_subcommand
from rho_domain.shell.destructive_unnamed_writes import unnamed_writes, writes_unnamed
from rho_domain.shell.destructive_words import Arg, long_hits, short_hits, split_options

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
# plain by their suffix, read as code by the tool that looks for them: cmake's
# CMakeLists.txt, pytest's doctests (its default --doctest-glob is test*.txt), the
# requirements pip-sync and pipenv install by default
_CODE_TEXTS = ("cmakelists.txt", "test", "requirements", "constraints")
# programs that run the code blocks of a Markdown or text file they find by name (runme, xc
# and mdsh: README.md; mask: maskfile.md) or are given (cog, quarto, jupytext --execute,
# mdbook test): after such a write, plain output is code to them. So it is to another
# agent's CLI: AGENTS.md, CLAUDE.md, GEMINI.md, CONVENTIONS.md are instructions it obeys,
# with a shell of its own (codex exec, claude -p)
_TEXT_RUNNERS = frozenset(
    [
        "runme", "mdsh", "mask", "xc", "cog", "quarto", "jupytext", "mdbook", "claude", "codex",
        "gemini", "aider", "opencode", "goose", "amp", "cursor-agent", "copilot", "qwen",
        "crush", "droid", "auggie", "kiro-cli", "cline", "rho-agent",
        # the packages some of them are fetched by (npx, bunx, pnpm dlx, uvx, pipx run)
        "claude-code", "gemini-cli", "aider-chat", "opencode-ai", "qwen-code", "codex-cli",
    ]
)  # fmt: skip
# find's actions and git's subcommands that run a program or hooks (a pre-commit
# configuration, .husky/ scripts, the project's test command): not data only
_FIND_RUNS = frozenset(["-exec", "-execdir", "-ok", "-okdir"])
_FIND_WRITES = frozenset(["-fprint", "-fprint0", "-fprintf", "-fls"])
_GIT_RUNS = frozenset(
    [
        "commit", "merge", "pull", "checkout", "switch", "rebase", "am", "cherry-pick",
        "revert", "push", "bisect", "worktree", "clone", "submodule", "gc", "stash",
    ]
)  # fmt: skip
# git's subcommands that write the files a patch, a mailbox or a bundle names, or a remote's
# (pull and submodule update bring another repository's files, as clone and curl -o do)
_GIT_WRITES = frozenset(["apply", "am", "format-patch", "bundle", "pull", "submodule"])
# git's subcommands that put another revision's files in the work tree (a branch, a fetched
# FETCH_HEAD, a stash) without naming them: a later make reads the Makefile they brought.
# Their words name revisions, not what they write; ``git stash`` (push) only goes back to
# HEAD, and its other verbs but these show or drop what it holds
_GIT_TREE = frozenset(
    [
        "checkout", "switch", "merge", "rebase", "cherry-pick", "revert", "reset", "restore",
        "read-tree", "checkout-index", "worktree", "bisect", "update-ref",
    ]
)  # fmt: skip
_STASH_WRITES = frozenset(["pop", "apply", "branch"])
# bisect's verbs that only show (every other one checks out a revision: start, good, bad,
# skip, next, replay, reset <commit>); fetch's option that moves the checked-out branch
_BISECT_SHOWS = frozenset(["log", "visualize", "view", "terms", "help"])
_UPDATE_HEAD = frozenset(["update-head-ok"])
_OUTPUT = frozenset(["output", "output-directory"])
_UNNAMED = "the files "
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_XARGS_VALUED = frozenset(["-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s"])


# Programs whose words name what they write (every word is taken: an option or a URL named
# as written only adds a reason to ask); the in-place editors and sort only with their option
_WRITERS = frozenset(
    [
        "curl", "wget", "tee", "cp", "mv", "install", "ln", "scp", "rsync", "aria2c", "unzip",
        "tar", "patch",
    ]
)  # fmt: skip
IN_PLACE = {
    "sed": ("-i", "--in-place"),
    "perl": ("-i", "-pi", "-ni"),
    "sort": ("-o", "--output"),
    # the editors that rewrite the files they name with the command's own words: yq -i,
    # crudini --set, json -I, dasel put; sd and ex always ("" marks every word)
    "yq": ("-i", "--in", "-yi", "-Yi"),  # --in-place (--inplace for Go's yq), -y -i
    "crudini": ("--set", "--merge", "--del", "--ini-options"),
    "json": ("-I", "--in-place"),
    "dasel": ("put", "delete", "-w", "--write"),
    "sd": ("",),
    "ex": ("",),
}
_NAMING = frozenset(["patch", "git", "find", *_WRITERS])


def writes_named(name: str | None) -> bool:
    """True when ``written_by`` may find a path in ``name``'s words."""
    return name in _NAMING or name in IN_PLACE or writes_unnamed(name)


def written_by(name: str | None, words: Sequence[Arg]) -> list[str]:
    """The paths ``name words`` may write: its words, and the values in them (``-oFILE``,
    ``--output=FILE``), for the programs that write what they name."""
    if not writes_named(name):
        return []
    if writes_unnamed(name):  # gh pr checkout, hg update, npm pkg set
        return [marker] if (marker := unnamed_writes(name, words)) else []
    known = [v for w in words if w is not None for v in _values(w)]
    if name == "patch":
        return [_unnamed(name), *known]
    if name in _WRITERS:
        return known
    if name == "git":  # apply, am: the patch's files; log/diff --output=, archive -o...
        sub = git_subcommand(words)
        output = any(long_hits(w, _OUTPUT) for w in known) or (
            sub in ("archive", "format-patch") and any(w.startswith("-o") for w in known)
        )
        if sub == "mv":
            return known
        if _moves_tree(sub, known):
            return [_unnamed(f"git {sub}")]
        if sub in _GIT_WRITES or output:
            return [_unnamed(f"git {sub}"), *known]
        return []
    if name == "find" and _FIND_WRITES & set(known):
        return known
    marks = IN_PLACE.get(name or "")
    if marks and any(w.startswith(marks) for w in known):
        return known
    return []


def _moves_tree(sub: str | None, known: Sequence[str]) -> bool:
    """True when ``git sub known`` puts another revision's files in the work tree, or moves
    the checked-out branch under it (``update-ref HEAD other``, ``fetch -u``: the next ``git
    stash``, which only goes back to HEAD, brings that revision)."""
    if sub == "bisect":  # its verb, the word after it (a branch may be named log)
        at = known.index(sub) + 1
        return not (known[at : at + 1] and known[at] in _BISECT_SHOWS)
    if sub == "stash":
        return bool(_STASH_WRITES & set(known))
    if sub == "fetch":
        options, _ = split_options(known)
        return bool(short_hits(options, "u")) or any(long_hits(o, _UPDATE_HEAD) for o in options)
    return sub in _GIT_TREE


def written_reason(
    name: str, words: Sequence[Arg], earlier: Set[str], session: Set[str] = frozenset()
) -> str:
    """Why ``name`` run with ``words`` asks because an earlier command of the line, or an
    earlier call of the session (``session``), wrote a file it may read as code, or ""."""
    files = sorted(p for p in {*earlier, *session} if p and not p.startswith(_DEVICES))
    if not files or data_only(name, words):
        return ""
    by = {p: f"{EARLIER_CALL} wrote" for p in session if p not in earlier}
    for word in words:
        if word is None:  # a glob or what xargs appends: it may name any of them
            first = files[0]
            return f"{name} runs on a generated word after {_who(by, first)} {first}"
        if hit := next((path for path in files if _names(word, path)), None):
            return f"{name} reads {hit}, which {by.get(hit, 'this command line writes first')}"
    # a README.md's code blocks are its tasks; an agent's CLI may come wrapped or fetched
    # (env claude, timeout 60 codex, npx @openai/codex, uvx --from aider-chat aider)
    runs_text = any(_text_runner(w) for w in (name, *words))
    if code := [path for path in files if runs_text or not _plain(path)]:
        named = [p for p in code if p.startswith(_UNNAMED)] + [p for p in code if p[0] != "-"]
        shown = named[0] if named else code[0]
        return (
            f"{name} runs after {_who(by, shown)} {shown if named else f'files ({shown} ...)'}"
            ", which it may read as code (a Makefile, package.json, setup.py, .envrc, a script "
            "it is given...)"
        )
    return ""


def _text_runner(word: Arg) -> bool:
    """True when ``word`` names a text runner: a program (``/usr/bin/claude``), a package
    (``@openai/codex@latest``, ``aider-chat==0.86``) or an option's value naming one
    (``--from=aider-chat``)."""
    for value in _values(word) if word else ():
        package = value.rsplit("/", 1)[-1].casefold()
        if package.lstrip("@").split("@", 1)[0].split("=", 1)[0] in _TEXT_RUNNERS:
            return True
    return False


def _who(by: dict[str, str], path: str) -> str:
    """Who wrote ``path``: "this command line writes", or the earlier call that wrote it."""
    return by.get(path, "this command line writes")


def _unnamed(writer: str) -> str:
    """What stands for the files a patch names, which the line does not show."""
    return f"{_UNNAMED}{writer} writes"


def data_only(name: str, words: Sequence[Arg]) -> bool:
    """True when ``name words`` runs no file as code (``find -exec``, ``git commit`` do)."""
    if name == "find":
        return not _FIND_RUNS & set(words)
    if name == "git":
        return git_subcommand(words) not in _GIT_RUNS
    if name == "xargs":  # as data only as the program it runs
        valued = [i + 1 for i, w in enumerate(words) if w in _XARGS_VALUED]
        program = next(
            (w for i, w in enumerate(words) if i not in valued and w and w[0] != "-"), ""
        )
        return program in DATA_ONLY and program != "xargs"
    return name in DATA_ONLY


def _names(word: str, path: str) -> bool:
    """True when ``word`` may name the written ``path``: itself, the value of ``--option=``
    or of a short option it is glued to (``make -fx.txt``), compared by the last component
    too (a ``cd`` earlier in the line, ``../x.txt`` or an absolute path reach it as well)."""
    base = posixpath.basename(path)
    return any(
        posixpath.normpath(v) == path or posixpath.basename(posixpath.normpath(v)) == base
        for v in _values(word)
    )


def _values(word: str) -> set[str]:
    """``word``, the value of ``--option=value`` and of a short option it is glued to, in a
    cluster too (``-sox.txt`` is ``-s -o x.txt``)."""
    values = {word, word.split("=", 1)[-1]}
    if word.startswith("-") and not word.startswith("--"):
        flags = len(word) - len(word[1:].lstrip(_LETTERS))
        values.update(word[k:] for k in range(2, flags + 1))
    return {v for v in values if v}


def _plain(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].casefold()
    return name.endswith(_PLAIN) and not (name.endswith(".txt") and name.startswith(_CODE_TEXTS))
