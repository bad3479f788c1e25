"""From parsed flags to a Launch: settings, the task, and how to present the run.

Everything that can be wrong with the invocation is found here, before any model is called:
bad flags, config, profile, templates (a missing required variable names itself and the
file), an --output file that exists without --force, no endpoint configured. The files the
invocation names are checked by ``cli/launch_files.py``, imported only when a flag names one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from rho_domain.config import AgentConfig, Budget
from rho_domain.errors import ConfigError
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.cli.budget_flags import given_budget, with_budget
from rho_entry.cli.presentation import animated, color, preview_lines
from rho_entry.config.home import config_dir, expanded
from rho_entry.config.settings import Settings, check_endpoint, resolve_settings
from rho_entry.config.templates import (
    load_template,
    load_vars_file,
    parse_var_assignments,
    render_template,
)

if TYPE_CHECKING:  # built when their flags are given
    from rho_entry.cli.answers import Answers
    from rho_entry.cli.transfers import Transfers

_SETTING_FLAGS = (
    "model_timeout",
    "model_retries",
    "tool_choice",
    "stream",
    "model",
    "base_url",
    "api_key_env",
    "provider",
    "profile",
    "working_dir",
    "backend",
    "service_tier",
    "reasoning_effort",
    "max_turns",
    "repeat_limit",
    "context_window",
    "auto_approve",
    "system_prompt",
    "shell_mode",
)


@attrs.frozen(kw_only=True)
class Launch:
    """One invocation, validated. ``task`` None means the REPL."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    settings: Settings
    task: str | None
    interactive: bool
    json: bool
    quiet: bool
    verbose: bool
    color: bool
    spinner: bool  # an animated line on stderr (``presentation.animated``)
    preview_lines: int
    output: Path | None
    resume: str | None
    overrides: Mapping[str, Any]  # config fields given as flags (applied over a resumed one)
    # --approve/--deny for a resumed session's waiting calls; None: none of their flags given
    answers: Answers | None = None
    # --upload/--download/--dockerfile/--snapshot; None: none given (a one-shot builds neither
    # value nor imports their modules)
    transfers: Transfers | None = None

    @property
    def answered(self) -> bool:
        """True when ``--approve``/``--deny`` answer at least one call."""
        return self.answers is not None and self.answers.given

    @property
    def builds_sandbox(self) -> bool:
        """True when ``--dockerfile``/``--snapshot`` build a Daytona sandbox."""
        return self.transfers is not None and self.transfers.builds_sandbox


_TRANSFER_FLAGS = ("upload", "download", "dockerfile", "snapshot")
_ANSWER_FLAGS = ("approve", "deny", "reason", "always")


def _transfers(args: argparse.Namespace, flags: dict[str, Any]) -> Transfers | None:
    """The files to upload and download (``--upload``/``--download``) and the sandbox to
    build (``--dockerfile``/``--snapshot``, which choose the Daytona backend in ``flags``);
    None when none of these flags is given."""
    if not any(getattr(args, name, None) for name in _TRANSFER_FLAGS):
        return None
    from rho_entry.cli.transfers import parse_transfers

    transfers = parse_transfers(
        getattr(args, "upload", None) or (),
        getattr(args, "download", None) or (),
        dockerfile=getattr(args, "dockerfile", None),
        snapshot=getattr(args, "snapshot", None),
        force=bool(args.force),
    )
    if transfers.builds_sandbox:
        if flags.get("backend") not in (None, "daytona"):
            raise ConfigError(
                "--dockerfile and --snapshot build a Daytona sandbox: not with --backend local"
            )
        flags["backend"] = "daytona"
    return transfers


def _base_config(args: argparse.Namespace, config_path: str | None) -> AgentConfig | None:
    """The --config (or ``RHO_AGENT_CONFIG``) file's AgentConfig with the --mcp-config servers
    added; None without either. A file named by the variable is refused naming it too: the
    user may not know the environment names one."""
    if not config_path and not getattr(args, "mcp_config", None):
        return None
    from rho_entry.cli.launch_files import load_config, read_by

    try:
        with read_by("--config", args.config) if args.config else contextlib.nullcontext():
            base = load_config(config_path) if config_path else None
    except ConfigError as exc:
        if args.config:
            raise
        raise ConfigError(f"RHO_AGENT_CONFIG: {exc}") from None
    if mcp_config := getattr(args, "mcp_config", None):
        from rho_entry.config.mcp_servers import with_mcp_file

        with read_by("--mcp-config", mcp_config):
            base = with_mcp_file(base or AgentConfig(), expanded(mcp_config))
    return base


def _variables(args: argparse.Namespace) -> dict[str, str]:
    """The template variables of ``--vars-file`` and ``--var`` (which win)."""
    values: dict[str, str] = {}
    if args.vars_file:
        from rho_entry.cli.launch_files import read_by

        with read_by("--vars-file", args.vars_file):
            values = load_vars_file(args.vars_file)
    values.update(parse_var_assignments(args.var))
    return values


def _system_prompt(
    system: str, values: Mapping[str, str]
) -> tuple[str, str | None, dict[str, str]]:
    """--system-prompt's value (a template file's resolved path, or the text as given), its
    template's initial prompt and suggestions (None and none for text)."""
    from rho_entry.cli import launch_files as files

    if not files.is_template_path(system):
        return system, None, {}
    with files.read_by("--system-prompt", system):
        template = load_template(files.a_regular_file(expanded(system)))
        rendered = render_template(template, values)  # fail now on a missing variable
    suggested = files.template_suggestions(template)
    return str(expanded(system).resolve()), rendered.initial_prompt, suggested


