"""``rho_agent.core.session``: ``Session`` (``rho_entry.facade``) and what its methods
return or raise."""

from rho_domain.compaction import CompactResult
from rho_domain.ports.approver import ApprovalInterrupt
from rho_domain.run import RunResult
from rho_entry.facade import Session

__all__ = ["ApprovalInterrupt", "CompactResult", "RunResult", "Session"]
