"""``rho_agent.core``: the documents' core abstractions (agent, session, state, config,
events, session store), the same objects as ``rho_agent``'s."""

from rho_agent.core.agent import Agent
from rho_agent.core.config import AgentConfig
from rho_agent.core.events import AgentEvent
from rho_agent.core.session import ApprovalInterrupt, CompactResult, RunResult, Session
from rho_agent.core.session_store import SessionStore
from rho_agent.core.state import State

__all__ = [
    "Agent",
    "AgentConfig",
    "AgentEvent",
    "ApprovalInterrupt",
    "CompactResult",
    "RunResult",
    "Session",
    "SessionStore",
    "State",
]
