"""``rho_agent.permissions``: permission profiles and modes (``rho_domain.permissions``) and
``ToolFactory``."""

from rho_agent.permissions.factory import ToolFactory
from rho_domain.permissions import (
    ApprovalMode,
    DatabaseMode,
    FileWriteMode,
    PermissionProfile,
    ShellMode,
)

__all__ = [
    "ApprovalMode",
    "DatabaseMode",
    "FileWriteMode",
    "PermissionProfile",
    "ShellMode",
    "ToolFactory",
]
