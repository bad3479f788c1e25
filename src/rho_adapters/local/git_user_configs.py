"""The configurations git reads outside a repository, for ``git_named``: the user's and the
system's files (every home's ``.gitconfig`` and ``.config/git/config``,
``$XDG_CONFIG_HOME/git/config``, ``/etc/gitconfig``, or what ``GIT_CONFIG_GLOBAL`` and
``GIT_CONFIG_SYSTEM`` put in their place: ``user_configs``), and the configuration the
environment itself gives (``GIT_CONFIG_COUNT``, ``GIT_CONFIG_PARAMETERS``,
``GIT_SSH_COMMAND``, ``GIT_SSH``: ``env_named``). A repository's own configurations are
``git_dirs.repository_configs``'s. Nothing here raises.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence

import attrs

from rho_domain.git_named_files import MAX_CONFIGS, NamedFiles, entry_of, named_by


def user_configs(
    homes: Sequence[str], home: str | None, env: Mapping[str, str]
) -> list[tuple[str, str]]:
    """The user's and the system's configurations, each with its directory: every home's,
    ``XDG_CONFIG_HOME``'s, ``/etc/gitconfig``, and the ones ``GIT_CONFIG_GLOBAL`` and
    ``GIT_CONFIG_SYSTEM`` put in their place."""
    configs: list[tuple[str, str]] = []
    for user_home in dict.fromkeys((*homes, *([home] if home else []))):
        configs += [(f"{user_home}/.gitconfig", user_home)]
        configs += [(f"{user_home}/.config/git/config", user_home)]
    if xdg := env.get("XDG_CONFIG_HOME"):
        configs.append((f"{xdg}/git/config", xdg))
    configs.append(("/etc/gitconfig", "/etc"))
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
        if given := env.get(name):
            configs.append((os.path.abspath(given), os.path.dirname(os.path.abspath(given))))
    return configs


def env_named(env: Mapping[str, str], shell_env: Mapping[str, str]) -> NamedFiles:
    """What configuration given in the environment names: ``GIT_CONFIG_COUNT`` with its
    ``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>``, ``GIT_CONFIG_PARAMETERS`` (``git -c``,
    ``'key'='value'`` words), ``GIT_SSH_COMMAND`` (git's ``core.sshCommand``), and ``GIT_SSH``
    as a wrapper script such a command runs (its ``ssh_programs``)."""
    pairs: list[tuple[str, str | None]] = []
    count = env.get("GIT_CONFIG_COUNT", "")
    for at in range(min(int(count), MAX_CONFIGS) if count.isdigit() else 0):
        pairs.append((env.get(f"GIT_CONFIG_KEY_{at}", ""), env.get(f"GIT_CONFIG_VALUE_{at}")))
    if parameters := env.get("GIT_CONFIG_PARAMETERS", ""):
        import shlex  # only where git -c set something: off every other executor's start

        with contextlib.suppress(ValueError):  # a quote left open: git refuses it too
            words = shlex.split(parameters)
            for word in words:
                key, equals, value = word.partition("=")
                pairs.append((key, value if equals else None))
    if ssh := env.get("GIT_SSH_COMMAND"):
        pairs.append(("core.sshCommand", ssh))
    named = named_by((entry_of(k, v) for k, v in pairs), env=shell_env)
    if program := env.get("GIT_SSH"):  # run as ssh is: a wrapper script (``wrapped``)
        named = attrs.evolve(named, ssh_programs=(*named.ssh_programs, program))
    return named
