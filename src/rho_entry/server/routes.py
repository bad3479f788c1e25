"""The API's routes: one table (``API``) that the app mounts and the OpenAPI document reads.

Handlers are thin: they check the request (``bodies``), call the ``SessionHost`` and shape the
answer. Errors are raised as ``ApiError``s and rendered by the app.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rho_entry.server import bodies
from rho_entry.server.body_read import read_json
from rho_entry.server.params import listing_limit, stream_start
from rho_entry.server.route_spec import ApiRoute
from rho_entry.server.sse import StreamOptions

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from rho_entry.server.host import SessionHost


def _host(request: Request) -> SessionHost:
    host: SessionHost = request.app.state.host
    return host


async def _body(request: Request) -> Any:
    return await read_json(
        request.stream(),
        length=request.headers.get("content-length"),
        limit=_host(request).settings.max_body_bytes,
        seconds=_host(request).settings.body_seconds,
    )


def _json(data: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    from rho_entry.server.json_answer import JsonAnswer

    return JsonAnswer(data, status_code=status, headers=dict(headers or {}))


async def list_sessions(request: Request) -> Response:
    """``GET /api/sessions``."""
    return _json({"sessions": await _host(request).list(limit=listing_limit(request))})


async def create_session(request: Request) -> Response:
    """``POST /api/sessions``; with ``Accept: text/event-stream`` the answer is the new
    session's stream until it is idle."""
    host = _host(request)
    streamed = "text/event-stream" in request.headers.get("accept", "")
    # the stream's slot first: refused after the create, a retry would make a second session
    end = host.feeds.admit() if streamed else None
    try:
        session_id = await host.create(await bodies.checked_create(await _body(request)))
    except BaseException:
        if end is not None:
            end()
        raise
    location = {"Location": f"/api/sessions/{session_id}"}
    if end is not None:
        options = _stream_options(request, after=0, until_idle=True)
        return await _stream(host, session_id, options, headers=location, end=end)
    return _json(await host.detail(session_id), 201, location)


async def get_session(request: Request) -> Response:
    """``GET /api/sessions/{id}``."""
    return _json(await _host(request).detail(request.path_params["id"]))


async def chat(request: Request) -> Response:
    """``POST /api/sessions/{id}/chat``."""
    body = bodies.parse_chat(await _body(request))
    await _host(request).chat(request.path_params["id"], body.prompt)
    return await _accepted(request)


async def answer(request: Request) -> Response:
    """``POST /api/sessions/{id}/approvals/{call_id}``."""
    body = bodies.parse_answer(await _body(request))
    params = request.path_params
    await _host(request).answer(params["id"], params["call_id"], body.decision, body.digest)
    return await _accepted(request)


async def answer_named(request: Request) -> Response:
    """``POST /api/sessions/{id}/approvals``: the call named in the body."""
    call_id, body = bodies.parse_call_answer(await _body(request))
    await _host(request).answer(request.path_params["id"], call_id, body.decision, body.digest)
    return await _accepted(request)


async def cancel(request: Request) -> Response:
    """``POST /api/sessions/{id}/cancel``."""
    outcome = await _host(request).cancel(request.path_params["id"])
    return _json({"id": request.path_params["id"], "outcome": outcome}, 202)


async def resume(request: Request) -> Response:
    """``POST /api/sessions/{id}/resume``."""
    body = bodies.parse_resume(await _body(request))
    await _host(request).resume(request.path_params["id"], body.prompt)
    return await _accepted(request)


async def close(request: Request) -> Response:
    """``DELETE /api/sessions/{id}``: stop its run and end its streams; files stay. Its
    stored data unreadable, a 409 before anything closes (``cancel`` reads no trace)."""
    host = _host(request)
    await host.detail(request.path_params["id"])  # closed first, a refusal changed it
    await host.close(request.path_params["id"])
    return _json(await host.detail(request.path_params["id"]))


async def stream(request: Request) -> Response:
    """``GET /api/sessions/{id}/stream``: Server-Sent Events (see ``sse``)."""
    host = _host(request)
    session_id = request.path_params["id"]
    await host.find(session_id)
    await host.feeds.readable(session_id)  # a 409 before the 200, not a cut stream
    options = _stream_options(
        request, after=stream_start(request), until_idle=request.query_params.get("until") == "idle"
    )
    return await _stream(host, session_id, options)


async def profiles(request: Request) -> Response:
    """``GET /api/profiles``: what a create body's ``profile`` may name (the dashboard's
    choice of profile is this list, so it never offers one the server would refuse)."""
    allowed = _host(request).settings.profiles
    return _json({"profiles": list(allowed), "default": allowed[0]})


async def openapi(request: Request) -> Response:
    """``GET /api/openapi.json``."""
    from rho_entry.server.openapi import document

    return _json(document(API))


async def _accepted(request: Request) -> Response:
    return _json(await _host(request).detail(request.path_params["id"]), 202)


