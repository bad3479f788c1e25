"""Globs in the restricted shell (issue 10, item 8): expanded as bash would, then confined.

``wc -l src/*.py`` and ``grep -n 'DROP TABLE' migrations/*.sql`` used to be refused
("unquoted glob character"). Now the planner keeps the pattern, the executor expands it
(``Executor.glob``) right before the step runs, and the expanded words pass the same checks
as literal ones. ``PATTERNS`` is compared with real bash (``LC_ALL=C``, default shopts) on a
fixture tree, through LocalExecutor, MemoryExecutor and DaytonaExecutor (FakeDaytona);
``ATTACKS`` are glob spellings that must be refused or must leave a secret out.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.fakes.memory_executor import MemoryExecutor
from rho_adapters.local import LocalExecutor
from rho_domain.errors import CommandRefused
from rho_domain.permissions import readonly_profile
from rho_domain.ports.executor import Executor
from rho_domain.shell import PipelineStep, plan_command
from rho_domain.shell.expand import expand_step
from rho_domain.shell.glob import compile_component, unescape
from rho_domain.tools.base import ToolContext
from rho_domain.tools.bash import BashHandler

FILES = [
    "a.py",
    "b.py",
    "ab.py",
    "B.py",
    "_x.py",
    ".hidden.py",
    ".config",
    "README.md",
    "Makefile",
    "data1.csv",
    "data2.csv",
    "data10.csv",
    "sp ace.txt",
    "star*.txt",
    "br[a].txt",
    "a-",
    "src/app.py",
    "src/util.py",
    "src/.secret.py",
    "src/sub/deep.py",
    "src/sub/notes.txt",
    "tests/test_a.py",
    "tests/sub/more.txt",
    "end*",
    "nl\nname.txt",
    "a-dir/c.x",
    "a/b.x",
    "migrations/001_init.sql",
    "migrations/002_drop.sql",
    "émoji/ü.txt",
    ":",
    "=",
    "X",
    "[:]",
    ":]",
    "[x",
]

PATTERNS = [
    "*",
    "*.py",
    ".*",
    "*/",
    "src/*",
    "src/*.py",
    "*/*.py",
    "*/*.x",
    "?.py",
    "??.py",
    "[ab].py",
    "[!a].py",
    "[^a].py",
    "[a-c]*",
    "[[:upper:]]*",
    "[[:digit:][:upper:]]*",
    "data?.csv",
    "data*.csv",
    "*.nomatch",
    "nodir/*",
    "src/*/",
    "**/*.py",
    "'*'.py",
    '"src"/*.py',
    "\\*",
    "star\\*.txt",
    "star*.txt",
    "a[",
    "a[b",
    "[]",
    "[]ab]*",
    "*[",
    "src/.*",
    "s*/s*",
    "*/sub",
    "*/sub/",
    "*/sub/*.txt",
    "s*/sub/*",
    "\\.h*",
    "*\\*",
    "nl*",
    "nl?name.txt",
    "\\.*",
    "src/../*.py",
    "./*.py",
    "[.]*",
    "?*",
    "*.[ch]",
    "[a-]*",
    "[z-a]*",
    "br[[]a].txt",
    "br\\[a].txt",
    "sp*",
    "'sp ace'*",
    "*/*/*.py",
    "src//*.py",
    "migrations/*.sql",
    "*/ü.*",
    "[[:punct:]]*",
    "*[[:space:]]*",
    "*=*",
    "[!z-a]*.md",
    "a/*/",
    "*.PY",
    # character classes: unknown or empty names match nothing, an unclosed "[:" is a ":"
    "[[::]]",
    "[[::]",
    "[[:]",
    "[[:]]",
    "[[:a:]]",
    "[![:a:]]",
    "[[:a:]x]*",
    "[[::]x]",
    "[[:x]",
    "[[:x]]",
    "[x[:]",
    "[a[:]*",
    "[[:a]",
    "[![:]",
    "[[:x:]",
    "[[:alpha:]]]",
    "[[:alpha:]x]",
    "[[:alpha:]",
]


def _tree(root: Path) -> Path:
    for name in FILES:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{name}\n")
    return root


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tree(tmp_path_factory.mktemp("globs"))


def _bash_words(root: Path, word: str) -> tuple[str, ...]:
    out = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", "printf '%s\\0' " + word],
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
        cwd=root,
        check=True,
    ).stdout
    return tuple(out.decode("utf-8", "surrogateescape").split("\0")[:-1])


async def _our_words(executor: Executor, word: str, cwd: str = ".") -> tuple[str, ...]:
    step = plan_command("echo " + word).steps[0][1]
    assert isinstance(step, PipelineStep)
    expanded = await expand_step(step, cwd, executor)
    return expanded.stages[0].argv[1:]


def _memory(root: Path) -> MemoryExecutor:
    return MemoryExecutor({name: name + "\n" for name in FILES}, root=str(root))


def test_pattern_suite_size() -> None:
    assert len(PATTERNS) >= 50
    assert len(set(PATTERNS)) == len(PATTERNS)


@pytest.mark.parametrize("word", PATTERNS)
async def test_local_expansion_matches_bash(tree: Path, word: str) -> None:
    assert await _our_words(LocalExecutor(str(tree)), word) == _bash_words(tree, word)


@pytest.mark.parametrize("word", PATTERNS)
async def test_memory_expansion_matches_bash(tree: Path, word: str) -> None:
    assert await _our_words(_memory(tree), word) == _bash_words(tree, word)


@pytest.fixture(scope="module")
def daytona_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tree(tmp_path_factory.mktemp("daytona-globs"))


@pytest.fixture
async def daytona(daytona_tree: Path) -> AsyncIterator[DaytonaExecutor]:
    fake = FakeDaytona(polls_until_started=1)
    executor = DaytonaExecutor(
        fake.settings(working_dir=str(daytona_tree)), transport=fake.transport
    )
    try:
        yield executor
    finally:
        await executor.aclose()


async def test_daytona_expansion_matches_bash(daytona: DaytonaExecutor, daytona_tree: Path) -> None:
    for word in ("*", "*.py", ".*", "*/", "src/*.py", "*/*.x", "[ab].py", "nodir/*", "src/*/"):
        assert await _our_words(daytona, word) == _bash_words(daytona_tree, word), word


async def test_expansion_is_relative_to_the_step_directory(tree: Path) -> None:
    assert await _our_words(LocalExecutor(str(tree)), "*.py", cwd="src") == ("app.py", "util.py")


def _ctx(executor: Executor) -> ToolContext:
    return ToolContext(
        session_id="s",
        call_id="c",
        executor=executor,
        profile=readonly_profile(),
        clock=SystemClock(),
    )


async def _bash(executor: Executor, command: str) -> str:
    handler = BashHandler(restricted=True, timeout=20)
    return (await handler.handle({"command": command}, _ctx(executor))).content


def _real_bash(root: Path, command: str) -> str:
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", command],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
        cwd=root,
        check=False,
    ).stdout


@pytest.mark.parametrize(
    "command",
    [
        "wc -l src/*.py",
        "grep -n 'DROP TABLE' migrations/*.sql",
        "cat src/*.py | wc -l",
        "cd src && wc -l *.py",
        "ls -d */",
        "head -n 1 data*.csv",
        "grep -l py src/*/*.py src/*.py",
        "wc -c 'sp ace'*",
        "echo *.nomatch",
        "grep x <<< *",
        "git log --oneline -- '*.py' 2>/dev/null | wc -l",
    ],
)
async def test_legit_glob_commands_run_like_bash(tree: Path, command: str) -> None:
    """The regression of item 8, on real processes, compared with bash's own output."""
    (tree / "migrations" / "002_drop.sql").write_text("-- x\nDROP TABLE users;\n")
    out = await _bash(LocalExecutor(str(tree)), command)
    body = out.rsplit("[exit code", 1)[0]
    assert "refused" not in out
    assert body == _real_bash(tree, command)


