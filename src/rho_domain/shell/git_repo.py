"""Running git on a repository without its configuration: the "shadow common directory".

A repository's own configuration (``.git/config``, its includes, ``config.worktree``) names
programs that read-only subcommands run: ``filter.<name>.clean`` switched on by
``.gitattributes``, ``diff.<driver>.textconv``/``command``, ``core.fsmonitor``, ``core.pager``,
aliases, credential helpers, ``gpg.program``, ``core.sshCommand``... Forcing ``-c key=`` for
each cannot close the class: filter and driver names are chosen by the repository.

So the executor never lets git read that file. Before a pipeline with a git stage it asks git
where the repository is (``PREFLIGHT``: ``rev-parse`` reads configuration but runs nothing),
lists ``<common dir>/config`` with ``git config --file ... --no-includes --list -z``, and builds
a private directory holding

* ``config``: ``shadow_config(listing)``, the few inert keys of ``KEPT`` (format version,
  object format, remote URLs and upstream branches) plus ``FORCED`` settings;
* symlinks to the real ``SHARED`` entries (objects, refs, packed-refs, logs, info, shallow).

Where the repository is, is judged like any path before git reads it (``check_repository``):
a ``.git`` file (``gitdir: ...``, as a linked worktree's), a ``commondir`` file or a ``.git``
above the workspace can point git at another repository, and no word of the command names
it, so the git directory, the common directory and the work tree git reports, every ``SHARED``
entry of the common directory (``objects`` or ``refs`` may be links into another repository)
and every object directory its ``objects/info/alternates`` borrows from (``alternates``), all
canonical, must each be neither a secret location nor out of the profile's reach (the sandbox
hides them too).

git then runs with ``git_environment(repo, shadow)``: ``GIT_DIR`` (HEAD and the index come
from the real directory), ``GIT_COMMON_DIR`` (config, objects and refs from the shadow) and
``GIT_WORK_TREE`` (the directory holding ``.git``, never ``core.worktree``). The shadow has
no hooks, no includes, no ``extensions.worktreeConfig``, so nothing the repository says can
name a program: an allowlist, not a list of dangerous keys.
Submodules (whose children would read *their* config) are ignored (``FORCED`` and
``--ignore-submodules=all`` in ``git.py``). Without a repository ``GIT_DIR`` names a missing
directory, so git never discovers one on its own (``--no-index`` still works).
"""

from __future__ import annotations

import re

import attrs

from rho_domain.errors import PathOutsideWorkspace, SensitivePath
from rho_domain.reach import ReadReach
from rho_domain.secrets import SecretPolicy
from rho_domain.shell.git import HARDENING
from rho_domain.value_methods import value_eq, value_hash, value_repr

# Discovery. safe.directory=* is harmless here: the repository's config is never used.
PREFLIGHT: tuple[str, ...] = (
    *HARDENING,
    "-c",
    "safe.directory=*",
    "rev-parse",
    "--path-format=absolute",
    "--git-dir",
    "--git-common-dir",
    "--show-toplevel",
)
CONFIG_NAME = "config"
SHARED = ("objects", "refs", "packed-refs", "logs", "info", "shallow", "remotes", "branches")
MISSING_GIT_DIR = "no-repository"

KEPT = re.compile(
    r"(core\.(repositoryformatversion|bare|ignorecase|precomposeunicode|filemode|symlinks"
    r"|quotepath|autocrlf|eol|checkstat|trustctime|abbrev)"
    r"|extensions\.objectformat"
    r"|remote\.[^\n]+\.(url|pushurl|fetch)"
    r"|branch\.[^\n]+\.(remote|merge))",
)
# The user information of a URL (``https://user:token@host``): a credential, never kept.
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/@]*@")
FORCED: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("diff.ignoreSubmodules", "all"),
    ("diff.autoRefreshIndex", "false"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("protocol.allow", "never"),
)


