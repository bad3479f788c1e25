"""The executor port built from config and profile: a local one, or a Daytona sandbox.

``build_executor`` builds the executor the config's ``backend`` names, enforcing the profile;
a local one whose restricted commands run without bubblewrap says what is lost, once per
process (``say_unprotected``, on the ``rho_entry.sandbox`` logger); ``probe_sandbox_ahead``
starts the sandbox's probe early. Part of the composition root, ``rho_entry.wiring``, which
names these too. The adapters are imported when an executor is built.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

import attrs

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.permissions import PermissionProfile, ShellMode
from rho_domain.ports.executor import Executor
from rho_domain.ports.store import SessionStore
from rho_entry.config.home import absolute

if TYPE_CHECKING:
    from rho_adapters.daytona.executor import DaytonaExecutor

# Where the sandbox notice goes: the CLI prints it as a warning line, a service's logging
# configuration decides, and a script without one sees it on stderr (logging's last resort).
sandbox_log = logging.getLogger("rho_entry.sandbox")
_SAID: set[str] = set()


def working_dir_of(config: AgentConfig) -> str:
    """The config's working directory, absolute and real (the current one when unset)."""
    # On strings: every Session asks (build_executor), and pathlib's objects around the same
    # lookup cost several times the lookup itself.
    return os.path.realpath(absolute(config.working_dir or "."))


def build_executor(
    config: AgentConfig,
    profile: PermissionProfile,
    store: SessionStore | None,
    *,
    search_path: tuple[str, ...] | None = None,
    environ: Mapping[str, str] | None = None,
    session_id: str | None = None,
    resumed: bool = False,
) -> Executor:
    """The executor the config's ``backend`` names, enforcing ``profile``. A local one whose
    restricted commands run without the sandbox says so (``say_unprotected``); ``search_path``
    replaces the programs' default path (tests: a machine without bwrap). ``environ`` (default
    the process's, read live as each unrestricted command starts) is the commands' base
    environment, where the config directory kept from tools is found, and Daytona's settings;
    nothing below this function reads ``os.environ``. ``session_id`` names the session a
    Daytona sandbox serves (its label), ``resumed`` that the session continues a stored one
    (its sandbox is looked for first)."""
    env = os.environ if environ is None else environ
    if config.backend == "daytona":
        return build_daytona_executor(config, profile, env, session_id=session_id, resumed=resumed)
    from rho_adapters.local import LocalExecutor
    from rho_entry.config.home import config_dir_name

    root = working_dir_of(config)
    if not os.path.isdir(root):
        state = "is not a directory" if os.path.exists(root) else "does not exist"
        raise ConfigError(
            f"AgentConfig.working_dir: {config.working_dir or '.'!r} ({root}) {state}: give "
            "the directory the tools work in (the CLI's --working-dir, RHO_AGENT_WORKING_DIR)"
        )
    # Real paths as strings (a Session builds this each time: pathlib's objects cost more than
    # the two lookups). The agent's own configuration (databases.yaml, profiles, sessions) is
    # never read by a tool, unless the operator made the workspace part of it.
    home = os.path.realpath(config_dir_name(env))
    inside = root == home or root.startswith(home.rstrip("/") + "/")
    secret = () if inside else (home,)
    executor = LocalExecutor(
        root,
        file_write=profile.file_write,
        allow_shell=profile.shell is ShellMode.UNRESTRICTED,
        extra_read_roots=profile.extra_read_roots,
        read_outside=profile.read_outside_workspace,
        protected_paths=tuple(str(p) for p in _store_paths(store)),
        base_env=env,  # read as each command starts (os.environ stays live)
        secret_locations=secret,
        limits=profile.limits,
        search_path=search_path,
        resolved=True,  # root and home: real paths looked up above, for this Session
    )
    say_unprotected(executor.unprotected())
    return executor