@pytest.fixture
def attack_tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for name in ("a.py", ".env", "config/prod.env", "config/app.yml", "keys/id_rsa"):
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("SECRET=hunter2\n" if "env" in name or "id_" in name else "ok\n")
    (ws / "--pre=sh").write_text("")
    (ws / "-delete").write_text("")
    (ws / "$(id)").write_text("")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("SECRET=outside\n")
    (ws / "link").symlink_to(outside)
    return ws


ATTACKS = [
    ("cat .e*", "secrets"),
    ("cat .[e]nv", "secrets"),
    ("cat .env*", "secrets"),
    ("grep SECRET config/*", "secrets"),
    ("cat */prod.env", "secrets"),
    ("cat keys/*", "secrets"),
    ("head -n 5 keys/id_*", "secrets"),
    ("rg x *", "--pre"),
    ("find * -name x", "-delete"),
    ("cat /etc/host*", "not expanded"),
    ("cat ../*", "not expanded"),
    ("cat ../outside/*", "not expanded"),
    ("cat link/*", "not expanded"),
    ("cat /proc/*/environ", "/proc"),
    ("cat < *.py", "redirection target"),
    ("ca* a.py", "cannot name the program"),
    ("cd l* && ls", "literal directory"),
    ("ls; cat .e*", "secrets"),
]