@attrs.frozen(kw_only=True)
class GitRepo:
    """Where git found the repository (absolute paths); ``work_tree`` None when bare or
    when the command runs inside the git directory."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    git_dir: str
    common_dir: str
    work_tree: str | None = None


def parse_preflight(output: str, dot_git_parent: str | None) -> GitRepo | None:
    """The repository from ``PREFLIGHT``'s standard output, or None outside a repository.

    ``dot_git_parent`` is the nearest directory at or above the command's directory that holds
    a ``.git`` entry (the executor looks). It becomes the work tree whenever git reports one:
    the toplevel git prints honours ``core.worktree`` from the repository's config, and
    ``core.worktree = /`` would let ``git grep``/``git diff`` read the whole machine.
    """
    lines = [line for line in output.split("\n") if line]
    if len(lines) < 2 or not all(line.startswith("/") for line in lines[:3]):
        return None
    work_tree = dot_git_parent if lines[2:] else None
    return GitRepo(git_dir=lines[0], common_dir=lines[1], work_tree=work_tree)


def repository_places(repo: GitRepo) -> tuple[str, ...]:
    """The directories git reads ``repo`` from: its git directory, common directory and work
    tree (the caller canonicalises them before ``check_repository``)."""
    places = (repo.git_dir, repo.common_dir, *((repo.work_tree,) if repo.work_tree else ()))
    return tuple(dict.fromkeys(places))


MAX_ALTERNATES_DEPTH = 5  # git follows alternates of alternates this deep


def alternates(objects_dir: str, text: str) -> tuple[str, ...]:
    """The object directories the ``info/alternates`` file of ``objects_dir`` lists: one a
    line, relative ones below ``objects_dir``, blank lines and ``#`` comments skipped. A
    C-quoted line (git unquotes it) is refused (``PathOutsideWorkspace``): its path is not
    read here."""
    out: list[str] = []
    for line in text.split("\n"):
        if not line or line.startswith("#"):
            continue
        if line.startswith('"'):
            raise PathOutsideWorkspace(
                f"git: the repository's objects/info/alternates lists a quoted path "
                f"({line[:80]!r}, in {objects_dir}); its borrowed objects are not read"
            )
        out.append(line if line.startswith("/") else f"{objects_dir.rstrip('/')}/{line}")
    return tuple(out)


def check_repository(places: tuple[str, ...], policy: SecretPolicy, reach: ReadReach) -> None:
    """Refuse a repository whose directories (``repository_places``, canonical) are a secret
    location (``SensitivePath``) or out of ``reach`` (``PathOutsideWorkspace``)."""
    for place in places:
        if reason := policy.git_refusal(place):  # its object store is git's to read
            raise SensitivePath(
                f"git: the repository git would read is at {place}: {reason}; its history may "
                "not be read"
            )
    for place in places:
        if reason := reach.refusal(place):
            raise PathOutsideWorkspace(
                f"git: the repository git would read is at {place} (a .git file, a commondir "
                f"file or a .git above the workspace names it): {reason}"
            )


# What git never opens here, at the top of a git directory: hooks (``core.hooksPath`` is
# /dev/null) and the config files (git reads the shadow's): a link there is no read.
UNOPENED = frozenset({"hooks", CONFIG_NAME, "config.worktree"})
MAX_REPOSITORY_ENTRIES = 200_000
# What git reads by itself in every directory of the work tree, warning with the text of a
# line it cannot use ("X is not a valid attribute name: .gitattributes:3"); it follows no
# symbolic link there (git 2.32), but a hard link is the file itself.
WORK_TREE_FILES = frozenset({".gitattributes", ".gitignore", ".mailmap", ".gitmodules"})
# The object data a local clone hard-links (loose objects, packs and their indexes, a
# multi-pack index; SHA-1 or SHA-256 names): git reads them as compressed or binary data and
# never prints their bytes, so a file with several names there is no alias git may show. Every
# other file with several names is judged, the object directory's too: git prints the lines
# of ``objects/info/alternates`` it cannot use ("object directory <line> does not exist").
# POSIX extended syntax, read alike by Python and by find's ``-regextype posix-extended``.
OBJECT_DATA = (
    r".*/([0-9a-f]{2}/[0-9a-f]{38}([0-9a-f]{24})?"
    r"|pack/(pack-[0-9a-f]{40}([0-9a-f]{24})?\.[a-z]+|multi-pack-index))"
)
_OBJECT_DATA = re.compile(OBJECT_DATA)


def is_object_data(path: str) -> bool:
    """Whether ``path`` is named as a loose object or a pack file (``OBJECT_DATA``)."""
    return _OBJECT_DATA.fullmatch(path) is not None


@attrs.frozen(kw_only=True)
class RepositoryFiles:
    """What a walk of a repository's own directories found (``UNOPENED`` left out):
    ``links``, each symbolic link with its real path; ``linked``, the regular files with
    several names but ``OBJECT_DATA`` (a clone's objects are hard links, and a loose object or
    pack is no text git prints), and those of the work tree's ``WORK_TREE_FILES``;
    ``complete``, False past ``MAX_REPOSITORY_ENTRIES``."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    links: tuple[tuple[str, str], ...] = ()
    linked: tuple[str, ...] = ()
    complete: bool = True


