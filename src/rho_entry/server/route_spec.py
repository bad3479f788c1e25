"""ApiRoute: one route of the API with what its documentation needs (read by ``routes``,
which holds the table, and by ``openapi``, which documents it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

Handler = Callable[["Request"], Awaitable["Response"]]


@attrs.frozen(kw_only=True)
class ApiRoute:
    """A route with what its documentation needs: the body it takes and its answers."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    method: str
    path: str
    handler: Handler
    summary: str
    body: type[Any] | None = None
    responses: Mapping[int, str] = attrs.field(factory=dict)
    stream: bool = False
    slashed_tail: bool = False
    """Whether the path's last parameter may hold ``/``: a call id is the model's text, and
    ``a/b`` (sent as ``a%2Fb``, which the server decodes before routing) matched no route,
    so no client could answer that call."""

    @property
    def routed(self) -> str:
        """The path as Starlette matches it (``path`` is the one documented)."""
        if not self.slashed_tail:
            return self.path
        head, _, name = self.path.rpartition("{")
        return f"{head}{{{name.removesuffix('}')}:path}}"
