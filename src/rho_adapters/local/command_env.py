"""The environments local commands start in.

An unrestricted shell string runs in the caller's environment minus credentials and
code-loading hooks (``scrub_env``; ``shell_env`` adds a PATH and turns pagers off); a
restricted stage in one built from nothing (``restricted_env``): a fixed PATH, a UTF-8 locale,
no home, pagers off and git's system and global configuration out of reach. Each returns a new
dict the caller may extend.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rho_adapters.local.sandbox import SANDBOX_TMP
from rho_domain.shell import environment
from rho_domain.url_logins import has_url_login

# compiled by re (and kept in its cache) with the first environment scrubbed, not at import
_CREDENTIAL_NAMES = r"(?i)KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION"
# A value holding an HTTP credential (OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer ...).
_AUTH_VALUE = r"(?i)authorization\s*[=:]|\b(?:bearer|basic)\s+[A-Za-z0-9._~+/-]{8,}=*\s*(?:$|[,;])"
_DROPPED_VARS = frozenset(
    {"BASH_ENV", "ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PROMPT_COMMAND",
     "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS",
     "RIPGREP_CONFIG_PATH", "GIT_CONFIG_PARAMETERS", "GIT_DIR", "GIT_WORK_TREE"}
)  # fmt: skip


def scrub_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment minus credentials (*KEY*, *SECRET*, *TOKEN*, ..., and any value holding
    a URL with a password or an Authorization header's) and code-loading hooks."""
    return {
        k: v
        for k, v in env.items()
        if not re.search(_CREDENTIAL_NAMES, k)
        and not has_url_login(v)  # a DATABASE_URL or a proxy with a login, whatever its name
        and not re.search(_AUTH_VALUE, v)
        and k not in _DROPPED_VARS
        and not k.startswith("BASH_FUNC_")
    }


def shell_env(env: Mapping[str, str], search_path: Sequence[str]) -> dict[str, str]:
    """An unrestricted shell command's environment: ``env`` scrubbed, ``search_path`` as its
    PATH when it has none, pagers and git's terminal prompt off."""
    out = scrub_env(env)
    out.setdefault("PATH", ":".join(search_path))
    out.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return out


def restricted_env(search_path: Sequence[str]) -> dict[str, str]:
    """A fresh environment for restricted commands: nothing inherited (the domain's rule,
    ``rho_domain.shell.environment``), with the sandbox's temporary directory."""
    return environment.restricted_env(":".join(search_path), SANDBOX_TMP)
