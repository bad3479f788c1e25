"""``rho_agent.capabilities``: seed 000's name of ``rho_agent.permissions``
(``CapabilityProfile`` is ``PermissionProfile``)."""

from rho_agent.capabilities.factory import ToolFactory
from rho_domain.permissions import (
    ApprovalMode,
    DatabaseMode,
    FileWriteMode,
    ShellMode,
)
from rho_domain.permissions import PermissionProfile as CapabilityProfile

__all__ = [
    "ApprovalMode",
    "CapabilityProfile",
    "DatabaseMode",
    "FileWriteMode",
    "ShellMode",
    "ToolFactory",
]
