"""redapprove25: commands that change things unasked after "always".

* git subcommands that put another revision's files in the work tree (``git checkout
  other``, ``git merge origin/x``, ``git stash pop``, ``git fetch URL && git checkout
  FETCH_HEAD``) named none of them, so nothing counted as written and a later ``make`` (in
  the line or in a later call) ran the Makefile they brought unasked;

The check is pure: every row in one process.
"""

from __future__ import annotations

import json

from rho_domain.messages import ToolCall
from rho_domain.shell.destructive import destructive_reason
from rho_domain.shell.destructive_session import after_writes

_EARLIER = "make runs after an earlier call of this session wrote the files git"


def _bash(command: str) -> ToolCall:
    return ToolCall(id=command, name="bash", arguments=json.dumps({"command": command}))


def _write(path: str) -> ToolCall:
    return ToolCall(id=path, name="write", arguments=json.dumps({"path": path, "content": "x"}))


def _later(earlier: ToolCall, command: str) -> str:
    return after_writes(_bash(command), [earlier])[0]


def test_a_git_command_that_brings_another_revisions_files_counts_as_writing_them() -> None:
    rows = {
        "git checkout other": f"{_EARLIER} checkout writes",
        "git switch -q other": f"{_EARLIER} switch writes",
        "git merge origin/x": f"{_EARLIER} merge writes",
        "git rebase origin/x": f"{_EARLIER} rebase writes",
        "git cherry-pick abc": f"{_EARLIER} cherry-pick writes",
        "git revert abc": f"{_EARLIER} revert writes",
        "git stash pop": f"{_EARLIER} stash writes",
        "git stash apply": f"{_EARLIER} stash writes",
        "git worktree add ../w x": f"{_EARLIER} worktree writes",
        "git fetch https://e.com/r && git checkout FETCH_HEAD": f"{_EARLIER} checkout writes",
    }
    missed = {c: r for c, want in rows.items() if want not in (r := _later(_bash(c), "make"))}
    assert missed == {}
    # in one line too
    line = "git checkout -q other && make"
    assert "make runs after this command line writes the files git checkout" in (
        destructive_reason(line)
    )


def test_git_commands_that_leave_the_work_tree_or_only_read_still_run_unasked() -> None:
    rows = [
        ("git stash", "make"),
        ("git stash && git stash pop", "git status"),
        ("git stash list", "make"),
        ("git log --oneline", "make"),
        ("git checkout other", "git diff HEAD~1"),
        ("git fetch origin", "pytest -q"),
    ]
    asking = {(e, c): r for e, c in rows if (r := destructive_reason(e) or _later(_bash(e), c))}
    assert asking == {}
