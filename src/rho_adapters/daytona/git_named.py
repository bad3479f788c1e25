"""The files the sandbox's git configurations name as credential sources
(``rho_domain.git_named_files``), found when the sandbox is made, as the local executor finds
this machine's (``rho_adapters/local/git_named.py`` says which configurations and how names
are placed): the files are read in the sandbox by our scripts, a round of reads for each
step (the repository above each root, a linked worktree's git directory, its common
directory, each level of includes), at most ``MAX_CONFIGS`` files in all, none past
``MAX_CONFIG_BYTES`` (either fails closed); a repository
nested below a root is found by the alias scan made with the sandbox (``nested``).
"""

from __future__ import annotations

import base64
import posixpath
from collections.abc import Iterable, Sequence

from rho_adapters.daytona import scripts, ssh_named
from rho_adapters.daytona.scripts import Run
from rho_adapters.daytona.ssh_wrapped import placed_all, wrapped
from rho_domain.git_named_files import (
    GCM_NAMESPACE_DEPTH,
    MAX_CONFIG_BYTES,
    MAX_CONFIGS,
    counted,
    gcm_namespace,
    named_by,
    named_in,
    placed,
    repository_tops,
    too_large,
)
from rho_domain.paths import components, is_within

_SHELL_PATH = "/usr/local/bin:/usr/bin:/bin"  # the shell's search path when PATH is unset
_Bases = tuple[str, ...]


async def named_secrets(
    run: Run, roots: Sequence[str], homes: Sequence[str]
) -> tuple[tuple[str, str], ...]:
    """The canonical paths (in the sandbox) of the files its git configurations name, each
    with the configuration that named it: secret locations for the executor's policy."""
    home = homes[0] if homes else None
    groups: list[list[tuple[str, _Bases]]] = []  # a repository's configurations, a home's
    tops: list[str] = []  # where git runs a user's helper: the top of the repository, or here
    for root in roots:
        repo = await _repository_configs(run, root)
        groups.append(repo)
        tops += [root, *(repo[0][1][:1] if repo else ())]
    for user_home in homes:  # each home a group: a sandbox may have many
        bases = (user_home, *tops)
        groups += [[(f"{user_home}/.gitconfig", bases), (f"{user_home}/.config/git/config", bases)]]
    groups.append([("/etc/gitconfig", ("/etc", *tops))])
    # one round of reads per level of includes, every group's at once; each group reads
    # at most MAX_CONFIGS and fails closed past them (``counted``)
    configs = [(at, path, bases) for at, group in enumerate(groups) for path, bases in group]
    found: list[tuple[str, str]] = []  # (a file named, the configuration naming it)
    stores: list[tuple[str, str]] = []  # credential directories (GCM's plaintext store)
    ssh_configs: list[str] = []  # what a core.sshCommand gives with -F
    ssh_keys: list[tuple[str, str]] = []  # and its own keys (-o IdentityFile=, -i)
    seen: list[dict[str, None]] = [{} for _ in groups]
    programs: list[tuple[str, _Bases, str]] = []  # a core.sshCommand's, its bases, its config
    helpers: list[tuple[str, _Bases, str]] = []  # the scripts a credential helper runs
    while configs:
        batch = counted(configs, seen, _too_many)
        configs = []
        texts = await _texts(run, [path for _, path, _ in batch])
        for (at, path, bases), text in zip(batch, texts, strict=True):
            if text is None:
                continue
            named = named_in(text, env={"HOME": home} if home else None)
            here = posixpath.dirname(path)
            for value in named.includes:
                if (include := placed(value, base=here, home=home)) is not None:
                    found.append((include, path))
                    configs.append((at, include, bases))
            for values, into in ((named.secrets, found), (named.directories, stores)):
                into += [(p, path) for p in placed_all(values, (*bases, here), home)]
            ssh_configs += placed_all(named.ssh_configs, (*bases, here), home)
            ssh_keys += [(value, path) for value in named.ssh_keys]
            programs += [(p, (*bases, here), path) for p in named.ssh_programs]
            helpers += [(p, (*bases, here), path) for p in named.helper_programs]
    # a user's git in the sandbox runs with its environment: GIT_SSH_COMMAND is a
    # core.sshCommand, GIT_SSH a wrapper script, each run at the top
    sandbox_env, _ = await ssh_named.fills(run, ("${GIT_SSH}", "${GIT_SSH_COMMAND}", "${PATH}"))
    by_env = "GIT_SSH or GIT_SSH_COMMAND in the sandbox's environment"
    if command := sandbox_env.get("GIT_SSH_COMMAND"):
        given = named_by([("core", "sshcommand", command)], env={"HOME": home} if home else None)
        found += [(p, by_env) for p in placed_all(given.secrets, tops, home)]
        ssh_configs += placed_all(given.ssh_configs, tops, home)
        ssh_keys += [(value, by_env) for value in given.ssh_keys]
        programs += [(p, tuple(tops), by_env) for p in given.ssh_programs]
    if program := sandbox_env.get("GIT_SSH"):
        programs.append((program, tuple(tops), by_env))
    search = sandbox_env.get("PATH", _SHELL_PATH)
    helped = await wrapped(run, helpers, home, "", helper=True)  # their lines' files
    found += [(p, by) for n, bases, by in helped for p in placed_all(n.secrets, bases, home)]
    for named, bases, path in await wrapped(run, programs, home, search):
        found += [(p, path) for p in placed_all(named.secrets, bases, home)]
        ssh_configs += placed_all(named.ssh_configs, bases, home)
        ssh_keys += [(value, path) for value in named.ssh_keys]
    commands: list[tuple[str, str]] = []  # what ssh runs (ProxyCommand), with its config
    found += await ssh_named.named_keys(
        run, lambda paths: _texts(run, paths), ssh_configs, homes, tops, keys=ssh_keys,
        commands=commands,
    )  # fmt: skip
    found += await _commands_named(run, dict.fromkeys(commands), tops, home, search)
    anywhere = [(p, by) for p, by in found if p.startswith("*/")]  # below any directory
    files = await _canonical(run, [(p, by) for p, by in found if not p.startswith("*/")])
    held = [components(p) for p in (*tops, *homes)]
    directories: list[tuple[str, str]] = []
    for real, by in await _canonical(run, stores, directories=True):
        if any(is_within(h, components(real)) for h in held):  # plaintextStorePath = .
            directories += [(namespace, by) for namespace in await _namespaces(run, real, held)]
        else:
            directories.append((real, by))
    origins: dict[str, str] = {}
    for path, by in (*files, *directories, *anywhere):
        origins.setdefault(path, by)
    return tuple(origins.items())


