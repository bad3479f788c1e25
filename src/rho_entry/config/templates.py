"""Prompt templates: Markdown with YAML frontmatter and ``{{ name }}`` substitution.

A template file looks like::

    ---
    description: Review a pull request
    vars:
      repo: {required: true}
      focus: security          # shorthand: a default value
    initial_prompt: Review {{ repo }} with a focus on {{ focus }}.
    profile: readonly          # suggested profile (a flag still wins)
    model: gpt-5-mini          # suggested model (a flag still wins)
    ---
    You are reviewing {{ repo }}...

Substitution is deliberately tiny (no jinja2): ``{{ name }}`` is replaced by the variable's
value. A name used in the text that has no value, or a required variable left unset, is a
``ConfigError`` naming the variable and the file. The system prompt an agent runs with (the
default template, a template file, or text) is ``rho_entry.config.system_prompt``'s.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rho_domain.errors import ConfigError
from rho_domain.lazy_names import lazy_names
from rho_entry.config.yaml_text import parse_yaml, read_config_text, read_yaml_file

if TYPE_CHECKING:
    from rho_entry.config.template_values import PromptTemplate, RenderedPrompt

# The values are built where a template of the user's is loaded or rendered; the default
# prompt is rendered from its parts (``template_parts``), without them.
__getattr__ = lazy_names(
    __name__,
    dict.fromkeys(
        ("PromptTemplate", "RenderedPrompt", "TemplateVar"), "rho_entry.config.template_values"
    ),
)

# A declared variable's (required, default, description): a ``TemplateVar``'s fields.
_Var = tuple[bool, str | None, str]

_FRONTMATTER_KEYS = frozenset(
    {"description", "vars", "variables", "initial_prompt", "profile", "model"}
)
_VAR_KEYS = frozenset({"required", "default", "description"})
BUILTIN_DIR = Path(__file__).parent / "prompts"


def load_template(path: str | Path) -> PromptTemplate:
    """Read and parse a template file; a missing or unreadable file is a ConfigError."""
    return parse_template(read_template(path), source=str(path))


def read_template(path: str | Path) -> str:
    """A template file's text; a missing or unreadable file is a ConfigError."""
    return read_config_text(path, where=str(path), what="the prompt template")


def parse_template(text: str, *, source: str = "<template>") -> PromptTemplate:
    """Split frontmatter from body and validate the frontmatter's keys and types."""
    return _parse_template(text, source)


@functools.lru_cache(maxsize=32)
def _parse_template(text: str, source: str) -> PromptTemplate:
    from rho_entry.config.template_values import PromptTemplate, TemplateVar

    meta, body, declared = template_parts(text, source)
    return PromptTemplate(
        source=source,
        body=body,
        description=_optional_str(meta, "description", source) or "",
        vars={
            name: TemplateVar(name=name, required=required, default=default, description=about)
            for name, (required, default, about) in declared.items()
        },
        initial_prompt=_optional_str(meta, "initial_prompt", source),
        profile=_optional_str(meta, "profile", source),
        model=_optional_str(meta, "model", source),
    )


@functools.lru_cache(maxsize=32)
def template_parts(text: str, source: str) -> tuple[dict[str, Any], str, dict[str, _Var]]:
    """(the frontmatter, the body, each declared variable) of a template, validated.

    Every new Agent renders its prompt from a template, most often the same file: parsing its
    YAML frontmatter was ~1 ms of CPU per Agent. The text is the key, so an edited file is
    parsed again (errors are never cached: they propagate)."""
    meta, body = _split_frontmatter(text, source)
    if not body.strip():
        raise ConfigError(f"{source}: the template has no body (the system prompt is empty)")
    unknown = sorted(set(meta) - _FRONTMATTER_KEYS)
    if unknown:
        allowed = ", ".join(sorted(_FRONTMATTER_KEYS))
        raise ConfigError(f"{source}: unknown frontmatter key(s) {unknown}; allowed: {allowed}")
    raw_vars = meta.get("vars", meta.get("variables")) or {}
    if not isinstance(raw_vars, Mapping):
        raise ConfigError(f"{source}: 'vars' must be a mapping of name to default or options")
    # Checked in the order a template's fields are built, whether or not they are read.
    _optional_str(meta, "description", source)
    declared = {str(name): _parse_var(str(name), spec, source) for name, spec in raw_vars.items()}
    for key in ("initial_prompt", "profile", "model"):
        _optional_str(meta, key, source)
    return meta, body, declared


def render_template(template: PromptTemplate, values: Mapping[str, str]) -> RenderedPrompt:
    """Fill the template: given value > declared default > error if required or used."""
    from rho_entry.config.template_values import RenderedPrompt

    declared = {n: (v.required, v.default, v.description) for n, v in template.vars.items()}
    resolved = resolved_values(declared, values, template.source)
    initial = template.initial_prompt
    return RenderedPrompt(
        system_prompt=substitute(template.body, resolved, source=template.source),
        initial_prompt=substitute(initial, resolved, source=template.source) if initial else None,
    )


def resolved_values(
    declared: Mapping[str, _Var], values: Mapping[str, str], source: str
) -> dict[str, str]:
    """Each variable's value: given > declared default > ConfigError if required; then the
    given values no declaration names."""
    resolved: dict[str, str] = {}
    for name, (required, default, _) in declared.items():
        if name in values:
            resolved[name] = values[name]
        elif default is not None:
            resolved[name] = default
        elif required:
            raise ConfigError(
                f"{source}: missing required variable {name!r}; "
                f"pass it with --var {name}=VALUE or in --vars-file"
            )
    resolved.update({k: v for k, v in values.items() if k not in resolved})
    return resolved


