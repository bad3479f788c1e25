"""The ports: every way the domain reaches the outside world.

Each port is a small ``typing.Protocol``. Adapters and fakes subclass them explicitly.

Names are imported lazily, each from its own module when first asked for: importing one port
module (``rho_domain.ports.store``) runs this package first, and a run that never touches a
database or a workbook should not build their ports' classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rho_domain.lazy_names import lazy_names

_EXPORTS = {
    "ApprovalAnswer": ".approver",
    "ApprovalRequest": ".approver",
    "Approver": ".approver",
    "Clock": ".clock",
    "Database": ".database",
    "QueryResult": ".database",
    "TableInfo": ".database",
    "Command": ".executor",
    "CommandResult": ".executor",
    "Executor": ".executor",
    "FileInfo": ".executor",
    "FileKind": ".executor",
    "FileUpload": ".executor",
    "LineSearcher": ".line_search",
    "ChatModel": ".model",
    "ContextMeter": ".model",
    "PendingApproval": ".session_control",
    "SessionCatalog": ".session_control",
    "SessionControl": ".session_control",
    "SessionOperator": ".session_control",
    "TraceLine": ".session_control",
    "Directive": ".directive",
    "SignalSource": ".signals",
    "Cell": ".spreadsheet",
    "SheetInfo": ".sheets",
    "SpreadsheetReader": ".spreadsheet",
    "SessionInfo": ".session_info",
    "SessionRecord": ".store",
    "SessionStore": ".store",
    "SignalingStore": ".store",
}

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

if TYPE_CHECKING:
    from rho_domain.ports.approver import ApprovalAnswer, ApprovalRequest, Approver
    from rho_domain.ports.clock import Clock
    from rho_domain.ports.database import Database, QueryResult, TableInfo
    from rho_domain.ports.directive import Directive
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
    from rho_domain.ports.session_info import SessionInfo
    from rho_domain.ports.sheets import SheetInfo
    from rho_domain.ports.signals import SignalSource
    from rho_domain.ports.spreadsheet import Cell, SpreadsheetReader
    from rho_domain.ports.store import SessionRecord, SessionStore, SignalingStore


__getattr__ = lazy_names(__name__, _EXPORTS)
