"""Walkers skip the secrets the policy knows only by a pattern, and the names added for
credentials kept anywhere (varshell16b).

PostgreSQL's pg_authid (``global/1260`` of a data directory) is a secret by a glob of
``service_secrets.SERVICE_SECRET_GLOBS``: no walk finds it by a concrete path, and only the
local executor scans the trees it walks. Under ``read_outside_workspace: allow``, before
varshell16b, ``grep -rl -a pg_signal <global>`` printed ``1260`` on Daytona, and ``echo <dir> |
xargs grep -rl`` (or ``xargs rg -l``) did on Daytona and without bubblewrap: the directory an
xargs target is handed is known only at run time. Walkers now skip a glob's base name wherever
they walk near its directory (``walk_exclusions._glob_exposed``). Run on this machine's real
pg_authid.

Ticket caches (``krb5cc_*``), ceph keyrings, a runner's ``.credentials``, ``htpasswd`` files
without the dot and ACME account keys were read by ``cat`` and ``grep -r`` in a workspace on
every backend; they are name rules now (``secrets.NAMES``). So are, since the seventeenth
round, the credential files tools also read from a project directory (``.yarnrc.yml``'s
``npmAuthToken``, Composer's ``auth.json``, ``.mylogin.cnf``, ``.databrickscfg``,
``.terraformrc``, ``kaggle.json``, ``rclone.conf``, ``clouds.yaml``, ``pg_service.conf``,
``.dockercfg``): the home rule (2b) does not cover a workspace. secretnames17 surveyed the rest
of that class (``rho_domain/tool_secrets.py``): before it, ``cat`` printed each of the 64 names
added below (``terraform.tfstate`` first) on every backend, and before redshell23 it printed
PuTTY's and PKCS#8 keys, OpenVPN profiles, SSH host keys outside ``/etc/ssh``, keychains, the
Azure CLI's and gcloud's token stores, Chromium's saved logins, Firefox's ``key4.db``, GnuPG's
``private-keys-v1.d`` and ``wp-config.php``, kept where their tools' directories were moved,
and before probeshell23b Git Credential Manager's plaintext store (``.gcm/store``).
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from shell_backends import (
    BACKENDS,
    DaytonaPool,
    call_tool,
    reading_outside,
    restricted_bash,
    run_restricted,
)

from rho_adapters.daytona import DaytonaExecutor

MARK = "pg_signal"  # the name of a built-in role: in every pg_authid
AUTHID = next(
    (p for p in glob.glob("/var/lib/postgresql/*/main/global/1260") if os.access(p, os.R_OK)), ""
)
GLOBAL = os.path.dirname(AUTHID)


@pytest.fixture(scope="module")
def outside_ws() -> Iterator[str]:
    """Under /var/tmp: /tmp is the sandbox's own, closed under allow."""
    ws = tempfile.mkdtemp(prefix="rho-secret-walks-", dir="/var/tmp")
    yield ws
    shutil.rmtree(ws, ignore_errors=True)


@pytest.mark.skipif(not AUTHID, reason="no readable PostgreSQL pg_authid on this machine")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_walkers_skip_pg_authid(outside_ws: str, backend: str) -> None:
    plain = subprocess.run(["grep", "-rl", "-a", MARK, GLOBAL], capture_output=True, text=True)
    assert AUTHID in plain.stdout  # the plain walk reads it
    executor = reading_outside(backend, outside_ws)
    try:
        for command in (
            f"grep -rl -a {MARK} {GLOBAL}",
            f"echo {GLOBAL} | xargs grep -rl -a {MARK}",
            f"echo {os.path.dirname(GLOBAL)} | xargs rg -l -a -uuu {MARK}",
        ):
            out = await call_tool(*restricted_bash(command), executor)
            assert "1260" not in out, (command, out)
            if backend != "bwrap":  # it cannot enter postgres' directory at all
                assert "global/2676" in out, (command, out)  # the rest is searched
    finally:
        if isinstance(executor, DaytonaExecutor):
            await executor.aclose()


