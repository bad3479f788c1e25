"""The continuum loop's pure parts: reading a session's answer, naming handoffs, the budget
gate, the run's state and the session prompt.

Running the sessions, git, the checks and the state file live in ``rho_entry.continuum``;
everything here works on values (the budget gate is a ``before_model`` hook).
"""

from rho_domain.continuum.answers import SessionAnswer, read_answer, safe_slug
from rho_domain.continuum.handoffs import handoff_name, latest_handoff, next_handoff_number
from rho_domain.continuum.state import ContinuumState

__all__ = [
    "ContinuumState",
    "SessionAnswer",
    "handoff_name",
    "latest_handoff",
    "next_handoff_number",
    "read_answer",
    "safe_slug",
]
