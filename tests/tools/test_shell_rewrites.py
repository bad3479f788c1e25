"""The argv rewrites that keep recursive readers away from secrets (shell/reads.py) and the
find expression check (shell/embedded.py), argument by argument.

Written against the survivors of ``bash scripts/mutation.sh shell-rules`` (docs/testing.md):
which ``-R`` is a flag and which is an option's value, when diff must not follow links, and
each way a find expression can smuggle an action past the start paths.
"""

from __future__ import annotations

import pytest

from rho_domain.errors import CommandRefused
from rho_domain.secrets import SecretPolicy
from rho_domain.shell.embedded import check_find
from rho_domain.shell.reads import secret_safe_argv

POLICY = SecretPolicy(locations=("/srv/agent/sessions",), homes=("/home/u",))


def rewritten(argv: tuple[str, ...], walked: tuple[str, ...] = ("/ws",)) -> tuple[str, ...]:
    """``secret_safe_argv`` without the exclusions it appends (those are tested elsewhere)."""
    out = secret_safe_argv(argv, POLICY, list(walked))
    return tuple(a for a in out if not a.startswith(("--exclude", "--iglob=")))


# grep -R follows symbolic links; -r does not. Only a flag is rewritten, never a value.
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("grep", "-R", "x"), ("grep", "-r", "x")),
        (("grep", "-e", "-R", "-R", "x"), ("grep", "-e", "-R", "-r", "x")),
        (("grep", "-r", "--", "-R"), ("grep", "-r", "--", "-R")),
        (("grep", "--regexp", "-R", "-R"), ("grep", "--regexp", "-R", "-r")),
        (("grep", "--regexp=-R", "-R"), ("grep", "--regexp=-R", "-r")),
        (("grep", "-Re", "-R", "x"), ("grep", "-re", "-R", "x")),
        (("grep", "-eR", "-R", "x"), ("grep", "-eR", "-r", "x")),
        (("grep", "-nR", "x"), ("grep", "-nr", "x")),
        (("grep", "--dereference-recursive", "x"), ("grep", "--recursive", "x")),
        (("grep", "-", "x"), ("grep", "-", "x")),
    ],
)
def test_grep_dereferencing_flag_is_rewritten_only_where_it_is_a_flag(
    argv: tuple[str, ...], expected: tuple[str, ...]
) -> None:
    assert rewritten(argv) == expected


@pytest.mark.parametrize("argv", [("rg", "-L", "x"), ("rg", "--follow", "x"), ("rg", "-nL", "x")])
def test_rg_following_links_is_refused(argv: tuple[str, ...]) -> None:
    with pytest.raises(CommandRefused) as info:
        secret_safe_argv(argv, POLICY, ["/ws"])
    assert str(info.value) == (
        "rg: -L/--follow follows symbolic links, which may lead to secrets; "
        "search the link's target directly"
    )


@pytest.mark.parametrize(
    ("argv", "walked", "no_dereference"),
    [
        (("diff", "a", "b"), ("/ws",), False),
        (("diff", "-u", "a", "b"), ("/ws",), False),
        (("diff", "-r", "a", "b"), ("/ws",), True),
        (("diff", "-ru", "a", "b"), ("/ws",), True),
        (("diff", "--recursive", "a", "b"), ("/ws",), True),
        (("diff", "a", "b"), ("/ws/a", "/ws/b"), True),  # two directories: walked file by file
    ],
)
def test_diff_stops_following_links_once_it_walks_a_directory(
    argv: tuple[str, ...], walked: tuple[str, ...], no_dereference: bool
) -> None:
    out = secret_safe_argv(argv, POLICY, list(walked))
    assert ("--no-dereference" in out) is no_dereference
    assert "--exclude=.[eE][nN][vV]" in out


_ACTION = (
    "is not allowed (find may only test and print: no -exec, -execdir, -ok, -delete, -fprint "
    "or -fls)"
)


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["-delete"], f"find: '-delete' {_ACTION}"),  # no start path: GNU find uses "."
        (["-H", "-delete"], f"find: '-delete' {_ACTION}"),
        (["-P", "-H", "-delete"], f"find: '-delete' {_ACTION}"),
        ([".", "-print", "-delete"], f"find: '-delete' {_ACTION}"),
        ([".", "-name", "x", "-delete"], f"find: '-delete' {_ACTION}"),
        ([".", "-exec", "sh", ";"], f"find: '-exec' {_ACTION}"),
        ([".", "-name"], "find: -name needs a value"),
        ([".", "!", "x"], "find: unexpected word 'x' in the expression"),
        ([".", "(", "x"], "find: unexpected word 'x' in the expression"),
        ([".", ")", "x"], "find: unexpected word 'x' in the expression"),
        ([".", ",", "x"], "find: unexpected word 'x' in the expression"),
    ],
)
def test_find_refusal_by_its_reason(args: list[str], reason: str) -> None:
    with pytest.raises(CommandRefused) as info:
        check_find(args)
    assert str(info.value) == reason


