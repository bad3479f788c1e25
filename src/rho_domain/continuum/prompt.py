"""The first message of every continuum session: the PRD, the last handoff, the checks."""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.continuum.answers import COMPLETE, NEEDS_INPUT

_RULES = f"""\
You are a developer agent working through a product requirements document (PRD), one session
at a time. Each session reads the PRD and the latest handoff, does the next piece of work,
commits it with git, and ends with a handoff for the next session.

End your final answer in one of three ways, on a line of its own:
- `{COMPLETE}` when everything the PRD asks is done and the checks pass;
- `{NEEDS_INPUT}` followed by your question, when you cannot go on without the user;
- `HANDOFF: <short-slug>` followed by the handoff document: what is done, what is left,
  decisions made, and anything the next session must know.
"""


def session_prompt(prd: str, handoff: str | None, checks: Sequence[str], working_dir: str) -> str:
    """The first user message of a session."""
    commands = "\n".join(f"- `{command}`" for command in checks) or "- (none configured)"
    previous = handoff if handoff is not None else "(none: this is the first session)"
    return (
        f"{_RULES}\nWorking directory: {working_dir}\n\n"
        f"Verification commands (all must pass before {COMPLETE}):\n{commands}\n\n"
        f"## PRD\n\n{prd}\n\n## Latest handoff\n\n{previous}\n"
    )


def checks_failed(report: str) -> str:
    """The message that sends the agent back after ``PROJECT COMPLETE`` with a failing check."""
    return (
        f"The checks did not pass, so the project is not complete yet:\n\n{report}\n\n"
        f"Fix what they report, commit, and answer `{COMPLETE}` again when they pass (or end "
        "with a handoff if this session cannot finish it)."
    )