def prepare(
    args: argparse.Namespace, env: Mapping[str, str], *, stdin_tty: bool, stderr_tty: bool = False
) -> Launch:
    """Validate the invocation; raises ConfigError with what to fix. ``stdin_tty`` and
    ``stderr_tty`` say whether those streams are terminals."""
    if args.json and args.quiet:
        raise ConfigError("--json and --quiet cannot be combined")
    if args.task is not None and args.prompt is not None:
        raise ConfigError("give the task either as an argument or with --prompt, not both")
    home = config_dir(env)
    values = _variables(args)
    task, suggested = args.task, {}
    if args.prompt is not None:
        from rho_entry.cli.launch_files import find_template, read_by, template_suggestions

        with read_by("--prompt", args.prompt):
            template = load_template(find_template(args.prompt, home))
            task = render_template(template, values).system_prompt.strip()
        suggested = template_suggestions(template)
    system = args.system_prompt
    if system is not None:
        system, initial, more = _system_prompt(system, values)
        if task is None and initial and not args.resume:
            task = initial
        suggested = {**more, **suggested}
    flags = {name: getattr(args, name, None) for name in _SETTING_FLAGS}
    transfers = _transfers(args, flags)
    flags["system_prompt"], flags["vars"] = system, values
    flags["budget"] = budget = given_budget(args)
    with_budget(Budget(), budget)  # a bad limit is named by its flag, now
    if args.output_schema is not None:
        from rho_entry.cli.launch_files import load_schema, read_by

        with read_by("--output-schema", args.output_schema):
            flags["output_schema"] = load_schema(args.output_schema)
    config_path = args.config or env.get("RHO_AGENT_CONFIG")
    base = _base_config(args, config_path)
    settings = resolve_settings(flags, env, base=base, suggested=suggested, base_origin=config_path)
    answers = _answers(args)
    given = answers is not None and answers.given
    # --approve/--deny (or -y) on a resumed session continue its waiting calls, REPL or not
    continuing = given or bool(args.resume and args.auto_approve and not stdin_tty)
    if task is None and not stdin_tty and not given:
        from rho_entry.cli.stdin_task import task_from_stdin

        task = task_from_stdin()
        if task is None and not continuing:  # no terminal to open a REPL on
            raise ConfigError(
                "no task: pass it as an argument, with --prompt, or on stdin"
                + (" (--resume opens the REPL only on a terminal)" if args.resume else "")
            )
    interactive = task is None and not continuing
    if interactive and args.json:
        raise ConfigError("--json needs a task (an argument, --prompt, or stdin)")
    if not args.resume:
        check_endpoint(settings, env)
    output = None
    if args.output:
        from rho_entry.cli import launch_files as files

        with files.read_by("--output", args.output):
            output = expanded(args.output)
    downloads = transfers.downloads if transfers is not None else ()
    if args.force and output is None and not downloads:
        # silently ignored, it would promise what it cannot do
        raise ConfigError(
            "--force goes with --output FILE or --download (it lets them replace a file)"
        )
    if downloads and task is None:
        raise ConfigError("--download needs a task: it copies files once the run is over")
    if output is not None:  # args.output given: ``files`` imported above
        files.check_output(output, force=args.force, interactive=interactive)
        files.refuse_overwriting_an_input(output, files.input_files(args, home, config_path))
    return Launch(
        settings=settings,
        task=task,
        interactive=interactive,
        json=args.json,
        quiet=args.quiet,
        verbose=args.verbose,
        color=color(env, stderr_tty=stderr_tty),
        spinner=animated(env, stderr_tty=stderr_tty),
        preview_lines=preview_lines(args.preview_lines, env),
        output=output,
        resume=_resume_ref(args.resume),
        overrides=_overrides(settings, flags),
        answers=answers,
        transfers=transfers,
    )


def _answers(args: argparse.Namespace) -> Answers | None:
    """What ``--approve``/``--deny``/``--reason``/``--always`` answer (``ConfigError`` when
    they are used wrongly); None when none of them is given."""
    if not any(getattr(args, name, None) for name in _ANSWER_FLAGS):
        return None
    from rho_entry.cli.answers import answers_from_args

    return answers_from_args(args)


def _overrides(settings: Settings, flags: Mapping[str, Any]) -> dict[str, Any]:
    """Fields the user gave as flags, for --resume (the saved config keeps the rest)."""
    config = settings.config
    given = {k for k, source in settings.sources.items() if source == "flag"}
    out = {name: getattr(config, name) for name in given if hasattr(AgentConfig, name)}
    if flags.get("profile") is not None or flags.get("shell_mode") is not None:
        out["profile"] = config.profile
    if flags.get("vars"):
        out["vars"] = config.vars
    if flags.get("budget"):  # only the limits given: the stored session keeps the others
        out["budget"] = dict(flags["budget"])
    if config.mcp_servers:  # a resumed session runs the servers configured now, not stored ones
        out["mcp_servers"] = config.mcp_servers
    return out


def _resume_ref(value: str | None) -> str | None:
    """A session directory path is made absolute; ids, prefixes and ``latest`` pass through."""
    # os.path.isdir: an id past a file name's length raised OSError out of Path.is_dir
    if value is None or value == "latest" or not os.path.isdir(os.path.expanduser(value)):
        return value
    return str(expanded(value).resolve())
