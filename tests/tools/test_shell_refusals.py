"""Every refusal branch of the shell program table, plan and git rules, by its own message.

Issue 19: a mutant that dropped xargs' target check (``ls | xargs date`` accepted) survived
every test, because the attacks used programs that were refused anyway (``xargs rm``). Each
case here names the reason it must be refused for, so removing any one branch fails a test.
The options that run programs or write are absent from the specs (there is no separate
branch for them); ``NEVER_ALLOWED`` pins that for each program.
"""

from __future__ import annotations

import pytest

from rho_domain.errors import CommandRefused
from rho_domain.shell import check_argv, harden_argv, plan_command
from rho_domain.shell.git import SUBCOMMANDS
from rho_domain.shell.options import OptionSpec, spec, split_options
from rho_domain.shell.programs import SPECS, XARGS_TARGETS

REFUSALS = [
    # a valued long option as the last word has nothing to take
    ("grep --regexp", "grep: option --regexp needs a value"),
    ("rg x --glob", "rg: option --glob needs a value"),
    # xargs may feed only the listed readers: each of these is an allowed program on its own.
    ("ls | xargs date", "'date' is not a program xargs may run"),
    ("xargs hostname < files.txt", "'hostname' is not a program xargs may run"),
    ("find . | xargs sed -n p", "'sed' is not a program xargs may run"),
    ("find . | xargs echo", "'echo' is not a program xargs may run"),
    ("find . | xargs git log", "'git' is not a program xargs may run"),
    ("find . | xargs awk '{print}'", "'awk' is not a program xargs may run"),
    ("find . | xargs xargs cat", "'xargs' is not a program xargs may run"),
    ("find . | xargs find", "'find' is not a program xargs may run"),
    ("find . | xargs -0 sort", "'sort' is not a program xargs may run"),
    ("find . | xargs -n 1 tr a b", "'tr' is not a program xargs may run"),
    ("find . | xargs -I x uniq x out", "option '-I'"),
    ("ls | xargs", "name the program to run"),
    ("ls | xargs -0 -n 2", "name the program to run"),
    ("find . | xargs grep --pre=sh x", "option '--pre=sh'"),
    # program names
    ("./cat README.md", "a program path is not allowed"),
    ("/usr/bin/cat README.md", "a program path is not allowed"),
    ("cat/ x", "a program path is not allowed"),
    ("rm -rf x", "not an allowed read-only program"),
    # cd
    ("cd", "exactly one directory"),
    ("cd a b", "exactly one directory"),
    ("cd -P src", "exactly one directory"),
    ("cd src > /dev/null", "cd takes no redirections"),
    ("cd s* && ls", "literal directory"),
    ("ls | cd src", "cd inside a pipeline"),
    # plan: redirections and pipelines
    ("cat 3<<'EOF'\nx\nEOF", "here-documents may only feed standard input"),
    ("cat 3<<< x", "here-documents may only feed standard input"),
    ("cat < .env", "'.env' is a secrets file (.env); it may not be read"),
    ("cat < /dev/zero", "input from devices or /proc"),
    ("cat README.md > out", "redirection '>out' is not allowed"),
    ("(ls) | wc -l", "a subshell inside a pipeline"),
    ("cat .env.local", "names a secrets file"),
    ("cat /proc/self/environ", "is a secret location (/proc)"),
    ("cat ../../../proc/self/environ", "/proc is not readable"),
    ("grep --file=/proc/self/environ x", "/proc is not readable"),
    # operands of programs that are allowed with other operands
    ("date 010203042026", "date: only a +FORMAT operand is allowed (no setting)"),
    ("ps auxe", "ps: the BSD 'e' modifier shows other processes' environments (credentials)"),
    ("ps e", "the BSD 'e' modifier"),
    (
        "ps --info",
        "ps: option '--info' is not allowed in the restricted shell (only read-only options "
        "are accepted, long options spelled out in full)",
    ),
    ("ps -- -e", "ps: ps has no '--' (it would read it as a word of its own); leave it out"),
    # syntax the lexer and parser refuse
    ('echo "abc', "unterminated double quote"),
    ('echo "a`id`"', "command substitution `...` is not allowed"),
    ('echo "a$HOME"', "variable expansion $H is not allowed"),
    ("ls &", "background jobs (&) are not allowed"),
    ("ls & ls", "background jobs (&) are not allowed"),
    ("ls ;; x", "';;' (case syntax) is not allowed"),
    ("ls )", "syntax error near ')'"),
    # git
    ("git -c core.pager=sh log", "global option '-c'"),
    ("git --no-pager", "a subcommand is required"),
    ("git", "a subcommand is required"),
    ("git push", "subcommand 'push' is not read-only"),
    ("git branch evil", "operands create a branch"),
    ("git tag v1", "operands create a tag"),
    ("git remote add evil https://x", "only listing (git remote -v)"),
    ("git remote show origin", "only listing (git remote -v)"),
    ("git grep -O sh foo", "option '-O'"),
    ("git grep --open-files-in-pager=sh foo", "option '--open-files-in-pager=sh'"),
    ("git grep --recurse-submodules foo", "option '--recurse-submodules'"),
]

