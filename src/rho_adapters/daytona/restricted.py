"""A restricted pipeline in the Daytona sandbox: its checks there, then its inner script.

``RestrictedPipelines.inner`` resolves every path word of every stage in the sandbox (one
request) and refuses a secret or a word out of reach, builds git's shadow directory when a
stage runs git (one more request: ``git_scripts.git_discovery``; a repository in a secret
location or out of reach is refused: ``check_repository``), refuses a git object named by id that is
a blob, picks the awk the sandbox has (probed once per executor), hardens each argv as the
local runner does (``harden_argv``, ``secret_safe_argv``) and returns the script that runs the
pipeline with every word quoted (``scripts.restricted_inner``). The caller validated each
argv (``check_argv``) before any request, and wraps the script in its limits.
"""

from __future__ import annotations

import posixpath
import secrets
from collections.abc import Mapping

import attrs

from rho_adapters.daytona import aliases, git_files, git_scripts, path_scripts, scripts
from rho_adapters.daytona.workspace import RESOLVE_TIMEOUT, SandboxWorkspace
from rho_domain.errors import PathOutsideWorkspace, SensitivePath, ToolError
from rho_domain.git_dir_shape import shaped_refusal
from rho_domain.ports.executor import Command
from rho_domain.reach import held_roots
from rho_domain.secrets import SecretPolicy
from rho_domain.shell.awk import AwkFlavor
from rho_domain.shell.git_objects import git_object_args, objects_refusal
from rho_domain.shell.git_relative import cwd_history_refusal
from rho_domain.shell.git_repo import (
    RepositoryFiles,
    check_repository,
    check_repository_files,
    repository_places,
    shadow_config,
)
from rho_domain.shell.ignore_files import implied_ignore_files
from rho_domain.shell.programs import harden_argv
from rho_domain.shell.reads import path_words, secret_safe_argv, walks
from rho_domain.shell.texts import reach_words

MAX_STDIN_DATA = 60_000


