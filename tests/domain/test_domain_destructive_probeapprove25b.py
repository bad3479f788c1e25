"""probeapprove25b: what redapprove25's approval walls still let run unasked after "always".

* commands that bring another revision's or a remote's files, or write the model's words
  into a manifest, without naming a file: ``git bisect``, ``git update-ref HEAD x`` or
  ``git fetch -u`` then ``git stash`` (which goes back to the moved HEAD), ``gh pr
  checkout``, ``hg update``, ``svn update``, ``jj new``, ``npm pkg set scripts.x=...``;
* another agent's CLI run through a wrapper or a package runner (``env claude``, ``npx
  @openai/codex``, ``uvx --from aider-chat aider``) after its instructions were written.

The check is pure: every row in one process.
"""

from __future__ import annotations

import json

from rho_domain.messages import ToolCall
from rho_domain.shell.destructive import destructive_reason
from rho_domain.shell.destructive_session import after_writes


def _bash(command: str) -> ToolCall:
    return ToolCall(id=command, name="bash", arguments=json.dumps({"command": command}))


def _later(earlier: str, command: str) -> str:
    return after_writes(_bash(command), [_bash(earlier)])[0]


def test_commands_that_write_files_they_never_name_count_as_writing_them() -> None:
    rows = {
        ("git bisect start HEAD v1", "make"): "the files git bisect writes",
        ("git bisect bad", "make"): "the files git bisect writes",
        ("git bisect start other log", "make"): "the files git bisect writes",
        ("git update-ref HEAD origin/x && git stash", "make"): "the files git update-ref",
        ("git fetch -qu origin x:main", "make"): "the files git fetch writes",
        ("git fetch --update-head-ok origin x:main", "make"): "the files git fetch writes",
        ("gh pr checkout 12", "make"): "the files gh pr checkout writes",
        ("gh -R a/b pr checkout 12", "make"): "the files gh pr checkout writes",
        ("gh repo clone a/b", "make -C b"): "the files gh repo clone writes",
        ("gh run download 7", "make"): "the files gh run download writes",
        ("glab mr checkout 3", "make"): "the files glab mr checkout writes",
        ("hg -R . up other", "make"): "the files hg up writes",
        ("hg pull -u", "make"): "the files hg pull writes",
        ("svn update", "make"): "the files svn update writes",
        ("jj new other", "make"): "the files jj new writes",
        ("npm pkg set scripts.x=touch\\ y", "npm run x"): "the files npm pkg set writes",
        ("pnpm pkg set scripts.x=y", "pnpm run x"): "the files pnpm pkg set writes",
        ("bun pm pkg set scripts.x=y", "bun run x"): "the files bun pkg set writes",
        ("npm set-script x y", "npm run x"): "the files npm set-script writes",
    }
    missed = {k: r for k, want in rows.items() if want not in (r := _later(*k))}
    assert missed == {}
    # in one line too
    assert "make runs after this command line writes the files git bisect writes" in (
        destructive_reason("git bisect start HEAD v1 && make")
    )
    assert "npm runs after this command line writes the files npm pkg set" in (
        destructive_reason("npm pkg set scripts.x=y && npm run x")
    )
    # what only reads or shows runs as before
    ordinary = [
        ("git bisect log", "make"),
        ("git fetch origin", "make"),
        ("git fetch --update-shallow origin", "make"),
        ("gh pr view 12", "make"),
        ("hg log", "make"),
        ("jj log", "make"),
        ("npm pkg get scripts", "npm run x"),
        ("git bisect start HEAD v1", "git status"),
    ]
    asking = {k: r for k in ordinary if (r := destructive_reason(k[0]) or _later(*k))}
    assert asking == {}


def test_a_wrapped_or_fetched_agent_cli_after_its_instructions_were_written_asks() -> None:
    rows = {
        "env claude -p hi": "env runs after",
        "timeout 60 codex exec hi": "timeout runs after",
        "nohup codex exec hi": "nohup runs after",
        "npx -y @openai/codex@latest exec hi": "npx runs after",
        "bunx @google/gemini-cli -p hi": "bunx runs after",
        "pnpm dlx @anthropic-ai/claude-code -p hi": "pnpm runs after",
        "uvx --from aider-chat aider --yes": "uvx runs after",
        "uvx --from=aider-chat==0.86 aider --yes": "uvx runs after",
        "python -m aider --yes": "python runs after",
    }
    earlier = "echo hi > AGENTS.md"
    missed = {c: r for c, want in rows.items() if want not in (r := _later(earlier, c))}
    assert missed == {}
    # reading it, and programs that are no agent, after a plain write still run unasked
    asking = {c: r for c in ("cat AGENTS.md", "make", "pytest -q") if (r := _later(earlier, c))}
    assert asking == {}