async def _commands_named(
    run: Run,
    commands: Iterable[tuple[str, str]],
    tops: Sequence[str],
    home: str | None,
    search: str,
) -> list[tuple[str, str]]:
    """The keys the wrapper scripts the ssh configurations' commands run give (``ProxyCommand
    bin/jump %h``: ssh runs it where git runs ssh), each with the configuration naming the
    command: their ``-i`` keys and what their ``-F`` configurations name."""
    programs = [
        (program, tuple(tops), by)
        for command, by in commands
        for program in named_by([("core", "sshcommand", command)]).ssh_programs
    ]
    configs: list[str] = []
    keys: list[tuple[str, str]] = []
    for named, bases, by in await wrapped(run, programs, home, search):
        configs += placed_all(named.ssh_configs, bases, home)
        keys += [(value, by) for value in named.ssh_keys]
    if not configs and not keys:
        return []
    texts = lambda paths: _texts(run, paths)  # noqa: E731
    return await ssh_named.named_keys(run, texts, configs, (), tops, keys=keys)


async def _namespaces(run: Run, store: str, held: Sequence[tuple[str, ...]]) -> list[str]:
    """The namespaces of GCM's plaintext store ``store`` in the sandbox, found by their
    logins' shape as ``rho_adapters.local.git_dirs.gcm_namespaces`` finds them here (no
    ``find`` in the sandbox: every ``http*`` directory there counts as holding logins)."""
    top = store.rstrip("/")
    levels, deeper = [""], [""]  # the namespaces' globs: none, a name, hidden names too
    for _ in range(GCM_NAMESPACE_DEPTH):
        deeper = [f"{level}{part}/" for level in deeper for part in ("*", ".[!.]*")]
        levels += deeper
    script = (
        f"s={scripts.q(top)}; for d in "
        + " ".join(f'"$s"/{level}http*' for level in levels)
        + '; do [ -d "$d" ] || continue; if command -v find >/dev/null; then'
        " find \"$d\" -mindepth 2 -type f -name '*.credential' | head -n 1 | grep -q . ||"
        " continue; fi; printf '%s\\0' \"$d\"; done | base64 -w0; echo\n"
    )
    schemes = base64.b64decode((await run(script)).strip()).decode("utf-8", "surrogateescape")
    found = [f"{top}/git"]
    found += [gcm_namespace(top, scheme, held) for scheme in filter(None, schemes.split("\0"))]
    return list(dict.fromkeys(found))


