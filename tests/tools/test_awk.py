"""awk on gawk and on mawk (issue 10, item 7): detected at run time, the same safety on both.

Stock Debian's ``awk`` is mawk, which has no ``--sandbox``: forcing the flag made every awk
call fail. Now the executor asks which awk it has; gawk (preferred whenever installed) gets
``--sandbox``, mawk runs on the token-level static check alone, anything else is refused
with a message naming gawk. The static check is attacked with programs that fooled the old
string-stripping check and really run commands or write files under mawk.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_domain.errors import CommandRefused
from rho_domain.permissions import readonly_profile
from rho_domain.ports.executor import Executor
from rho_domain.shell import plan_command
from rho_domain.shell.awk import _Scanner, awk_argv, check_awk, flavor_from_version
from rho_domain.tools.base import ToolContext
from rho_domain.tools.bash import BashHandler

MAWK = shutil.which("mawk")
GAWK = shutil.which("gawk")
needs_mawk = pytest.mark.skipif(MAWK is None, reason="mawk not installed (apt-get install mawk)")
needs_gawk = pytest.mark.skipif(GAWK is None, reason="gawk not installed")

# (program, input) -> every awk must print the same; all must pass the static check.
LEGIT = [
    ("{print $1}", "a b\nc d\n"),
    ("$3 > 1 {print $1}", "x y 2\nz w 0\n"),
    ("{ if ($2 > 5) print ($1 > 3) }", "4 6\n1 9\n"),
    ('{print "a > b | c"}', "x\n"),
    ("/error|warn/ {n++} END {print n+0}", "error\nok\nwarn\n"),
    ('{s += $2} END {printf "%d\\n", s}', "a 1\nb 2\n"),
    ("NR % 2 == 0", "1\n2\n3\n4\n"),
    ("{print $NF / 2}", "x 8\n"),
    ("{print length($0) / 2}", "abcd\n"),
    ("{x = $1; x /= 2; print x}", "8\n"),
    ('/[/]x/ {print "slash"}', "a/x\n"),
    ("/[[:digit:]]+/ {print}", "a1\nb\n"),
    ('# a comment with "quote and > and |\n{print $2}', "a b\n"),
    ('{gsub(/o/, "0"); print}', "foo\n"),
    ('BEGIN {FS=","} {print $2}', "a,b\n"),
    ("{a[$1]++} END {for (k in a) print k, a[k]}", "x\nx\n"),
    ("$0 ~ /^#/ {next} {print}", "#c\nv\n"),
    ('{print ($1 > $2) ? "gt" : "le"}', "3 2\n"),
    ("{print substr($0, 2, 2)}", "abcd\n"),
    ("{ print $1 \\\n  , $2 }", "a b\n"),
]

# Programs the old check let through (string stripping without regexes or comments) that
# run a command or write a file under mawk, then the classic forms.
ATTACKS = [
    '$0 ~ /"/ {system("touch MARK")} /"/',
    '/"/ {system("touch MARK")} /"/',
    '{print /;/ > "MARK"}',
    '{print /}/ > "MARK"}',
    '{x = /"/; "touch MARK" | getline; y = /"/}',
    'BEGIN{system("touch MARK")}',
    '{print > "MARK"}',
    '{print >> "MARK"}',
    '{print | "touch MARK"}',
    '{printf("x") > "MARK"}',
    '{print $1, $2 > "MARK"}',
    '{ "touch MARK" | getline d }',
    '{ getline < "/etc/passwd" }',
    'BEGIN { while (("touch MARK" |& getline l) > 0) print l }',
    '@load "filefuncs"; BEGIN{}',
    'BEGIN { f = "system"; @f("touch MARK") }',
    'BEGIN { close("x"); fflush() }',
    '{print length / 2; system("touch MARK") }',
    "{print /unterminated",
    '{print "unterminated}',
    "/[abc/ {print}",
    'BEGIN { printf "x" | "sh" }',
    '{ if (1) print $1 > "MARK" }',
    '{ print $0 |& "touch MARK" }',
    # what follows a comment or a line continuation is still read
    '# note\n{print > "MARK"}',
    '{ print $1 \\\n > "MARK" }',
    '{ print a[1] > "MARK" }',  # a closing bracket returns to the statement's level
    '{ print ) ; print > "MARK" }',  # a stray ")" ends one statement, not the scan
    '{ print "a"; print > "MARK" }',  # the second print is checked too
    '# note\n{print > "MARK"}\n',  # a comment ends at its own line end
]


# Each refusal branch by its own message (a program that trips only that branch).
REASONS = [
    ('{ print $0 |& "sh" }', "awk: '|&' (two-way pipe to a command) is not allowed"),
    ("{print length / 2}", "read as a regex by mawk and as a division by gawk"),
    ("{print substr / 2}", "read as a regex by mawk"),
    ('BEGIN { @include "x" }', "awk: '@' (gawk directives and indirect calls) is not allowed"),
    ("BEGIN { x = system }", "'system' runs commands"),
    ('{ print "x }', "unterminated string"),
    ("$0 ~ /x", "unterminated regular expression"),
    ("/[x/", "unterminated bracket expression"),
    ('{ print > "f" }', "output redirection or pipe"),
]


@pytest.mark.parametrize(("program", "reason"), REASONS)
def test_each_refusal_names_its_reason(program: str, reason: str) -> None:
    with pytest.raises(CommandRefused) as info:
        check_awk([program])
    assert reason in str(info.value)


# The scanner's tokens (kind, text) for programs with every kind of token: what the
# redirect check and the regex-or-division rule read.
TOKENS = [
    (
        '/a[/]b/ {n++} # c > "x"\nEND { print $12, n / 2, length($0) }',
        [("regex", "/a[/]b/"), ("{", "{"), ("name", "n"), ("++", "++"), ("}", "}"),
         ("newline", "\n"), ("keyword", "END"), ("{", "{"), ("keyword", "print"),
         ("field", "$12"), (",", ","), ("name", "n"), ("/", "/"), ("number", "2"), (",", ","),
         ("builtin", "length"), ("(", "("), ("field", "$0"), (")", ")"), ("}", "}")],
    ),
    (
        'x = 1.5e3 \\\n+ $NF; y = "s\\"t" ~ /[[:alpha:]^]]/',
        [("name", "x"), ("=", "="), ("number", "1.5e3"), ("+", "+"), ("$", "$"), ("name", "NF"),
         (";", ";"), ("name", "y"), ("=", "="), ("string", '"s\\"t"'), ("~", "~"),
         ("regex", "/[[:alpha:]^]]/")],
    ),
    (
        "/[^]/]x/ && $1 != 2 || a[i] >= .5 {x -= 1; y /= 3}",
        [("regex", "/[^]/]x/"), ("&&", "&&"), ("field", "$1"), ("!=", "!="), ("number", "2"),
         ("||", "||"), ("name", "a"), ("[", "["), ("name", "i"), ("]", "]"), (">=", ">="),
         ("number", ".5"), ("{", "{"), ("name", "x"), ("-=", "-="), ("number", "1"), (";", ";"),
         ("name", "y"), ("/=", "/="), ("number", "3"), ("}", "}")],
    ),
]  # fmt: skip


# Each regex below is one token: a "/" inside a bracket expression does not end it.
REGEXES = [
    "/[^/]x/",
    "/[]/]x/",
    "/[^]/]x/",
    "/[[:alpha:]/]x/",
    "/[a\\]/]x/",
    "/[\\]]/",
    "/[[::]/]x/",
]


@pytest.mark.parametrize("regex", REGEXES)
def test_bracket_expressions_keep_a_regex_whole(regex: str) -> None:
    assert _Scanner(regex).run() == [("regex", regex)]
    assert _Scanner(f"{regex} && /[[:digit:]]/").run() == [
        ("regex", regex),
        ("&&", "&&"),
        ("regex", "/[[:digit:]]/"),
    ]


# Comparisons the redirect check must not take for a print redirection: inside brackets or
# nested parentheses, after another keyword, or after the print statement ended.
COMPARISONS = [
    "{ if ($1) x = $2 > 3 }",
    "{ print a[1 > 2] }",
    "{ print ((1) > 2) }",
    "{ print $1; x = $2 > 3 }",
    "{ print $1 } $2 > 3 { print }",
    "{ print $1\n x = $2 > 3 }",
]


@pytest.mark.parametrize("program", COMPARISONS)
def test_comparisons_are_not_redirections(program: str) -> None:
    check_awk([program])


def test_awk_messages_in_full() -> None:
    with pytest.raises(CommandRefused) as info:
        check_awk(["-f", "p.awk"])
    assert str(info.value) == (
        "awk: option '-f' is not allowed in the restricted shell (only read-only options are "
        "accepted, long options spelled out in full)"
    )
    with pytest.raises(CommandRefused) as info:
        check_awk([])
    assert str(info.value) == "awk: the program must be given inline (no -f program files)"
    with pytest.raises(CommandRefused) as info:
        check_awk(['{ print $1 > "f" }'])
    assert str(info.value) == (
        "awk: output redirection or pipe in print/printf is not allowed "
        "(parenthesise comparisons: print ($1 > 3))"
    )
    with pytest.raises(CommandRefused) as info:
        check_awk(["/[a\n]/"])
    assert str(info.value) == "awk: unterminated bracket expression in a regular expression"
    with pytest.raises(CommandRefused) as info:
        awk_argv("awk", ["{print}"], "other")
    assert str(info.value) == (
        "awk: the awk installed here is neither gawk nor mawk (BusyBox or another awk without "
        "a sandbox mode), so the restricted shell does not run it; install gawk "
        "(apt-get install gawk) or use grep, sed -n or cut"
    )
    # --sandbox is the harness's, always: the model may not write it (nor anything unlisted)
    with pytest.raises(CommandRefused) as info:
        awk_argv("gawk", ["--sandbox", "{print}"], "gawk")
    assert str(info.value).startswith("awk: option '--sandbox' is not allowed")


def test_scanner_reads_names_and_line_ends() -> None:
    assert _Scanner("X\ny").run() == [("name", "X"), ("newline", "\n"), ("name", "y")]


@pytest.mark.parametrize(("program", "tokens"), TOKENS)
def test_scanner_tokens(program: str, tokens: list[tuple[str, str]]) -> None:
    assert _Scanner(program).run() == tokens


def test_awk_without_an_inline_program_is_refused() -> None:
    for args in ([], ["-F:"], ["-v", "x=1"]):
        with pytest.raises(CommandRefused, match="program must be given inline"):
            check_awk(args)


def test_legit_programs_pass_the_check() -> None:
    for program, _ in LEGIT:
        check_awk([program])


@pytest.mark.parametrize("program", ATTACKS)
def test_attack_is_refused_with_a_reason(program: str) -> None:
    with pytest.raises(CommandRefused, match=r"awk: .+"):
        check_awk([program])


def test_the_regex_attacks_are_real_under_mawk(tmp_path: Path) -> None:
    """Without the check, mawk runs the first attacks (so the suite is not vacuous)."""
    if MAWK is None:
        pytest.skip("mawk not installed")
    for program in ATTACKS[:5]:
        subprocess.run(
            [MAWK, program], input='x"\n', cwd=tmp_path, capture_output=True, text=True, check=False
        )
        assert (tmp_path / "MARK").exists(), program
        (tmp_path / "MARK").unlink()


@pytest.mark.parametrize(("program", "data"), LEGIT)
def test_mawk_and_gawk_agree_on_legit_programs(program: str, data: str) -> None:
    if MAWK is None or GAWK is None:
        pytest.skip("needs both mawk and gawk")
    outputs = {
        awk: subprocess.run(
            [awk, program], input=data, capture_output=True, text=True, check=True
        ).stdout
        for awk in (MAWK, GAWK)
    }
    assert outputs[MAWK] == outputs[GAWK]
    assert outputs[GAWK]


_FRAGMENTS = [
    '/"/', '"', 'system("touch MARK")', "print", ">", '"MARK"', "(", ")", ";", "{", "}", "#",
    "\n", "/", "x", "1", "length", "$1", "++", "[", "]", ",", "|", '"sh"', "/;/", "/}/",
    "/[/]/", "\\\n", "printf", ">>", "=", "~", "!", "?", ":", "BEGIN", "/x/", '"\\""',
]  # fmt: skip


@needs_mawk
def test_random_programs_accepted_by_the_check_never_act_under_mawk(tmp_path: Path) -> None:
    """Differential fuzz: whatever the check accepts, real mawk never runs or writes with."""
    import random

    assert MAWK is not None
    rng = random.Random(20261123)
    accepted = 0
    for _ in range(400):
        program = " ".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(2, 9)))
        try:
            check_awk([program])
        except CommandRefused:
            continue
        accepted += 1
        subprocess.run(
            [MAWK, program],
            input=b'x" 1\n',
            cwd=tmp_path,
            capture_output=True,
            timeout=5,
            check=False,
        )
        assert not list(tmp_path.iterdir()), program
    assert accepted > 100


def test_flavor_detection_and_argv() -> None:
    assert flavor_from_version("GNU Awk 5.2.1, API 3.2\n") == "gawk"
    assert flavor_from_version("mawk 1.3.4 20200120\nCopyright") == "mawk"
    assert flavor_from_version("BusyBox v1.36.1 (Debian) multi-call binary.") == "other"
    assert flavor_from_version("") == "other"
    assert awk_argv("gawk", ("{print}",), "gawk") == ("gawk", "--sandbox", "--", "{print}")
    assert awk_argv("awk", ("{print}",), "mawk") == ("awk", "--", "{print}")
    rebuilt = awk_argv("gawk", ("--field-separator", ",", "--assign=a=1", "{print}"), "gawk")
    assert rebuilt == ("gawk", "--sandbox", "-F,", "-va=1", "--", "{print}")
    with pytest.raises(CommandRefused, match="install gawk"):
        awk_argv("awk", ("{print}",), "other")


def _bin(tmp_path: Path, awk: str) -> list[str]:
    """A program directory whose awk is ``awk`` (and no gawk), plus cat and bwrap."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "awk").symlink_to(awk)
    for program in ("cat", "bwrap"):
        if found := shutil.which(program):
            (bindir / program).symlink_to(found)
    return [str(bindir)]


