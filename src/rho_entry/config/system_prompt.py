"""The system prompt an agent runs with: the default template, a template file, or text.

The built-in default system prompt (``prompts/default.md``, beside ``templates.py``) is
rendered with facts about the platform, working directory and profile; a user's
``<config dir>/default.md`` replaces it. ``resolve_system_prompt`` chooses by
``AgentConfig.system_prompt``: empty, the default; one line ending in ``.md``, that template
file rendered with ``config.vars``; anything else, the literal text. Errors are
``ConfigError``s naming the file and the variable (``rho_entry.config.templates``).
"""

from __future__ import annotations

import platform as _platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rho_entry.config.home import expanded
from rho_entry.config.templates import (
    BUILTIN_DIR,
    load_template,
    read_template,
    render_template,
    resolved_values,
    substitute,
    template_parts,
)

if TYPE_CHECKING:
    from rho_domain.config import AgentConfig
    from rho_domain.permissions import PermissionProfile
    from rho_entry.config.template_values import PromptTemplate


def default_prompt_template(config_dir: Path | None) -> PromptTemplate:
    """The user's ``<config dir>/default.md`` if present, else the built-in one."""
    return load_template(_default_prompt_path(config_dir))


def _default_prompt_path(config_dir: Path | None) -> Path:
    if config_dir is not None and (config_dir / "default.md").is_file():
        return config_dir / "default.md"
    return BUILTIN_DIR / "default.md"


def default_system_prompt(
    profile: PermissionProfile,
    *,
    working_dir: str,
    platform: str,
    tools: Sequence[str] = (),
    databases: Sequence[str] = (),
    config_dir: Path | None = None,
    values: Mapping[str, str] | None = None,
) -> str:
    """Render the default system prompt: what the model is, where it runs, what it may do.

    The capability text is computed from the profile's fields, so it is true for every
    profile (a custom one included); ``values`` may add or override variables.
    """
    from rho_entry.config.prompts.facts import profile_facts

    facts = profile_facts(profile, tools=tools, databases=databases)
    facts.update(platform=platform, working_dir=working_dir)
    facts.update(values or {})
    # ``render_template(default_prompt_template(config_dir), facts).system_prompt``, from the
    # template's parts: a run that renders only the default prompt builds no template values.
    path = _default_prompt_path(config_dir)
    source = str(path)
    _, body, declared = template_parts(read_template(path), source)
    return substitute(body, resolved_values(declared, facts, source), source=source)


def resolve_system_prompt(
    config: AgentConfig,
    profile: PermissionProfile,
    working_dir: str,
    config_dir: Path | None,
    *,
    tools: Sequence[str] = (),
) -> str:
    """The system prompt an AgentConfig asks for.

    Empty: the default prompt (user override or built-in) rendered with the platform, working
    directory and profile facts, plus ``config.vars``. Ending in ``.md``: that template file
    rendered with ``config.vars``. Anything else: the literal text.
    """
    text = config.system_prompt
    path = template_path(text)
    if path is not None:
        return render_template(load_template(path), config.vars).system_prompt
    if not text.strip():
        return default_system_prompt(
            profile,
            working_dir=working_dir,
            platform=_platform.system() or "unknown",
            tools=tools,
            databases=tuple(config.databases),
            config_dir=config_dir,
            values=config.vars,
        )
    return text


def template_path(system_prompt: str) -> Path | None:
    """The template file a config's ``system_prompt`` names (one line ending in ``.md``,
    ``~`` expanded), or None for the default (empty) or a literal prompt. A resumed session's
    is read only when the resumer names the same file (``rho_entry.resume_policy``)."""
    text = system_prompt.strip()
    if text.endswith(".md") and "\n" not in text:
        return expanded(text)
    return None
