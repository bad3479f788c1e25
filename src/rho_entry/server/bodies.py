"""Request bodies: JSON objects checked field by field into frozen values.

Every refusal is an ``Invalid`` (422) naming the field: an unknown key, a wrong type, an empty
prompt. Reading the body (``body_read``) enforces the size limit (``BodyTooLarge``, 413)
before parsing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from rho_domain.errors import ConfigError
from rho_domain.json_schema import check_schema
from rho_domain.ports.store import label_problem
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.server.errors import Invalid

Decision = Literal["approve", "deny", "always"]
DECISIONS: tuple[Decision, ...] = ("approve", "deny", "always")
_NAME = re.compile(r"[A-Za-z0-9][\w.-]{0,99}")


@attrs.frozen(kw_only=True)
class CreateSession:
    """``POST /api/sessions``: everything optional; the server's defaults fill the rest."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    prompt: str | None = None
    model: str | None = None
    profile: str | None = None
    working_dir: str | None = None
    template: str | None = None
    vars: Mapping[str, str] = attrs.field(factory=dict)
    max_turns: int | None = None
    labels: Mapping[str, str] = attrs.field(factory=dict)
    output_schema: Mapping[str, Any] | None = None


@attrs.frozen(kw_only=True)
class Chat:
    """``POST /api/sessions/{id}/chat``: the next user message."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    prompt: str


@attrs.frozen(kw_only=True)
class Answer:
    """``POST /api/sessions/{id}/approvals/{call_id}``: approve, deny, or always (approve
    this tool for the rest of the session), about the call whose ``digest`` the answerer was
    shown (``pending_approvals[].digest``; ``rho_domain.call_digest``): required to approve,
    checked when given with a denial (which runs nothing)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    decision: Decision
    digest: str | None = None


@attrs.frozen(kw_only=True)
class CallAnswer:
    """``POST /api/sessions/{id}/approvals``: an ``Answer`` that names its call in the body.
    A call id is the model's text (or an older trace's): ``.`` and ``..`` in a URL's path
    are dot segments a browser resolves away (``%2E%2E`` too), so the dashboard could not
    address such a call by its path; in the body every id is addressable, and reaches no
    path."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    call_id: str
    decision: Decision
    digest: str | None = None


@attrs.frozen(kw_only=True)
class Resume:
    """``POST /api/sessions/{id}/resume``: continue a stored session, optionally with a
    prompt (without one, pending approvals and interrupted tool calls are continued)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    prompt: str | None = None


def parse_create(data: Any) -> CreateSession:
    """Check a ``POST /api/sessions`` body."""
    fields = _object(data, CreateSession)
    template = _opt_str(fields, "template")
    if template is not None and not _NAME.fullmatch(template):  # "name\n" too, with $
        raise Invalid(
            f"template {template!r}: give the name of a template in the server's prompts "
            "directory (letters, digits, '.', '-', '_'), not a path",
            field="template",
        )
    max_turns = fields.get("max_turns")
    if max_turns is not None and (not _is_int(max_turns) or max_turns < 0):
        raise Invalid(
            "max_turns must be a whole number >= 0 (0: the server's limit)", field="max_turns"
        )
    return CreateSession(
        prompt=_opt_text(fields, "prompt"),
        model=_opt_text(fields, "model"),
        profile=_opt_text(fields, "profile"),
        working_dir=_opt_text(fields, "working_dir"),
        template=template,
        vars=_str_map(fields, "vars"),
        max_turns=max_turns,
        labels=_labels(fields),
        output_schema=_schema(fields),
    )


def _schema(fields: Mapping[str, Any]) -> Mapping[str, Any] | None:
    schema = fields.get("output_schema")
    if schema is None:
        return None
    if not isinstance(schema, dict):
        raise Invalid("output_schema must be a JSON Schema object", field="output_schema")
    try:
        check_schema(schema)
    except ConfigError as exc:
        raise Invalid(str(exc), field="output_schema") from None
    return schema