async def _bash(executor: Executor, command: str) -> str:
    ctx = ToolContext(
        session_id="s",
        call_id="c",
        executor=executor,
        profile=readonly_profile(),
        clock=SystemClock(),
    )
    return (
        await BashHandler(restricted=True, timeout=20).handle({"command": command}, ctx)
    ).content


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.txt").write_text("a 1\nb 2\n")
    return ws


@needs_mawk
@pytest.mark.parametrize("sandbox", [False, None], ids=["no-bwrap", "bwrap-if-any"])
async def test_awk_runs_on_mawk(tmp_path: Path, sandbox: bool | None) -> None:
    """The regression: with mawk as awk, ``awk '{print $1}'`` used to fail (--sandbox)."""
    assert MAWK is not None
    ws = _workspace(tmp_path)
    executor = LocalExecutor(str(ws), search_path=_bin(tmp_path, MAWK), sandbox=sandbox)
    out = await _bash(executor, "awk '{s += $2} END {print s}' data.txt")
    assert out.startswith("3\n"), out
    out = await _bash(executor, "cat data.txt | awk -F' ' '$2 > 1 {print $1}'")
    assert out.startswith("b\n"), out


@needs_mawk
async def test_attacks_never_reach_mawk(tmp_path: Path) -> None:
    assert MAWK is not None
    ws = _workspace(tmp_path)
    executor = LocalExecutor(str(ws), search_path=_bin(tmp_path, MAWK), sandbox=False)
    for program in ATTACKS:
        quoted = "'" + program.replace("'", "'\\''") + "'"
        out = await _bash(executor, f"awk {quoted} data.txt")
        assert "Command refused" in out, (program, out)
    assert not (ws / "MARK").exists()


