"""A credential file the user's environment names is a secret, whatever its name
(probeshell23b).

``GOOGLE_APPLICATION_CREDENTIALS=./gcp.json``, ``KUBECONFIG=...:kube/dev.yaml``,
``SOPS_AGE_KEY_FILE``, ``AWS_SHARED_CREDENTIALS_FILE``, ``PGPASSFILE``, ``SSLKEYLOGFILE``,
``DOCKER_CONFIG`` (a directory), ``KRB5CCNAME=FILE:...``: the programs the user runs read
their keys and tokens there. Before probeshell23b, with the files kept in the workspace under
these ordinary names, ``cat``, ``grep -r`` and the read tool printed every one, with
bubblewrap and without (``rho_domain/environment_secrets.py`` lists the variables; the local
executor reads its environment when it is made). Local only: a Daytona sandbox's environment
is its image's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from shell_backends import call_tool, restricted_bash

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.tools.read import ReadHandler

MARK = "K-ENVNAMED-MARK"
NAMED = {
    "gcp.json": "GOOGLE_APPLICATION_CREDENTIALS",
    "kube/dev.yaml": "KUBECONFIG",
    "age.txt": "SOPS_AGE_KEY_FILE",
    "awscreds": "AWS_SHARED_CREDENTIALS_FILE",
    "pgpass.txt": "PGPASSFILE",
    "tls-keys.log": "SSLKEYLOGFILE",
    "krb5cc": "KRB5CCNAME",
    "dockercfg/config.json": "DOCKER_CONFIG",
    "gcm/git/https/h.example/u.credential": "GCM_PLAINTEXT_STORE_PATH",  # redshell24
}
LOCAL = [
    pytest.param(True, id="bwrap", marks=pytest.mark.skipif(not sandbox_available(), reason="")),
    pytest.param(False, id="no-bwrap"),
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("envnamed") / "ws"
    for name in (*NAMED, "plain.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"{MARK}-{name}\n" if name in NAMED else "plain words\n")
    return root


def _environment(root: Path) -> dict[str, str]:
    env = {var: str(root / name) for name, var in NAMED.items()}
    env["KUBECONFIG"] = f"/nonexistent/a.yaml:{root}/kube/dev.yaml"
    env["KRB5CCNAME"] = f"FILE:{root}/krb5cc"
    env["DOCKER_CONFIG"] = str(root / "dockercfg")
    env["GCM_PLAINTEXT_STORE_PATH"] = str(root / "gcm")
    env["GNUPGHOME"] = str(root)  # a directory holding the workspace: no secret of it
    return env


@pytest.mark.asyncio
@pytest.mark.parametrize("sandbox", LOCAL)
async def test_no_tool_reads_a_file_the_environment_names(ws: Path, sandbox: bool) -> None:
    executor = LocalExecutor(str(ws), sandbox=sandbox, base_env=_environment(ws))
    for name in NAMED:
        out = await call_tool(*restricted_bash(f"cat {name}"), executor)
        assert out.startswith("SensitivePath"), (name, out)
    out = await call_tool(*restricted_bash("grep -r K-ENVNAMED . ; cat plain.txt"), executor)
    assert MARK not in out, out
    assert "plain words" in out, out
    out = await call_tool(ReadHandler(), {"path": "gcp.json"}, executor)
    assert out.startswith("SensitivePath"), out
    # the refusal names the variable (redshell24: it said "a secret location" alone)
    assert "(a credential file the environment's GOOGLE_APPLICATION_CREDENTIALS names)" in out


@pytest.mark.asyncio
@pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed")
async def test_the_sandbox_alone_hides_them(ws: Path) -> None:
    executor = LocalExecutor(str(ws), sandbox=True, base_env=_environment(ws))
    script = f"cat {' '.join(NAMED)}; grep -r K-ENVNAMED .; cat plain.txt"
    result = await executor.run_unchecked(["/bin/bash", "-c", script])
    assert MARK not in result.output, result.output
    assert "plain words" in result.output, result.output
