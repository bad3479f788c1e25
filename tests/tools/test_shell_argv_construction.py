"""The harness builds every argv itself (shell/rebuild.py): pure checks, no process.

Issue 32, items 1, 3 and 5. What runs is never the model's spelling: the program, its forced
safety flags first, each validated option in one spelling (a value glued, so it is never read
as an option nor as the end of the options), the harness's own ``--``, then the operands.
``tests/tools/test_shell_argv_attacks.py`` runs the same classes on real processes.
"""

from __future__ import annotations

import pytest

from rho_domain.errors import CommandRefused
from rho_domain.shell import check_argv, harden_argv, plan_command
from rho_domain.shell.git import SUBCOMMANDS
from rho_domain.shell.options import split_options
from rho_domain.shell.programs import SPECS, XARGS_TARGETS

# 1. A forced flag is first, whatever the model wrote and wherever: a "--sandbox" after "--"
# is a file name, and the harness's own flag is there anyway.
FORCED = [
    (("sed", "-n", "--", "1e cat .en?", "--sandbox", "README.md"), ("sed", "--sandbox")),
    (("sed", "-n", "-e", "1e sh evil.sh", "--", "--sandbox"), ("sed", "--sandbox")),
    (("sed", "-n", "1e sh evil.sh", "README.md", "--", "--sandbox"), ("sed", "--sandbox")),
    (("sed", "--sandbox", "-n", "1p", "README.md"), ("sed", "--sandbox")),
    (("sed", "-nE", "--", "1e sh evil.sh", "--sandbox"), ("sed", "--sandbox")),
    (("sed", "--expression=1e sh evil.sh", "--", "--sandbox"), ("sed", "--sandbox")),
    (("rg", "-e", "x", "--", "--no-config"), ("rg", "--no-config")),
    (("rg", "x", "--", "--no-config", "--pre=./evil.sh"), ("rg", "--no-config")),
    (("rg", "--no-config", "x"), ("rg", "--no-config")),
    (("awk", "--", "{print}", "--sandbox"), ("awk", "--sandbox")),
    (("gawk", "-F,", "--", "{print}", "--sandbox"), ("gawk", "--sandbox")),
    (("xargs", "sed", "-n", "--", "1e sh evil.sh", "--sandbox"), None),  # sed: no xargs target
]


@pytest.mark.parametrize(("argv", "head"), FORCED, ids=[" ".join(a) for a, _ in FORCED])
def test_forced_flags_come_first_whatever_the_model_wrote(
    argv: tuple[str, ...], head: tuple[str, ...] | None
) -> None:
    if head is None:
        with pytest.raises(CommandRefused, match="'sed' is not a program xargs may run"):
            check_argv(argv)
        return
    # The rebuild alone (sed's script check, which refuses these "e" commands on its own, is
    # tests/tools/test_shell_languages.py's): each wall holds without the other.
    built = harden_argv(argv)
    assert built[:2] == head
    # Everything the model wrote after its own "--" is behind the harness's "--": operands.
    tail = argv[argv.index("--") + 1 :] if "--" in argv else ()
    assert built[len(built) - len(tail) :] == tail
    assert "--" in built[: len(built) - len(tail)]


