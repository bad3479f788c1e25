"""The files this machine's git configurations name as credential sources
(``rho_domain.git_named_files``), found when an executor is made.

The configurations read are those git reads for a command in the executor's roots: the
repository holding each root (its ``.git`` directory, or the one a ``.git`` file names, with
its common directory's config and its ``config.worktree``), every known home's
``.gitconfig`` and ``.config/git/config``, ``$XDG_CONFIG_HOME/git/config`` and
``/etc/gitconfig``, and the environment's (``git_user_configs``), and what they include;
one past ``MAX_CONFIG_BYTES``, or more than ``MAX_CONFIGS`` in all, fails closed
(``ExecutorError``). A relative name is placed as git may place it: below the repository's
work tree (git's directory when it runs a helper), its git directory and the configuration's
own directory (an include's base). A repository nested inside the workspace (another clone in
a subdirectory) is found by the walks before each command (``nested_secrets``).

Every executor of a process asks again (a Session per request makes one each time), so a
configuration's entries are remembered per (real path, device, inode, mtime_ns, ctime_ns,
size) for the process (``_ENTRIES``), and with them what they name when no value has a
``$`` (else it is worked out again with this executor's environment): a file changed,
replaced or moved is read again, so a credential file named after the first executor is
still a secret for the next. A name that does not exist is passed over after one ``stat``,
without resolving its real path.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from rho_adapters.local.git_dirs import gcm_namespaces, repository_configs
from rho_adapters.local.git_user_configs import env_named, user_configs
from rho_adapters.local.settled_reads import SettledReads
from rho_adapters.local.ssh_named import ssh_named_secrets, wrapped
from rho_domain.errors import ExecutorError
from rho_domain.git_config_syntax import entries
from rho_domain.git_named_files import (
    MAX_CONFIGS,
    NamedFiles,
    named_by,
    placed,
    repository_tops,
)
from rho_domain.paths import components, is_within
from rho_domain.secrets import SecretPolicy

_Entries = tuple[tuple[str, str, str | None], ...]
_SshGiven = tuple[list[str], list[tuple[str, str]]]  # core.sshCommand's -F files, its keys


def _parsed(text: str) -> tuple[_Entries, NamedFiles | None]:
    """A configuration's entries, and what they name when no value has a ``$`` (then no
    environment can change it: kept with them, not worked out again per executor)."""
    found = tuple(entries(text))
    plain = not any(value is not None and "$" in value for _, _, value in found)
    return found, (named_by(found) if plain else None)


# a configuration's entries (and what they name) by its real path and its content
# (``settled_reads``)
_ENTRIES: SettledReads[tuple[_Entries, NamedFiles | None]] = SettledReads(_parsed)


def git_named_secrets(
    roots: Sequence[str],
    homes: Sequence[str],
    env: Mapping[str, str] | None,
    *,
    now_ns: Callable[[], int] = time.time_ns,
) -> tuple[str, ...]:
    """The paths of ``git_named_origins``."""
    return tuple(path for path, _ in git_named_origins(roots, homes, env, now_ns=now_ns))


def git_named_origins(
    roots: Sequence[str],
    homes: Sequence[str],
    env: Mapping[str, str] | None,
    *,
    now_ns: Callable[[], int] = time.time_ns,
    resolved: bool = False,
) -> tuple[tuple[str, str], ...]:
    """The real paths of the files the configurations above name (credential sources and
    included configurations), each with the configuration that named it (the first, for a
    refusal to say why): secret locations for the executor's policy. ``env``: the
    environment the user's git runs in (``HOME``, ``XDG_CONFIG_HOME``, ``GIT_CONFIG_*``,
    ``GIT_SSH_COMMAND``), None for none; ``now_ns``: the clock that says whether a
    configuration's times are settled (``settled_reads``); ``resolved``: ``roots`` are the
    real paths the caller looked up just now (an executor's roots)."""
    env = env or {}
    home = env.get("HOME") or (homes[0] if homes else None)
    shell_env = {**env, "HOME": home} if home else dict(env)
    groups: list[list[tuple[str, tuple[str, ...]]]] = []  # each: (config, its bases)
    tops: list[str] = []  # where git runs a user's helper: the top of the repository, or here
    for root in roots:
        real_root = root if resolved else os.path.realpath(root)
        configs = repository_configs(real_root)
        groups.append(configs)
        tops += [real_root, *(configs[0][1][:1] if configs else ())]
    # each home's configurations a group of their own: a machine may have many homes
    users: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for config, base in user_configs(homes, home, env):
        users.setdefault(base, []).append((config, (base, *tops)))
    groups += users.values()
    named = env_named(env, shell_env)
    by_env = "GIT_CONFIG_*, GIT_SSH or GIT_SSH_COMMAND in the environment"
    found = [(p, by_env) for p in _placed_all(named.includes, tops, home)]
    directories = [(p, by_env) for p in _placed_all(named.directories, tops, home)]
    ssh_configs: list[str] = []
    ssh_keys: list[tuple[str, str]] = []
    helped = wrapped(named.helper_programs, tops, home, shell_env, helper=True)
    for given in (named, wrapped(named.ssh_programs, tops, home, shell_env), helped):
        found += [(p, by_env) for p in _placed_all(given.secrets, tops, home)]
        ssh_configs += _placed_all(given.ssh_configs, tops, home)
        ssh_keys += [(value, by_env) for value in given.ssh_keys]
    for group in groups:
        named_files, stores, ssh_given = _named_by_group(group, home, shell_env, now_ns)
        found += named_files
        directories += stores
        ssh_configs += ssh_given[0]
        ssh_keys += ssh_given[1]
    found += ssh_named_secrets(ssh_configs, homes, home, tops, keys=ssh_keys, env=env)
    # a directory named (``--file=.``) is no credential file git could write: not a secret
    files = [(r, by) for p, by in found if not os.path.isdir(r := _real(p))]
    origins: dict[str, str] = {}
    for path, by in (*files, *_stores(directories, (*tops, *homes))):
        origins.setdefault(path, by)
    return tuple(origins.items())


def _real(path: str) -> str:
    """``path``'s real path; a name below any directory (``*/keys/deploy``) as it is."""
    return path if path.startswith("*/") else os.path.realpath(path)


def _stores(directories: Sequence[tuple[str, str]], held: Sequence[str]) -> list[tuple[str, str]]:
    """The real paths of the credential directories named (GCM's plaintext store); one
    holding a root or a home (``plaintextStorePath = .``) by the directories GCM keeps the
    logins in there, each namespace's (``git_dirs.gcm_namespaces``)."""
    stores: list[tuple[str, str]] = []
    held_parts = [components(p) for p in held] if directories else []
    for directory, by in directories:
        real = os.path.realpath(directory)
        if any(is_within(parts, components(real)) for parts in held_parts) or real == "/":
            stores += [(namespace, by) for namespace in gcm_namespaces(real, held_parts)]
        else:
            stores.append((real, by))
    return stores


def _named_by_group(
    pending: list[tuple[str, tuple[str, ...]]],
    home: str | None,
    shell_env: Mapping[str, str],
    now_ns: Callable[[], int],
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], _SshGiven]:
    """What the configurations of one group (a repository's, or a home's, or the
    system's) and the ones they include name, placed: the includes and credential files
    and the credential directories, each with the configuration naming it, and what
    ``core.sshCommand`` gives ssh (its configurations placed; its keys as ssh's values,
    each with the configuration naming it). Each group reads at most
    ``MAX_CONFIGS`` (a repository's includes cannot use up the user's share), and a group
    with more fails closed: its unread configurations may name a credential file, so
    ``ExecutorError`` names the one left unread."""
    found: list[tuple[str, str]] = []
    directories: list[tuple[str, str]] = []
    ssh_given: _SshGiven = ([], [])
    seen: dict[tuple[str, str], None] = {}  # in order: the first names the group
    while pending:
        config, bases = pending.pop(0)
        real = here = ""
        # a missing name is counted by its spelling, unresolved: each takes one of the
        # MAX_CONFIGS places (distinct names already could fill them all)
        if _exists(config):
            real = os.path.realpath(config)
            # git places an include by the including file's path as it reached it, a link's
            # own directory (~/.gitconfig -> dotfiles/gitconfig includes ~/x.inc, not dotfiles/)
            here = os.path.dirname(os.path.abspath(config))
        key = (real, here) if real else (config, "")
        if key in seen:
            continue
        if len(seen) >= MAX_CONFIGS:
            raise ExecutorError(
                f"the git configurations read with {next(iter(seen))[0]} include more than "
                f"{MAX_CONFIGS} configurations (include.path, includeIf.*.path), {config} the "
                "first left unread: rho-agent cannot tell which files those name as "
                "credentials, so it refuses to run; remove the includes of missing files"
            )
        seen[key] = None
        if not real:
            continue
        named = _named_of(real, shell_env, now_ns)
        if named is None:
            continue
        for value in named.includes:
            for base in dict.fromkeys((here, os.path.dirname(real))):
                if (include := placed(value, base=base, home=home)) is not None:
                    found.append((include, config))
                    pending.append((include, bases))
        directories += [(p, config) for p in _placed_all(named.directories, (*bases, here), home)]
        places = (*bases, here)
        helped = wrapped(named.helper_programs, places, home, shell_env, helper=True)
        for given in (named, wrapped(named.ssh_programs, places, home, shell_env), helped):
            found += [(p, config) for p in _placed_all(given.secrets, (*bases, here), home)]
            ssh_given[0].extend(_placed_all(given.ssh_configs, (*bases, here), home))
            ssh_given[1].extend((value, config) for value in given.ssh_keys)
    return found, directories, ssh_given