# Options that run a program or write a file, per program: each must stay out of its spec.
NEVER_ALLOWED = {
    "rg": ("--pre=sh", "--pre-glob=*", "--hostname-bin=sh", "-z", "--search-zip"),
    "sed": ("-i", "--in-place", "-f", "--file=x", "-ni"),
    "sort": ("-o", "--output=x", "--compress-program=sh", "-T", "--temporary-directory=x"),
    "grep": ("--pre=sh",),
    "tree": ("-o",),
    "file": ("-C",),
    "xxd": ("-r",),
    "date": ("-s", "--set=x"),
    "tail": ("-f", "-F", "--follow"),
    "jq": ("--run-tests", "-f", "--from-file", "-L", "--library-path", "--argfile"),
}


@pytest.mark.parametrize(("command", "reason"), REFUSALS)
def test_refusal_names_its_reason(command: str, reason: str) -> None:
    with pytest.raises(CommandRefused) as info:
        plan_command(command)
    assert reason in str(info.value)


@pytest.mark.parametrize(
    ("program", "option"), [(p, o) for p, options in NEVER_ALLOWED.items() for o in options]
)
def test_options_that_run_or_write_are_not_in_the_specs(program: str, option: str) -> None:
    with pytest.raises(CommandRefused, match="not allowed"):
        split_options(program, [option, "x"], SPECS[program])


@pytest.mark.parametrize(
    ("command", "argvs"),
    [
        ("date +%Y", (("date", "+%Y"),)),
        ("ps aux", (("ps", "aux"),)),
        ("ps -e", (("ps", "-e"),)),
        (
            "git branch --list x",
            (("git", "branch", "--list", "x"),),
        ),  # -e (every process) is not the BSD e modifier
        ('echo "cost 5$"', (("echo", "cost 5$"),)),
        ("cd src && ls -l", (("cd", "src"), ("ls", "-l"))),
        ("cd src; (cd lib && cat x)", (("cd", "src"), ("cd", "lib"), ("cat", "x"))),
    ],
)
def test_neighbours_of_refusals_are_planned(
    command: str, argvs: tuple[tuple[str, ...], ...]
) -> None:
    """What sits next to a refusal is allowed, so a refusal that grows is caught too."""
    assert plan_command(command).argvs() == argvs


def test_xargs_runs_each_listed_reader_and_nothing_else() -> None:
    for target in XARGS_TARGETS:
        plan_command(f"find . -type f | xargs {target}")
    assert harden_argv(("xargs", "-0", "wc", "-l")) == ("xargs", "-0", "--", "wc", "-l", "--")
    assert "sed" not in XARGS_TARGETS
    assert "git" not in XARGS_TARGETS


def test_executor_level_checks_refuse_what_the_lexer_never_produces() -> None:
    """check_argv is re-applied by every executor to argvs a handler built, lexer or not."""
    with pytest.raises(CommandRefused, match="empty command"):
        check_argv(())
    with pytest.raises(CommandRefused, match="NUL byte"):
        check_argv(("cat", "a\x00b"))


def test_git_subcommand_table_is_read_only() -> None:
    mutating = {"push", "commit", "add", "config", "clean", "reset", "checkout", "fetch", "gc"}
    assert not mutating & set(SUBCOMMANDS)


def _no_check(value: str) -> str | None:
    return None


def test_spec_builds_the_table_entry_field_by_field() -> None:
    """``spec`` runs only while the tables are built (at import), where mutation testing cannot
    reach it; this calls it directly. An empty spec accepts no option at all."""
    assert spec() == OptionSpec()
    assert spec() == OptionSpec(
        flags="",
        valued="",
        long_flags=frozenset(),
        long_valued=frozenset(),
        long_optional=frozenset(),
        numeric=False,
        max_operands=None,
        checks={},
    )
    built = spec(
        "ab", "n", "all  brief", "lines", "color", numeric=True, max_operands=2,
        checks={"operand": _no_check},
    )  # fmt: skip
    assert built == OptionSpec(
        flags="ab",
        valued="n",
        long_flags=frozenset({"all", "brief"}),
        long_valued=frozenset({"lines"}),
        long_optional=frozenset({"color"}),
        numeric=True,
        max_operands=2,
        checks={"operand": _no_check},
    )