def substitute(text: str, values: Mapping[str, str], *, source: str = "<template>") -> str:
    """Replace every ``{{ name }}`` (a name of ASCII letters, digits and ``_``, not starting
    with a digit; blanks inside the braces optional); a name without a value is a ConfigError.
    Other text between double braces stays as written."""
    # String searches, not a regular expression: compiling one cost every process that
    # renders the default system prompt ~0.2 ms.
    _refuse_jinja(text, values, source)
    out: list[str] = []
    done = 0
    start = text.find("{{")
    while start >= 0 and (end := text.find("}}", start + 2)) >= 0:
        name = text[start + 2 : end].strip()
        if not (name.isascii() and name.isidentifier()):
            start = text.find("{{", start + 1)
            continue
        if name not in values:
            raise ConfigError(
                f"{source}: the template uses {{{{ {name} }}}} but no value was given; "
                f"pass it with --var {name}=VALUE or declare a default in the frontmatter"
            )
        out += (text[done:start], values[name])
        done = end + 2
        start = text.find("{{", done)
    out.append(text[done:])
    return "".join(out)


def _refuse_jinja(text: str, values: Mapping[str, str], source: str) -> None:
    """A ConfigError when the text applies Jinja to one of its variables: a tag naming one
    (``{% if name %}``) or an expression on one (``{{ name|upper }}``, ``{{ name.x }}``,
    ``{{ name[0] }}``). The reference implementation rendered templates with Jinja; here such
    a construct was sent to the model as written, the variable's value never shown. Braces
    and tags about no variable (a prompt quoting a Jinja or Actions snippet) stay as written."""
    for opening, closing in (("{%", "%}"), ("{{", "}}")):
        start = text.find(opening)
        while start >= 0 and (end := text.find(closing, start + 2)) >= 0:
            if _on_a_variable(text[start + 2 : end], values, tag=opening == "{%"):
                raise ConfigError(
                    f"{source}: {text[start : end + 2]!r} is Jinja, which rho-agent templates "
                    "do not run (only {{ name }} is replaced by its value); write the text "
                    "it should produce, or pass that text as a variable"
                )
            start = text.find(opening, start + 1)


def _on_a_variable(inside: str, values: Mapping[str, str], *, tag: bool) -> bool:
    """Whether a tag's words name a variable, or an expression starts with a variable's
    name followed by a filter, an attribute or an index."""
    if tag:
        words = "".join(c if c.isascii() and (c.isalnum() or c == "_") else " " for c in inside)
        return any(word in values for word in words.split())
    head = inside.lstrip(" \t\n+-")
    n = 0
    while n < len(head) and head[n].isascii() and (head[n].isalnum() or head[n] == "_"):
        n += 1
    return head[:n] in values and head[n:].lstrip()[:1] in ("|", ".", "[")


def parse_var_assignments(assignments: Sequence[str]) -> dict[str, str]:
    """Parse ``--var key=value`` items (split on the first ``=``, both sides stripped)."""
    values: dict[str, str] = {}
    for item in assignments:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--var {item!r}: expected KEY=VALUE")
        values[key.strip()] = value.strip()
    return values


def load_vars_file(path: str | Path) -> dict[str, str]:
    """A YAML mapping of variable values; scalar values are stringified."""
    data = read_yaml_file(path, where=str(path), what="the vars file")
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: a vars file must be a mapping of name to value")
    out: dict[str, str] = {}
    for key, value in data.items():
        if isinstance(value, Mapping | list):
            raise ConfigError(f"{path}: variable {key!r} must be a scalar, not a collection")
        out[str(key)] = "" if value is None else str(value)
    return out


def frontmatter_of(text: str, source: str) -> tuple[str, str] | None:
    """(the frontmatter's YAML text, the body) of a template that opens with a ``---``
    line; None when it has no frontmatter. ConfigError when the frontmatter is never closed."""
    stripped = text.lstrip()
    if not stripped.startswith("---"):
        return None
    lines = stripped.splitlines(keepends=True)
    if lines[0].strip() != "---":
        return None
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :]).lstrip("\n")
    raise ConfigError(f"{source}: the frontmatter opened with '---' is never closed")


def _split_frontmatter(text: str, source: str) -> tuple[dict[str, Any], str]:
    parts = frontmatter_of(text, source)
    if parts is None:
        return {}, text
    front, body = parts
    meta = parse_yaml(front, invalid=f"{source}: invalid YAML frontmatter") or {}
    if not isinstance(meta, dict):
        raise ConfigError(f"{source}: the frontmatter must be a YAML mapping")
    return meta, body


def _parse_var(name: str, spec: Any, source: str) -> _Var:
    if not isinstance(spec, Mapping):
        # shorthand `name: default`; a bare `name:` (null) declares a required variable
        if spec is None:
            return True, None, ""
        if isinstance(spec, list):
            raise ConfigError(f"{source}: vars.{name}: expected a default value or a mapping")
        return False, str(spec), ""
    unknown = sorted(set(spec) - _VAR_KEYS)
    if unknown:
        raise ConfigError(
            f"{source}: vars.{name}: unknown key(s) {unknown}; allowed: default, description, "
            "required"
        )
    required = spec.get("required")
    if required is not None and not isinstance(required, bool):
        raise ConfigError(f"{source}: vars.{name}.required: expected true or false")
    default = spec.get("default")
    return (
        bool(required) if required is not None else default is None,
        None if default is None else str(default),
        str(spec.get("description") or ""),
    )


def _optional_str(meta: Mapping[str, Any], key: str, source: str) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{source}: {key}: expected a string, got {type(value).__name__}")
    return value
