"""The files an invocation names, for ``cli/launch.prepare``: found, read and checked.

A ``--prompt`` template found by name, a ``--system-prompt`` that is a template file and what
a template suggests; the ``--output-schema`` and ``--config`` files read; an ``--output`` file
that can be written and is none of the run's inputs. Each problem is a ``ConfigError`` that
names the flag and the file: ``read_by`` is the one rule for every flag that names a file
(``--config FILE: ...``), so a loader shared with the library, which knows only the path
(``/x.yaml: cannot read an agent config``), is still named by the flag that gave it.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_entry.config.home import expanded

if TYPE_CHECKING:
    from rho_entry.config.template_values import PromptTemplate


def flagged(flag: str, path: str, said: str) -> str:
    """``said`` (a refusal of the file ``flag`` names as ``path``) starting with
    ``FLAG PATH:``: as it is when it names the flag already; the flag put before the path
    when it starts with the path (as given, expanded or resolved); else both before it."""
    if said.startswith((f"{flag} ", f"{flag}:")):
        return said
    shown = {path}
    with contextlib.suppress(OSError, ConfigError, RuntimeError):  # "~nouser/x", a loop
        shown |= {str(expanded(path)), str(expanded(path).resolve())}
    if any(said.startswith(f"{spelling}:") for spelling in shown):
        return f"{flag} {said}"
    return f"{flag} {path}: {said}"


@contextlib.contextmanager
def read_by(flag: str, path: str) -> Iterator[None]:
    """Around the reading of the file ``flag`` names: its ``ConfigError`` is raised again
    naming the flag and the path first (``flagged``)."""
    try:
        yield
    except ConfigError as exc:
        said = str(exc)
        if said.startswith((f"{flag} ", f"{flag}:")):
            raise
        raise ConfigError(flagged(flag, path, said)) from exc


def find_template(name: str, home: Path) -> Path:
    """The template file ``--prompt NAME`` names: a path, else ``NAME`` or ``NAME.md`` in
    the home's ``prompts/``; ``ConfigError`` naming where it looked."""
    path = expanded(name)
    if path.is_file():
        return path
    for candidate in (home / "prompts" / name, home / "prompts" / f"{name}.md"):
        if candidate.is_file():
            return candidate
    # The reference implementation's -p was the task's text: say where that goes here.
    raise ConfigError(
        f"--prompt {name!r}: no such template file (looked for {path} and "
        f"{home / 'prompts' / (name if name.endswith('.md') else name + '.md')}); "
        '--prompt takes a template, a task\'s text is the argument: rho-agent "TASK"'
    )


def is_template_path(value: str) -> bool:
    """True when ``--system-prompt``'s value names a template file (one line ending in
    ``.md``, or an existing file), not the prompt's text."""
    text = value.strip()
    if "\n" in text:
        return False
    try:
        path = expanded(text)
        # a device, a pipe or a socket is a path too (refused by ``a_regular_file``): taken
        # as the prompt's text, ``--system-prompt /dev/stdin`` ran with the words /dev/stdin
        return text.endswith(".md") or path.is_file() or (path.exists() and not path.is_dir())
    except (OSError, ConfigError):  # literal prompt text: too long, or "~word ..." no path
        return False


def a_regular_file(path: Path) -> Path:
    """``path``, or a ``ConfigError`` when it names a device, a pipe or a socket: a system
    prompt's file is read again as the session is built and when it is resumed, and a
    stream read twice gives its text once (the second reading, nothing or something else)."""
    import stat

    with contextlib.suppress(OSError):  # a missing file: the reading says so
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise ConfigError(
                f"{path}: it is not a regular file (a device, a pipe or a socket), and a "
                "system prompt's file is read again when the session is built and resumed; "
                "give a file"
            )
    return path


def template_suggestions(template: PromptTemplate) -> dict[str, str]:
    """The profile and model a template suggests (flags, config and environment win)."""
    out = {}
    if template.profile:
        out["profile"] = template.profile
    if template.model:
        out["model"] = template.model
    return out


def load_schema(path: str) -> Any:
    """The JSON Schema file of ``--output-schema`` (checked by AgentConfig)."""
    import json

    from rho_entry.config.yaml_text import read_config_text

    text = read_config_text(
        expanded(path), where=f"--output-schema {path}", what="the answer's schema"
    )
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"--output-schema {path}: not a JSON file: {exc}") from None
    except RecursionError:  # json's decoder stops at Python's recursion limit
        raise ConfigError(
            f"--output-schema {path}: nested too deeply to read (arrays or objects inside "
            "each other hundreds deep); no answer schema needs that"
        ) from None


def load_config(path: str) -> AgentConfig:
    """The agent config file of ``--config`` or ``RHO_AGENT_CONFIG``."""
    from rho_entry.config.config_files import load_agent_config

    return load_agent_config(expanded(path))


def check_output(path: Path, *, force: bool, interactive: bool) -> None:
    """``ConfigError`` when ``--output`` cannot be written: the REPL, a directory, an
    existing file without ``--force``, a missing directory."""
    if interactive:
        raise ConfigError("--output needs a task: it writes the final answer of a one-shot run")
    if path.is_dir():
        raise ConfigError(f"--output {path}: is a directory")
    if path.exists() and not force:
        raise ConfigError(f"--output {path}: the file exists; add --force to overwrite it")
    if not path.parent.is_dir():
        raise ConfigError(f"--output {path}: the directory {path.parent} does not exist")


def input_files(args: argparse.Namespace, home: Path, config_path: str | None) -> list[Path]:
    """The files this invocation reads its task, prompts, variables and config from."""
    files = [expanded(config_path)] if config_path else []
    if args.prompt is not None:
        files.append(find_template(args.prompt, home))
    if args.system_prompt is not None and is_template_path(args.system_prompt):
        files.append(expanded(args.system_prompt))
    if args.vars_file:
        files.append(expanded(args.vars_file))
    if args.output_schema:
        files.append(expanded(args.output_schema))
    return files


def refuse_overwriting_an_input(output: Path, inputs: list[Path]) -> None:
    """--force allows replacing an old answer, never a file the run reads (a template)."""
    if not output.exists():
        return
    for source in inputs:
        if source.exists() and output.samefile(source):
            raise ConfigError(
                f"--output {output}: that is also an input of this run ({source}); "
                "choose another output file"
            )
