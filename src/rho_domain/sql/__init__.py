"""Read-only SQL, layer 1: a lexer per dialect and a deny-by-default statement classifier.

Pure: no driver, no I/O. The database adapters call ``check_read_only`` before every
statement in read-only mode; the database tools call ``classify`` to decide whether a call
needs approval.
"""

from rho_domain.sql.catalog_values import CatalogCalls
from rho_domain.sql.classify import (
    Verdict,
    allowed_functions,
    check_read_only,
    classify,
)
from rho_domain.sql.dialect_values import Dialect
from rho_domain.sql.dialects import DIALECTS, dialect
from rho_domain.sql.lexer import statement_end, tokenize
from rho_domain.sql.statement_kinds import ROW_KINDS
from rho_domain.sql.tokens import Kind, LexRules, Token

__all__ = [
    "DIALECTS",
    "ROW_KINDS",
    "CatalogCalls",
    "Dialect",
    "Kind",
    "LexRules",
    "Token",
    "Verdict",
    "allowed_functions",
    "check_read_only",
    "classify",
    "dialect",
    "statement_end",
    "tokenize",
]