def _stream_options(request: Request, *, after: int, until_idle: bool) -> StreamOptions:
    settings = _host(request).settings
    return StreamOptions(
        after=after,
        keepalive=settings.keepalive_seconds,
        poll=settings.poll_seconds,
        until_idle=until_idle,
    )


async def _stream(
    host: SessionHost,
    session_id: str,
    options: StreamOptions,
    headers: Mapping[str, str] | None = None,
    *,
    end: Callable[[], None] | None = None,
) -> Response:
    from rho_entry.server.streams import stream_response  # imports Starlette

    return stream_response(host, session_id, options, headers, end=end)


_SESSION = "/api/sessions/{id}"
_ERRORS = {401: "no or wrong bearer token", 404: "no such session"}
_RUN = {
    409: "a run is in progress, another process drives the session, or its working directory "
    "is gone",
    429: "busy",
}
_BODY = {408: "body too slow", 413: "body too large", 422: "invalid body (names the field)"}
_BAD_AFTER = "bad Last-Event-ID or after"
_STREAMS = "too many event streams open (--max-streams)"
_ANSWERED = {
    202: "answered, run continues",
    401: _ERRORS[401],
    404: "no such session or no such pending call",
    **_RUN,
    409: f"{_RUN[409]}; or the call changed since it was shown (digest)",
    **_BODY,
}

API: tuple[ApiRoute, ...] = (
    ApiRoute(
        method="GET",
        path="/api/sessions",
        handler=list_sessions,
        summary="List sessions (status, liveness, usage, counts), newest first",
        responses={200: "the sessions", 401: _ERRORS[401], 422: "bad limit"},
    ),
    ApiRoute(
        method="POST",
        path="/api/sessions",
        handler=create_session,
        summary="Create a session; with a prompt or template its first run starts",
        body=bodies.CreateSession,
        responses={
            201: "created (Location: its URL)",
            401: _ERRORS[401],
            403: "profile or working_dir not allowed",
            **_BODY,
            429: _RUN[429],
        },
    ),
    ApiRoute(
        method="GET",
        path=_SESSION,
        handler=get_session,
        summary="One session, with its pending approvals and last event id",
        responses={200: "the session", **_ERRORS},
    ),
    ApiRoute(
        method="DELETE",
        path=_SESSION,
        handler=close,
        summary="Close: cancel its run, end its streams (its files stay)",
        responses={200: "closed", **_ERRORS, 409: "unreadable_session: nothing closed"},
    ),
    ApiRoute(
        method="POST",
        path=f"{_SESSION}/chat",
        handler=chat,
        summary="Send the next user message (starts a run)",
        body=bodies.Chat,
        responses={202: "run started", **_ERRORS, 403: "session not allowed", **_RUN, **_BODY},
    ),
    ApiRoute(
        method="GET",
        path=f"{_SESSION}/stream",
        handler=stream,
        summary="Server-Sent Events: id = trace line; Last-Event-ID resumes; ?until=idle",
        responses={
            200: "text/event-stream",
            **_ERRORS,
            409: "its trace past its bound (unreadable_session)",
            422: _BAD_AFTER,
            429: _STREAMS,
        },
        stream=True,
    ),
    ApiRoute(
        method="POST",
        path=f"{_SESSION}/approvals/{{call_id}}",
        slashed_tail=True,
        handler=answer,
        summary="Answer a pending approval (approve, deny, always) and continue the run",
        body=bodies.Answer,
        responses=_ANSWERED,
    ),
    ApiRoute(
        method="POST",
        path=f"{_SESSION}/approvals",
        handler=answer_named,
        summary="Answer a pending approval named in the body (any call id, '..' too)",
        body=bodies.CallAnswer,
        responses=_ANSWERED,
    ),
    ApiRoute(
        method="POST",
        path=f"{_SESSION}/cancel",
        handler=cancel,
        summary="Cancel the run in progress (here or in another process)",
        responses={
            202: "cancelling, cancel requested, or cancelled (a queued durable run)",
            **_ERRORS,
            403: "session not allowed",
            409: "no run in progress",
        },
    ),
    ApiRoute(
        method="POST",
        path=f"{_SESSION}/resume",
        handler=resume,
        summary="Continue a stored session (a prompt, or its pending work)",
        body=bodies.Resume,
        responses={202: "run started", **_ERRORS, 403: "session not allowed", **_RUN, **_BODY},
    ),
    ApiRoute(
        method="GET",
        path="/api/profiles",
        handler=profiles,
        summary="The profiles a new session may ask for; the first is the default",
        responses={200: "the profiles", 401: _ERRORS[401]},
    ),
    ApiRoute(
        method="GET",
        path="/api/openapi.json",
        handler=openapi,
        summary="This API as an OpenAPI 3.1 document",
        responses={200: "the document", 401: _ERRORS[401]},
    ),
)
