"""How an engine folds a name it looks up: ``catalog_name`` and ``relation_name``.

``catalog_name`` is the name the engine finds for an identifier token (ASCII-only case
folding per ``Dialect.folding``, PostgreSQL's 63-byte truncation); ``relation_name`` adds the
letters outside ASCII a server folds to ASCII where it looks a relation or a setting up, for
refusals only. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.sql.dialect_values import Dialect
from rho_domain.sql.tokens import Kind, Token


def catalog_name(token: Token, d: Dialect) -> str:
    """The name the engine looks up for an identifier token (ASCII-only case folding)."""
    if token.kind is Kind.QUOTED:
        name = ascii_lower(token.text) if d.folding == "insensitive" else token.text
    elif d.folding == "upper":
        name = _ascii_upper(token.raw or token.text)
    else:
        name = ascii_lower(token.raw or token.text)
    if d.max_identifier and len(name.encode()) > d.max_identifier:
        name = name.encode()[: d.max_identifier].decode(errors="ignore")
    return name


def relation_name(token: Token, d: Dialect) -> str:
    """The name ``token`` may stand for where a relation or a setting is looked up by name,
    to be refused: ``catalog_name``, and where names are compared without case, the two
    letters outside ASCII whose lower case is ASCII, as MariaDB and MySQL compare
    information_schema's names (utf8mb3's lower case: information_schema.PROCESSLİST is
    PROCESSLIST, GLOBAL_VARİABLES the settings' list); where an unquoted name is upper-cased,
    the two whose upper case is ASCII (Oracle upper-cases by its character set: sys.u<long s>er$
    may be SYS.USER$; not tried on a server, refused on the safe side). Only for refusals: a
    function's name keeps ``catalog_name``, so nothing is allowed by a folded spelling."""
    name = catalog_name(token, d)
    if d.folding == "insensitive":
        return name.translate(_SERVER_LOWER)
    if d.folding == "upper" and token.kind is not Kind.QUOTED:
        return name.translate(_UNICODE_UPPER)
    return name


def qualified_names(stmt: Sequence[Token], i: int, d: Dialect) -> tuple[str, ...]:
    """``schema.name`` (each ``relation_name``) where ``stmt[i]`` follows ``schema.``, the key
    of what an adapter read by its schema too (MariaDB's ``sys.session``, which an
    application's table ``session`` is not); nothing elsewhere."""
    if i < 2 or not stmt[i - 1].is_punct(".") or stmt[i - 2].kind not in (Kind.WORD, Kind.QUOTED):
        return ()
    return (f"{relation_name(stmt[i - 2], d)}.{relation_name(stmt[i], d)}",)


def lookup_names(name: str, d: Dialect) -> frozenset[str]:
    """Every name the check may look the catalog object ``name`` (as the server lists it)
    up by, for an adapter to key what it read by (``CatalogCalls``): ``relation_name`` of it
    written quoted or bare, and Python's lower case. A view ``Vİew`` keyed by Python's
    ``vi̇ew`` alone was never found under the check's ``view``, and ran unjudged."""
    quoted, bare = Token(Kind.QUOTED, name), Token(Kind.WORD, name.upper(), raw=name)
    return frozenset({relation_name(quoted, d), relation_name(bare, d), name.lower()})


# U+0130 (dotted capital I) and U+212A (Kelvin sign): the only letters of the Basic
# Multilingual Plane that MariaDB 10.11's LOWER() makes ASCII (all 65,408 asked); U+0131
# (dotless i) and U+017F (long s), the only ones whose Unicode upper case is ASCII.
_SERVER_LOWER = {0x130: "i", 0x212A: "k"}
_UNICODE_UPPER = {0x131: "I", 0x17F: "S"}
_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_UPPER = {c + 32: c for c in range(ord("A"), ord("Z") + 1)}


def ascii_lower(text: str) -> str:
    """``text`` with A-Z lowered and nothing else: the engines' folding of names."""
    return text.translate(_LOWER)


def _ascii_upper(text: str) -> str:
    return text.translate(_UPPER)