_SPLIT = spec("ab", "n", "all", "lines", "color", numeric=True)

# split_options' contract: each option with its value (None for a flag), then the operands.
SPLITS = [
    (["-ab", "f"], (("a", None), ("b", None)), ("f",)),
    (["-n5", "f"], (("n", "5"),), ("f",)),
    (["-n", "5", "f"], (("n", "5"),), ("f",)),
    (["-an", "5"], (("a", None), ("n", "5")), ()),
    (["-nab"], (("n", "ab"),), ()),
    (["--lines=5", "f"], (("lines", "5"),), ("f",)),
    (["--lines", "5", "f"], (("lines", "5"),), ("f",)),
    (["--lines="], (("lines", ""),), ()),
    (["--color", "f"], (("color", None),), ("f",)),
    (["--color=never", "f"], (("color", "never"),), ("f",)),
    (["--color="], (("color", ""),), ()),
    (["--all", "-20", "f"], (("all", None), ("NUM", "20")), ("f",)),
    (["f", "-a", "--", "-b", "--lines"], (("a", None),), ("f", "-b", "--lines")),
    (["-", "f"], (), ("-", "f")),
]


@pytest.mark.parametrize(("args", "options", "operands"), SPLITS)
def test_split_options_gives_each_option_its_value(
    args: list[str],
    options: tuple[tuple[str, str | None], ...],
    operands: tuple[str, ...],
) -> None:
    parsed = split_options("p", args, _SPLIT)
    assert (parsed.options, parsed.operands) == (options, operands)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-n"], "p: option -n needs a value"),
        (["f", "-an"], "p: option -n needs a value"),
        (["--lines"], "p: option --lines needs a value"),
        (["-z"], "p: option '-z' is not allowed"),
        (["-az"], "p: option '-z' is not allowed"),  # the letter, not the whole cluster
        (["-abz", "f"], "p: option '-z' is not allowed"),
        (["--zz"], "p: option '--zz' is not allowed"),
    ],
)
def test_split_options_refusals_name_the_option(args: list[str], message: str) -> None:
    with pytest.raises(CommandRefused) as info:
        split_options("p", args, _SPLIT)
    assert str(info.value).startswith(message)


def test_an_option_check_sees_the_value_in_every_spelling() -> None:
    """A per-option check is given the value however it is written (``--n=v``, ``--n v``,
    ``-nv``, ``-n v``); a check that never saw ``--n v`` would be a hole."""
    seen: list[str] = []

    def check(value: str) -> str:
        seen.append(value)
        return "no dots" if "." in value else ""

    checked = spec("", "n", "", "name", "opt", checks={"n": check, "name": check, "opt": check})
    for args in (["--name=a.b"], ["--name", "a.b"], ["-na.b"], ["-n", "a.b"], ["--opt=a.b"]):
        with pytest.raises(CommandRefused, match="p: no dots"):
            split_options("p", args, checked)
    assert seen == ["a.b"] * 5
    split_options("p", ["--opt", "a.b"], checked)  # --opt takes no separate value
    assert seen == ["a.b"] * 5


@pytest.mark.parametrize("command", ["whoami -X", "printf -X a", "true --XXXX", "false -5"])
def test_a_program_without_options_accepts_none(command: str) -> None:
    with pytest.raises(CommandRefused, match="is not allowed in the restricted shell"):
        plan_command(command)


_GIT_ALLOWED = ", ".join(sorted(SUBCOMMANDS))
_GIT_LOG_OUTPUT = (
    "git log: option '--output=x' is not allowed in the restricted shell (only read-only "
    "options are accepted, long options spelled out in full)"
)


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("ls &", "background jobs (&) are not allowed"),
        ("ls ;& x", "';&' (case syntax) is not allowed"),
        ('echo "abc', "unterminated double quote"),
        ("git", "git: a subcommand is required"),
        (
            "git --paginate log",
            "git: global option '--paginate' is not allowed (-c, --config-env, --git-dir, "
            "--work-tree, --exec-path and -p/--paginate change what git runs)",
        ),
        ("git push", f"git: subcommand 'push' is not read-only; allowed: {_GIT_ALLOWED}"),
        ("git remote add x y", "git remote: only listing (git remote -v) is allowed"),
        ("git log --output=x", _GIT_LOG_OUTPUT),
    ],
)
def test_syntax_refusal_is_the_whole_message(command: str, message: str) -> None:
    with pytest.raises(CommandRefused) as info:
        plan_command(command)
    assert str(info.value) == message