def probe_sandbox_ahead(config: AgentConfig, profile: PermissionProfile) -> None:
    """Start the bubblewrap probe that ``build_executor`` will wait for with ``config`` and
    ``profile`` (a local backend, a restricted shell), in a thread, so that the probe's
    process runs while the caller does the rest of its start-up; nothing otherwise. The
    executor's answer and its notice are the same, and said at the same point."""
    if config.backend != "local" or profile.shell is ShellMode.UNRESTRICTED:
        return
    from rho_adapters.local.programs import default_search_path
    from rho_adapters.local.runner import probe_ahead

    probe_ahead(default_search_path())


def say_unprotected(notice: str | None) -> None:
    """Log ``notice`` (what restricted commands lose without bubblewrap) as a warning, once
    per process: the first session says it, at its start, and no later one repeats it."""
    if notice is not None and notice not in _SAID:
        _SAID.add(notice)
        sandbox_log.warning("%s", notice)


def build_daytona_executor(
    config: AgentConfig,
    profile: PermissionProfile,
    environ: Mapping[str, str],
    *,
    snapshot: str | None = None,
    dockerfile: str | None = None,
    session_id: str | None = None,
    resumed: bool = False,
) -> Executor:
    """A Daytona sandbox executor. The sandbox enforces the same profile as a local one;
    host paths (extra read roots, the session directory) mean nothing there. ``snapshot`` or
    ``dockerfile`` (its text; ``--snapshot``, ``--dockerfile``) replace the environment's
    image and snapshot."""
    from rho_adapters.daytona import DaytonaExecutor, DaytonaSettings
    from rho_adapters.model.proxies import ProxyRoutes

    api_key = environ.get("DAYTONA_API_KEY")
    if not api_key:
        raise ConfigError(
            "backend daytona needs an API key: export DAYTONA_API_KEY=<key> "
            "(and DAYTONA_API_URL for a self-hosted server)"
        )
    settings = DaytonaSettings(
        api_key=api_key,
        api_url=environ.get("DAYTONA_API_URL")
        or environ.get("DAYTONA_SERVER_URL")
        or "https://app.daytona.io/api",
        target=environ.get("DAYTONA_TARGET") or None,
        organization_id=environ.get("DAYTONA_ORGANIZATION_ID") or None,
        image=environ.get("RHO_AGENT_DAYTONA_IMAGE") or None,
        snapshot=environ.get("RHO_AGENT_DAYTONA_SNAPSHOT") or None,
        proxies=ProxyRoutes.from_environ(environ),
        session_id=session_id,
        reattach=resumed,
    )
    if snapshot is not None or dockerfile is not None:
        settings = attrs.evolve(settings, snapshot=snapshot, dockerfile=dockerfile, image=None)
    if remote_dir := environ.get("RHO_AGENT_DAYTONA_WORKING_DIR"):
        settings = attrs.evolve(settings, working_dir=remote_dir)
    return DaytonaExecutor(
        settings,
        file_write=profile.file_write,
        allow_shell=profile.shell is ShellMode.UNRESTRICTED,
        limits=profile.limits,
        read_outside=profile.read_outside_workspace,
    )


def serve_session(executor: Executor, session_id: str, *, resumed: bool) -> None:
    """Give a Daytona executor its caller built before the session had an id (the CLI's
    ``--dockerfile``/``--snapshot``), and whose sandbox does not exist yet, to the session:
    the sandbox is labelled ``rho-agent-session=<id>`` and a resumed session's is looked for
    first, as for one built here. One naming a session already, or whose sandbox exists, is
    left as built; another executor is never touched."""
    daytona = daytona_of(executor)
    if daytona is None:
        return
    if daytona.settings.session_id is None and daytona.sandbox_id is None:
        daytona.serve(session_id, resumed=resumed)


def daytona_of(executor: Executor) -> DaytonaExecutor | None:
    """``executor`` when it is a Daytona executor, else None; never imports the Daytona
    adapter (a process that built one has it loaded)."""
    daytona = sys.modules.get("rho_adapters.daytona.executor")
    if daytona is None or not isinstance(executor, daytona.DaytonaExecutor):
        return None
    return cast("DaytonaExecutor", executor)


def _store_paths(store: SessionStore | None) -> tuple[Path, ...]:
    root = getattr(store, "root", None)
    return (Path(root),) if root is not None else ()