@pytest.mark.parametrize(
    "args",
    [
        ["-H"],
        ["-H", ".", "-name", "x"],
        ["-P", "-H", ".", "-type", "l"],
        ["a", "b", "-name", "x"],
        [".", "!", "-name", "x"],
        ["(", "-name", "x", ")"],
        [".", "x"],  # start paths only
    ],
)
def test_find_without_actions_is_allowed(args: list[str]) -> None:
    check_find(args)


# _scan reads an argv the way the program will: flags in short clusters, a valued short option
# taking the rest of its cluster or the next word, a valued long option taking "=value" or the
# next word, "--" ending the options, and (grep) -NUM as a context count, not flags.
SCANS = [
    ("grep", ["-rn", "x", "."], ["r", "n"], [], 3),
    ("grep", ["-e", "-r", "-i", "x"], ["e", "i"], [], 4),
    ("grep", ["-e-r", "-i", "x"], ["e", "i"], [], 3),
    ("grep", ["-ie", "-r", "x"], ["i", "e"], [], 3),
    ("grep", ["--regexp", "-r", "-i", "x"], ["i"], ["regexp"], 4),
    ("grep", ["--regexp=-r", "-i", "x"], ["i"], ["regexp"], 3),
    ("grep", ["--count", "-r", "x"], ["r"], ["count"], 3),
    ("grep", ["-5", "-r", "x"], ["r"], [], 3),
    ("grep", ["-", "-r", "x"], ["r"], [], 3),
    ("grep", ["-i", "--", "-r", "x"], ["i"], [], 1),
    ("grep", ["--", "--", "-r"], [], [], 0),
    ("rg", ["-5", "x"], ["5"], [], 2),
    ("rg", ["-L", "x", "--follow"], ["L"], ["follow"], 3),
    ("diff", ["-U", "3", "-r", "a", "b"], ["U", "r"], [], 5),
    ("diff", ["-U3", "-r", "a", "b"], ["U", "r"], [], 4),
]


@pytest.mark.parametrize(("program", "argv", "shorts", "longs", "end"), SCANS)
def test_option_scan_reads_argv_as_the_program_does(
    program: str, argv: list[str], shorts: list[str], longs: list[str], end: int
) -> None:
    from rho_domain.shell.programs import SPECS
    from rho_domain.shell.reads import _scan

    assert _scan(argv, SPECS[program]) == (shorts, longs, end)


# git: which subcommands get the secrets-excluding pathspecs, which are left as they are, and
# which are refused (a directory compared outside the repository, literal pathspecs).
_PATHSPEC = ":(top,exclude,icase,glob)**/"


@pytest.mark.parametrize(
    ("argv", "walked", "outcome"),
    [
        (("git", "log", "--oneline"), ("/ws",), "kept"),
        (("git", "log", "-p"), ("/ws",), "specs"),
        (("git", "log", "--stat", "-u"), ("/ws",), "specs"),
        (("git", "--no-pager", "log", "--patch"), ("/ws",), "specs"),
        (("git", "-c", "core.pager=cat", "log", "-p"), ("/ws",), "specs"),  # as hardened
        (("git", "show", "HEAD"), ("/ws",), "specs"),
        (("git", "grep", "-n", "x"), ("/ws",), "specs"),
        (("git", "diff", "--follow", "a.txt"), ("/ws",), "specs"),  # check_git refuses it
        (("git", "log", "-G", "x", "--oneline"), ("/ws",), "specs"),  # pickaxe reads blobs
        (("git", "log", "-Sx", "--format=%s"), ("/ws",), "specs"),
        (("git", "log", "--name-only"), ("/ws",), "specs"),
        (("git", "log", "--no-ext-diff", "--no-textconv", "-n", "3", "--all"), ("/ws",), "kept"),
        (("git", "diff", "--no-index", "a.txt", "b.txt"), ("/ws",), "kept"),
        (("git", "status"), ("/ws",), "specs"),  # lists untracked names (redshell20)
        (("git", "ls-files", "-s"), ("/ws",), "specs"),
        (("git", "rev-parse", "HEAD"), ("/ws",), "kept"),
        (("git", "--no-pager"), ("/ws",), "kept"),  # options only: no subcommand to look at
        (("git", "-c"), ("/ws",), "kept"),
        (
            ("git", "diff", "--no-index", "a", "b"),
            ("/ws", "/ws/a"),
            "git diff --no-index of a directory would read the secrets inside it; "
            "use diff -r, which skips them",
        ),
        (
            ("git", "--literal-pathspecs", "grep", "x"),
            ("/ws",),
            "git grep: --literal-pathspecs would disable the exclusion of secrets files",
        ),
    ],
)
def test_git_readers_get_exclusions_or_are_refused(
    argv: tuple[str, ...], walked: tuple[str, ...], outcome: str
) -> None:
    if outcome not in ("kept", "specs"):
        with pytest.raises(CommandRefused) as info:
            secret_safe_argv(argv, POLICY, list(walked))
        assert str(info.value) == outcome
        return
    out = secret_safe_argv(argv, POLICY, list(walked))
    if outcome == "kept":
        assert out == argv
    else:
        assert out[: len(argv)] == argv
        added = out[len(argv) :]
        assert f"{_PATHSPEC}.env" in added
        assert f"{_PATHSPEC}.env/**" in added
