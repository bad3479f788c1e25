"""The dashboard: one page of plain HTML, CSS and JavaScript (package data in ``dashboard/``),
served at ``/dashboard`` over the same HTTP API as every client.

No build step and no CDN: the three files are read from the package and served as they are, so
it works offline. The page shows the sessions (status, start, duration, model, profile, model
and tool calls, errors, tokens, cost; sortable, filterable, those that need someone marked) and one
session live (streamed text, tool calls with arguments and results, approvals with approve and
deny buttons, per-call timing as an inline SVG chart). All model and tool output reaches the
page through ``textContent`` only, and the page's Content-Security-Policy forbids inline
script.
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

FILES = {
    "index.html": "text/html; charset=utf-8",
    "dashboard.js": "text/javascript; charset=utf-8",
    "sessions.js": "text/javascript; charset=utf-8",
    "dashboard.css": "text/css; charset=utf-8",
}
# The page and its assets hold no session data, so they load without the token (a browser
# cannot add an Authorization header to a navigation). The page takes the token from its URL's
# fragment (``/dashboard#token=...``, as ``rho-agent serve`` prints it: a fragment never
# reaches the server), or asks for it, and sends it with every API request it makes.
PUBLIC_PATHS = frozenset({"/dashboard", *(f"/dashboard/{name}" for name in FILES)})
HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'"
    ),
}


def asset(name: str) -> bytes:
    """One of the dashboard's files, from the package."""
    return resources.files("rho_entry.server").joinpath("dashboard", name).read_bytes()


async def page(request: Request) -> Response:
    """``GET /dashboard`` and ``GET /dashboard/{name}``: the page and its assets."""
    from starlette.responses import Response

    from rho_entry.server.errors import NotFound

    name = request.path_params.get("name", "index.html")
    if name not in FILES:
        raise NotFound(f"no dashboard file {name!r}; the dashboard is at /dashboard")
    return Response(asset(name), media_type=FILES[name], headers=HEADERS)


def dashboard_routes() -> list[Any]:
    """The dashboard's routes, for ``pages.page_routes``."""
    from starlette.routing import Route

    return [
        Route("/dashboard", page, methods=["GET"]),
        Route("/dashboard/{name}", page, methods=["GET"]),
    ]