@pytest.mark.parametrize(
    ("argv", "built"),
    [
        (("sed", "-n", "--", "1p", "--sandbox"),
         ("sed", "--sandbox", "-n", "--", "1p", "--sandbox")),
        (("grep", "-rn", "foo", "--", "src"), ("grep", "-r", "-n", "--", "foo", "src")),
        (("grep", "-e", "--", "-x"), ("grep", "-e--", "-x", "--")),
        (("grep", "-e", "--", "--", "-x"), ("grep", "-e--", "--", "-x")),
        (("grep", "--regexp", "--", "f"), ("grep", "--regexp=--", "--", "f")),
        (("grep", "-e", "", "f"), ("grep", "-e", "", "--", "f")),
        (("grep", "-5", "x"), ("grep", "-5", "--", "x")),
        (("head", "-20", "f"), ("head", "--lines=20", "--", "f")),
        (("tail", "-n", "3", "-2", "f"), ("tail", "-n3", "--lines=2", "--", "f")),
        (("cut", "-d", " ", "-f1"), ("cut", "-d ", "-f1", "--")),
        (("paste", "-sd+"), ("paste", "-s", "-d+", "--")),
        (("file", "-bF", "--", "x"), ("file", "-b", "-F--", "--", "x")),
        (("ls", "--color", "src"), ("ls", "--color", "--", "src")),
        (("ls", "--color=never"), ("ls", "--color=never", "--")),
        (("jq", "-r", "--arg", "k", "-v", ".[$k]", "d.json"),
         ("jq", "-r", "--arg", "k", "-v", ".[$k]", "--", "d.json")),
        (("jq", "--indent", "3", "."), ("jq", "--indent", "3", ".", "--")),
        (("rg", "-e", "--", "x"), ("rg", "--no-config", "--regexp=--", "--", "x")),
        (("xargs", "rg", "-ie", "--"),
         ("xargs", "--", "rg", "--no-config", "-i", "--regexp=--", "--")),
        (("echo", "-n", "a", "b"), ("echo", "-n", "a", "b")),
        (("ps", "-ef"), ("ps", "-e", "-f")),
        (("ps", "-o", "pid,comm", "ax"), ("ps", "-opid,comm", "ax")),
        (("tree", "-L", "2", "src"), ("tree", "--noreport", "-L", "2", "--", "src")),
        (("xxd", "-l", "en", "f"), ("xxd", "-l", "en", "--", "f")),
        (("xxd", "-ps1", "-c", "ols", "f"), ("xxd", "-p", "-s", "1", "-c", "ols", "--", "f")),
        (("pwd",), ("pwd",)),
        (("date", "-u", "+%Y"), ("date", "-u", "--", "+%Y")),
        (("awk", "--field-separator", ",", "--assign", "a=1", "{print}"),
         ("awk", "--sandbox", "-F,", "-va=1", "--", "{print}")),
        (("xargs", "-0", "-n", "1", "grep", "-l", "x"),
         ("xargs", "-0", "-n1", "--", "grep", "-l", "--", "x")),
        (("xargs", "--max-lines", "2", "wc"), ("xargs", "--max-lines=2", "--", "wc", "--")),
        (("find", ".", "-name", "*.py"), ("find", ".", "-name", "*.py")),
    ],
)  # fmt: skip
def test_argv_is_rebuilt_in_one_spelling(argv: tuple[str, ...], built: tuple[str, ...]) -> None:
    check_argv(argv)
    assert harden_argv(argv) == built


def test_git_keeps_the_model_order_and_its_separator() -> None:
    """git's order matters (``--not`` negates what follows) and its ``--`` splits revisions
    from paths: both are kept; each option is still spelled once, its value glued."""
    built = harden_argv(("git", "log", "-n", "3", "A", "--not", "B", "--grep", "--", "--", "p"))
    sub = built.index("log")
    assert built[sub:] == (
        "log", "--no-ext-diff", "--no-textconv", "-n3", "A", "--not", "B", "--grep=--", "--", "p"
    )  # fmt: skip
    assert harden_argv(("git", "diff", "HEAD"))[-1] == "HEAD"  # no "--": HEAD stays a revision


# 3. Items xargs appends: whatever they are, the target reads them as operands. The rebuilt
# target is parsed again with the items after it, as the program will read them.
ITEMS = ("-f.env", "-m.env", "--pre=./evil.sh", "--sandbox", "--", "--files0-from=.env", "-")
TARGET_OPTIONS = [
    ("file", "-F", "--", "README.md"),
    ("file", "--separator", "--"),
    ("file", "-bF", "--"),
    ("grep", "-e", "--"),
    ("grep", "--regexp", "--", "-c"),
    ("grep", "-ce", "--"),
    ("grep", "-e", ""),
    ("wc", "-l"),
    ("head", "-n", "1"),
    ("head", "-5"),
    ("du", "--exclude", "--"),
    ("stat", "-c", "--"),
    ("ls", "-I", "--"),
    ("cat",),
]


