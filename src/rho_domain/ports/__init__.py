"""The ports: every way the domain reaches the outside world.

Each port is a small ``typing.Protocol``. Adapters and fakes subclass them explicitly.
"""

from rho_domain.ports.approver import ApprovalAnswer, ApprovalRequest, Approver
from rho_domain.ports.clock import Clock
from rho_domain.ports.database import Database, QueryResult, TableInfo
from rho_domain.ports.executor import (
    Command,
    CommandResult,
    Executor,
    FileInfo,
    FileKind,
    FileUpload,
)
from rho_domain.ports.line_search import LineSearcher
from rho_domain.ports.model import ChatModel, ContextMeter
from rho_domain.ports.session_control import (
    PendingApproval,
    SessionCatalog,
    SessionControl,
    SessionOperator,
    TraceLine,
)
from rho_domain.ports.signals import Directive, SignalSource
from rho_domain.ports.spreadsheet import Cell, SheetInfo, SpreadsheetReader
from rho_domain.ports.store import SessionInfo, SessionRecord, SessionStore, SignalingStore

__all__ = [
    "ApprovalAnswer",
    "ApprovalRequest",
    "Approver",
    "Cell",
    "ChatModel",
    "Clock",
    "Command",
    "CommandResult",
    "ContextMeter",
    "Database",
    "Directive",
    "Executor",
    "FileInfo",
    "FileKind",
    "FileUpload",
    "LineSearcher",
    "PendingApproval",
    "QueryResult",
    "SessionCatalog",
    "SessionControl",
    "SessionInfo",
    "SessionOperator",
    "SessionRecord",
    "SessionStore",
    "SheetInfo",
    "SignalSource",
    "SignalingStore",
    "SpreadsheetReader",
    "TableInfo",
    "TraceLine",
]
