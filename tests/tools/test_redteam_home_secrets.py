"""Red team of the secrets policy (issue 32): credentials under names no list follows.

Tools keep credentials in a home's hidden entries under their own names: Maven's
``.m2/settings.xml``, rclone's config, Firefox's ``logins.json``, a token exported in
``.bashrc``, Kaggle's ``kaggle.json``... The policy's name list caught none of the 12 below
(``cat`` printed every one without the sandbox; with it, a real home is visible too, only
``HOME_SECRETS`` are hidden). Rule 2b of ``rho_domain.secrets``: every hidden entry of a home is
a secret location, unless the workspace itself is there (editing ``~/.config/nvim``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from shell_backends import call_tool, restricted_bash

from rho_adapters.local import LocalExecutor
from rho_domain.reach import OutsideReads
from rho_domain.tools.base import ToolHandler
from rho_domain.tools.read import ReadHandler

STORES = {
    ".m2/settings.xml": "<password>TOKEN-M2</password>",
    ".gradle/gradle.properties": "signing.password=TOKEN-GRADLE",
    ".config/rclone/rclone.conf": "token = TOKEN-RCLONE",
    ".config/op/config": "TOKEN-OP",
    ".mozilla/firefox/p/logins.json": "TOKEN-FIREFOX",
    ".bashrc": "export OPENAI_API_KEY=TOKEN-BASHRC",
    ".kaggle/kaggle.json": '{"key": "TOKEN-KAGGLE"}',
    ".huggingface/token": "TOKEN-HF",
    ".netlify/config.json": "TOKEN-NETLIFY",
    ".terraformrc": "token = TOKEN-TFRC",
    ".Xauthority": "TOKEN-XAUTH",
    ".dbt/profiles.yml": "password: TOKEN-DBT",
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("homes") / "u"
    for rel, text in STORES.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text + "\n")
    (base / "notes.txt").write_text("visible notes\n")
    (base / "ws").mkdir()
    (base / "ws" / "README.md").write_text("# readme\n")
    nvim = base / ".config" / "nvim"
    nvim.mkdir(parents=True)
    (nvim / "init.lua").write_text("vim.o.number = true\n")
    (nvim / ".env").write_text("TOKEN-NVIM-ENV\n")
    return base


async def _call(handler: ToolHandler, arguments: dict[str, Any], root: Path, home: Path) -> str:
    # The widest reach (allow): the secrets policy must hold where the machine is readable.
    executor = LocalExecutor(
        str(root), sandbox=False, homes=[str(home)], read_outside=OutsideReads.ALLOW
    )
    return await call_tool(handler, arguments, executor)


ATTACKS = [
    *[f"cat {{home}}/{rel}" for rel in STORES],
    "grep -r TOKEN {home}",
    "grep -R TOKEN {home}/.config",
    "rg -uu TOKEN {home}",
    "rg --hidden TOKEN {home}",
    "echo {home} | xargs grep -r TOKEN",
    "echo {home}/.m2 | xargs grep -r TOKEN",
    "find {home} -type f | xargs cat",
    "find {home} -name '*.json' | xargs head",
    "head {home}/.*",
    "cat {home}/.config/*/*",
    "diff -r {home}/.m2 {home}/ws",
    "cd .. && cat .bashrc",
]


@pytest.mark.parametrize("template", ATTACKS)
async def test_no_hidden_home_entry_is_read(home: Path, template: str) -> None:
    output = await _call(*restricted_bash(template.format(home=home)), home / "ws", home)
    assert "TOKEN-" not in output, output


async def test_a_named_store_is_refused_as_a_home_secret(home: Path) -> None:
    # Firefox's store: no name or location rule knows it (.m2/settings.xml is one now)
    output = await _call(
        *restricted_bash(f"cat {home}/.mozilla/firefox/p/logins.json"), home / "ws", home
    )
    assert "is a hidden entry of the home directory" in output, output


async def test_a_workspace_inside_a_hidden_entry_is_readable_but_its_secrets_are_not(
    home: Path,
) -> None:
    nvim = home / ".config" / "nvim"
    assert "vim.o.number" in await _call(*restricted_bash("cat init.lua"), nvim, home)
    assert "vim.o.number" in await _call(ReadHandler(), {"path": "init.lua"}, nvim, home)
    assert "TOKEN-NVIM-ENV" not in await _call(*restricted_bash("cat .env"), nvim, home)
    assert "TOKEN-NVIM-ENV" not in await _call(*restricted_bash("grep -r TOKEN ."), nvim, home)
    assert "TOKEN-" not in await _call(*restricted_bash(f"cat {home}/.bashrc"), nvim, home)


async def test_ordinary_files_of_the_home_are_out_of_reach_as_the_sandbox_hides_them(
    home: Path,
) -> None:
    """Even with reads outside the workspace allowed, a home directory is what the sandbox
    hides from commands, so every tool refuses it, with bwrap or without (this test once
    required ``cat ~/notes.txt`` to work without bwrap, where bwrap showed an empty home)."""
    output = await _call(*restricted_bash(f"cat {home}/notes.txt"), home / "ws", home)
    assert "visible notes" not in output, output
    assert "is in a home directory, /tmp or /run, which commands never see" in output
    read = await _call(ReadHandler(), {"path": f"{home}/notes.txt"}, home / "ws", home)
    assert "visible notes" not in read
    assert "is in a home directory, /tmp or /run, which commands never see" in read
    # the workspace inside that home is readable
    assert "# readme" in await _call(*restricted_bash("cat README.md"), home / "ws", home)
