"""The credential files and directories the user's environment names, whatever their names.

Programs the user runs find their credentials where a variable says:
``GOOGLE_APPLICATION_CREDENTIALS=./gcp.json`` (a service account's private key),
``KUBECONFIG=deploy/dev.yaml`` (a cluster's client key or token), ``SOPS_AGE_KEY_FILE``,
``AWS_SHARED_CREDENTIALS_FILE``, ``PGPASSFILE``, ``DOCKER_CONFIG`` (a directory whose
``config.json`` holds registry logins)... Kept in the workspace under an ordinary name, no
name rule knows them: before probeshell23b ``cat gcp.json`` printed the key, with bubblewrap
and without. The local executor reads its environment (the one the user's programs run in)
when it is made and makes each file or directory named a secret location
(``rho_adapters/local/homes.environment_secrets``); a Daytona sandbox's environment is its
image's, not read.

``named_by_environment``: pure, values as given (``FILE:`` of a Kerberos cache removed,
lists split on ``:``); the adapter makes them absolute and leaves out a directory holding a
root or a home (``DOCKER_CONFIG=.`` must not make the workspace a secret).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["named_by_environment"]

# variables naming one credential file (a key, a token, a password file, a login store)
_FILES = (
    "GOOGLE_APPLICATION_CREDENTIALS", "AWS_SHARED_CREDENTIALS_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AZURE_FEDERATED_TOKEN_FILE", "AZURE_CLIENT_CERTIFICATE_PATH", "BOTO_CONFIG", "PGPASSFILE",
    "PGSSLKEY", "NETRC", "NPM_CONFIG_USERCONFIG", "TF_CLI_CONFIG_FILE", "SOPS_AGE_KEY_FILE",
    "ANSIBLE_VAULT_PASSWORD_FILE", "MYSQL_TEST_LOGIN_FILE", "REGISTRY_AUTH_FILE",
    "HELM_REGISTRY_CONFIG", "SSLKEYLOGFILE", "KRB5_KTNAME", "KRB5_CLIENT_KTNAME",
    "VAULT_CONFIG_PATH",
)  # fmt: skip
# variables naming a list of them (``:``-separated, as kubectl reads it)
_LISTS = ("KUBECONFIG",)
# variables naming a directory of credentials (a tool's configuration moved)
_DIRECTORIES = (
    "DOCKER_CONFIG", "DOCKER_CERT_PATH", "CLOUDSDK_CONFIG", "AZURE_CONFIG_DIR", "GNUPGHOME",
    "GH_CONFIG_DIR", "KAGGLE_CONFIG_DIR",
    "GCM_PLAINTEXT_STORE_PATH",  # Git Credential Manager's plaintext store (redshell24)
)  # fmt: skip
# a Kerberos credential cache: FILE:path or DIR:path (KEYRING:, KCM: are no file)
_CACHES = ("KRB5CCNAME",)


def named_by_environment(
    env: Mapping[str, str],
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """The credential files and directories ``env`` names: ``(files, directories)``, each a
    ``(value as given, the variable naming it)`` pair (a value possibly relative: to the
    directory the programs start in)."""
    files = [(env.get(name, ""), name) for name in _FILES]
    files += [(part, name) for name in _LISTS for part in env.get(name, "").split(":")]
    directories = [(env.get(name, ""), name) for name in _DIRECTORIES]
    for name in _CACHES:
        kind, colon, path = env.get(name, "").partition(":")
        if not colon:
            files.append((kind, name))  # a bare path is a FILE: cache
        elif kind == "FILE":
            files.append((path, name))
        elif kind == "DIR":
            directories.append((path, name))
    return _first(files), _first(directories)


def _first(pairs: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Each value once, with the first variable naming it; empty values left out."""
    named: dict[str, str] = {}
    for value, name in pairs:
        if value:
            named.setdefault(value, name)
    return tuple(named.items())
