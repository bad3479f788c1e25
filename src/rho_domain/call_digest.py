"""What an approval is bound to: the digest of the call a human was shown.

An approval answered from another process (a server's dashboard or API, ``--resume ID
--approve CALL@DIGEST``, a durable run's queue) is given after the call was read from stored
data: a trace, a store's rows, a feed. Whoever can write that data between the showing and
the running could put another call (or other arguments) under the same id. So each surface
that shows a pending call shows its digest, the answer carries it back, and the side that
runs the call compares it with the call it holds (``check``): a different call is refused,
and stays pending.

The digest is of the call as it will run: the tool's name, the arguments, and where (the
working directory the session runs it in, recorded when the call was asked about: whoever
can write a session's stored config could move an approved relative ``rm -rf build``). The
arguments are digested as they run: a call's raw JSON text,
parsed and written again canonically (keys sorted, no spaces, non-ASCII characters as
JSON escapes), so two spellings of the same arguments agree and any change of a value, a
key or the tool does not. Arguments that are not JSON are digested as their raw text (such a call
never runs: its tool refuses it). 32 hex characters: 128 bits of SHA-256, beyond any
search for a second call with the same digest.

A call of a tool a source serves (an MCP server's) also carries the digest of the tool as
the answerer was shown it (``tool_digest``: its name, description and input schema, recorded
when the call was asked about): a server may rewrite what a tool does under the same name,
and an answer is of the tool it saw.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from rho_domain.errors import CallChanged

DIGEST_LENGTH = 32
"""Hex characters of a digest (128 bits)."""


def call_digest(
    tool: str,
    arguments: str,
    *,
    child: tuple[str, str] | None = None,
    shown: str = "",
    place: str = "",
) -> str:
    """The digest of a call to ``tool`` with ``arguments`` (its raw JSON text). ``child``:
    for a ``delegate`` call whose sub-agent waits, the sub-agent's waiting call (tool,
    arguments), which is what an answer to it approves: both are digested together.
    ``shown``: the ``tool_digest`` of the tool as it was shown when the call was asked about
    (empty for the agent's own tools, whose calls digest as before). ``place``: the working
    directory the call runs in (the session's executor's ``working_dir``; empty where none
    was recorded): the same relative ``rm -rf build`` elsewhere is another call."""
    encoded = _encoded(tool, arguments)
    if child is not None:
        encoded = f"{encoded}\n{_encoded(*child)}"  # one JSON text a line: no ambiguity
    if shown:
        encoded = f"{encoded}\n{json.dumps({'shown': shown}, ensure_ascii=True)}"
    if place:
        encoded = f"{encoded}\n{json.dumps({'place': place}, ensure_ascii=True)}"
    return hashlib.sha256(encoded.encode("ascii")).hexdigest()[:DIGEST_LENGTH]


def tool_digest(name: str, description: str, parameters: Mapping[str, Any]) -> str:
    """The digest of a tool as the model and an answerer are shown it: its name, description
    and input schema (canonical JSON, as ``call_digest`` writes arguments: key order and the
    JSON's spacing do not count), the description's runs of whitespace read as one space
    (a server that lays its text out otherwise from one listing to the next means the same,
    and its user would be asked again at each). Any other change gives another digest, a
    schema written with ``$ref``/``$defs`` instead of inline too: what the model is shown
    changed, and its answerer is asked once. A number is digested by its value, as JSON
    Schema compares numbers: ``1``, ``1.0`` and ``1e0`` are one value, ``-0.0`` is ``0``
    (a server writing its floats otherwise from one listing to the next means the same)."""
    plain = " ".join(description.split())
    shown = {"name": name, "description": plain, "parameters": parameters}
    try:
        text = json.dumps(
            _by_value(shown), sort_keys=True, separators=(",", ":"), ensure_ascii=True
        )
    except (TypeError, ValueError, RecursionError):  # a schema JSON cannot write: as Python
        text = repr(shown)  # writes it, still one text per shape
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_LENGTH]


def _by_value(value: object) -> object:
    """``value`` with each whole finite float as the integer it equals (``1.0`` as ``1``,
    ``-0.0`` as ``0``): JSON Schema reads them as one number. Other floats, NaN and the
    infinities are kept (each writes one way); ``bool`` is not a number here."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {key: _by_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_by_value(item) for item in value]
    return value


def _encoded(tool: str, arguments: str) -> str:
    try:
        value: object = {"tool": tool, "arguments": json.loads(arguments)}
    except (ValueError, RecursionError):  # not JSON (or nested past the parser): the text
        value = {"tool": tool, "raw": arguments}
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    except RecursionError:  # parsed, but nested too deep to write again
        return json.dumps({"tool": tool, "raw": arguments}, ensure_ascii=True)


def check(
    call_id: str,
    tool: str,
    arguments: str,
    digest: str,
    *,
    child: tuple[str, str] | None = None,
    shown: str = "",
    place: str = "",
    asked: str = "",
) -> None:
    """Raise ``CallChanged`` unless ``digest`` is the digest of the call held as ``call_id``
    (``tool`` with ``arguments``; ``child``: its waiting sub-agent's call). The message shows
    the call held now, and its digest when it is shown whole (a call cut short is not offered
    for an answer: it is to be read in full where the surface shows it), so the answerer can
    read it again and answer that one (or deny it). ``place``: where the call runs now;
    ``asked``: where it was asked about (its digest was shown with): an answer to the call
    run there, when they differ, is refused naming both."""
    held = call_digest(tool, arguments, child=child, shown=shown, place=place)
    given = digest.strip().lower()
    elsewhere = call_digest(tool, arguments, child=child, shown=shown, place=asked)
    if given != held and asked != place and given == elsewhere:
        raise CallChanged(
            f"tool call {call_id!r} ({tool} {_cut(arguments)}) was asked about to run in "
            f"{asked}, but the session now runs it in {place}: the directory changed since it "
            "was shown (the session's config.yaml working_dir?); nothing was answered and it "
            "still waits: set working_dir back, or deny it"
        )
    if given != held:
        parts = [(tool, arguments)] if child is None else [(tool, arguments), child]
        whole = all(len(text) <= _SHOWN for _, text in parts)
        shown = f"{tool} {_cut(arguments)}"
        if child is not None:
            shown += f" (its sub-agent's call: {child[0]} {_cut(child[1])})"
        then = (
            f"(digest {held}); nothing was answered and it still waits: read it again, then "
            "answer with that digest or deny it"
            if whole
            else "(cut here); nothing was answered and it still waits: read it in full where "
            "pending calls are shown, then answer with the digest shown there or deny it"
        )
        raise CallChanged(
            f"tool call {call_id!r} changed since it was shown (digest {digest.strip()[:40]!r}); "
            f"it is now {shown} {then}"
        )


_SHOWN = 200  # characters of arguments a refusal shows


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."