@pytest.mark.parametrize("target", TARGET_OPTIONS, ids=" ".join)
def test_items_xargs_appends_are_operands_of_the_target(target: tuple[str, ...]) -> None:
    argv = ("xargs", "-n", "1", *target)
    check_argv(argv)
    built = harden_argv(argv)
    index = built.index(target[0])
    program, rebuilt = built[index], built[index + 1 :]
    reread = split_options(program, [*rebuilt, *ITEMS], SPECS[program])
    assert reread.operands[-len(ITEMS) :] == ITEMS
    # The rebuilt form is a fixed point: the values the model gave, and nothing more.
    assert harden_argv((program, *rebuilt)) == (program, *rebuilt)


def test_every_xargs_target_takes_the_harness_separator() -> None:
    for name in XARGS_TARGETS:
        assert SPECS[name].spelling.dashdash == "first", name
        assert SPECS[name].max_operands is None, name
        assert harden_argv(("xargs", name))[-1] == "--", name


@pytest.mark.parametrize(
    ("argv", "word"),
    [
        (("find", ".", "-exec", "sh", "evil.sh", ";"), "-exec"),
        (("find", ".", "-execdir", "./evil.sh", "{}", "+"), "-execdir"),
        (("find", ".", "-name", "README.md", "-exec", "cat", ".env", "{}", "+"), "-exec"),
        (("find", ".", "-ok", "cat", "{}", ";"), "-ok"),
        (("find", ".", "-okdir", "cat", "{}", ";"), "-okdir"),
        (("find", ".", "(", "-exec", "sh", "evil.sh", ";", ")"), "-exec"),
        (("find", ".", "-name", "x", "-o", "-exec", "sh", "evil.sh", ";"), "-exec"),
        (("find", "-H", ".", "!", "-execdir", "sh", ";"), "-execdir"),
        (("find", "--", ".", "-exec", "sh", ";"), "--"),
    ],
)
def test_find_never_runs_a_program(argv: tuple[str, ...], word: str) -> None:
    with pytest.raises(CommandRefused) as info:
        check_argv(argv)
    assert str(info.value).startswith(f"find: {word!r} is not allowed (find may only test")


# 5. Options are an allowlist: an unknown option, an abbreviation or a program's dangerous
# option is refused, and the message names the program and the option.
UNKNOWN = [
    ("sed --foo 1p README.md", "sed", "--foo"),
    ("sed --sand -n '1e sh evil.sh' README.md", "sed", "--sand"),
    ("sed --sandbo -n 1p README.md", "sed", "--sandbo"),
    ("sed -n --s 1p README.md", "sed", "--s"),
    ("sed -ni 1p README.md", "sed", "-i"),
    ("rg --no-conf x", "rg", "--no-conf"),
    ("rg --pre=./evil.sh x", "rg", "--pre=./evil.sh"),
    ("rg --pr ./evil.sh x", "rg", "--pr"),
    ("rg -nz x", "rg", "-z"),
    ("grep --pre=sh x", "grep", "--pre=sh"),
    ("grep --exclude-fro .env x", "grep", "--exclude-fro"),
    ("file -m .env README.md", "file", "-m"),
    ("file -bm .env README.md", "file", "-m"),
    ("file --magic-file=.env README.md", "file", "--magic-file=.env"),
    ("file -f .env", "file", "-f"),
    ("wc --files0-from=.env", "wc", "--files0-from=.env"),
    ("du --files0-from .env", "du", "--files0-from"),
    ("xargs -a .env cat", "xargs", "-a"),
    ("xargs --arg-file=.env cat", "xargs", "--arg-file=.env"),
    ("xargs -I% cat %", "xargs", "-I"),
    ("xargs -0i cat", "xargs", "-i"),
    ("xargs -P 4 cat", "xargs", "-P"),
    ("xargs grep --pre=sh x", "grep", "--pre=sh"),
    ("xargs file -m .env", "file", "-m"),
    ("awk --sandbox '{print}' README.md", "awk", "--sandbox"),
    ("jq -L . .", "jq", "-L"),
    ("jq --run-tests", "jq", "--run-tests"),
    ("ps --info", "ps", "--info"),
    ("ps -E", "ps", "-E"),
    ("sort --compress-prog=sh data.csv", "sort", "--compress-prog=sh"),
    ("ls --zzz", "ls", "--zzz"),
    ("git log --ext-diff", "git log", "--ext-diff"),
    ("git grep --open-files-in-pager=./evil.sh x", "git grep", "--open-files-in-pager=./evil.sh"),
]


