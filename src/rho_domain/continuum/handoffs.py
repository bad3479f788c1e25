"""Handoff documents' names: ``NNN-<slug>.md`` in ``.rho-agent/handoffs/``, numbered on.

A number is never reused: the next one is past both the highest file present and the last
number the run's state recorded, so a resumed run continues the numbering (the reference
started again at 1 and overwrote the first handoffs).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

HANDOFFS_DIR = ".rho-agent/handoffs"
"""Where the handoffs live, relative to the working directory (kept out of git)."""
_NAME = re.compile(r"^(?P<number>\d{3,})-[a-z0-9-]*\.md$")


def handoff_number(name: str) -> int | None:
    """The number of a handoff file's name, None for any other name."""
    found = _NAME.match(name)
    return None if found is None else int(found["number"])


def latest_handoff(names: Iterable[str]) -> str | None:
    """The name of the handoff with the highest number among ``names``, None when none is."""
    numbered = [(number, name) for name in names if (number := handoff_number(name)) is not None]
    return max(numbered)[1] if numbered else None


def next_handoff_number(names: Iterable[str], last_recorded: int) -> int:
    """The number of the next handoff: one past the highest of ``names`` and ``last_recorded``."""
    numbers = [number for name in names if (number := handoff_number(name)) is not None]
    return max([last_recorded, *numbers]) + 1


def handoff_name(number: int, slug: str, session: int) -> str:
    """The file name of handoff ``number``: ``NNN-<slug>.md``, ``NNN-session-<session>.md``
    when the slug is empty. ``slug`` must be ``answers.safe_slug``'s."""
    return f"{number:03d}-{slug or f'session-{session}'}.md"
