"""The keys this machine's ssh configurations name (``rho_domain.ssh_named_files``), found
with the files git configurations name (``git_named.py``), when an executor is made.

The configurations read are those ssh reads when git runs it: every known home's
``.ssh/config`` (its ``~`` that home), ``/etc/ssh/ssh_config`` (its ``~`` the agent's
home), the ones a ``core.sshCommand`` or ``GIT_SSH_COMMAND`` gives with ``-F``, and what
they include (glob patterns, expanded here, a relative one below ``~/.ssh`` or
``/etc/ssh`` as ssh places it), each read at most ``MAX_CONFIG_BYTES``; more than
``MAX_CONFIGS`` from one fails closed, as git's do. A relative key is placed where ssh would open
it: the directory git runs ssh in, the top of each repository (``tops``). A key named
literally is a secret whether it exists yet or not; a name with a token ssh fills per
connection (``%h``) is a pattern, matched against the files there now.
"""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Sequence

from rho_adapters.local.settled_reads import SettledReads
from rho_domain.errors import ExecutorError
from rho_domain.git_named_files import MAX_CONFIG_BYTES, MAX_CONFIGS
from rho_domain.ssh_named_files import literal_of, pattern_of, ssh_named_in

__all__ = ["ssh_named_secrets"]

SYSTEM_CONFIG = "/etc/ssh/ssh_config"
# what a configuration names, by its path and its content, as ``git_named`` remembers git's:
# every executor reads them again
_NAMED = SettledReads(ssh_named_in, max_bytes=MAX_CONFIG_BYTES)


def ssh_named_secrets(
    given: Sequence[str], homes: Sequence[str], home: str | None, tops: Sequence[str]
) -> list[tuple[str, str]]:
    """The paths of the keys the configurations above name, each with the configuration
    naming it; ``given``: the ``-F``
    configurations (absolute), ``home``: the agent's, ``tops``: where git runs ssh."""
    # (configuration, its home, the directory its relative includes are below)
    starts = [(config, home, f"{home}/.ssh" if home else "/") for config in given]
    starts += [(f"{h.rstrip('/')}/.ssh/config", h, f"{h.rstrip('/')}/.ssh") for h in homes]
    starts.append((SYSTEM_CONFIG, home, "/etc/ssh"))
    found: list[tuple[str, str]] = []
    for start in dict.fromkeys(starts):
        found += _named_from(start, tops)
    return found


def _named_from(start: tuple[str, str | None, str], tops: Sequence[str]) -> list[tuple[str, str]]:
    """What one configuration and those it includes name: at most ``MAX_CONFIGS`` of them,
    then ``ExecutorError`` (what an unread one names is unknown: fails closed)."""
    pending = [start]
    found: list[tuple[str, str]] = []
    seen: dict[str, None] = {}
    while pending:
        config, its_home, include_base = pending.pop(0)
        if config in seen:
            continue
        if len(seen) >= MAX_CONFIGS:
            raise ExecutorError(
                f"the ssh configuration {start[0]} includes more than {MAX_CONFIGS} "
                f"configurations (Include), {config} the first left unread: rho-agent "
                "cannot tell which keys those name, so it refuses to run; remove the "
                "Include lines that repeat or name missing files"
            )
        seen[config] = None
        named = _NAMED.get(config, time.time_ns)
        if named is None:
            continue
        for value in named.includes:
            if (pattern := pattern_of(value, home=its_home, glob=True)) is not None:
                pattern = os.path.join(include_base, pattern)
                pending += [(p, its_home, include_base) for p in sorted(glob.glob(pattern))]
        for value in named.secrets:
            if (pattern := pattern_of(value, home=its_home)) is None:
                continue
            for top in tops if not pattern.startswith("/") else ("/",):
                found += [(p, config) for p in _matches(os.path.join(top, pattern))]
    return found


def _matches(pattern: str) -> list[str]:
    """The files ``pattern`` names: itself when it is literal (existing or not), else what
    matches it now."""
    literal = literal_of(pattern)
    return [literal] if literal is not None else glob.glob(pattern)
