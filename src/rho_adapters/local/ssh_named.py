"""The keys this machine's ssh configurations name (``rho_domain.ssh_named_files``), found
with the files git configurations name (``git_named.py``), when an executor is made.

The configurations read are those ssh reads when git runs it: every known home's
``.ssh/config`` (its ``~`` that home), ``/etc/ssh/ssh_config`` (its ``~`` the agent's
home), the ones a ``core.sshCommand`` or ``GIT_SSH_COMMAND`` gives with ``-F``, and what
they include (glob patterns, expanded here, a relative one below ``~/.ssh`` or
``/etc/ssh`` as ssh places it), one past ``MAX_CONFIG_BYTES``, or more than
``MAX_CONFIGS`` from one, fails closed, as git's do. A relative key is placed where ssh would open
it: the directory git runs ssh in, the top of each repository (``tops``). A key named
literally is a secret whether it exists yet or not; a name with a token ssh fills per
connection (``%h``) is a pattern, matched against the files there now.
"""

from __future__ import annotations

import glob
import os
import pwd
import time
from collections.abc import Mapping, Sequence

from rho_adapters.local.git_dirs import regular_head
from rho_adapters.local.root_owned import only_root_changes
from rho_adapters.local.settled_reads import SettledReads
from rho_domain.errors import ExecutorError
from rho_domain.git_named_files import MAX_CONFIGS, NamedFiles, named_by, placed
from rho_domain.ssh_named_files import (
    SshNamed,
    anywhere_name,
    filled,
    literal_of,
    pattern_of,
    ssh_named_in,
)
from rho_domain.ssh_wrappers import (
    MAX_WRAPPERS,
    WRAPPER_BYTES,
    on_search_path,
    too_many_wrappers,
    wrapper_commands,
    wrapper_script,
)

__all__ = ["ssh_named_secrets", "wrapped"]

SYSTEM_CONFIG = "/etc/ssh/ssh_config"
# what a configuration names, by its path and its content (``settled_reads``)
_NAMED: SettledReads[SshNamed] = SettledReads(ssh_named_in)


def ssh_named_secrets(
    given: Sequence[str],
    homes: Sequence[str],
    home: str | None,
    tops: Sequence[str],
    *,
    keys: Sequence[tuple[str, str]] = (),
    env: Mapping[str, str] | None = None,
) -> list[tuple[str, str]]:
    """The paths of the keys the configurations above name, each with the configuration
    naming it; ``given``: the ``-F`` configurations (absolute), ``home``: the agent's,
    ``tops``: where git runs ssh, ``keys``: an ssh command line's own (``-o
    IdentityFile=``, ``-i``), as ssh's values with what named them; ``env``: the one ssh
    runs in (its ``${NAME}`` fill a value)."""
    env = env or {}
    # (configuration, its home, the directory its relative includes are below)
    starts = [(config, home, f"{home}/.ssh" if home else "/") for config in given]
    starts += [(f"{h.rstrip('/')}/.ssh/config", h, f"{h.rstrip('/')}/.ssh") for h in homes]
    starts.append((SYSTEM_CONFIG, home, "/etc/ssh"))
    found = [(p, by) for value, by in keys for p in _keys_of(value, home, tops, env)]
    commands: list[tuple[str, str]] = []  # what ssh runs (ProxyCommand), with its config
    for start in dict.fromkeys(starts):
        found += _named_from(start, tops, env, commands)
    for command, by in dict.fromkeys(commands):  # ProxyCommand bin/jump %h: its script's keys
        programs = named_by([("core", "sshcommand", command)], env=env).ssh_programs
        inner = wrapped(programs, tops, home, env)
        found += [
            (p, by)
            for value in inner.ssh_keys
            for p in _keys_of(value, home, tops, env, anywhere=True)  # run where ssh runs
        ]
        for config in (p for c in inner.ssh_configs for p in _candidates(c, tops, home, "")):
            found += _named_from((config, home, f"{home}/.ssh" if home else "/"), tops, env, [])
    return found


def wrapped(
    programs: Sequence[str],
    bases: Sequence[str],
    home: str | None,
    env: Mapping[str, str],
    *,
    helper: bool = False,
) -> NamedFiles:
    """What the wrapper scripts a ``core.sshCommand`` (or ``GIT_SSH``) runs name, their
    command lines read as ``core.sshCommand``: a path placed as git places a file (below
    ``bases``: the repository's top), a bare name where the shell may find it on ``env``'s
    ``PATH`` (``on_search_path``: a relative or empty entry below ``bases`` too); and what the
    scripts their lines run by path name in turn (``exec bin/inner "$@"``). With ``helper``
    the scripts a credential helper runs (``helper_programs``), each line read as a helper's
    shell string (``credential_helpers``)."""
    entry = ("credential", "helper") if helper else ("core", "sshcommand")
    prefix = "!" if helper else ""
    lines: list[str] = []
    read: dict[str, bool] = {}
    search_path = env.get("PATH", os.defpath)  # the commands' own: never the process's
    while programs:
        paths = [p for program in programs for p in _candidates(program, bases, home, search_path)]
        if helper:  # a bare name's match that only root may change, outside homes: a package's
            paths = [p for p in paths if not _installed(p, home)]
        more = _wrapper_lines(paths, read)
        lines += more
        nested = named_by(((*entry, prefix + line) for line in more), env=env)
        runs = nested.helper_programs if helper else nested.ssh_programs
        programs = [p for p in runs if "/" in p]
    return named_by(((*entry, prefix + line) for line in lines), env=env)


