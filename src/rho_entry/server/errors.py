"""The HTTP errors of the server, in the one error tree (``RhoError``).

Each carries its status code, a stable ``code`` word and, for a bad body, the ``field`` at
fault. The app turns every one into ``{"error": {"code", "message", "field"?}}`` with that
status (``Retry-After`` on 429). Errors of the domain and the store are mapped by
``status_of``.
"""

from __future__ import annotations

from rho_domain.errors import (
    ConfigError,
    RhoError,
    SessionLocked,
    SessionNotFound,
    SessionStateError,
    StoredConfigInvalid,
    StoredPastBound,
    TraceFormatError,
)
from rho_domain.plugged import described
from rho_domain.run import spelled_whole


class ApiError(RhoError):
    """An answer other than success, with its HTTP status."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field

    def body(self) -> dict[str, object]:
        """``{"error": {...}}`` as sent to the client."""
        error: dict[str, object] = {"code": self.code, "message": str(self)}
        if self.field is not None:
            error["field"] = self.field
        return {"error": error}


class Unauthorized(ApiError):
    """No bearer token, or the wrong one."""

    status = 401
    code = "unauthorized"


class Forbidden(ApiError):
    """Asked for something the server does not allow (a profile, a working directory)."""

    status = 403
    code = "forbidden"


class CrossOrigin(ApiError):
    """A state-changing request sent by a page of another origin (``Origin``,
    ``Sec-Fetch-Site``): what a cross-site request forgery looks like."""

    status = 403
    code = "cross_origin"


class NotFound(ApiError):
    """No such session, pending call or route."""

    status = 404
    code = "not_found"


class MethodNotAllowed(ApiError):
    """The route exists, but not with this method."""

    status = 405
    code = "method_not_allowed"


class SlowBody(ApiError):
    """The request body did not arrive within the server's time for it."""

    status = 408
    code = "request_timeout"


class Conflict(ApiError):
    """The session is busy (a run in progress, or another process drives it)."""

    status = 409
    code = "conflict"


class BodyTooLarge(ApiError):
    """The request body is over the limit."""

    status = 413
    code = "body_too_large"


class UnsupportedMediaType(ApiError):
    """A body that is not declared ``Content-Type: application/json``."""

    status = 415
    code = "unsupported_media_type"


class WrongHost(ApiError):
    """The ``Host`` header is not a name this server answers to (DNS rebinding, or a
    reverse proxy that was not allowed with ``--allow-host``)."""

    status = 421
    code = "wrong_host"


class UnreadableSession(ApiError):
    """The session's stored data cannot be read: a trace line malformed or of a newer format,
    or a file or row past its bound. The message names the file (or rows), the line, and
    what to do; the server did not fail."""

    status = 409
    code = "unreadable_session"

    @classmethod
    def of_summary(cls, session_id: str) -> UnreadableSession:
        """The session's summary (meta.json, or its row's meta) cannot be read: before, the
        server answered 404 as if the session did not exist."""
        return cls(
            f"session {session_id}'s summary cannot be read (its meta.json, or its row's meta "
            "in a shared store: missing, not JSON, or past its bound); "
            f"`rho-agent --resume {spelled_whole(session_id)}` rebuilds it from the trace"
        )


class Invalid(ApiError):
    """The request body is not what the route takes; ``field`` names the culprit."""

    status = 422
    code = "invalid"


class Busy(ApiError):
    """Every run slot is taken; try again after ``retry_after`` seconds."""

    status = 429
    code = "busy"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Internal(ApiError):
    """Something failed inside the server (its message names what)."""

    status = 500
    code = "internal"


def as_api_error(exc: RhoError) -> ApiError:
    """The API error for a domain or store error (404, 409, 422), else a 500."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, SessionNotFound):
        return NotFound(str(exc))
    if isinstance(exc, SessionLocked | SessionStateError):
        return Conflict(str(exc))
    if isinstance(exc, StoredConfigInvalid):  # stored data, not the request
        return UnreadableSession(str(exc))
    if isinstance(exc, ConfigError):
        return Invalid(str(exc))
    if isinstance(exc, TraceFormatError | StoredPastBound):  # stored data, not the server
        return UnreadableSession(str(exc))
    return Internal(described(exc))
