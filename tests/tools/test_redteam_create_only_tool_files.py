"""Create-only mode does not create the data files other tools take commands from (redwrite17).

The names refused before (package.json, requirements.txt, cloudbuild.json...) had twins of an
allowed kind that were created: Conan's conanfile.txt (conan install fetches the recipes it
names, whose conanfile.py runs), Buildkite's buildkite.json (the steps pipeline upload runs),
dprint's dprint.json (process plugins: programs dprint downloads and runs), and Tauri's
configuration, tauri.conf.json and its platform twins merged over it (tauri.linux.conf.json),
whose build.beforeDevCommand is a shell command tauri dev runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from write_backends import KINDS, writer

from rho_domain.errors import PermissionDenied, ToolError
from rho_domain.permissions import FileWriteMode

COMMANDS = {
    "conanfile.txt": b"[requires]\nevil/1.0@attacker/stable\n",
    "native/ConanFile.TXT": b"[requires]\nevil/1.0\n",
    "buildkite.json": b'{"steps": [{"command": "id"}]}\n',
    "dprint.json": b'{"plugins": ["https://example.invalid/x.json@00"]}\n',
    "src-tauri/tauri.conf.json": b'{"build": {"beforeDevCommand": "id"}}\n',
    "src-tauri/tauri.linux.conf.json": b'{"build": {"beforeDevCommand": "id"}}\n',
    # each names a module node requires: node runs a notes.txt as JavaScript (mcp20)
    "jest.config.json": b'{"globalSetup": "<rootDir>/notes.txt"}\n',
    "web/babel.config.json": b'{"plugins": ["./notes.txt"]}\n',
    "tsconfig.json": b'{"ts-node": {"require": ["./notes.txt"]}}\n',
    # what a later npx/cdk/terraform run finds by name and runs, or requires (varmcp20b)
    "webpack.config.json": b'{"module": {"rules": [{"loader": "./notes.txt"}]}}\n',
    "cdk.json": b'{"app": "sh notes.txt"}\n',
    "infra/main.tf.json": b'{"data": {"external": {"x": {"program": ["sh", "notes.txt"]}}}}\n',
    # one rule, the rest of its class (redmcp21): a plugin module, a command
    "typedoc.json": b'{"plugin": ["./notes.txt"]}\n',
    "zbpack.json": b'{"build_command": "sh notes.txt"}\n',
}


@pytest.mark.parametrize("kind", KINDS)
async def test_a_file_a_tool_takes_commands_from_is_not_created(tmp_path: Path, kind: str) -> None:
    executor = writer(kind, tmp_path, FileWriteMode.CREATE_ONLY)
    refused: dict[str, str] = {}
    try:
        await executor.write("src-tauri/notes.md", b"findings\n", overwrite=False)  # it creates
        await executor.write("conan-notes.txt", b"findings\n", overwrite=False)
        for path, data in COMMANDS.items():
            with pytest.raises(PermissionDenied) as caught:
                await executor.write(path, data, overwrite=False)
            refused[path] = str(caught.value)
            with pytest.raises(ToolError, match="no such file"):
                await executor.read(path)
    finally:
        await executor.aclose()
    for path, message in refused.items():
        assert repr(path) in message
        assert "is a file tools find by its name and act on" in message, message


def test_every_config_a_later_run_loads_from_the_workspace_is_refused() -> None:
    # varmcp20b: the configurations npm, npx, pytest, tox, nox and make runs load by name;
    # the hidden ones and those of another kind were refused before, the JSON ones named
    # here were created (each names a command, or a module node runs a notes.txt as)
    from rho_domain.create_only import create_only_refusal

    before = [".npmrc", ".yarnrc.yml", "pytest.ini", "tox.ini", "noxfile.py", ".babelrc",
              "vite.config.ts", "vite.config.mjs", ".mocharc.json", ".mocharc.yml",
              "karma.conf.js", "webpack.config.js", "Makefile"]  # fmt: skip
    named = ["webpack.config.json", "Nest-CLI.json", "electron-builder.json", "cucumber.json",
             "nightwatch.json", "spec/support/jasmine.json", "cypress.json", "serverless.json",
             "codegen.json", "cdk.json", "cdktf.json", "tsup.config.json", "stryker.conf.json",
             "stryker.config.json", "rescript.json", "bsconfig.json", "terragrunt.hcl.json",
             "main.tf.json", "mod/vars.TOFU.json", "image.pkr.json"]  # fmt: skip
    for path in [*before, *named]:
        assert create_only_refusal(path) is not None, path
    for path in named:
        assert "tools find by its name and act on" in str(create_only_refusal(path)), path
    kept = ["webpack-notes.json", "cdk-report.md", "terraform-plan.json", "main.tf.md"]
    assert [create_only_refusal(path) for path in kept] == [None] * len(kept)


def test_one_rule_refuses_the_configs_tools_take_code_or_commands_from() -> None:
    # redmcp21: the rule is "a tool the user runs finds the file by its name and takes code,
    # a command or a path to either from it"; these were created before. Those of another
    # kind, or hidden (direnv, nix, devcontainers, mise/asdf, pre-commit, make, just, task),
    # were refused already and stay so. *.tfvars.json is a secret, refused to every write.
    from rho_domain.create_only import create_only_refusal

    named = ["typedoc.json", "app/metro.config.json", "tslint.json", "snowpack.config.json",
             "zbpack.json", "lerna.json", "testem.json", "lighthouserc.json", "cz.json",
             "detox.config.json", "renovate.json", "rust-project.json", "buildServer.json",
             "build/compile_commands.json", "omnisharp.json", "global.json",
             "src/App/Properties/launchSettings.json", "dotnet-tools.json",
             "tsconfig.base.json", "packages/web/TSCONFIG.node.json", "config/heft.json",
             "common/config/rush/command-line.json", "common/config/rush/rush-plugins.json",
             "Packages/manifest.json"]  # fmt: skip
    for path in named:
        assert "tools find by its name and act on" in str(create_only_refusal(path)), path
    already = [".envrc", "flake.nix", "devenv.nix", ".devcontainer.json", ".tool-versions",
               "mise.toml", ".pre-commit-config.yaml", "GNUmakefile", "rules.mk", "justfile",
               "Taskfile.yml", ".luarc.json", ".oxlintrc.json", "biome.jsonc"]  # fmt: skip
    assert [path for path in already if create_only_refusal(path) is None] == []
    kept = ["typedoc-notes.md", "tsconfig-review.md", "lerna-report.json", "global-plan.json",
            "rush/notes.md", "packages/report.json"]  # fmt: skip
    assert [create_only_refusal(path) for path in kept] == [None] * len(kept)


def test_the_rule_holds_the_configs_found_by_name_in_round_22() -> None:
    # redmcp22: created before, each a file a tool finds by its name and takes a command,
    # code or an environment from: Azure Functions' Values (NODE_OPTIONS), the SWA CLI's
    # run command, Ionic's hooks, nbdime's browser command, Replit Agent's instructions
    from rho_domain.create_only import create_only_refusal

    named = ["api/local.settings.json", "swa-cli.config.json", "app/ionic.config.json",
             "nbdime_config.json", "replit.md", "Local.Settings.JSON"]  # fmt: skip
    refused = {path: str(create_only_refusal(path)) for path in named}
    assert [p for p, why in refused.items() if "tools find by its name" not in why] == []
    kept = ["settings.json", "local-settings.md", "ionic-notes.md", "replit-notes.md"]
    assert [create_only_refusal(path) for path in kept] == [None] * len(kept)
