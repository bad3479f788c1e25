"""What a developer session's final answer asks of the continuum loop, and its handoff.

The agent ends a session by answering, each on a line of its own (spaces around ignored):

- ``PROJECT COMPLETE``: the PRD is done; the loop runs the checks and, when they pass, ends.
- ``NEEDS_INPUT``: the agent needs the user; the loop asks and runs the session again with
  the answer.
- ``HANDOFF: <slug>``: the text after that line is the handoff document for the next session,
  saved as ``NNN-<slug>.md``. Without such a line the whole answer is the document.

``PROJECT COMPLETE`` wins over ``NEEDS_INPUT`` when both are present, as in the reference.
"""

from __future__ import annotations

import re
from typing import Literal

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

COMPLETE = "PROJECT COMPLETE"
NEEDS_INPUT = "NEEDS_INPUT"
_HANDOFF = re.compile(r"^\s*HANDOFF:\s*(?P<slug>\S.*?)\s*$", re.MULTILINE)
_UNSAFE = re.compile(r"[^a-z0-9]+")
SLUG_LIMIT = 60
"""Characters a slug keeps, so a handoff's file name stays short."""

Verdict = Literal["complete", "needs_input", "handoff"]


@attrs.frozen(kw_only=True)
class SessionAnswer:
    """A session's final answer, read.

    Attributes:
        verdict: ``complete``, ``needs_input`` or ``handoff`` (anything else).
        slug: The handoff's file-name slug, already safe (``safe_slug``); "" when none given.
        document: The handoff document (the text after the ``HANDOFF:`` line, or all of it).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    verdict: Verdict
    slug: str = ""
    document: str = ""


def _has_line(text: str, word: str) -> bool:
    return any(line.strip() == word for line in text.splitlines())


def read_answer(text: str) -> SessionAnswer:
    """The verdict of ``text``: a line exactly ``PROJECT COMPLETE`` or ``NEEDS_INPUT``, else a
    handoff, its slug from the first ``HANDOFF: <slug>`` line (made safe)."""
    if _has_line(text, COMPLETE):
        return SessionAnswer(verdict="complete", document=text)
    if _has_line(text, NEEDS_INPUT):
        return SessionAnswer(verdict="needs_input", document=text)
    found = _HANDOFF.search(text)
    if found is None:
        return SessionAnswer(verdict="handoff", document=text.strip())
    document = text[found.end() :].strip() or text[: found.start()].strip()
    return SessionAnswer(verdict="handoff", slug=safe_slug(found["slug"]), document=document)


def safe_slug(slug: str) -> str:
    """``slug`` as a file-name part that cannot leave the handoffs directory: lower-case
    letters and digits joined by single dashes, at most ``SLUG_LIMIT`` characters; "" when
    nothing is left (``../../x`` becomes ``x``; ``..`` becomes "")."""
    return _UNSAFE.sub("-", slug.lower()).strip("-")[:SLUG_LIMIT].strip("-")