def test_attack_suite_size() -> None:
    assert len(ATTACKS) >= 15


@pytest.mark.parametrize(("command", "reason"), ATTACKS)
async def test_glob_attacks_are_refused(attack_tree: Path, command: str, reason: str) -> None:
    for executor in (
        LocalExecutor(str(attack_tree)),
        LocalExecutor(str(attack_tree), sandbox=False),
    ):
        out = await _bash(executor, command)
        assert "refused" in out.lower(), out
        assert reason in out, out
        assert "hunter2" not in out
        assert "SECRET=outside" not in out


async def test_matches_through_a_link_out_of_the_workspace_are_left_out(attack_tree: Path) -> None:
    out = await _bash(LocalExecutor(str(attack_tree)), "cat */passwd")
    assert "SECRET=outside" not in out
    assert "*/passwd" in out  # no match: the word stays literal, as in bash


async def test_a_directory_out_of_reach_below_the_first_level_is_skipped(
    attack_tree: Path,
) -> None:
    """Below the first level a directory the executor may not list (``.ssh``, a secret) is
    left out, as bash leaves out one it cannot read; the first level's own listing is an
    error worth stopping for."""
    (attack_tree / ".ssh").mkdir()
    (attack_tree / ".ssh" / "id_rsa").write_text("SECRET\n")
    (attack_tree / ".cfg").mkdir()
    (attack_tree / ".cfg" / "app.yml").write_text("ok\n")
    executor = LocalExecutor(str(attack_tree))
    assert await _our_words(executor, "*/passwd") == ("*/passwd",)
    assert await _our_words(executor, "*/*.yml") == ("config/app.yml",)
    assert await _our_words(executor, ".*/*") == (".cfg/app.yml",)  # .ssh is not listed
    with pytest.raises(CommandRefused, match="is a secret location"):
        await _our_words(executor, ".ssh/*")  # the first level: refused, not skipped


async def test_files_are_not_listed_as_directories() -> None:
    """Only directories are listed for the next level: files under ``*/x`` cost no listing
    (2,000 of them would otherwise exhaust the listing budget)."""
    from rho_domain.shell.glob import expand

    listed: list[str] = []

    async def lister(path: str) -> list[tuple[str, bool]]:
        listed.append(path)
        return [("f1", False), ("f2", False), ("d", True)] if path == "/w" else []

    assert await expand("*/x", "/w", lister) == ()
    assert listed == ["/w", "/w/d"]


async def test_names_that_are_not_utf8_sort_by_their_bytes_like_bash(tmp_path: Path) -> None:
    """bash (LC_ALL=C) sorts matches by their bytes; a name that is not UTF-8 comes back from
    the lister with surrogate escapes, which sort before U+E000 as text but after it as bytes."""
    for name in (b"a\xff", "a\ue000".encode(), b"a\x7f", "a\U0001f600".encode()):
        (tmp_path / name.decode("utf-8", "surrogateescape")).write_text("x\n")
    ours = await _our_words(LocalExecutor(str(tmp_path)), "a*")
    assert ours == _bash_words(tmp_path, "a*")
    assert ours[-1] == "a\udcff"  # the byte 0xFF, last