@needs_gawk
async def test_gawk_is_preferred_and_sandboxed(tmp_path: Path) -> None:
    assert GAWK is not None
    ws = _workspace(tmp_path)
    bindir = _bin(tmp_path, MAWK or GAWK)
    (Path(bindir[0]) / "gawk").symlink_to(GAWK)
    executor = LocalExecutor(str(ws), search_path=bindir, sandbox=False)
    out = await _bash(executor, 'awk \'BEGIN { print PROCINFO["version"] != "" }\'')
    assert out.startswith("1\n"), out  # PROCINFO exists only in gawk


async def test_other_awk_is_refused_with_the_reason(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "awk"  # answers like BusyBox awk does to -W version
    fake.write_text("#!/bin/sh\necho 'BusyBox v1.36.1 (Debian 1:1.36.1-6) multi-call binary.'\n")
    fake.chmod(0o755)
    executor = LocalExecutor(str(ws), search_path=[str(bindir)], sandbox=False)
    out = await _bash(executor, "awk '{print $1}' data.txt")
    assert "neither gawk nor mawk" in out
    assert "apt-get install gawk" in out


@needs_gawk
async def test_awk_in_daytona_is_detected_in_the_sandbox(tmp_path: Path) -> None:
    from rho_adapters.daytona import DaytonaExecutor
    from rho_adapters.fakes.daytona import FakeDaytona

    ws = _workspace(tmp_path)
    fake = FakeDaytona(polls_until_started=1)
    executor = DaytonaExecutor(fake.settings(working_dir=str(ws)), transport=fake.transport)
    try:
        out = await _bash(executor, "awk '{s += $2} END {print s}' data.txt")
        assert out.startswith("3\n"), out
        out = await _bash(executor, 'awk \'BEGIN { print PROCINFO["version"] != "" }\'')
        assert out.startswith("1\n"), out  # ran as gawk (with --sandbox)
        out = await _bash(executor, 'awk \'$0 ~ /"/ {system("id")} /"/\' data.txt')
        assert "Command refused" in out
    finally:
        await executor.aclose()


def test_awk_commands_plan() -> None:
    assert plan_command("awk '{print $1}' f | sort").argvs()[0][0] == "awk"