@pytest.mark.parametrize(("command", "program", "option"), UNKNOWN, ids=[c for c, _, _ in UNKNOWN])
def test_an_unlisted_option_is_refused_by_name(command: str, program: str, option: str) -> None:
    with pytest.raises(CommandRefused) as info:
        plan_command(command)
    assert str(info.value).startswith(
        f"{program}: option {option!r} is not allowed in the restricted shell"
    )


@pytest.mark.parametrize("command", ["echo -- -n", "echo x -- -e", "ps -- -e", "ps ax --"])
def test_a_program_without_a_separator_refuses_one(command: str) -> None:
    """echo would print a ``--`` and ps refuses it: the model's is refused, not dropped."""
    program = command.split()[0]
    with pytest.raises(CommandRefused) as info:
        plan_command(command)
    assert str(info.value) == (
        f"{program}: {program} has no '--' (it would read it as a word of its own); leave it out"
    )


@pytest.mark.parametrize(("command", "operand"), [("jq -n -- '-1'", "-1"), ("jq -- -r", "-r")])
def test_jq_filter_may_not_start_with_a_dash(command: str, operand: str) -> None:
    """jq 1.6 takes ``--`` only after its filter: a filter that starts with ``-`` would be an
    option, so it is refused with what to write instead."""
    with pytest.raises(CommandRefused) as info:
        plan_command(command)
    assert str(info.value) == (
        f"jq: operand {operand!r} starts with '-' and jq has no '--' to keep it an operand "
        f"(name a file ./{operand})"
    )


def test_no_letter_or_name_has_two_meanings_in_a_table() -> None:
    """A letter both a flag and valued (df -x was) is parsed as the flag, and the program's
    next word, which it takes as the value, became an operand of ours. (A long name both
    optional and valued, git's --abbrev, is read as optional, as git does.)"""
    tables = {**SPECS, **{f"git {sub}": spec for sub, spec in SUBCOMMANDS.items()}}
    for name, spec in tables.items():
        assert not set(spec.flags) & set(spec.valued), name
        assert not spec.long_valued & spec.long_flags, name
        assert not spec.long_pairs & (spec.long_flags | spec.long_valued), name


@pytest.mark.parametrize(
    "argv",
    [
        ("df", "-x", "tmpfs", "/"),
        ("base64", "-w", "0", "f"),
    ],
)
def test_valued_letters_take_their_value(argv: tuple[str, ...]) -> None:
    check_argv(argv)
    letter, value = argv[1][1], argv[2]
    assert f"-{letter}{value}" in harden_argv(argv)


def test_rg_values_are_given_by_long_name() -> None:
    """rg's parser reads ``-e=x`` as the value ``x``: a pattern ``=>`` glued as ``-e=>`` would
    lose its ``=``. Every valued letter of rg is rebuilt as ``--long=value``, exactly."""
    table = SPECS["rg"]
    assert set(table.spelling.long_for) == set(table.valued)
    assert set(table.spelling.long_for.values()) <= table.long_valued
    built = harden_argv(("rg", "-e", "=>", "-nj", "2", "-g", "!x", "-e", "", "src"))
    assert built == (
        "rg", "--no-config", "--regexp==>", "-n", "--threads=2", "--glob=!x", "--regexp=",
        "--", "src",
    )  # fmt: skip


@pytest.mark.parametrize("command", ["strings @list.txt", "strings -n 4 -- @list.txt"])
def test_strings_never_reads_arguments_from_a_file(command: str) -> None:
    """binutils expands an ``@file`` word into the file's words (even after ``--``): the file
    could name ``.env``, which the harness never saw as a word."""
    with pytest.raises(CommandRefused) as info:
        plan_command(command)
    assert str(info.value) == (
        "strings: operand '@list.txt': binutils reads '@file' as more arguments (even after "
        "--); name the file ./@list.txt"
    )