async def test_a_matched_name_is_one_literal_word(attack_tree: Path) -> None:
    out = await _bash(LocalExecutor(str(attack_tree)), "echo [$]*")
    assert out.startswith("$(id)\n"), out


async def test_too_many_matches_are_refused() -> None:
    files = {f"f{i:05}.txt": "" for i in range(10_001)}
    step = plan_command("wc -l *.txt").steps[0][1]
    assert isinstance(step, PipelineStep)
    with pytest.raises(CommandRefused, match="matched too many files"):
        await expand_step(step, ".", MemoryExecutor(files))
    few = plan_command("wc -l f0000?.txt").steps[0][1]
    assert isinstance(few, PipelineStep)
    assert len((await expand_step(few, ".", MemoryExecutor(files))).stages[0].argv) == 12


async def test_a_glob_that_walks_too_many_directories_is_refused() -> None:
    files = {f"d{i:04}/e/f.txt": "" for i in range(2_100)}
    step = plan_command("cat */*/*.txt").steps[0][1]
    assert isinstance(step, PipelineStep)
    with pytest.raises(CommandRefused, match="lists more than 2,000 directories"):
        await expand_step(step, ".", MemoryExecutor(files))


@pytest.mark.parametrize("word", ["[[=a=]]*", "x[[.a.]]", "[![=a=]]", "[a[.-.]z]"])
async def test_equivalence_classes_and_collating_symbols_are_refused(word: str) -> None:
    """bash matches these irregularly (``[![=a=]]`` matches nothing, ``[[=a]`` takes the
    ``[``): refused by name rather than expanded differently."""
    step = plan_command(f"ls {word}").steps[0][1]
    assert isinstance(step, PipelineStep)
    with pytest.raises(CommandRefused) as info:
        await expand_step(step, ".", MemoryExecutor({"a": "", "x": ""}))
    assert str(info.value) == (
        f"glob {word!r} was not expanded: equivalence classes ([=a=]) and collating symbols "
        "([.a.]) are not expanded (bash matches them irregularly): quote the word, or name the "
        "files"
    )


def test_glob_in_program_redirect_and_cd_is_refused_at_plan_time() -> None:
    for command in ("ca* x", "cat < *.txt", "cd s*", "ls > *.txt"):
        with pytest.raises(CommandRefused):
            plan_command(command)


# Bracket expressions, one character each; every row agrees with bash's `[[ name == pattern ]]`
# under LC_ALL=C (checked when written). Mutation testing found the ranges, escapes inside
# brackets and reversed ranges unpinned.
BRACKETS = [
    ("[!a]", ["b", "-", "!", "[", "]"], ["a", "ab"]),
    ("[^a]x", ["bx"], ["ax"]),
    ("[ab]", ["a", "b"], ["X", "ab", ""]),
    ("[a-c]", ["a", "b", "c"], ["d", "-"]),
    ("[a-]", ["a", "-"], ["b"]),
    ("[a-a]", ["a"], ["b"]),
    ("[z-ab]", ["b"], ["X", "a", "z", "m"]),
    ("[z-a]x", [], ["x", "ax", "zx", "Xx"]),
    ("[!z-a]", ["a", "X"], []),
    ("[\\]a]", ["]", "a"], ["\\", "b"]),
    ("[a\\-z]", ["a", "-", "z"], ["b", "\\"]),
    ("[a-\\z]", ["a", "m", "z"], ["\\", "A"]),
    ("[a-\\zb]", ["a", "m", "z", "b"], ["\\", "A"]),
    ("[\\!a]", ["!", "a"], ["b"]),
    ("[]a]", ["]", "a"], ["b"]),
    ("[[:digit:]x]", ["1", "x"], ["a", ":"]),
    ("[[:digit:]-z]", ["1", "-", "z"], ["y"]),
    ("[[:nope:]]", [], ["n", "[[:nope:]]"]),
]


@pytest.mark.parametrize(("pattern", "matching", "other"), BRACKETS)
def test_bracket_expressions_match_like_bash(
    pattern: str, matching: list[str], other: list[str]
) -> None:
    regex = compile_component(pattern)
    assert regex is not None
    assert [n for n in matching + other if regex.fullmatch(n)] == matching


