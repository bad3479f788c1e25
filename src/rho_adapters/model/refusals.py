"""A response that is not a model's answer, told before its body is read as one: an error
status (the server's message, ``error_body``), a redirect, an HTML page.

Both clients ask ``not_an_answer`` once a request, on the response's head; what it returns
is raised. Before it, a redirect (3xx, under 400) was read as a stream: its body was "a chunk
that is not JSON" for Chat Completions (after a resend without streaming) and "the Anthropic
stream ended without message_stop"; an HTML page with status 200 (a proxy's login or error
page) alike. The client follows no redirect: the API key would go with the request to
wherever the server says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rho_adapters.model.answer_limits import AnswerWatch
from rho_adapters.model.bodies import error_body
from rho_adapters.model.retry import server_delay
from rho_domain.errors import BadRequest, ModelError, ModelProtocolError

if TYPE_CHECKING:
    from rho_adapters.model.core_client import AnyResponse

_HTML = ("text/html", "application/xhtml+xml")
_QUOTED = 300  # characters of a Location or a page quoted in the message


async def not_an_answer(
    response: AnyResponse, watch: AnswerWatch, *, now: float
) -> ModelError | None:
    """The error to raise for ``response`` (to a request to ``watch.url``) when it is not an
    answer, else None. An error's body is read for the watch's idle seconds or what is left
    of the answer's deadline, whichever is shorter (``AnswerWatch.wait_left``: before, it was
    read for the idle seconds past the deadline, each attempt); ``now`` (epoch seconds) dates
    a ``Retry-After``."""
    url, idle = watch.url, watch.wait_left()
    status = response.status_code
    if status >= 400:
        body = await error_body(response, idle=idle)
        from rho_adapters.model.error_bodies import error_from_response

        return error_from_response(status, body, retry_after=server_delay(response.headers, now))
    if status >= 300:
        location = response.headers.get("location", "")
        where = f"to {location[:_QUOTED]!r}" if location else "without a Location"
        return BadRequest(
            f"HTTP {status}: the model server at {url} redirects {where}; redirects are not "
            "followed (the API key would go along): set the base URL to the server meant",
            status=status,
        )
    kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind in _HTML:
        page = await error_body(response, idle=idle, limit=_QUOTED)
        return ModelProtocolError(
            f"the model server at {url} answered {status} with an HTML page, not a model's "
            f"answer (a proxy's or a login page? check the base URL): {page!r}"
        )
    return None