class RestrictedPipelines:
    """The inner scripts of restricted pipelines run in ``workspace``'s sandbox."""

    def __init__(self, workspace: SandboxWorkspace) -> None:
        self._workspace = workspace
        self._awk_flavor: tuple[str, AwkFlavor] | None = None

    async def _walked(self, command: Command, cwd: str) -> tuple[list[list[str]], SecretPolicy]:
        """Resolve every path word of every stage in the sandbox (one request) and scan for
        the secrets it does not name (``aliases``: their other names, and what a walker meets:
        in that request for a walker, in another when a word names a file with several
        names), refuse a secret by any name, and return each stage's walked directories and
        the policy (what the scan found as locations) their recursive readers and xargs guard
        apply (see ``secret_safe_argv``)."""
        workspace = self._workspace
        if reason := workspace.policy.refusal(cwd):
            raise SensitivePath(f"commands may not run inside a secret location: {reason}")
        # rg's ignore files above where it starts are judged as words (ignore_files.py).
        implied = [
            implied_ignore_files(stage.argv, cwd, workspace.roots.root, workspace.roots.extra)
            for stage in command.pipeline
        ]
        words = [
            (*path_words(stage.argv), *extra)
            for stage, extra in zip(command.pipeline, implied, strict=True)
        ]
        # Reach judges the words a program may open, not its pattern or script (texts.py).
        opened = [
            reach_words(stage.argv) | frozenset(extra)
            for stage, extra in zip(command.pipeline, implied, strict=True)
        ]
        reach = workspace.reach
        walked: list[list[str]] = [[cwd] for _ in words]
        flat = [(i, w) for i, stage_words in enumerate(words) for w in stage_words]
        # A walker's scan rides with the words' request; any other stage's is made only when
        # a word names a file with several names.
        walker = any(walks(stage.argv) for stage in command.pipeline)
        if not flat and not walker:  # no word names a file or a tree, and no walk: no scan
            return walked, workspace.policy
        # A tree opened outside the workspace is scanned too when it is within reach (a read
        # root, or anywhere under allow); a word out of reach is refused before anything runs.
        outside = [
            path
            for stage_opened in opened
            for w in stage_opened
            if reach.refusal(path := posixpath.normpath(posixpath.join(cwd, w))) is None
        ]
        # The workspace, not the read roots (one may be "/"): a file with several names
        # elsewhere brings its own directory (``wider``), as the local scan does.
        # An xargs target may walk any root within reach: the read roots are scanned for it.
        if any(stage.argv[:1] == ("xargs",) for stage in command.pipeline):
            outside += workspace.roots.extra
        trees = aliases.scan_roots(workspace.policy, (workspace.roots.root, cwd), outside)
        script = path_scripts.realpaths_script(cwd, [w for _, w in flat])
        if walker:
            script += aliases.scan_script(trees)
        answer, _, scan = (await workspace.script(script, 30.0)).partition("\n")
        resolved = path_scripts.parse_realpaths(answer, len(flat))
        scan = scan if walker else ""
        linked = [found[0] for found in resolved if found is not None and found[1] == "l"]
        held = held_roots(workspace.roots.extra, linked)
        wider = aliases.scan_roots(
            workspace.policy, (workspace.roots.root, cwd, *held), (*outside, *linked)
        )
        if (linked and not walker) or wider != trees:
            scan = await workspace.script(aliases.scan_script(wider), RESOLVE_TIMEOUT)
        found_aliases = aliases.parse_aliases(scan, workspace.policy)
        policy = aliases.with_aliases(workspace.policy, found_aliases)
        for (i, word), found in zip(flat, resolved, strict=True):
            if found is None:
                continue  # names nothing: a pattern, a value, a missing file
            real, kind, place = found
            argv0 = command.pipeline[i].argv[0]
            if kind == "?":  # realpath -m took a component past 4,096 characters for no link
                raise PathOutsideWorkspace(
                    f"{argv0}: {word[:80]!r}: its real path cannot be judged (longer than "
                    "4096 characters on the way); cd closer to the file and name it from there"
                )
            if real in found_aliases.paths or (kind == "l" and not found_aliases.complete):
                raise SensitivePath(
                    f"{argv0}: {word} may not be read: it is another name (a hard link) of a "
                    "secrets file, or the file a link named as one leads to"
                    + ("" if found_aliases.complete else ", or may be (too many to check)")
                )
            if reason := _word_refusal(policy, word, posixpath.join(cwd, word), (real, place)):
                raise SensitivePath(f"{argv0}: {reason}")
            if word in opened[i] and (reason := reach.refusal(real)):
                raise PathOutsideWorkspace(f"{argv0}: {word} may not be read: {reason}")
            if kind == "d" and word not in implied[i]:
                walked[i].append(real)
        return walked, policy

    async def _refuse_blobs(
        self, command: Command, cwd: str, git: git_scripts.GitShadow | None
    ) -> None:
        """Ask git (through the shadow directory, never the repository's config) the type of
        each object word of a ``git show/cat-file/diff/grep/ls-tree`` stage; a blob or a tree
        named by id has no path the policy could judge, so it is refused (see ``git_objects``)."""
        for stage in command.pipeline:
            if objects := git_object_args(stage.argv):
                script = git_scripts.object_types_script(cwd, objects, git)
                answer = await self._workspace.script(script, RESOLVE_TIMEOUT)
                if reason := objects_refusal(stage.argv, objects, answer):
                    raise SensitivePath(reason)

    async def _check_repository_files(self, found: RepositoryFiles) -> None:
        """Refuse the repository when a file git opens by itself inside it is a link to a
        secret or out of reach, or another name of a secret file (``check_repository_files``;
        the hard-link scan is made only when such a file has several names)."""
        workspace = self._workspace
        policy, complete = workspace.policy, True
        if found.linked:
            linked = [posixpath.normpath(p) for p in found.linked]
            held = held_roots(workspace.roots.extra, linked)
            trees = aliases.scan_roots(workspace.policy, (workspace.roots.root, *held), linked)
            scan = await workspace.script(aliases.scan_script(trees), RESOLVE_TIMEOUT)
            found_aliases = aliases.parse_aliases(scan, workspace.policy)
            policy = aliases.with_aliases(workspace.policy, found_aliases)
            complete = found_aliases.complete
        check_repository_files(found, policy, workspace.reach, aliases_complete=complete)

    async def inner(self, command: Command, cwd: str, env: Mapping[str, str]) -> str:
        """The inner script of the restricted ``command`` run in ``cwd`` (canonical) with
        ``env`` (checked names; its ``GIT_*`` dropped). Raises ``SensitivePath``,
        ``PathOutsideWorkspace`` or ``ToolError`` for what may not run."""
        # Secrets first (one request resolves every path word; a refusal stops here).
        walked, policy = await self._walked(command, cwd)
        for stage in command.pipeline:  # git's ./paths into history, from where it runs
            if reason := cwd_history_refusal(stage.argv, cwd, policy):
                raise SensitivePath(reason)
        # git reads GIT_CONFIG_* / GIT_DIR...: never from the caller in a restricted pipeline.
        env = {k: v for k, v in env.items() if not k.startswith("GIT_")}
        git: git_scripts.GitShadow | None = None
        if any(stage.argv[:1] == ("git",) for stage in command.pipeline):
            find = git_scripts.git_discovery(cwd)
            discovery = await self._workspace.script(find, RESOLVE_TIMEOUT)
            repo, listing = git_scripts.parse_git_discovery(discovery)
            if repo is not None:  # git's own paths are canonical (--path-format=absolute)
                places = (*repository_places(repo), *git_scripts.parse_git_places(discovery))
                check_repository(places, self._workspace.policy, self._workspace.reach)
                await self._check_repository_files(git_files.parse_git_files(discovery))
            git = git_scripts.GitShadow(
                directory=f"/tmp/rho-git-{secrets.token_hex(8)}",  # noqa: S108 - the sandbox's
                repo=repo,
                config=shadow_config(listing),
            )
            env = {**env, **git.environment()}
        await self._refuse_blobs(command, cwd, git)
        stages = []
        stdin_files: list[str | None] = []
        for stage, dirs in zip(command.pipeline, walked, strict=True):
            argv = tuple(stage.argv)
            flavor: AwkFlavor = "gawk"
            if argv[0] in ("awk", "gawk"):
                argv, flavor = await self._awk(argv)
            argv = secret_safe_argv(
                harden_argv(argv, awk=flavor), policy, dirs, self._workspace.reach
            )
            stages.append(attrs.evolve(stage, argv=argv))
            if stage.stdin_data is not None and len(stage.stdin_data.encode()) > MAX_STDIN_DATA:
                raise ToolError(f"here-document larger than {MAX_STDIN_DATA} bytes")
            stdin_files.append(
                await self._workspace.input(stage.stdin_path) if stage.stdin_path else None
            )
        pipeline = scripts.render_pipeline(stages, stdin_files)
        return scripts.restricted_inner(pipeline, cwd, env, git.around if git else None)

    async def _awk(self, argv: tuple[str, ...]) -> tuple[tuple[str, ...], AwkFlavor]:
        """The awk to run: gawk when the sandbox has it (--sandbox), else ``awk`` (probed once)."""
        if self._awk_flavor is None:
            self._awk_flavor = scripts.parse_awk_probe(
                await self._workspace.script(scripts.AWK_PROBE, RESOLVE_TIMEOUT)
            )
        installed, flavor = self._awk_flavor
        if installed == "gawk":
            return ("gawk", *argv[1:]), "gawk"
        if argv[0] == "gawk":
            raise ToolError("gawk: program not installed in the sandbox")
        return argv, flavor


def _word_refusal(policy: SecretPolicy, word: str, full: str, found: tuple[str, str]) -> str | None:
    """Why ``word`` (``full`` from where it runs; ``found``: its real path and the git
    directory or object store it is in, ``path_scripts.git_place_script``, or "") may not
    be read, or None."""
    real, place = found
    for candidate in (full, real):
        if reason := policy.refusal(candidate):
            shown = word if candidate == full else f"{word!r} (really {real})"
            return f"{shown} may not be read: {reason}"
    if place and (reason := shaped_refusal(policy, real, place[1:], place[0])):
        return f"{word} may not be read: {reason}"
    return None