NAMED = ("krb5cc_0", "ceph.client.admin.keyring", "runner/.credentials", "nginx/htpasswd",
         "accounts/private_key.json", "acme.json",
         # tools' credential files kept in a project too (npmAuthToken, Composer's tokens, a
         # MySQL login path, Databricks/Terraform/Kaggle tokens, rclone remotes, OpenStack
         # clouds, PostgreSQL service passwords, old Docker auth)
         ".yarnrc.yml", "php/auth.json", ".mylogin.cnf", ".databrickscfg", ".terraformrc",
         "terraform.rc", "kaggle.json", "rclone.conf", "clouds.yaml", ".pg_service.conf",
         "pg_service.conf", ".dockercfg",
         # secretnames17: the rest of that class (tool_secrets.py says why each one)
         "infra/terraform.tfstate", "infra/terraform.tfstate.backup", "infra/prod.tfvars",
         "infra/x.auto.tfvars.json", ".vault_pass", "ansible/vault_password.txt",
         "config/secrets.yml", ".streamlit/secrets.toml", ".secrets", ".dev.vars",
         ".vagrant/machines/default/virtualbox/private_key", ".sentryclirc", "odbc.ini",
         ".odbc.ini", "wallet/cwallet.sso", "dbt/profiles.yml", "clickhouse-client.xml",
         "kubeconfig", "ops/prod.kubeconfig", "talosconfig", "app-firebase-adminsdk-x1.json",
         "gcp/service-account-key.json", "application_default_credentials.json",
         ".rediscli_auth", ".rediscli_history", ".dbshell", "mongosh_repl_history",
         ".local/share/uv/credentials/credentials.toml",
         "settings-security.xml", ".bundle/config", ".m2/settings.xml",
         ".gradle/gradle.properties", ".nuget/NuGet/NuGet.Config", ".mc/config.json",
         ".ngrok2/ngrok.yml", ".config/ngrok/ngrok.yml", ".config/hub", ".config/glab-cli/x.yml",
         ".tsh/keys", ".config/doctl/config.yaml", ".config/hcloud/cli.toml",
         ".config/helm/repositories.yaml", ".config/op/config", ".oci/config",
         ".bluemix/config.json", ".config/linode-cli", ".config/scw/config.yaml",
         ".fly/config.yml", ".config/netlify/config.json", ".wrangler/config/default.toml",
         ".railway/config.json", ".supabase/access-token", ".config/configstore/x.json",
         ".snowsql/config", ".snowflake/connections.toml", ".dbt/profiles.yml",
         ".clickhouse-client/config.xml", ".circleci/cli.yml", ".travis/config.yml",
         ".config/pypoetry/auth.toml", ".vultr-cli.yaml", ".netlify/config.json",
         ".cache/huggingface/token", ".Xauthority",
         # redshell23: keys and token stores by their format, wherever their tool's
         # directory is (GNUPGHOME, AZURE_CONFIG_DIR, CLOUDSDK_CONFIG) or copied to
         "putty/deploy.ppk", "keys/AuthKey_AB12.p8", "certs/client.pkcs12", "vpn/c.ovpn",
         "image/ssh_host_ed25519_key", "mac/login.keychain-db", "az/msal_token_cache.json",
         "az/msal_token_cache.bin", "az/accessTokens.json", "gc/credentials.db",
         "gc/access_tokens.db", "gc/legacy_credentials/a@b.c/adc.json",
         "chrome/Default/Login Data", "firefox/p.default/key4.db",
         "gnupg/private-keys-v1.d/ABCDEF", "site/wp-config.php",
         "home/.gcm/store/git/https/h.example/u.credential",
         # redshell24: cookie stores, curl's and wget's start-up files, wg-quick's keys
         "firefox/p.default/cookies.sqlite", "chrome/Default/Cookies",
         "chrome/Profile 1/Network/Cookies", "dotfiles/.curlrc", "dotfiles/.wgetrc",
         "vpn/wg0.conf", "vpn/wg-home.conf")  # fmt: skip


@pytest.fixture(scope="module")
def named_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("secretnames") / "ws"  # its directory is walked on Daytona
    ws.mkdir()
    for i, name in enumerate(NAMED):
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(f"CRED-MARK-{i}\n")
    (ws / "notes.txt").write_text("CRED-MARK-notes\n")
    return ws


@pytest.mark.parametrize("backend", BACKENDS)
async def test_credentials_kept_anywhere_are_secret_by_name(named_ws: Path, backend: str) -> None:
    # On Daytona the commands run through one executor, as a session's do: an executor per
    # command created a sandbox and ran its set-up scripts, 83 times over.
    pool = DaytonaPool()
    try:
        for name in NAMED:
            out = await run_restricted(str(named_ws), f"cat {shlex.quote(name)}", backend, pool)
            assert "a secret" in out, (name, out)
            assert "CRED-MARK" not in out, (name, out)
        out = await run_restricted(str(named_ws), "grep -r CRED-MARK .", backend, pool)
        assert out.count("CRED-MARK") == 1, out  # notes.txt alone
    finally:
        await pool.aclose()
