"""The one error tree of rho-agent.

Every exception that crosses a package boundary is a ``RhoError``. Adapters translate foreign
exceptions (httpx, drivers, OSError) in one place each and re-raise with ``from exc``.

::

    RhoError
    ├── ConfigError                  bad config, profile, template or flag; says what to fix
    │   ├── MissingExtra             an optional dependency is not installed; names the extra
    │   └── StoredConfigInvalid      a session's stored config is not one this version reads
    ├── ModelError                   the model endpoint failed; keeps ``partial_text``
    │   ├── ModelHTTPError           an HTTP status from the server (``status``, ``body``)
    │   │   ├── AuthenticationError  401/403
    │   │   ├── ModelNotFoundError   404, or "model does not exist"
    │   │   ├── ContextLengthExceeded
    │   │   ├── RateLimited          429 (``retry_after`` seconds when known)
    │   │   ├── ServerError          5xx
    │   │   └── BadRequest           other 4xx, with the server's message
    │   ├── ContextFull              the conversation cannot be made to fit the window
    │   ├── CompactionRejected       a summary that would not shrink the context
    │   ├── ModelConnectionError     could not connect, or the connection dropped
    │   ├── ModelTimeout             connect or per-chunk idle timeout
    │   ├── AnswerTooLong            one answer passed its bytes, seconds or tool calls
    │   └── ModelProtocolError       the stream broke the protocol
    │       ├── TruncatedStream      EOF without finish_reason or [DONE]; empty 200 stream
    │       └── StreamError          the server reported an error mid-stream
    ├── ToolError                    a tool could not do what was asked (becomes a tool result)
    │   ├── ToolArgumentsError       arguments missing, mistyped or not JSON
    │   ├── PermissionDenied         the profile or the workspace forbids it
    │   │   ├── PathOutsideWorkspace
    │   │   ├── SensitivePath
    │   │   ├── CommandRefused       restricted shell refused a command line
    │   │   └── StatementRefused     read-only SQL refused a statement
    │   └── McpError                 an MCP server failed a call; names the server
    │       ├── McpTimeout           no answer within a timeout; names the setting
    │       ├── McpSessionExpired    an HTTP server forgot our session (404): start anew
    │       └── McpProtocolError     the server broke JSON-RPC or MCP
    ├── OutputInvalid                the final answer failed the output schema, corrected once
    ├── ExecutorError                the executor failed (not the command: the machinery)
    │   └── PlacementFailed          its place (a sandbox) could not be made: every call
    │       │                        that needed it failed; a run that answered on such
    │       │                        calls ends ``error``
    │       └── PlacementRefused     its place cannot be made as configured (a build that
    │                                failed): asking again fails alike
    ├── DatabaseError                a driver or connection failure
    ├── HookFailed                   a before-model hook failed or was late: no model call
    ├── ApproverFailed               an approver raised: the call waits for a decision
    ├── ExitRaised                   code plugged into the loop raised SystemExit or the like
    ├── WorkspaceGitError            git failed in a continuum run's workspace; names the command
    ├── StoreError                   the session store failed
    │   ├── SessionNotFound
    │   ├── SessionLocked            another process drives that session
    │   ├── TraceFormatError         a trace line of an unknown format version, or malformed
    │   ├── StoredPastBound          a stored file or row past its bound: not read
    │   ├── ReplayDiverged           a durable run executed again did not retrace its trace
    │   └── RunSuperseded            another execution of a durable run owns it now
    └── SessionStateError            an operation that the session's state does not allow
        ├── CallChanged              an approval's digest is not the call held under its id
        ├── RuntimeFull              a runtime's queue is full (``when_full="raise"``)
        └── RuntimeClosed            a runtime is closing or closed, or was never started

Control flow is not an error: cancellation, pause and "needs approval" are statuses and events.
"""

from __future__ import annotations

from typing import Literal


class RhoError(Exception):
    """Root of every rho-agent error."""


class ConfigError(RhoError):
    """Invalid configuration; the message names the source, the key and what was expected."""


class MissingExtra(ConfigError):
    """A missing optional dependency; the message names its extra and ``install``'s command
    (``rho_adapters.extras.missing_extra`` gives the command for this copy)."""

    def __init__(self, package: str, extra: str, purpose: str = "", *, install: str = "") -> None:
        what = f" for {purpose}" if purpose else ""
        command = install or f"pip install 'rho-agent[{extra}]'"  # "": the package index's
        super().__init__(f"{package} is not installed{what}: install it with `{command}`")
        self.package = package
        self.extra = extra


