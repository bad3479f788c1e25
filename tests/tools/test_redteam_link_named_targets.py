"""The file a link named as a secret leads to is a secret (redshell23).

``.env -> env/prod.conf`` keeps the ``.env``'s content under an ordinary name, and so does
git-annex for every annexed file: ``secrets/id_rsa -> ../.git/annex/objects/Xj/8K/KEY/KEY``
(its hash directories are not hex, so the loose-object rule does not hold them). Before
redshell23, ``cat .env`` was refused by its name while ``cat env/prod.conf``, ``grep -r``,
``xargs cat``, the read tool and ``cat`` of the annex object printed the secrets, on
bubblewrap, without it and on Daytona. The target of a secret-named link is now a secret
location wherever the other names of secrets are found (``alias_scan.link_targets``, the
sandbox's scan, Daytona's scan when its sandbox is made and before each walk).

Locally the file tools judged those targets by equality (redshell24): with ``.ssh -> keys``
the read tool read ``keys/real_key_material`` and the list tool listed ``keys``, whose
files are inside the target, not the target; they now judge them as the commands do.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, call_tool, daytona_pool, run_restricted

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.tools.listing import ListHandler
from rho_domain.tools.read import ReadHandler

MARK = "K-LINKED-MARK"
KEY = "SHA256E-s30--0f1e2d"
ANNEXED = f".git/annex/objects/Xj/8K/{KEY}/{KEY}"
ATTACKS = [
    "cat env/prod.conf",
    "cat ./env/../env/prod.conf",
    "cd env && cat prod.conf",
    "grep -r K-LINKED .",
    "echo env/prod.conf | xargs cat",
    f"cat {ANNEXED}",
    "cat keys/real_key_material",
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("linknamed") / "ws"
    (root / "env").mkdir(parents=True)
    (root / "env/prod.conf").write_text(f"TOKEN={MARK}-env\n")
    (root / ".env").symlink_to("env/prod.conf")
    (root / ANNEXED).parent.mkdir(parents=True)
    (root / ANNEXED).write_text(f"-----BEGIN OPENSSH PRIVATE KEY----- {MARK}-annex\n")
    (root / "secrets").mkdir()
    (root / "secrets/id_rsa").symlink_to(f"../{ANNEXED}")
    (root / "keys").mkdir()
    (root / "keys/real_key_material").write_text(f"{MARK}-dir\n")
    (root / ".ssh").symlink_to("keys")  # a secret directory's link: its target directory
    (root / "plain.txt").write_text("plain words\n")
    return root


pool = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


def test_the_targets_hold_the_secrets(ws: Path) -> None:
    assert (ws / ".env").read_text() == f"TOKEN={MARK}-env\n"
    assert MARK in (ws / "secrets/id_rsa").read_text()
    assert MARK in (ws / ".ssh/real_key_material").read_text()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_tool_reads_a_secret_links_target(
    ws: Path, backend: str, pool: DaytonaPool
) -> None:
    for command in ATTACKS:
        out = await run_restricted(str(ws), command, backend, pool)
        assert MARK not in out, (command, out)
        if command.startswith("cat "):
            assert out.startswith("SensitivePath"), (command, out)
    plain = await run_restricted(str(ws), "cat plain.txt", backend, pool)
    assert "plain words" in plain, plain
    executor = pool.get(str(ws)) if backend == "daytona" else LocalExecutor(str(ws))
    for name in ("env/prod.conf", ANNEXED, "keys/real_key_material"):
        out = await call_tool(ReadHandler(), {"path": name}, executor)
        assert out.startswith("SensitivePath"), out
    for name in ("keys", "keys/"):
        out = await call_tool(ListHandler(), {"path": name}, executor)
        assert out.startswith("SensitivePath"), out
    assert "plain.txt" in await call_tool(ListHandler(), {"path": "."}, executor)


@pytest.mark.asyncio
@pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed")
async def test_the_sandbox_alone_hides_them(ws: Path) -> None:
    executor = LocalExecutor(str(ws), sandbox=True)
    script = f"cat env/prod.conf {ANNEXED} keys/real_key_material; cat plain.txt"
    result = await executor.run_unchecked(["/bin/bash", "-c", script])
    assert MARK not in result.output, result.output
    assert "plain words" in result.output, result.output
