"""A prompt template's values: its variables, the parsed template and what rendering gives.

Apart from the loaders (``rho_entry.config.templates`` names them lazily): the default system
prompt every run renders is filled from the template's parsed parts, so a run that uses no
template of its own (``--prompt``, ``--system FILE.md``) builds none of these classes.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class TemplateVar:
    """A declared variable: ``default`` is None when it has none."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    name: str
    required: bool = False
    default: str | None = None
    description: str = ""


@attrs.frozen(kw_only=True)
class PromptTemplate:
    """A parsed template. ``body`` becomes the system prompt; ``initial_prompt`` (if any)
    the first user message when no prompt is given."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    source: str
    body: str
    description: str = ""
    vars: Mapping[str, TemplateVar] = attrs.field(factory=dict)
    initial_prompt: str | None = None
    profile: str | None = None
    model: str | None = None


@attrs.frozen(kw_only=True)
class RenderedPrompt:
    """A rendered template: the system prompt, and the first user prompt it carries, if any."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    system_prompt: str
    initial_prompt: str | None = None