class StoredConfigInvalid(ConfigError):
    """A session's stored config (its config.yaml, a shared store's row) is not one this
    version reads: stored data, not the caller's request; the message names the file or row
    and the key. A server answers it 409 ``unreadable_session``, as other stored data it
    cannot read, where a GET of the session was a 422 'invalid', as if the request were."""


class ModelError(RhoError):
    """The model endpoint failed. ``partial_text`` holds text streamed before the failure."""

    def __init__(self, message: str, *, partial_text: str = "") -> None:
        super().__init__(message)
        self.partial_text = partial_text


class ModelHTTPError(ModelError):
    """The server answered with an HTTP error status."""

    def __init__(
        self, message: str, *, status: int, body: str = "", partial_text: str = ""
    ) -> None:
        super().__init__(message, partial_text=partial_text)
        self.status = status
        self.body = body


class AuthenticationError(ModelHTTPError):
    """The API key is missing, wrong or not allowed to use this model."""


class ModelNotFoundError(ModelHTTPError):
    """The endpoint does not serve the requested model."""


class ContextLengthExceeded(ModelHTTPError):
    """The request is longer than the model's context window. ``window`` and
    ``prompt_tokens`` are the server's numbers when its message gave them."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        body: str = "",
        partial_text: str = "",
        window: int | None = None,
        prompt_tokens: int | None = None,
    ) -> None:
        super().__init__(message, status=status, body=body, partial_text=partial_text)
        self.window = window
        self.prompt_tokens = prompt_tokens


class RateLimited(ModelHTTPError):
    """Too many requests; ``retry_after`` is the server's hint in seconds, when it gave one."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 429,
        body: str = "",
        retry_after: float | None = None,
        partial_text: str = "",
    ) -> None:
        super().__init__(message, status=status, body=body, partial_text=partial_text)
        self.retry_after = retry_after


class ServerError(ModelHTTPError):
    """The server failed (5xx)."""


class BadRequest(ModelHTTPError):
    """The server rejected the request; the message carries the server's explanation."""


class ContextFull(ModelError):
    """The conversation does not fit the context window even after compaction; the message
    names the window and how to continue (compact, clear, or a larger window)."""


class CompactionRejected(ModelError):
    """A compaction was not applied because it would not make the context smaller.

    ``tokens_before`` and ``tokens_after`` are the estimates compared (0 when unknown)."""

    def __init__(self, message: str, *, tokens_before: int = 0, tokens_after: int = 0) -> None:
        super().__init__(message)
        self.tokens_before = tokens_before
        self.tokens_after = tokens_after


class ModelConnectionError(ModelError):
    """The connection could not be made or was lost."""


class ModelTimeout(ModelError):
    """No connection or no chunk within the configured timeout."""


class AnswerTooLong(ModelError):
    """One answer passed a bound of the model client (its size in bytes, its duration, its
    tool calls); the message names the endpoint, the bound and the setting that raises it.
    Not retried: the same request would likely get the same answer."""


class ModelProtocolError(ModelError):
    """The stream violated the protocol."""


class TruncatedStream(ModelProtocolError):
    """The stream ended without a finish_reason or [DONE]."""


class StreamError(ModelProtocolError):
    """The server reported an error inside the stream."""


class ToolError(RhoError):
    """A tool could not do what was asked. The registry turns it into a tool result."""


class ToolArgumentsError(ToolError):
    """The arguments are missing, of the wrong type, or not JSON."""


class PermissionDenied(ToolError):
    """The profile or the workspace forbids the operation."""


class PathOutsideWorkspace(PermissionDenied):
    """A path resolves outside the working directory (or the extra read roots)."""


class SensitivePath(PermissionDenied):
    """A path names a secret or agent configuration that tools must not touch."""


class CommandRefused(PermissionDenied):
    """The restricted shell refused a command line; the message names the reason."""


class StatementRefused(PermissionDenied):
    """Read-only SQL refused a statement; the message names the reason. ``by`` names the
    wall that refused it: ``"check"`` (the statement check; nothing reached the server) or
    ``"engine"`` (the database's read-only transaction, authorizer or privileges)."""

    def __init__(self, message: str, *, by: Literal["check", "engine"] = "check") -> None:
        super().__init__(message)
        self.by = by