def _too_many(first: str, path: str) -> str:
    return (
        f"the sandbox's git configurations read with {first} include more than {MAX_CONFIGS} "
        f"configurations (include.path, includeIf.*.path), {path} the first left unread: "
        "rho-agent cannot tell which files those name as credentials, so it refuses to run; "
        "remove the includes of missing files"
    )


def nested(secrets: Iterable[str], roots: Sequence[str]) -> tuple[str, ...]:
    """The tops of the repositories whose ``.git/config`` or submodule configuration is
    among ``secrets`` (what the alias scan met below ``roots``), but the roots: another
    clone in a subdirectory, whose configuration may name a credential file there
    (probeshell23b)."""
    return tuple(t for t in repository_tops(sorted(secrets)) if t not in roots)


async def _repository_configs(run: Run, root: str) -> list[tuple[str, _Bases]]:
    """The configurations of the repository holding ``root`` (canonical), with the bases of
    their relative names: the nearest ancestor with a ``.git`` directory or file."""
    ancestors = [root.rstrip("/") or "/"]
    while ancestors[-1] != "/":
        ancestors.append(posixpath.dirname(ancestors[-1]))
    asked = [p for a in ancestors for p in (f"{a.rstrip('/')}/.git/HEAD", f"{a.rstrip('/')}/.git")]
    texts = await _texts(run, asked, exists=True)
    for at, top in enumerate(ancestors):
        dot_git = f"{top.rstrip('/')}/.git"
        directory, linked = texts[2 * at], texts[2 * at + 1]
        if linked is not None and linked.startswith("gitdir:"):
            git_dir = posixpath.join(top, linked.removeprefix("gitdir:").strip())
        elif directory is not None:
            git_dir = dot_git
        else:
            continue
        (common,) = await _texts(run, [f"{git_dir}/commondir"])
        shared = [posixpath.join(git_dir, common.strip())] if common else []
        return [
            (f"{git_dir}/config", (top, git_dir)),
            (f"{git_dir}/config.worktree", (top, git_dir)),
            *((f"{s}/config", (top, s)) for s in shared),
        ]
    return []


async def _texts(run: Run, paths: Sequence[str], *, exists: bool = False) -> list[str | None]:
    """Each regular file's text (None: missing, not a file); ``exists``: a file's text, or
    ``""`` for anything else that exists (a directory); ``ExecutorError`` for a file past
    ``MAX_CONFIG_BYTES`` (git and ssh read it whole: what it names is unknown, fails closed)."""
    other = 'echo "+"' if exists else "echo -"
    lines = "".join(
        f'f={scripts.q(p)}; if [ -f "$f" ] && [ "$(wc -c < "$f")" -gt {MAX_CONFIG_BYTES} ];'
        ' then echo "!"; elif [ -f "$f" ]; then printf +; base64 -w0 < "$f"; echo;'
        f' elif [ -e "$f" ]; then {other}; else echo -; fi\n'
        for p in paths
    )
    answer = (await run(lines)).splitlines() if paths else []
    if "!" in answer:
        raise too_large(paths[answer.index("!")])
    return [
        base64.b64decode(line[1:]).decode("utf-8", "replace") if line.startswith("+") else None
        for line in answer
    ]


async def _canonical(
    run: Run, named: Sequence[tuple[str, str]], *, directories: bool = False
) -> list[tuple[str, str]]:
    """Each named path canonical in the sandbox, with what named it; directories left out
    (no credential file) unless ``directories``."""
    if not named:
        return []
    keep = "false" if directories else '[ -d "$p" ]'
    # one NUL-ended field per path, empty for one left out
    script = "".join(
        f"p={scripts.q(p)}; if {keep}; then printf '\\0';"
        f" else realpath -zm -- \"$p\" || printf '\\0'; fi\n"
        for p, _ in named
    )
    answer = await run(f"{{ {script}}} | base64 -w0; echo\n")
    fields = base64.b64decode(answer.strip()).decode("utf-8", "surrogateescape").split("\0")
    return [(p, by) for p, (_, by) in zip(fields, named, strict=False) if p]