@pytest.mark.parametrize("pattern", ["[a\\]", "[a\\", "[a", "[a-", "[a-\\"])
def test_a_bracket_without_its_closing_bracket_is_literal(pattern: str) -> None:
    """``[a\\]`` escapes its ``]`` (bash matches only the name ``[a]``); a trailing
    backslash escapes nothing."""
    assert compile_component(pattern) is None


def test_unescape_keeps_an_escaped_newline() -> None:
    assert unescape("a\\\nb\\*") == "a\nb*"


@pytest.fixture(scope="module")
def linked_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("linked")
    (root / "sub").mkdir()
    (root / "sub" / "x.py").write_text("x\n")
    (root / "a.txt").write_text("a\n")
    (root / "lsub").symlink_to(root / "sub")  # a link to a directory is a directory for */
    (root / "lfile").symlink_to(root / "a.txt")
    (root / "ldead").symlink_to(root / "missing")
    (root / "sub2").mkdir()
    (root / "sub2" / "y.py").write_text("y\n")
    (root / "sub" / "ldir").symlink_to(root / "sub2")  # a link one level down
    return root


LINKED = ["*/", "l*/", "l*", "*", "*/x*", "l*/*.py", "[l]*/", "sub/*/", "sub/l*/*.py", "*/*/"]


@pytest.mark.parametrize("word", LINKED)
async def test_symlinks_expand_like_bash(linked_tree: Path, word: str) -> None:
    ours = await _our_words(LocalExecutor(str(linked_tree)), word)
    assert ours == _bash_words(linked_tree, word)


async def test_daytona_symlinks_expand_like_bash(linked_tree: Path) -> None:
    """The Daytona lister learns that a link is a directory from ``stat`` of the link's own
    path (in its directory, not the workspace root); a dangling link is listed, as bash
    expands it (the daemon's ``GET /files``, no longer used, left it out)."""
    fake = FakeDaytona(polls_until_started=1)
    executor = DaytonaExecutor(
        fake.settings(working_dir=str(linked_tree)), transport=fake.transport
    )
    try:
        for word in LINKED:
            assert await _our_words(executor, word) == _bash_words(linked_tree, word), word
    finally:
        await executor.aclose()


@pytest.mark.parametrize("word", ["{root}/*.py", "{root}/s*/*.py", "{root}/*/", "{root}/src/.*"])
async def test_absolute_patterns_expand_like_bash(tree: Path, word: str) -> None:
    pattern = word.format(root=tree)
    assert await _our_words(LocalExecutor(str(tree)), pattern) == _bash_words(tree, pattern)


async def test_the_listing_budget_is_exact() -> None:
    """2,000 listings are allowed; the 2,001st refuses the glob, naming it."""
    files = {f"d{i:04}/x.txt": "" for i in range(1_999)}  # the root plus 1,999 directories
    step = plan_command("cat */x.txt").steps[0][1]
    assert isinstance(step, PipelineStep)
    expanded = await expand_step(step, ".", MemoryExecutor(files))
    assert len(expanded.stages[0].argv) == 2_000
    files["d1999/x.txt"] = ""
    with pytest.raises(CommandRefused) as info:
        await expand_step(step, ".", MemoryExecutor(files))
    assert str(info.value) == (
        "glob '*/x.txt' was not expanded: glob '*/x.txt' lists more than 2,000 directories; "
        "narrow it or use find"
    )


async def test_dot_and_dot_dot_from_a_lister_never_match() -> None:
    """A lister may report ``.`` and ``..`` (as ``ls -a`` or a remote API does); bash 5.2
    (``globskipdots``) never matches them, not even with ``.*``."""
    from rho_domain.shell.glob import expand

    async def lister(path: str) -> list[tuple[str, bool]]:
        return [(".", True), ("..", True), (".env.example", False), ("a", False)]

    assert await expand(".*", "/w", lister) == (".env.example",)
    assert await expand("*", "/w", lister) == ("a",)
    assert await expand(".?", "/w", lister) == ()
