"""Recursive readers skip every secret the policy recognises, not only the names on a list.

``cat deploy/id_github`` is refused (an SSH key: ``id_*`` without a dot), and so is
``cat .config/gh/hosts.yml`` (a secret location wherever it is). But ``grep -r``, ``rg``,
``diff -r``, ``git grep --no-index``, an ``xargs`` target and the grep tool skip what the
walk meets by the names of ``EXCLUDED_NAMES`` (``.env``, ``*.pem``, ``id_rsa``...), which
cannot say "``id_*`` without a dot" nor ``.config/gh``: before this suite they printed these
files without bubblewrap and on Daytona (the sandbox masks what the policy finds, and held).
Each secret below exists and holds its mark; legit files beside them are still found.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import (
    BACKENDS,
    DaytonaPool,
    call_tool,
    daytona_pool,
    restricted_bash,
    run_restricted,
)

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.permissions import FileWriteMode
from rho_domain.tools.grep import GrepHandler

SECRETS = {
    "deploy/id_github": "SECRET-KEY-ID\n",
    ".config/gh/hosts.yml": "oauth_token: SECRET-GH-WS\n",
    "dot/.cargo/credentials.toml": "token = SECRET-CARGO\n",
    "dot/.terraform.d/credentials.tfrc.json": '{"t": "SECRET-TF"}\n',
    "dot/.local/share/keyrings/login.keyring": "SECRET-KEYRING\n",
    "dot/.config/gcloud/creds.db": "SECRET-GCLOUD\n",
    "dot/.config/rho-agent/config.yaml": "api_key: SECRET-CFG\n",
    "dot/.docker/config.json": '{"auth": "SECRET-DOCKER"}\n',
    # Names the policy folds onto a secret's (``names.folded``) that no walker's exclusion
    # spells: U+017F and the Kelvin sign casefold to ASCII (``.ssh``, ``.kube``), U+200C is
    # ignored by HFS+, an NTFS stream's type is dropped. Before suite19a grep -r printed the
    # first everywhere (``unlisted`` took ``.ssh``'s exclusion as covering it) and, on
    # Daytona, all four (the scan's find tests never listed them).
    "dot/.\u017fsh/config": "Host SECRET-LONG-S\n",
    "dot/.\u212aube/config": "token: SECRET-KELVIN\n",
    "dot/.e\u200cnv": "API_KEY=SECRET-ZWNJ\n",
    "dot/.ENV::$DATA": "API_KEY=SECRET-STREAM\n",
}
LEGIT = {
    "src/app.py": "LEGIT-MARK app\n",
    "deploy/id_utils.py": "LEGIT-MARK ids\n",
    "dot/notes.txt": "LEGIT-MARK notes\n",
}
ATTACKS = [
    "grep -r SECRET .",
    "grep -rh SECRET dot",
    "grep -r SECRET deploy",
    "grep -R SECRET .config",
    "rg -uu SECRET",
    "rg --hidden SECRET dot",
    "rg -uuu SECRET deploy",
    "diff -rN dot empty",
    "diff -rN deploy empty",
    "git grep --no-index -e SECRET",
    "echo dot | xargs grep -r SECRET",
    "echo . | xargs rg -uu SECRET",
    "printf 'deploy\\n.config\\n' | xargs grep -rh SECRET",
]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("walks") / "ws"
    (ws / "empty").mkdir(parents=True)
    for rel, text in {**SECRETS, **LEGIT}.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws


# The tests on the module's workspace share one event loop and, on Daytona, one sandbox
# (``daytonas``): a sandbox per case paid its creation and set-up scripts (about 70 ms of CPU)
# each time. Each case still runs its own command with every check the executor makes.
daytonas = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


def _leaked(output: str) -> list[str]:
    return [text.strip() for text in SECRETS.values() if text.split()[-1] in output]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("command", ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_no_walk_reads_a_secret_it_meets(
    root: Path, backend: str, command: str, daytonas: DaytonaPool
) -> None:
    out = await run_restricted(str(root), command, backend, daytonas)
    assert _leaked(out) == [], out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", [".", "deploy", "dot/.cargo", ".config"])
@pytest.mark.asyncio(loop_scope="module")
async def test_the_grep_tool_skips_them_too(
    root: Path, backend: str, path: str, daytonas: DaytonaPool
) -> None:
    executor: LocalExecutor | DaytonaExecutor
    if backend == "daytona":
        executor = daytonas.get(str(root))
    else:
        executor = LocalExecutor(str(root), sandbox=backend == "bwrap")
    out = await call_tool(GrepHandler(), {"pattern": "SECRET", "path": path}, executor)
    assert _leaked(out) == [], out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "command",
    [
        "grep -r SECRET ROOT",
        "rg -uu SECRET ROOT",
        "echo ROOT | xargs grep -r SECRET",
        "echo ROOT | xargs rg SECRET",
    ],
)
async def test_a_walk_of_a_read_root_skips_them_too(
    tmp_path: Path, backend: str, command: str
) -> None:
    """A read root outside the workspace (``extra_read_roots``) is walked like the workspace."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "logs/deploy").mkdir(parents=True)
    (tmp_path / "logs/deploy/id_github").write_text("SECRET-KEY-ID\n")
    (tmp_path / "logs/app.log").write_text("SECRET-FREE line\n")
    root, logs = str(tmp_path / "ws"), str(tmp_path / "logs")
    if backend == "daytona":
        fake = FakeDaytona(polls_until_started=0)
        executor: LocalExecutor | DaytonaExecutor = DaytonaExecutor(
            fake.settings(working_dir=root),
            file_write=FileWriteMode.OFF,
            transport=fake.transport,
            extra_read_roots=(logs,),
        )
    else:
        executor = LocalExecutor(root, sandbox=backend == "bwrap", extra_read_roots=[logs])
    try:
        out = await call_tool(*restricted_bash(command.replace("ROOT", logs)), executor)
    finally:
        if isinstance(executor, DaytonaExecutor):
            await executor.aclose()
    assert "SECRET-KEY-ID" not in out, out
    assert "SECRET-FREE line" in out, out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.asyncio(loop_scope="module")
async def test_legit_files_beside_them_are_still_found(
    root: Path, backend: str, daytonas: DaytonaPool
) -> None:
    command = "grep -rh LEGIT-MARK . && rg -uu -l LEGIT"
    out = await run_restricted(str(root), command, backend, daytonas)
    for text in ("LEGIT-MARK app", "LEGIT-MARK ids", "LEGIT-MARK notes", "deploy/id_utils.py"):
        assert text in out, out


@pytest.mark.parametrize("backend", ["no-bwrap", "daytona"])
async def test_many_listed_secrets_add_no_word(tmp_path: Path, backend: str) -> None:
    """600 ``*.pem`` fixtures with 240-byte names: ``*.pem`` excludes them all, so none becomes
    a location of its own (the xargs guard's script held them all, 144 KB of names alone, and
    grew past the 128 KiB exec takes in one argument: E2BIG). The names are long so that few
    files cross the bound (each file made costs about 0.3 ms of CPU here; 3,000 short names
    did before). Bubblewrap's own limit (3 arguments a mask, 9,000 at most) is not this
    suite's."""
    ws = tmp_path / "ws"
    (ws / "certs").mkdir(parents=True)
    for i in range(600):
        name = f"server-certificate-fixture-number-{i:04}-".ljust(236, "x") + ".pem"
        (ws / "certs" / name).write_text("x\n")
    (ws / "a.txt").write_text("hello\n")
    out = await run_restricted(str(ws), "echo . | xargs grep -r hello", backend)
    assert out.startswith("./a.txt:hello"), out
