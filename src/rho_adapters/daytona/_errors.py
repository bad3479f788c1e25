"""The one place where httpx failures and Daytona error bodies become rho_domain errors.

Control plane and toolbox daemon both answer errors as JSON with a ``message`` (the daemon
adds ``statusCode``/``code``/``path``); anything else is shown as text, cut short.

* transport failures (connect, timeout, protocol) -> ``ExecutorError``;
* 401 from anywhere, 403 from the control plane, 429, 5xx, anything unexpected ->
  ``ExecutorError``; a 429, or a 503 with ``Retry-After``, is first asked again
  (``answers.come_back_after``: the request was turned away, not done);
* a toolbox file operation's 404 -> ``ToolError`` ("no such file"), 403 -> ``PermissionDenied``,
  other 4xx -> ``ToolError`` with the daemon's message (the model can correct its call).

Whatever the server says reaches the model, the trace and the log: ``hiding_key`` takes the
API key (and any URL's password) out of every rho error raised by a call.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence

import httpx

from rho_adapters.model.secret_hiding import hide_secrets
from rho_domain.errors import ExecutorError, PermissionDenied, RhoError, ToolError

_MAX_BODY = 300


def error_message(response: httpx.Response, key: str = "") -> str:
    """The server's own message from an error response (JSON ``message``), else its text,
    with ``key`` hidden before it is cut (cut first, a key straddling the cut kept its head)."""
    text = hide_secrets(response.text, key)
    try:
        body = json.loads(response.content)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser: its text
        return text[:_MAX_BODY].strip() or response.reason_phrase
    if isinstance(body, dict):
        message = body.get("message") or body.get("error")
        if isinstance(message, list):  # NestJS validation errors come as a list
            message = "; ".join(str(m) for m in message)
        if message:
            return hide_secrets(str(message), key)[:_MAX_BODY]
    return text[:_MAX_BODY]


def error_for(
    response: httpx.Response, what: str, *, file_path: str | None = None, key: str = ""
) -> RhoError:
    """The rho error for an HTTP error ``response`` to the operation ``what``, ``key`` (the
    API key) hidden in what the server said.

    ``file_path`` (the path as the model wrote it) marks a toolbox file operation, whose 4xx
    answers are the model's to correct rather than machinery failures.
    """
    status = response.status_code
    message = error_message(response, key)
    # 401 is the key, whatever the request: a file operation's too (a key revoked mid-run)
    if status == 401 or (status == 403 and file_path is None):
        return ExecutorError(f"Daytona refused {what} ({status}): {message}; check DAYTONA_API_KEY")
    if file_path is not None and status < 500 and status != 429:
        if status == 404:
            return ToolError(f"no such file or directory: {file_path}")
        if status == 403:
            return PermissionDenied(f"{file_path}: permission denied in the sandbox")
        return ToolError(f"{file_path}: {message}")
    if status == 429:
        return ExecutorError(f"Daytona rate limit reached during {what}: {message}")
    return ExecutorError(f"Daytona failed {what} ({status}): {message}")


def not_running(
    sandbox_id: str, state: str, what: str, error: RhoError, again: str | None = None
) -> ExecutorError:
    """The error for a toolbox request that failed while the sandbox was not started: the
    toolbox proxy's own answers then say "no such file" (an archived sandbox's 404), "Is the
    Sandbox started?" (a 400) or nothing (a 502), and were taken for the model's mistakes.
    ``again``: the sandbox's id once started again, or why it could not be."""
    said = f"Daytona sandbox {sandbox_id} is {state}, so {what} failed ({error}); it was "
    if again == sandbox_id:
        return ExecutorError(
            f"{said}stopped by its auto-stop interval (idle), the dashboard or another client, "
            "and is started again with its files: make the call again"
        )
    return ExecutorError(
        f"{said}stopped, archived or deleted outside this run (by its auto-stop interval, the "
        f"dashboard or another client){'; it ' + again if again else ''}: start a new session, "
        "or start the sandbox again in Daytona"
    )


@contextlib.contextmanager
def map_httpx_errors(what: str, api: str = "") -> Iterator[None]:
    """Re-raise httpx transport exceptions raised inside the block as ``ExecutorError``,
    naming the server asked and where its URL comes from (a wrong ``DAYTONA_API_URL`` was
    said as "Connect call failed ('127.0.0.1', 9)", naming neither the URL nor the variable;
    the toolbox's, another host, is the one the API at ``api`` named), and httpx's refusal of a URL
    (``InvalidURL``, no ``HTTPError``: a sandbox id read from a trace or a toolbox URL a
    server named, too long or with a control character), which before left the adapter as
    httpx's own exception, as did its ``StreamError`` (a stream closed under its reader)."""
    try:
        yield
    except httpx.InvalidURL as exc:
        raise ExecutorError(f"no request could be made for {what}: its URL {exc}") from exc
    except httpx.TimeoutException as exc:
        asked = _asked(exc, api)
        raise ExecutorError(f"Daytona did not answer in time during {what}{asked}") from exc
    except httpx.HTTPError as exc:
        detail = str(exc) or type(exc).__name__
        raise ExecutorError(
            f"connection to Daytona failed during {what}{_asked(exc, api)}: {detail}"
        ) from exc
    except httpx.StreamError as exc:  # a RuntimeError, no HTTPError: it left the adapter bare
        raise ExecutorError(f"connection to Daytona failed during {what}: {exc}") from exc


def _asked(exc: httpx.HTTPError, api: str) -> str:
    """`` (at <server>; ...)`` for a request error, naming the setting of that URL: the
    API's (``DAYTONA_API_URL``), else the toolbox URL the API at ``api`` named."""
    try:
        url = exc.request.url
    except RuntimeError:  # an error without its request
        return ""
    server = f"{url.scheme}://{url.netloc.decode()}"
    if api and not api.lower().startswith(server.lower()):
        return f" (at {server}: the toolbox URL Daytona's API at {api} named)"
    return f" (at {server}; the API's URL is DAYTONA_API_URL)"


@contextlib.contextmanager
def hiding_key(key: str) -> Iterator[None]:
    """Re-raise a rho error raised inside the block with ``key`` (in any form a server echoes
    it, and URL passwords) hidden from its text and from every exception it was raised from
    or during (``__cause__``, ``__context__``: a traceback and a logger's ``exc_info`` print
    them): a gateway's 401 page, a redirect's body or a sandbox's ``errorReason`` may quote
    the Bearer token it was sent."""
    try:
        yield
    except RhoError as exc:
        seen: set[int] = set()
        chained: BaseException | None = exc
        while chained is not None and id(chained) not in seen:
            seen.add(id(chained))
            hidden = tuple(hide_secrets(a, key) if isinstance(a, str) else a for a in chained.args)
            if hidden != chained.args:
                chained.args = hidden
            chained = chained.__cause__ or chained.__context__
        raise


def partly_uploaded(error: RhoError, paths: Sequence[str], written: int) -> ExecutorError:
    """``error`` of a bulk upload whose first ``written`` of ``paths`` were written by
    requests answered before it: they stay in the sandbox (no transaction spans requests),
    named with the ones that were not, so the operator knows what to send again."""
    return ExecutorError(
        f"{error}; {written} of the {len(paths)} files were written before it ({paths[0]} "
        f"to {paths[written - 1]}, in the order given) and stay in the sandbox; the other "
        f"{len(paths) - written}, from {paths[written]}, were not: upload them again"
    )
