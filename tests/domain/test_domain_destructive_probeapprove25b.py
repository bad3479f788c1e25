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


_OUTSIDE = "installs a program outside the workspace"


def test_an_install_outside_the_workspace_spelt_otherwise_asks() -> None:
    rows = {
        "npm install --location global x": "npm install --location=global",
        "npm --location user i x": "npm i --location=user",
        "npm it -g x": "npm it -g",
        "npm cit -g": "npm cit -g",
        "pnpm setup": "pnpm setup",
        "pip3.11 install --user x": "pip install --user",
        "pip-3.12 install --user x": "pip install --user",
        "uv pip install --system x": "uv pip install --system",
        "uv tool upgrade x": "uv tool upgrade",
        "uv tool update-shell": "uv tool update-shell",
        "pipx inject x y": "pipx inject",
        "pipx ensurepath": "pipx ensurepath",
        "cargo binstall x": "cargo binstall",
        "gem i x": "gem i",
        "gem inst x": "gem inst",
        "gem up x": "gem up",
        "dotnet tool install --tool-path /opt/bin x": "dotnet install --tool-path",
        "cabal install x": "cabal install",
        "stack install": "stack install",
        "opam install x": "opam install",
        "luarocks install x": "luarocks install",
        "cpanm Foo::Bar": "cpanm Foo::Bar",
        "easy_install x": "easy_install x",
        "volta install x": "volta install",
        "gh extension install a/b": "gh extension install",
        "kubectl krew install x": "kubectl krew install",
        "helm plugin install https://e.invalid/r": "helm plugin install",
        "asdf plugin add x https://e.invalid/r": "asdf plugin add",
        "poetry self add x": "poetry self add",
        "pdm self add x": "pdm self add",
        "code --install-extension x": "code --install-extension",
        "mise use -g node@20": "mise -g",
        "nix profile install github:a/b": "nix profile install",
        "nix-env -i x": "nix-env -i",
        "corepack enable": "corepack enable",
        "corepack install -g pnpm@9": "corepack -g",
        "brew tap a/b": "brew tap",
        "brew install a/b/x": "brew install a/b/x",
    }
    missed = {
        c: r
        for c, want in rows.items()
        if f"{want}: {_OUTSIDE}" not in (r := destructive_reason(c))
    }
    assert missed == {}
    ordinary = [
        "npm install --location project x",
        "npm ls --location global",
        "pip3.11 install x",
        "uv pip install x",
        "uv tool run x",
        "pipx run x",
        "gem list",
        "gem in x",  # ambiguous to gem (info, install): it refuses
        "dotnet tool install x",
        "cabal build",
        "gh extension list",
        "helm install x y",
        "poetry add x",
        "mise use node@20",
        "nix build",
        "corepack install",
        # a distribution's install asks since redapprove26 (the machine's programs, outside
        # the workspace); its lists and searches do not
        "brew list",
        "sudo apt-get update",
    ]
    asking = {c: r for c in ordinary if (r := destructive_reason(c))}
    assert asking == {}


def test_a_deleting_cli_with_no_word_it_knows_is_judged_not_raised() -> None:
    """Before: ``docker``, ``npm`` alone raised ValueError in the scale-to-zero rule (its
    zip of each word with the next was strict over an empty list), so the call was not run
    ("judging the call, policy_for raised ValueError")."""
    rows = ["docker", "npm", "kubectl", "ls | xargs docker inspect --"]
    asking = {c: r for c in rows if (r := destructive_reason(c))}
    assert asking == {}


def test_an_in_place_editor_or_rename_counts_as_writing_what_it_names() -> None:
    """Before: ``yq -i '.scripts.test = "..."' package.json`` (the model's words into the
    manifest), ``sd``, ``crudini --set``, ``json -I``, ``dasel put``, ``ex -sc`` and perl's
    ``rename`` counted as writing nothing, so ``npm test``, ``make``, ``pytest`` ran unasked."""
    rows = {
        ("yq -i '.scripts.test = \"touch made\"' package.json", "npm test"): "npm runs after",
        ("yq -yi '.x = 1' ci.yml", "make"): "make runs after",
        ("yq --in-place -y '.x = 1' ci.yml", "make"): "make runs after",
        ("sd true 'touch made' Makefile", "make"): "make runs after",
        ("crudini --set setup.cfg tool:pytest addopts x", "pytest"): "pytest runs after",
        ("json -I -f package.json -e 'this.x=1'", "npm test"): "npm runs after",
        ("dasel put -f package.json -v x scripts.test", "npm test"): "npm runs after",
        ("ex -sc '%s/a/b/|wq' Makefile", "make"): "make runs after",
        ("rename 's/x/Makefile/' x", "make"): "the files rename writes",
    }
    missed = {k: r for k, want in rows.items() if want not in (r := _later(*k))}
    assert missed == {}
    ordinary = [("yq '.x' package.json", "npm test"), ("crudini --get setup.cfg a b", "pytest")]
    asking = {k: r for k in ordinary if (r := _later(*k))}
    assert asking == {}


def test_pnpm_spells_any_setting_as_config_dot_and_those_that_choose_a_shell_ask() -> None:
    """Before: ``npm --script-shell=x`` asked, ``pnpm --config.script-shell=x run t`` (every
    script run by x) and ``--config.node-options=--require=./x`` ran unasked."""
    why = "chooses the shell or code its scripts run"
    rows = {
        "pnpm --config.script-shell=touch run x": "pnpm --config.script-shell=touch",
        "pnpm --config.node-options=--require=./x run t": "pnpm --config.node-options=",
    }
    missed = {c: r for c, want in rows.items() if not (r := destructive_reason(c)).startswith(want)}
    assert missed == {}
    assert all(why in destructive_reason(c) for c in rows)
    assert destructive_reason("pnpm --config.registry=https://r.example install") == ""
