"""What the one-shot run and the REPL share: the renderer, the session, exit codes (the signals
a run listens to: ``cli/interrupts.py``)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rho_domain.errors import ConfigError
from rho_domain.messages import ToolResultMessage
from rho_domain.not_run import REJECTED_PREFIX
from rho_domain.permissions import PermissionProfile
from rho_domain.ports.executor import Executor
from rho_domain.ports.store import SessionStore
from rho_domain.run import RunResult, RunStatus
from rho_domain.secrets import SecretPolicy
from rho_entry.cli import exit_codes
from rho_entry.cli.launch import Launch
from rho_entry.cli.render import TerminalRenderer
from rho_entry.config.settings import Settings, environment, origin_of

if TYPE_CHECKING:
    from rho_entry.cli.approval import TerminalApprover
    from rho_entry.cli.json_render import JsonRenderer
    from rho_entry.facade import Session
    from rho_entry.resume_policy import ResumeAuthority


def make_renderer(launch: Launch) -> TerminalRenderer | JsonRenderer:
    """The JSON renderer for ``--json`` (its module imported then), else the terminal
    renderer the flags describe."""
    if launch.json:
        from rho_entry.cli.json_render import JsonRenderer

        return JsonRenderer()
    return TerminalRenderer(
        color=launch.color,
        spinner=launch.spinner,
        quiet=launch.quiet,
        verbose=launch.verbose,
        preview_lines=launch.preview_lines,
    )


async def open_session(
    launch: Launch,
    store: SessionStore,
    renderer: TerminalRenderer | JsonRenderer,
    approver: TerminalApprover | None,
) -> Session:
    """A new session for ``launch``, or the resumed one (flags given override its config)."""
    from rho_entry.facade import Agent, open_session

    built = _sandbox(launch)  # --dockerfile/--snapshot: the executor, built here
    ports: dict[str, Any] = {} if built is None else {"executor": built}
    with _naming_tool_choice(launch.settings):
        session = await open_session(
            None if launch.resume else Agent(launch.settings.config),
            resume=launch.resume or None,
            store=store,
            authority=resume_authority(launch) if launch.resume else None,
            approver=approver,
            on_event=renderer,
            interrupt_on_approval=False,  # the CLI reports awaiting_approval as exit code 4
            **ports,
        )
    # the REPL keeps -y in its approver (so /approve off can take it back): on, it is
    # given again, and nothing was withheld to report
    if approver is None or not approver.auto:
        for notice in session.resume_notices:
            renderer.notice(notice, "yellow")
    if built is not None:
        session.close_with(built)
    if launch.transfers is not None and launch.transfers.uploads:
        from rho_entry.cli import transfers

        try:
            files = transfers.read_uploads(
                launch.transfers, upload_policy(), lambda text: renderer.notice(text, "yellow")
            )
            await transfers.upload(session.executor, files, lambda t: renderer.notice(t, "dim"))
        except BaseException:
            await session.close()
            raise
    # Spans when OpenTelemetry is set up in this process (`opentelemetry-instrument rho-agent`):
    # without its tracing API imported it is not (instrument_if_configured's first test), and
    # a run loads no OpenTelemetry module of ours either.
    if "opentelemetry.trace" in sys.modules:
        from rho_entry.otel import instrument_if_configured

        instrument_if_configured(session)
    return session


@contextlib.contextmanager
def _naming_tool_choice(settings: Settings) -> Iterator[None]:
    """A tool_choice the agent's tools refuse (known only once they are built) named by where
    it came from: 'tool_choice 'x': expected ...' named neither --tool-choice,
    RHO_AGENT_TOOL_CHOICE nor the --config file that gave it."""
    try:
        yield
    except ConfigError as exc:
        origin = origin_of("tool_choice", settings.sources)
        if origin is None or not str(exc).startswith("tool_choice "):
            raise
        raise ConfigError(f"{origin}: {exc}") from None


def _sandbox(launch: Launch) -> Executor | None:
    """The Daytona executor ``--dockerfile``/``--snapshot`` ask for, or None."""
    if launch.transfers is None or not launch.transfers.builds_sandbox:
        return None
    from rho_entry.wiring import build_daytona_executor

    config = launch.settings.config
    assert isinstance(config.profile, PermissionProfile)  # settings resolve it
    return build_daytona_executor(
        config,
        config.profile,
        environment(),
        snapshot=launch.transfers.snapshot,
        dockerfile=launch.transfers.dockerfile,
    )


def upload_policy() -> SecretPolicy:
    """The secrets policy of this machine, for files about to leave it (``--upload``): its
    homes and the agent's own configuration directory."""
    from rho_adapters.local.homes import machine_homes
    from rho_entry.config.home import config_dir

    env = environment()
    home = env.get("HOME")
    homes = (*machine_homes(), *((home,) if home and home.startswith("/") else ()))
    return SecretPolicy(
        homes=tuple(dict.fromkeys(homes)),
        locations=(str(config_dir(env).resolve()),),
    )


def resume_authority(launch: Launch) -> ResumeAuthority:
    """What ``--resume`` allows: the profile this invocation runs with (its flag, the
    environment, --config, else readonly), its endpoint and databases, and its auto-approval
    (-y, --no-auto-approve, RHO_AGENT_AUTO_APPROVE); the flags given replace stored fields."""
    from rho_entry.resume_endpoint import Endpoint
    from rho_entry.resume_limits import limits_of
    from rho_entry.resume_policy import ResumeAuthority

    config = launch.settings.config
    profile = config.profile
    assert isinstance(profile, PermissionProfile)  # settings resolve it
    return ResumeAuthority(
        profiles=(profile,),
        given={**launch.overrides, "auto_approve": config.auto_approve},
        endpoint=Endpoint.of(config, environment()),
        databases=config.databases,
        hint="pass --profile {profile} explicitly to resume it with that profile",
        endpoint_hint="pass --{flag} again",
        workspace=config.working_dir if config.backend == "local" else None,
        workspace_hint="run it from {path:sh} or pass --working-dir {path:sh}",
        hooks=config.hooks,
        hooks_hint="name them under hooks: in your --config file",
        system_prompt=config.system_prompt,
        system_prompt_hint="pass --system-prompt {path:sh} again",
        **limits_of(config),
        backend=config.backend,
        backend_hint="pass --backend {backend} to run it there",
    )


def result_code(result: RunResult) -> int:
    """The documented exit code for a run's result."""
    return exit_codes.exit_code(
        result.status.value, model_error=exit_codes.is_model_error(result.error_type)
    )


def rejected_last(session: Session, result: RunResult) -> ToolResultMessage | None:
    """The rejected call's result when a completed run ended on it: the user said no (live or
    with ``--deny``), the turn stopped, and the model has not answered since. Such a run has
    no answer; it must not look like an empty one (exit code ``REJECTED``). In a batch, the
    rejected call is the one answered as rejected, not the last: the calls after it were
    skipped because of it (``not_run.SKIPPED``)."""
    messages = session.state.messages
    last = messages[-1] if messages else None
    if result.status is not RunStatus.COMPLETED or not isinstance(last, ToolResultMessage):
        return None
    rejected = None
    for message in reversed(messages):
        if not isinstance(message, ToolResultMessage):
            break  # the batch's results begin after its assistant message
        if message.content.startswith(REJECTED_PREFIX):
            rejected = message
    # None when no call was rejected: a model whose answer after the results was empty (not
    # recorded) had been told "you rejected list", exit 5
    return rejected