def _installed(path: str, home: str | None) -> bool:
    """Whether ``path``, a program found on the ``PATH``, is the system's: only root may
    change it (``root_owned``), once its links are followed, and it is in no home."""
    if not os.path.lexists(path):
        # most of a bare name's candidates (one a PATH entry) are not there: nothing to
        # read either way, and resolving each cost a new executor ~60 lstat on a PATH of 10
        return False
    real = os.path.realpath(path)
    homes = ("/root", "/home", *((home,) if home else ()))
    if any(real == h or real.startswith(h.rstrip("/") + "/") for h in homes):
        return False
    return only_root_changes(real)


def _candidates(program: str, bases: Sequence[str], home: str | None, search: str) -> list[str]:
    """Where ``program`` may be: a path placed below each of ``bases`` as git places a
    file, a bare name on the ``PATH`` ``search`` (``on_search_path``)."""
    tops = tuple(dict.fromkeys(bases))
    if "/" not in program:
        return list(on_search_path(program, search, tops))
    return [p for base in tops if (p := placed(program, base=base, home=home)) is not None]


def _wrapper_lines(paths: Sequence[str], read: dict[str, bool]) -> list[str]:
    """The command lines of the wrapper scripts at ``paths``, each to read as
    ``core.sshCommand`` (``ssh_wrappers.wrapper_commands``): the keys a wrapper's ssh is
    given are secrets too. A path that is no regular file, or a program (ELF), gives none;
    a script past ``WRAPPER_BYTES``, or more than ``MAX_WRAPPERS`` files among ``read``
    (the paths looked at so far, kept by the caller: whether each was a file), is an
    ``ExecutorError``."""
    lines: list[str] = []
    for path in dict.fromkeys(filter(None, paths)):
        if path in read:
            continue
        head = regular_head(path, WRAPPER_BYTES + 1)
        read[path] = head is not None
        if head is None:
            continue
        if sum(read.values()) > MAX_WRAPPERS:
            raise too_many_wrappers(path)
        if (script := wrapper_script(head, path)) is not None:
            lines += wrapper_commands(script)
    return lines


def _named_from(
    start: tuple[str, str | None, str],
    tops: Sequence[str],
    env: Mapping[str, str],
    commands: list[tuple[str, str]],
) -> list[tuple[str, str]]:
    """What one configuration and those it includes name: at most ``MAX_CONFIGS`` of them,
    then ``ExecutorError`` (what an unread one names is unknown: fails closed); the
    commands they run go into ``commands``, each with its configuration."""
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
        named = _named_of(config)
        if named is None:
            continue
        for value in named.includes:
            if (pattern := pattern_of(_filled(value, env), home=its_home, glob=True)) is not None:
                pattern = os.path.join(include_base, pattern)
                pending += [(p, its_home, include_base) for p in sorted(glob.glob(pattern))]
        found += [
            (p, config)
            for value in named.secrets
            for p in _keys_of(value, its_home, tops, env, anywhere=True)
        ]
        commands += [(command, config) for command in named.commands]
    return found


def _keys_of(
    value: str,
    home: str | None,
    tops: Sequence[str],
    env: Mapping[str, str],
    *,
    anywhere: bool = False,
) -> list[str]:
    """The files an ``IdentityFile`` value names: placed below each of ``tops`` (where git
    runs ssh) when relative; with ``anywhere`` (a configuration's, which ssh reads wherever
    it runs) a relative literal one is ``*/NAME`` too, a secret below every directory
    (``anywhere_name``)."""
    if (pattern := pattern_of(_filled(value, env), home=home)) is None:
        return []
    bases = tops if not pattern.startswith("/") else ("/",)
    found = [p for top in bases for p in _matches(os.path.join(top, pattern))]
    name = anywhere_name(pattern) if anywhere else None
    return [*found, f"*/{name}"] if name else found


def _filled(value: str, env: Mapping[str, str]) -> str:
    """``value`` as ssh fills it on this machine (``filled``): ``~user/`` from the user
    database, ``${NAME}`` from ``env``."""
    return filled(value, env, _home_of)


def _home_of(user: str) -> str | None:
    try:
        return pwd.getpwnam(user).pw_dir
    except (KeyError, ValueError):
        return None


def _matches(pattern: str) -> list[str]:
    """The files ``pattern`` names: itself when it is literal (existing or not), else what
    matches it now."""
    literal = literal_of(pattern)
    return [literal] if literal is not None else glob.glob(pattern)


def _named_of(path: str) -> SshNamed | None:
    """What the configuration at ``path`` names, or None (missing, not a regular file);
    ``ExecutorError`` past ``MAX_CONFIG_BYTES`` (ssh reads it whole: fails closed);
    remembered per content once its times are settled, as ``git_named`` remembers git's
    (``settled_reads``): every executor reads them again."""
    return _NAMED.read(path, time.time_ns)
