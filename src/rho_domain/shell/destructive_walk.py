"""The walk of the destructive-command check (``shell.destructive``) over one parsed line.

``LineCheck().line(text, 0, "")`` parses ``text`` and judges every simple command in it, in
order: every list, pipeline and subshell, every suffix a wrapper runs, every string a program
may hand to a shell, each parsed and judged in turn up to ``MAX_DEPTH`` levels, all within
``WORK_BUDGET`` characters and words (its bookkeeping, the work spent and the files written,
is ``shell.destructive_ledger``'s). It keeps what the line's commands wrote (a later command
that runs one asks) and the descriptors ``exec`` opened; what asks for one simple command is
the other ``destructive_*`` modules'. Returns the first reason to ask, or "".
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rho_domain.errors import CommandRefused
from rho_domain.shell import destructive_descriptors as fds
from rho_domain.shell import destructive_option_words as words_of
from rho_domain.shell import destructive_replaced as fill
from rho_domain.shell.current_directory import parse_reading_pwd
from rho_domain.shell.destructive_code import Stdin, runner_for, runs_stdin
from rho_domain.shell.destructive_cwd import HERE, Directories
from rho_domain.shell.destructive_ledger import WorkBudget, WrittenFiles
from rho_domain.shell.destructive_stdin import is_stdin_runner, reads_code, stdin_reason
from rho_domain.shell.destructive_table import is_listed, judge_program, program_name
from rho_domain.shell.destructive_targets import (
    WRITING,
    destination_reason,
    destinations,
    is_subcommand,
    names_destinations,
    redirection_reason,
    word_reason,
)
from rho_domain.shell.destructive_texts import (
    PRINTERS,
    SHELL_STRING_TAKERS,
    quoted_parts,
    shell_texts,
)
from rho_domain.shell.destructive_words import Arg
from rho_domain.shell.destructive_written import (
    data_only,
    writes_named,
    written_by,
    written_reason,
)
from rho_domain.shell.parser import parse
from rho_domain.shell.syntax_tree import CommandList, Redirection, SimpleCommand, Subshell
from rho_domain.shell.wrapper_words import unseen_program, wrapper_words
from rho_domain.value_methods import value_eq, value_repr

MAX_DEPTH = 6

_APPENDERS = frozenset({"xargs", "parallel"})
_RENAMERS = frozenset({"alias", "hash", "enable"})


@attrs.define
class LineCheck:
    """One check of one command line; ``files`` holds the paths its commands write, in
    order, so that running one of them later in the line asks."""

    __repr__ = value_repr
    __eq__ = value_eq

    files: WrittenFiles = attrs.field(factory=WrittenFiles)
    # the files ``exec`` with only redirections opened for the rest of the line, by descriptor
    opened: dict[int, str] = attrs.field(factory=dict)
    work: WorkBudget = attrs.field(factory=WorkBudget)
    cwd: Directories = HERE  # where the next command runs (cd, pushd, popd)
    # > 0 while judging a word that merely parses as a command line (a commit message, an
    # echo's text): a file the line wrote is not run by it
    guessing: int = 0
    seen: list[str] = attrs.field(factory=list)  # the programs judged, in order (not guessed)

    def line(self, text: str, depth: int, who: str) -> str:
        """Parse ``text`` (``who`` runs it; "" for the line itself) and judge it."""
        if depth > MAX_DEPTH:
            return f"commands nested more than {MAX_DEPTH} levels deep cannot be checked"
        if why := self.work.spend(len(text)):
            return why
        try:
            tree = parse_reading_pwd(text)  # cp x "$PWD"/y: the command's directory, ./y
        except CommandRefused as exc:
            if who:
                return f"{who} runs a command string the approval check cannot read ({exc})"
            return f"the approval check cannot read this command line, so it asks ({exc})"
        return self.commands(tree, depth)

    def commands(self, tree: CommandList, depth: int) -> str:
        """Judge every simple command of every list, pipeline and subshell of ``tree``."""
        if depth > MAX_DEPTH:
            return f"commands nested more than {MAX_DEPTH} levels deep cannot be checked"
        for operator, pipeline in tree.items:
            self.cwd = self.cwd.following(operator)
            for index, command in enumerate(pipeline.commands):
                if isinstance(command, Subshell):
                    cwd = self.cwd  # a subshell's cd ends with it
                    why = self.commands(command.body, depth + 1)
                    self.cwd = cwd
                else:  # sudo xargs gzip: judged as xargs gzip too (what it appends, fills)
                    inner = fill.appender_within(command)
                    why = (inner and self.simple(inner, depth, piped=index > 0)) or self.simple(
                        command, depth, piped=index > 0
                    )
                if why:
                    return why
        return ""

    def simple(self, command: SimpleCommand, depth: int, *, piped: bool) -> str:
        """Judge one simple command: its redirections and words, every suffix a wrapper runs,
        what it runs that the line wrote, the strings it may hand to a shell; then remember
        what it writes (``piped``: its standard input is a pipe)."""
        patterns = command.patterns or (None,) * len(command.argv)
        argv: tuple[Arg, ...] = tuple(
            None if pattern is not None else word
            for word, pattern in zip(command.argv, patterns, strict=True)
        )
        first = program_name(argv[0])
        earlier = self.files.so_far()  # what the commands before this one wrote
        self.cwd = self.cwd.after(argv, piped=piped)  # before a CDPATH=... string it runs
        argv, named, why = fill.filled(first, argv, command.argv)  # xargs -I X cp a X: X unknown
        if why := why or self.redirections(command.redirections) or self.words(argv, first, named):
            return why
        opened = fds.opened_files(command.redirections, self.opened)
        if first == "exec" and len(argv) == 1:  # its descriptors stay open for what follows
            self.opened = opened
        stdin, fed = fds.standard_input(command, opened, piped=piped)
        argv = fds.through_descriptors(argv, opened)  # source /dev/fd/3 reads what 3 holds
        shown = words_of.paths_shown(first, command.argv, patterns, argv)  # rsync -a ./* d/: paths
        own = wrapper_words(argv, words_of.HARMLESS)  # timeout -s KILL 0 ls: not kill 0 ls
        for start in range(len(argv)):
            name = program_name(argv[start])
            if start and (
                start in own
                or name == "."
                or not (
                    is_listed(name)
                    or runner_for(name or "")
                    or name in _RENAMERS
                    or is_stdin_runner(name)
                )
            ):
                continue  # "." is a program only in first place (jq . file)
            if why := self.work.again(argv, start):
                return why
            runs = runs_stdin(name or "") or reads_code(name or "", argv[start + 1 :])
            appender = bool(start) and first in _APPENDERS  # the command xargs or parallel runs
            if fed is not None and self.files.holds(fed) and runs and not appender:
                who = self.files.by(fed, "this line")
                return f"{name} runs {fed} from standard input, which {who}"
            words = argv[start:]
            if appender:  # what they append, and their {}, are unknown
                words = (*(None if w is not None and "{}" in w else w for w in words), None)
            # a wrapper's command inherits its stdin; xargs and parallel give theirs none
            kept = self.cwd
            self.cwd = moved = kept.wrapped(argv[:start])  # env -C DIR sh -c '...' runs in DIR
            why = self.argv(words, "" if appender else stdin, depth, shown[start:])
            self.cwd = self.cwd if moved is kept else kept  # a moved child's cd ends with it
            if appender and is_listed(name) and not why:  # xargs rg x . (appends --pre=sh)
                why = words_of.appended_option_reason(first, name, words[:-1])
            if why:
                return why
        if why := words_of.glob_option_reason(command.argv, patterns):  # tar -cf a.tar *
            return why  # after the rows' own reasons (find's glob, rm's unknown operand)
        guessed = self.guessing or first is None
        appended = (None,) if first in _APPENDERS else ()  # what xargs appends is unknown
        words = (*argv[1:], *appended)
        if not guessed and (why := written_reason(first or "", words, earlier, self.files.session)):
            return why
        why = self.strings(argv, first, depth)  # a string it runs runs before it writes
        # what a wrapped writer writes too (sudo tee, timeout curl -o, find -exec mv, xargs cp)
        for start in range(len(argv)) if _wraps(first, argv[1:]) else (0,):
            name = program_name(argv[start])
            if start in own or not (writes_named(name) or names_destinations(name)):
                continue
            if spent := self.work.again(argv, start):
                return why or spent
            # what the destination rule reads too (sponge, dd of=), to find -exec's ; or +
            words = argv[start + 1 : fill.command_end(first, argv, start)]
            self.files.add(*written_by(name, words), *destinations(words, name))
        return why

    def argv(
        self, words: Sequence[Arg], stdin: Stdin, depth: int, shown: Sequence[Arg] = ()
    ) -> str:
        """Judge one command's words (a whole command, or the suffix a wrapper runs)."""
        name = program_name(words[0])
        if name is None:
            return "the program to run is a glob or generated word"
        if why := self.work.spend(len(words)):
            return why
        self.seen.extend(() if self.guessing else (name,))
        if name in _RENAMERS:
            return f"{name} changes what a later command name runs"
        runner = runner_for(name)
        runs = words if runner is not None else words[:1]  # a runner's script is a word
        names = self.files.names()
        if ran := next((w for w in runs if w is not None and self.files.runs(w, names)), None):
            return f"runs {ran}, which {self.files.by(ran)}"
        if runner is None:
            nested = lambda text, who: self.line(text, depth + 1, who)  # noqa: E731
            why = judge_program(name, words_of.row_words(name, words, shown))
            return why or stdin_reason(name, words[1:], stdin, nested)
        if why := judge_program(name, words[1:]):  # a runner's own rows: bun add -g
            return why
        return runner(
            name,
            words[1:],
            stdin,
            lambda text, who: self.line(text, depth + 1, who),
            lambda command: self.argv(command, "", depth + 1),
        )

    def words(self, argv: Sequence[Arg], first: str | None, named: Sequence[Arg]) -> str:
        """Variables that choose what runs, disks, ``.git`` paths, a wrapper's glob program, a
        writer's destination that runs later (``named``: the words, a glob's pattern in place)."""
        if why := word_reason(argv, first, self.cwd) or unseen_program(argv):  # sudo ./*
            return why
        for start in range(len(argv)) if _wraps(first, argv[1:]) else (0,):
            name = program_name(argv[start])
            if start and (not names_destinations(name) or is_subcommand(argv[:start], argv[start])):
                continue  # no destination in its words (pip install: a subcommand, not install)
            if why := self.work.again(argv, start):
                return why
            cwd = self.cwd.wrapped(argv[:start])  # env -C DIR, sudo -D DIR
            # what xargs and parallel append is an unknown word: their cp's destination
            appended = (None,) if start and fill.appends_unknown(first, argv) else ()
            end = fill.command_end(first, argv, start)  # find -exec cp a {} ';': not the ;
            given = (*named[start:end], *appended)
            if why := destination_reason((*argv[start:end], *appended), name, cwd, given):
                return why
        return ""

    def strings(self, argv: Sequence[Arg], first: str | None, depth: int) -> str:
        """Words a program may hand to a shell: parsed and judged when they parse."""
        strict = first in SHELL_STRING_TAKERS
        inner: Directories | None = None  # where they run: read once, for the first
        for text, escaped in (t for word in argv[1:] for t in shell_texts(word)):
            if why := self.work.spend(len(text)):
                return why
            try:
                tree = parse(text)
            except CommandRefused as exc:
                if strict:
                    return f"{first} runs a command string the approval check cannot read ({exc})"
                if escaped and first not in PRINTERS:
                    return f"{first} runs a shell escape the approval check cannot read ({exc})"
                if why := self.quoted_parts(text, depth):
                    return why
                continue
            # the string a program known to run one runs (su -c, ssh, watch...) is no guess
            # another process runs it, or none does (a message): its cd ends with it
            inner = self.cwd.wrapped(argv) if inner is None else inner  # su - -c '...': a home
            kept, self.cwd = self.cwd, inner
            why = (self.commands if strict else self.guessed)(tree, depth + 1)
            self.cwd = kept
            if why:
                return why
        return ""

    def guessed(self, tree: CommandList, depth: int) -> str:
        """Judge ``tree``, parsed from a word that may or may not be run as a command line."""
        self.guessing += 1
        try:
            return self.commands(tree, depth)
        finally:
            self.guessing -= 1

    def quoted_parts(self, text: str, depth: int) -> str:
        """Judge the quoted parts of a text that is not a command line (code of another
        language, ``os.system('rm -rf x')``) that parse as one."""
        for part in quoted_parts(text):
            try:
                tree = parse(part)
            except CommandRefused:
                continue
            if why := self.guessed(tree, depth + 1):
                return why
        return ""

    def redirections(self, redirections: Sequence[Redirection]) -> str:
        """Writes to a device or inside ``.git`` ask; other targets are remembered as written
        (running one later in the line asks)."""
        for redirection in redirections:
            if why := redirection_reason(redirection.op, redirection.target, self.cwd):
                return why
            if redirection.target is not None and redirection.op in WRITING:
                self.files.add(redirection.target)
        return ""


def _wraps(first: str | None, words: Sequence[Arg]) -> bool:
    """True when a suffix of ``first words`` may be a command it runs: any program that is
    not data only, and xargs and parallel whatever they run (``xargs cp -t /etc/cron.d``:
    cp is data only, since it runs no file as code, but it writes)."""
    return first in _APPENDERS or not data_only(first or "", words)