class McpError(ToolError):
    """An MCP server could not serve a call (not started, exited, answered an error). The
    message names the server; ``server`` is its name."""

    def __init__(self, message: str, *, server: str = "") -> None:
        super().__init__(message)
        self.server = server


class McpTimeout(McpError):
    """An MCP server gave no answer in time; the message names the setting to raise."""


class McpSessionExpired(McpError):
    """A Streamable HTTP server answered 404 to a request carrying our session id: it
    forgot the session (restarted, or expired it); the client must initialize again."""


class McpProtocolError(McpError):
    """An MCP server sent something that is not JSON-RPC 2.0 or not MCP."""


class ExecutorError(RhoError):
    """The executor's machinery failed (not the command it ran)."""


class PlacementFailed(ExecutorError):
    """The place the executor runs in (a sandbox) could not be made: its API unreachable,
    the key refused, the build failed. Each call that needed it failed with this; a run
    whose place was never made ends ``error`` though the model answered (``run_boundaries``),
    so a caller can tell it from a run that did its work."""


class PlacementRefused(PlacementFailed):
    """The place the executor runs in cannot be made as configured: a sandbox whose image
    build failed. The same build would fail the same way, so it is not asked for again (a
    creation the API refused is not one: Daytona refuses so for what passes or is fixed
    outside the run too, no runner free, a snapshot still pulled)."""


class DatabaseError(RhoError):
    """A database driver or connection failed."""


class HookFailed(RhoError):
    """A before-model hook raised, answered a wrong type or missed its deadline, so the model
    call it guarded was not made (fail closed; ``rho_domain.hooks``). The run ends ``error``;
    the session is intact and a new run asks the hook again."""


class ApproverFailed(RhoError):
    """An approver (``approver=``, ``approval_callback``) raised while deciding on a call. The
    run ends ``error`` naming the approver and the call; the call was not run and still waits
    for a decision (``resolve_approval``, or a resume that asks again)."""


class ExitRaised(RhoError):
    """A tool handler, hook, approver, event listener, tool source or model raised
    ``SystemExit``, ``GeneratorExit``, a ``CancelledError`` although nothing cancelled it, or
    another ``BaseException`` that is no stop (``rho_domain.plugged``): it is that code's
    failure, handled as its ``Exception`` would be, not the process's end nor a cancel."""


class StoreError(RhoError):
    """The session store failed."""


class SessionNotFound(StoreError):
    """No session with that id (or prefix) exists."""


class SessionLocked(StoreError):
    """Another live process is driving this session."""


class StoredPastBound(StoreError):
    """A session's stored file or row holds more than rho-agent writes there (a trace past
    ``TRACE_BYTES``, a config, a directive log...): not read; the message names it and says
    to remove or restore it."""


class ReplayDiverged(StoreError):
    """A durable run executed again (its worker died) did not emit the events its trace
    recorded, in order: the trace is the truth, so the run stops rather than write a second
    history over the first."""


class RunSuperseded(StoreError):
    """Another execution of this durable run owns it now (its worker was taken for dead and
    the run handed over while it still ran): this execution stops, and writes nothing more to
    the trace, which the owner retraces and continues."""


class TraceFormatError(StoreError):
    """A trace line has a format version this build cannot read."""


class WorkspaceGitError(RhoError):
    """Git failed in a continuum run's workspace (switching a branch, a commit): the run
    stops, and the message names the git command and what git said."""


class SessionStateError(RhoError):
    """The operation is not valid in the session's current state."""


class CallChanged(SessionStateError):
    """An answer's digest (``rho_domain.call_digest``) is not that of the call the session
    holds under its id: the call shown to the answerer is not the one that would run. Nothing
    is answered; the call still waits."""


class RuntimeFull(SessionStateError):
    """A runtime refused a dispatch: every run slot and queue place is taken."""


class RuntimeClosed(SessionStateError):
    """A runtime refused a dispatch: it was not started, or it is closing or closed."""


class OutputInvalid(RhoError):
    """The final answer is not JSON or does not match ``AgentConfig.output_schema``, even
    after one corrective retry; the message names the failing path (``$.items[0].price``)."""