def check_repository_files(
    found: RepositoryFiles,
    policy: SecretPolicy,
    reach: ReadReach,
    *,
    aliases_complete: bool = True,
) -> None:
    """Refuse a repository one of whose own files is a link to a secret or out of ``reach``,
    or another name (a hard link) of a secret file (``policy`` holds the aliases found).

    Inside its directories git opens files no word of the command names, and prints some:
    ``info/grafts`` ("bad graft data: <line>" from every history reader), a rebase's
    ``rebase-merge/done`` and ``git-rebase-todo`` (``git status`` lists their lines), a pack
    in ``objects/pack`` (another repository's history). ``check_repository`` judges where
    the directories are; this judges what is inside them. ``aliases_complete``: whether
    the hard-link scan behind ``policy`` was whole (if not, a file with several names is
    refused: which file it is cannot be proven)."""
    if not found.complete:
        raise SensitivePath(
            f"git: the repository holds more than {MAX_REPOSITORY_ENTRIES} entries to check "
            "for links to secrets; pack it (git gc) or run git on a smaller clone"
        )
    for path, real in found.links:
        if reason := policy.git_refusal(real):
            raise SensitivePath(
                f"git: the repository's file {path} is a link to {real}: {reason}; git opens "
                "it by itself (grafts, a rebase's lists, packs) and may print it"
            )
    for path in found.linked:
        if policy.git_refusal(path) or not aliases_complete:
            maybe = "" if aliases_complete else " (or may be: too many files to check)"
            raise SensitivePath(
                f"git: the repository's file {path} is another name (a hard link) of a "
                f"secrets file{maybe}; git opens it by itself (grafts, a rebase's lists, "
                "attributes) and may print it"
            )
    for path, real in found.links:
        if reason := reach.refusal(real):
            raise PathOutsideWorkspace(
                f"git: the repository's file {path} is a link to {real}: {reason}; git opens "
                "it by itself (grafts, a rebase's lists, packs) and may print it"
            )


def config_list_argv(repo: GitRepo) -> tuple[str, ...]:
    """The git arguments that list the repository's own config file (no includes followed)."""
    path = f"{repo.common_dir.rstrip('/')}/{CONFIG_NAME}"
    return ("config", "--file", path, "--no-includes", "--list", "-z")


def _quote(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\t", "\\t") + '"'


def _entry(key: str, value: str) -> str:
    section, _, rest = key.partition(".")
    subsection, _, name = rest.rpartition(".")
    header = f"[{section}]" if not subsection else f"[{section} {_quote(subsection)}]"
    return f"{header}\n\t{name} = {_quote(value)}\n"


def shadow_config(listing: str) -> str:
    r"""The config git uses: the inert ``KEPT`` keys of a ``--list -z`` listing (remote URLs
    without their user information), then ``FORCED``.

    Each entry of the listing is ``key\nvalue`` (``key`` alone for a valueless boolean),
    entries end with NUL. Any key not matched by ``KEPT`` is dropped.
    """
    out: list[str] = []
    for record in listing.split("\0"):
        key, newline, value = record.partition("\n")
        if not KEPT.fullmatch(key) or not newline:
            continue
        if key.endswith(("url", "pushurl")):
            value = _USERINFO.sub(r"\1", value)  # git remote -v: no user:token@
        out.append(_entry(key, value))
    out.extend(_entry(key, value) for key, value in FORCED)
    return "".join(out)


def git_environment(repo: GitRepo | None, shadow_dir: str) -> dict[str, str]:
    """Environment variables that make git use ``repo`` through ``shadow_dir`` and nothing else."""
    if repo is None:
        return {"GIT_DIR": f"{shadow_dir}/{MISSING_GIT_DIR}"}
    env = {"GIT_DIR": repo.git_dir, "GIT_COMMON_DIR": shadow_dir}
    if repo.work_tree is not None:
        env["GIT_WORK_TREE"] = repo.work_tree
    return env
