"""redapprove25: commands that change things unasked after "always".

* git subcommands that put another revision's files in the work tree (``git checkout
  other``, ``git merge origin/x``, ``git stash pop``, ``git fetch URL && git checkout
  FETCH_HEAD``) named none of them, so nothing counted as written and a later ``make`` (in
  the line or in a later call) ran the Makefile they brought unasked;
* an install outside the workspace (``npm install -g``, ``pip install --user``, ``cargo
  install``, ``go install``, ``pipx install``, ``uv tool install``, ``bun add -g``) puts a
  program on the PATH every later command searches, where the write tool never writes: it
  ran unasked;
* an ``AGENTS.md`` or ``CLAUDE.md`` written, then another agent's CLI run (``codex exec``,
  ``claude -p``): Markdown is plain output, so the CLI, which obeys it as instructions and
  has a shell of its own, ran unasked.

The check is pure: every row in one process.
"""

from __future__ import annotations

import json

from rho_domain.messages import ToolCall
from rho_domain.shell.destructive import destructive_reason
from rho_domain.shell.destructive_session import after_writes

_EARLIER = "make runs after an earlier call of this session wrote the files git"
_OUTSIDE = "installs a program outside the workspace, on the PATH later commands search"


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


def test_an_install_outside_the_workspace_asks() -> None:
    rows = {
        "npm install -g x": "npm install -g",
        "npm install --location=global x": "npm install --location=global",
        "sudo npm link -g": "npm link -g",
        "yarn global add x": "yarn global",
        "pnpm add -g x": "pnpm add -g",
        "bun add -g x": "bun add -g",
        "pip install --user x": "pip install --user",
        "pip3 install --us x": "pip3 install --us",
        "uv pip install --user x": "uv pip install --user",
        "uv tool install ruff": "uv tool install",
        "cargo install ripgrep": "cargo install",
        "go install example.com/x@latest": "go install",
        "gem install rails": "gem install",
        "pipx install black": "pipx install",
        "deno install -A x.ts": "deno install",
        "dotnet tool install --global x": "dotnet install --global",
        "composer global require x": "composer global",
    }
    wanted = {c: f"{want}: {_OUTSIDE}" for c, want in rows.items()}
    missed = {c: r for c, want in wanted.items() if want not in (r := destructive_reason(c))}
    assert missed == {}


def test_an_install_into_the_project_still_runs_unasked() -> None:
    rows = [
        "npm install",
        "npm ci",
        "npm view x --global-style",
        "yarn add x",
        "pip install -e .",
        "pip install pytest",
        "uv pip install x",
        "uv tool run ruff",
        "cargo build",
        "go test ./...",
        "gem list",
        "pipx run black",
        "dotnet tool install x",
        "composer install",
        "bun run build",
        "npm ls -g",
        "npm root -g",
    ]
    asking = {c: r for c in rows if (r := destructive_reason(c))}
    assert asking == {}


def test_an_agent_cli_after_its_instructions_were_written_asks() -> None:
    rows = {
        (_write("AGENTS.md"), "codex exec 'fix the tests'"): "codex runs after",
        (_write("CLAUDE.md"), "claude -p hi"): "claude runs after",
        (_bash("echo x > GEMINI.md"), "gemini -p x"): "gemini runs after",
        (_write("CONVENTIONS.md"), "aider --yes"): "aider runs after",
    }
    missed = {c: r for (e, c), want in rows.items() if want not in (r := _later(e, c))}
    assert missed == {}
    assert "codex runs after this command line writes" in destructive_reason(
        "echo x >> AGENTS.md && codex exec go"
    )
    # reading what was written, and a CLI after code that is not its instructions, do not
    assert _later(_write("AGENTS.md"), "cat AGENTS.md") == ""
    assert destructive_reason("codex exec 'review src'") == ""


def test_words_xargs_appends_to_a_program_whose_options_decide_ask() -> None:
    """Before: what ``xargs`` appends was read as an operand by the rows keyed on options, so
    ``echo --pre=sh | xargs rg x .`` (rg runs sh on every file), ``xargs tar
    --to-command``, ``xargs git log --output=``, ``xargs npm install -g`` ran unasked."""
    why = "appends words {} may read as options, which decide whether it asks"
    rows = {
        "echo --pre=sh | xargs rg x .": "rg",
        "echo --compress-program=sh | xargs sort big": "sort",
        "echo --checkpoint-action=exec=sh | xargs tar -cf a.tar src": "tar",
        "echo --output=x.sh | xargs git log": "git",
        "echo --upload-pack=evil | xargs git ls-remote x": "git",
        "echo -g | xargs npm install x": "npm",
        "echo --lesskey-src=x | parallel less a": "less",
        "echo -- --to-command=sh | xargs tar -tf --": "tar",  # -f's value, not the end
    }
    missed = {c: r for c, n in rows.items() if why.format(n) not in (r := destructive_reason(c))}
    assert missed == {}
    ordinary = [
        "git ls-files | xargs git add --",
        "cat list | xargs rg foo --",
        "find . -name '*.py' | xargs grep -l TODO",
        "ls | xargs cat",
        "cat list | xargs -n1 head -1",
    ]
    asking = {c: r for c in ordinary if (r := destructive_reason(c))}
    assert asking == {}