def _placed_all(values: Iterable[str], bases: Sequence[str], home: str | None) -> list[str]:
    return [
        path
        for value in values
        for base in dict.fromkeys(bases)
        if (path := placed(value, base=base, home=home)) is not None
    ]


def _exists(path: str) -> bool:
    """Whether ``path`` names anything (its links followed): one ``stat``."""
    try:
        os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in a name from a configuration
        return False
    return True


def _named_of(real: str, env: Mapping[str, str], now_ns: Callable[[], int]) -> NamedFiles | None:
    """What the configuration at ``real`` names (``named_by`` of its entries as git reads
    them, variables expanded from ``env``), or None (missing, not a regular file);
    ``ExecutorError`` past ``MAX_CONFIG_BYTES`` (what it names is unknown: fails closed);
    read and parsed once per content (``settled_reads``)."""
    known = _ENTRIES.read(real, now_ns)
    if known is None:
        return None
    found, named = known
    return named if named is not None else named_by(found, env=env)


def nested_secrets(
    found: Iterable[str], policy: SecretPolicy, roots: Sequence[str]
) -> tuple[str, ...]:
    """The files the configurations of the repositories nested below ``roots`` name (their
    ``.git``, ``.git/config`` or submodule configuration among the paths a walk ``found``:
    another clone in a subdirectory, whose config the finder above does not read), regular
    files the policy
    does not refuse already: ``cd sub && git config credential.helper 'store
    --file=notes.txt'`` kept the token readable by ``cat sub/notes.txt`` (probeshell23b)."""
    nested = [top for top in repository_tops(found) if top not in roots]
    if not nested:
        return ()
    named = git_named_secrets(nested, policy.homes, None)
    return tuple(p for p in named if policy.refusal(p) is None and os.path.isfile(p))
