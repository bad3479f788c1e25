"""A request's target (its path and query) read one way only.

Whatever stands in front of the server (a reverse proxy's rules, a log, an audit) reads the
target as it was sent; Starlette routes what the ASGI server decoded. Where the two readings
differ, a rule written for one is not the rule the other applies, so the guard refuses such a
target (400) instead of choosing: a query parameter given twice (Starlette took the last
value, a proxy's rule the first), and an encoded ``/`` (``%2F``) in the path, which uvicorn
decodes before routing: ``/api%2Fsessions%2FID%2Fcancel`` cancelled ID's run through a path
no proxy rule on ``/api/sessions/*/cancel`` matches. A route whose last parameter takes ``/``
(``ApiRoute.slashed_tail``: a call id is the model's text) keeps ``%2F`` there.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import TYPE_CHECKING
from urllib.parse import unquote_to_bytes

from rho_entry.server.errors import ApiError

if TYPE_CHECKING:
    from starlette.types import Scope

_ENCODED_SLASH = re.compile(rb"%2f", re.IGNORECASE)
_SEGMENT = rb"(?:[^/%]|%(?!2[fF]))+"  # one segment without an encoded slash
_PARAMETER = re.compile(r"\{[^}]*\}")


def slashed_tails(prefixes: Collection[str]) -> re.Pattern[bytes] | None:
    """The raw paths in which ``%2F`` may stand: those that open with one of ``prefixes``
    (a route's path up to the parameter that takes ``/``, ``/api/sessions/{id}/approvals/``),
    each parameter of the prefix one segment without ``%2F``. None: nowhere."""
    if not prefixes:
        return None
    alternatives = []
    for prefix in prefixes:
        literal = [re.escape(part.encode()) for part in _PARAMETER.split(prefix)]
        alternatives.append(_SEGMENT.join(literal))
    return re.compile(b"(?:" + b"|".join(alternatives) + b")")


def path_refusal(scope: Scope, tails: re.Pattern[bytes] | None) -> ApiError | None:
    """A path that holds ``%2F`` outside a slashed tail (see the module's docstring)."""
    raw = scope.get("raw_path")
    if not raw:
        return None  # an ASGI server that keeps no raw path: only the decoded one exists
    raw = raw.partition(b"?")[0]  # some clients' transports keep the query in it
    if not _ENCODED_SLASH.search(raw) or (tails is not None and tails.match(raw)):
        return None
    return ApiError(
        f"the path {raw.decode('latin-1')[:200]!r} holds an encoded '/' (%2F): a proxy reads "
        "it as part of a name, this server as a separator. Write '/' as it is (only a call "
        "id, after /approvals/, may hold %2F)",
        field="path",
    )


def query_refusal(scope: Scope) -> ApiError | None:
    """A query that gives a parameter twice (``?limit=1&lim%69t=2`` too; see the module's
    docstring)."""
    seen: set[bytes] = set()
    for pair in scope.get("query_string", b"").split(b"&"):
        name = unquote_to_bytes(pair.partition(b"=")[0].replace(b"+", b" "))
        if name and name in seen:
            shown = name.decode("latin-1")[:40]
            return ApiError(
                f"the query gives {shown!r} twice: give each parameter once", field=shown
            )
        seen.add(name)
    return None
