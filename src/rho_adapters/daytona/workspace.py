"""The workspace inside a Daytona sandbox: the sandbox made once, paths resolved in it.

``SandboxWorkspace`` creates the sandbox with its first call (once, under a lock) and the
workspace directory in it, runs our scripts there (``script``), resolves a model's path
(confined lexically, canonicalised by the sandbox, confined again: ``confine.Roots``) and
judges it (the secrets policy by name and by canonical path, the read reach, the paths never
written), and deletes the sandbox in ``close`` (failures logged, never raised, the sandbox
kept in ``orphaned``). The executor's file operations and commands go through it.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import stat as stat_mod
from collections.abc import Sequence

import attrs
import httpx

from rho_adapters.daytona import aliases, creation, git_named, path_scripts, scripts
from rho_adapters.daytona.answers import quoted
from rho_adapters.daytona.api import Sandbox, SandboxAPI
from rho_adapters.daytona.confine import Roots
from rho_adapters.daytona.reattaching import session_sandbox
from rho_adapters.daytona.settings import DaytonaSettings
from rho_domain.errors import (
    ExecutorError,
    PathOutsideWorkspace,
    PlacementFailed,
    PlacementRefused,
    RhoError,
    SensitivePath,
    ToolError,
)
from rho_domain.git_dir_shape import shaped_refusal
from rho_domain.ports.clock import Clock
from rho_domain.ports.executor import PlacementTold
from rho_domain.reach import OutsideReads, ReadReach, held_roots
from rho_domain.secrets import SecretPolicy
from rho_domain.write_rules import home_entry_refusal, write_refusal

# the executor's logger, as before this class was split from it
log = logging.getLogger("rho_adapters.daytona.executor")
RESOLVE_TIMEOUT = 30.0  # how long one of our scripts may take (a resolve, a probe, a rename)
# The sandbox's home directories, as the local executor finds this machine's (``homes.py``):
# the sandbox user's, root's and every directory under /home, canonical, NUL-separated, in
# base64. An image may hold other users (an ubuntu image's /home/ubuntu): the policy hides
# their hidden entries and the reach keeps them out, as it does for the homes it was given.
_HOMES_SCRIPT = (
    'for h in "$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6)" /root /home/*; do\n'
    '  if [ -d "$h" ]; then realpath -zm -- "$h"; fi; done | base64 -w0; echo\n'
)


class SandboxWorkspace:
    """One Daytona sandbox and the workspace in it: see the module docstring."""

    def __init__(
        self,
        settings: DaytonaSettings,
        *,
        extra_read_roots: Sequence[str],
        transport: httpx.AsyncBaseTransport | None,
        homes: Sequence[str],
        clock: Clock | None,
        read_outside: OutsideReads,
    ) -> None:
        self.read_outside = read_outside
        self.roots = Roots(
            settings.working_dir,
            tuple(extra_read_roots),
            anywhere=read_outside is OutsideReads.ALLOW,
        )
        self.policy = SecretPolicy(homes=tuple(homes))
        self.settings = settings
        self.recreated: str | None = None  # why a resumed session's sandbox is a new one
        self.unmade: str | None = None  # why the last try to find or make the sandbox failed
        self.refused = False  # and whether it would fail again (PlacementRefused)
        self.known: str | None = None  # the sandbox a resumed session's trace names
        self.told: PlacementTold | None = None  # records the sandbox (Executor.on_placed)
        self.api = SandboxAPI(settings, transport=transport, clock=clock)
        self._sandbox: Sandbox | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        self.orphaned: Sandbox | None = None  # a sandbox that close could not delete

    @property
    def sandbox_id(self) -> str | None:
        """The sandbox's id once created (for logs and the monitor)."""
        return self._sandbox.id if self._sandbox else None

    def serve(self, session_id: str, *, resumed: bool) -> None:
        """Name the session the sandbox serves (its label; ``resumed``: look for its own
        first), for an executor built before the session had an id (the CLI's
        ``--dockerfile``/``--snapshot``). Raises ``ExecutorError`` once the sandbox exists:
        its labels were given at creation."""
        if self._sandbox is not None:
            raise ExecutorError(
                f"Daytona sandbox {self._sandbox.id} exists already: name its session "
                "(DaytonaExecutor.serve) before the first call"
            )
        self.settings = attrs.evolve(self.settings, session_id=session_id, reattach=resumed)
        self.api.serve(self.settings)

    async def ensure(self) -> Sandbox:
        """Create the sandbox and the workspace on first use (exactly once)."""
        if self._sandbox is not None:
            return self._sandbox
        async with self._lock:
            if self._closed:
                raise ExecutorError("the Daytona executor is closed")
            if self._sandbox is None:
                if self.refused:  # a build or a request that failed will fail alike
                    raise PlacementRefused(
                        f"{self.unmade} (not asked again: fix the build or the settings "
                        "named, then start a new session)"
                    )
                try:
                    chosen = await session_sandbox(self.api, self.settings, self.known, self.told)
                except RhoError as exc:
                    self.unmade, self.refused = str(exc), isinstance(exc, PlacementRefused)
                    if type(exc) is not ExecutorError:  # a kind of its own: kept (ConfigError)
                        raise
                    # what a run's end tells from a tool's own failure; its cause, as it was
                    raise PlacementFailed(str(exc)) from (exc.__cause__ or exc)
                sandbox, self.recreated = chosen
                self.unmade = None
                self._sandbox = sandbox
                await creation.tell(self.told, sandbox.id)  # in the trace before it is used
                roots = (self.roots.given, *self.roots.extra)
                script = f"mkdir -p -- {scripts.q(roots[0])} || exit 1\n" + "".join(
                    f"realpath -m -- {scripts.q(r)}\n" for r in roots
                )
                answer = await self.script(script + _HOMES_SCRIPT, RESOLVE_TIMEOUT, sandbox)
                lines = answer.splitlines()
                if len(lines) != len(roots) + 1:
                    raise ExecutorError(
                        f"could not create the workspace {roots[0]}: {quoted(answer)}"
                    )
                self.roots.root, self.roots.extra = lines[0], tuple(lines[1:-1])
                found = base64.b64decode(lines[-1]).decode("utf-8", "surrogateescape")
                homes = (*self.policy.homes, *(h for h in found.split("\0") if h))
                known = tuple(dict.fromkeys(homes))
                # the files links named as secrets lead to (``.env -> env/prod.conf``),
                # which a word naming the target shows no sign of (``parse_aliases``;
                # hard links are found per command, where a word says it has several)
                tree = aliases.scan_roots(self.policy, (self.roots.root, *self.roots.extra))
                scan = await self.script(aliases.scan_script(tree), RESOLVE_TIMEOUT, sandbox)
                others = aliases.parse_aliases(scan, attrs.evolve(self.policy, homes=known))
                # the files the sandbox's git configurations name as credential sources,
                # those of repositories nested below a root (the scan met their config) too
                held = (self.roots.root, *self.roots.extra)
                origins = await git_named.named_secrets(
                    lambda text: self.script(text, RESOLVE_TIMEOUT, sandbox),
                    (*held, *git_named.nested(others.secrets, held)),
                    known,
                )
                named = tuple(path for path, _ in origins if not path.startswith("*/"))
                anywhere = tuple(path[2:] for path, _ in origins if path.startswith("*/"))
                locations = (*self.policy.locations, *named, *sorted(others.targets))
                self.policy = attrs.evolve(
                    self.policy,
                    homes=known,
                    locations=locations,
                    anywhere=anywhere,
                    named_by=origins,
                )
        return self._sandbox

    async def script(self, script: str, timeout: float, sandbox: Sandbox | None = None) -> str:
        """Run one of our scripts; its output on success, else ExecutorError/ToolError."""
        sandbox = sandbox or await self.ensure()
        answer = await self.api.execute(sandbox, scripts.wrap(script), timeout=timeout)
        if answer is None:
            raise ExecutorError(f"the sandbox did not answer within {timeout:g} s")
        if answer.exit_code != 0:
            raise ExecutorError(
                f"sandbox script failed ({answer.exit_code}): {quoted(answer.result)}"
            )
        return answer.result

    async def resolve(
        self, path: str, *, write: bool, read_range: tuple[int, int | None] | None = None
    ) -> tuple[path_scripts.Resolved, str, tuple[str, ...]]:
        """Confine ``path`` lexically, let the sandbox canonicalise it, confine it again."""
        self.roots.locate(path, write=write)
        await self.ensure()  # the canonical roots are known from here on
        self.roots.locate(path, write=write)
        absolute = self.roots.walked(path)
        roots = (self.roots.root, *self.roots.extra)
        if self.roots.anywhere and not write:  # allow: judged by reach once canonical
            roots = ("/",)
        script = path_scripts.resolve_script(absolute, read_range, roots)
        answer = await self.script(script, RESOLVE_TIMEOUT)
        res = path_scripts.parse_resolved(answer, with_data=read_range is not None)
        root, parts = self.roots.below(res.canonical, path, write=write)
        return res, root, parts

    @property
    def reach(self) -> ReadReach:
        """Where reads may go (``rho_domain.reach``), with the roots as given and canonical."""
        roots = self.roots
        return ReadReach.of(
            self.read_outside,
            workspace=(roots.given, roots.root),
            read_roots=roots.extra,
            homes=self.policy.homes,
        )

    def check_read(self, path: str, canonical: str | None = None, place: str = "") -> None:
        """Refuse a secret: by the model's text (names), then by the canonical path (and the
        git directory by its shape it is in, ``git_dir``); and a canonical path out of the
        profile's reach."""
        if reason := self.policy.refusal(path):
            raise SensitivePath(f"{reason}; it may not be read")
        if canonical is not None and (
            reason := self.policy.refusal(canonical)
            or (place and shaped_refusal(self.policy, canonical, place[1:], place[0]))
        ):
            raise SensitivePath(f"{path!r} resolves to a secret: {reason}; it may not be read")
        if canonical is not None and (reason := self.reach.refusal(canonical)):
            raise PathOutsideWorkspace(f"{path!r} may not be read: {reason}")

    async def check_hard_link(self, path: str, res: path_scripts.Resolved) -> None:
        """Refuse a regular file with several names when one of them is a secret (``aliases``:
        the other names found in the sandbox; one more request, for such a file only)."""
        if res.mode is None or not stat_mod.S_ISREG(res.mode) or res.links < 2:
            return
        # The workspace, the file's directory and the read root holding it, as locally.
        held = held_roots(self.roots.extra, (res.canonical,))
        trees = aliases.scan_roots(self.policy, (self.roots.root, *held), (res.canonical,))
        answer = await self.script(aliases.scan_script(trees), RESOLVE_TIMEOUT)
        found = aliases.parse_aliases(answer, self.policy)
        if res.canonical in found.paths:
            raise SensitivePath(
                f"{path!r} is another name (a hard link) of a secrets file; it may not be read"
            )
        if not found.complete:
            raise SensitivePath(
                f"{path!r} has several hard links and there are too many to check that none of "
                "them is a secret; it may not be read"
            )

    def check_write(self, path: str, parts: tuple[str, ...]) -> None:
        """Refuse a path never written (agent/editor/VCS configuration), a secret (never read,
        never written) and a hidden entry of a home the workspace holds, as given or found
        (``parts``: its components below the root)."""
        for candidate in (path, "/".join(parts)):
            if reason := write_refusal(candidate):
                raise SensitivePath(reason)
        found = "/".join((self.roots.root.rstrip("/"), *parts)) if parts else ""
        for candidate in (path, found):
            if candidate and (reason := self.policy.refusal(candidate)):
                raise SensitivePath(f"{reason}; secrets are never written")
        homes = self.policy.homes
        if found and (reason := home_entry_refusal(path, found, self.roots.root, homes)):
            raise SensitivePath(reason)

    async def input(self, path: str) -> str:
        """The canonical path of the regular file ``path`` a stage reads (``< file``), judged
        as a read."""
        self.check_read(path)
        res, _, _ = await self.resolve(path, write=False)
        self.check_read(path, res.canonical, res.git_place)
        if res.mode is None or not stat_mod.S_ISREG(res.mode):
            raise ToolError(f"{path}: not a readable regular file")
        await self.check_hard_link(path, res)
        return res.canonical

    async def directory(self, path: str) -> str:
        """The canonical path of the workspace directory ``path``, where a command runs."""
        await self.ensure()
        if path in ("", "."):
            return self.roots.root
        res, _, _ = await self.resolve(path, write=True)  # write=True: the workspace only
        if res.mode is None:
            raise ToolError(f"no such directory: {path}")
        if not stat_mod.S_ISDIR(res.mode):
            raise ToolError(f"{path} is not a directory")
        return res.canonical

    async def close(self) -> None:
        """Delete the sandbox (errors logged, not raised) and close the HTTP client."""
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            sandbox, self._sandbox = self._sandbox, None
        try:
            if sandbox is not None and not await self.api.discard(
                sandbox.id, "at the session's close"
            ):
                self.orphaned = sandbox  # teardown must not mask the run's own outcome
        except asyncio.CancelledError:
            self.orphaned = sandbox
            raise
        finally:
            await self.api.aclose()