async def checked_create(data: Any) -> CreateSession:
    """``parse_create``, then the output schema's patterns compiled in the ``LineSearcher``'s
    worker (``check_schema`` never compiles one: compiling is not linear, and the server's
    loop is every session's); ``Invalid`` naming the first that does not compile."""
    body = parse_create(data)
    if body.output_schema is None:
        return body
    from rho_domain.loop.output_check import check_patterns
    from rho_entry.wiring import build_line_searcher

    try:
        await check_patterns(body.output_schema, build_line_searcher())
    except ConfigError as exc:
        raise Invalid(str(exc), field="output_schema") from None
    return body


def parse_chat(data: Any) -> Chat:
    """Check a chat body: a non-empty ``prompt``."""
    fields = _object(data, Chat)
    prompt = _opt_text(fields, "prompt")
    if prompt is None:
        raise Invalid("prompt is required: the message to send", field="prompt")
    return Chat(prompt=prompt)


def parse_answer(data: Any) -> Answer:
    """Check an approval body: ``decision`` is approve, deny or always; ``digest`` is the
    pending call's, as shown, and an approval needs it: without it the server could not know
    which call was read (a denial runs nothing, so it may go without)."""
    fields = _object(data, Answer)
    decision = fields.get("decision")
    if decision not in DECISIONS:
        raise Invalid(
            f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}", field="decision"
        )
    digest = _opt_text(fields, "digest")
    if digest is None and decision != "deny":
        raise Invalid(
            "digest is required: the pending call's digest as you were shown it "
            "(GET /api/sessions/{id}: pending_approvals[].digest), so that the answer holds "
            "for that call only",
            field="digest",
        )
    return Answer(decision=decision, digest=digest)


def parse_call_answer(data: Any) -> tuple[str, Answer]:
    """Check a ``CallAnswer`` body: ``call_id`` a non-empty string (the id as
    ``pending_approvals`` shows it), the rest as ``parse_answer`` checks it."""
    fields = _object(data, CallAnswer)
    call_id = fields.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise Invalid(
            "call_id is required: the pending call's id as you were shown it "
            "(GET /api/sessions/{id}: pending_approvals[].call_id)",
            field="call_id",
        )
    return call_id, parse_answer({k: v for k, v in fields.items() if k != "call_id"})


def parse_resume(data: Any) -> Resume:
    """Check a resume body."""
    fields = _object(data, Resume)
    return Resume(prompt=_opt_text(fields, "prompt"))


def _object(data: Any, cls: type[Any]) -> Mapping[str, Any]:
    if not isinstance(data, dict):
        raise Invalid(f"the body must be a JSON object, not {_json_kind(data)}", field="body")
    known = [a.name for a in attrs.fields(cls)]
    for key in data:
        if key not in known:
            raise Invalid(f"unknown field {key!r}; this route takes {', '.join(known)}", field=key)
    return data


def _json_kind(value: Any) -> str:
    """What ``value`` is in the client's words, JSON's (it was Python's: ``not NoneType``,
    ``not list``, ``not dict``, which a client writing JSON does not know)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    kinds = {list: "an array", dict: "an object", str: "a string", int: "a number"}
    return next((k for t, k in kinds.items() if isinstance(value, t)), "a number")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _opt_str(fields: Mapping[str, Any], name: str) -> str | None:
    value = fields.get(name)
    if value is not None and not isinstance(value, str):
        raise Invalid(f"{name} must be a string, not {_json_kind(value)}", field=name)
    return value


def _opt_text(fields: Mapping[str, Any], name: str) -> str | None:
    """A string field where an empty or blank string means "not given" is refused."""
    value = _opt_str(fields, name)
    if value is not None and not value.strip():
        raise Invalid(f"{name} is empty; omit it or give a value", field=name)
    return value


def _labels(fields: Mapping[str, Any]) -> dict[str, str]:
    labels = _str_map(fields, "labels")
    if (problem := label_problem(labels)) is not None:
        raise Invalid(problem, field="labels")
    return labels


def _str_map(fields: Mapping[str, Any], name: str) -> dict[str, str]:
    value = fields.get(name) or {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise Invalid(f"{name} must be an object of string values", field=name)
    return dict(value)
