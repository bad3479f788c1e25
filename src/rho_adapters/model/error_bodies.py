"""A model server's error, read: an HTTP error status and body, or an error inside a 200
stream, as the typed ``rho_domain`` error the loop can act on (compact on context overflow,
stop on authentication, wait on rate limits).

Every error body shape servers were seen to send is accepted: ``{"error": {...}}``,
``{"error": "text"}``, flat ``{"message", "type", "code"}`` (Cerebras, old vLLM) and Anthropic's
``{"type": "error", "error": {...}}``; what a server says is quoted cut to ``SAID_CHARS``.
Imported with the first error a server sends (``_errors`` names these lazily; the clients
import them where they raise).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from typing import Any

from rho_adapters.model.counts import token_count
from rho_domain.errors import (
    AuthenticationError,
    BadRequest,
    ContextLengthExceeded,
    ModelError,
    ModelHTTPError,
    ModelNotFoundError,
    RateLimited,
    ServerError,
    StreamError,
)

_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "maximum context length",
    "exceed_context_size",
    "context size has been exceeded",
    "available context size",
    "prompt is too long",
    "model_context_window_exceeded",
    "context window",
)
# Numbers in overflow messages: (window, prompt) patterns of OpenAI/vLLM/llama-cpp-python,
# llama-cpp-python's older wording and Anthropic's. Compiled by ``re`` at the first overflow
# read (its cache keeps them), not by every process that imports the model clients.
_WINDOW_PATTERNS = (
    r"maximum context length is (\d+)",
    r"context (?:window|length|size) of (\d+)",
    r"tokens > (\d+) maximum",
)
_PROMPT_PATTERNS = (
    r"\((\d+) in the messages",
    r"requested tokens \((\d+)\)",
    r"prompt is too long: (\d+) tokens",
    r"you requested (\d+) tokens",
)
_NOT_FOUND_MARKERS = ("model_not_found", "does not exist", "not_found_error")
TOO_LARGE = (
    "the request is larger than the server, or a proxy before it, accepts: its request "
    "size limit, such as nginx's client_max_body_size"
)


def error_payload(body: str) -> tuple[str, str]:
    """``(message, code_and_type)`` from an error body of any known shape."""
    try:
        data: Any = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser: as text
        if _is_html(body):
            return html_page(body), ""
        return said(body.strip()), ""
    return _describe(data)


HTML_PAGE_CHARS = 300
"""Characters of an HTML page's text quoted in the error."""


def html_page(body: str) -> str:
    """What an HTML error page says, for an error's message: its text without markup, cut to
    ``HTML_PAGE_CHARS``, named as a page that is no API's error. A web server or a proxy on
    the base URL (Python's ``http.server`` answers a POST with 501) sent it, and its markup
    was quoted whole, up to 1,000 characters of tags, with no word on what to fix."""
    return (
        "the server answered with an HTML page, not an API's error (is the base URL an "
        "OpenAI-compatible or Anthropic API? it usually ends in /v1): "
        f"{_page_text(body)!r}"
    )


def _page_text(body: str) -> str:
    """An HTML page's text without markup, cut to ``HTML_PAGE_CHARS``."""
    text = re.sub(r"<[^>]*>", " ", re.sub(_HIDDEN, " ", body, flags=re.IGNORECASE))
    return said(" ".join(html.unescape(text).split()), HTML_PAGE_CHARS)


# A style sheet or a script is no text. One holding a `<` is left as text: `[^<]*` and `[^>]*`
# cannot backtrack over the page (64 KiB at most, ERROR_BODY_BYTES) as `.*?` could.
_HIDDEN = r"<(script|style)\b[^>]*>[^<]*</\1\s*>"


def _is_html(body: str) -> bool:
    start = body.lstrip()[:15].lower()
    return start.startswith(("<!doctype html", "<html"))


SAID_CHARS = 1_000
"""Characters of a server's error message quoted in the error: enough for any real one."""


def said(text: str, limit: int = SAID_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out. What a server
    says goes into the error's message, hence twice into the trace (its ``error`` and
    ``run_end``), ``--json`` and the terminal: an error event inside a 200 stream is bounded
    only by ``model_answer_bytes`` (64 MiB), and its message was quoted whole."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit:,} more characters not shown]"


def _describe(data: Any) -> tuple[str, str]:
    if not isinstance(data, Mapping):
        return said(str(data)), ""
    inner = data.get("error", data)
    if isinstance(inner, str):
        return said(inner), ""
    if not isinstance(inner, Mapping):
        return said(json.dumps(data)), ""
    message = inner.get("message") or inner.get("detail") or json.dumps(inner)
    tags = " ".join(str(inner.get(k) or "") for k in ("code", "type", "param"))
    failed = inner.get("failed_generation")
    message = said(str(message))
    if failed:  # Groq tool_use_failed: show the model what it produced
        message = f"{message} (failed generation: {said(str(failed), 500)})"
    return message, said(tags.strip(), 200)


def error_from_response(
    status: int, body: str, *, retry_after: float | None = None, partial_text: str = ""
) -> ModelHTTPError:
    """The typed error for an HTTP error response."""
    message, tags = error_payload(body)
    if status == 413 and _is_html(body):  # nginx's own 413 page: a proxy's size limit,
        # not a wrong base URL (what the page's usual hint would have said)
        message = f"the server or a proxy before it answered with a page: {_page_text(body)!r}"
    haystack = f"{message} {tags}".lower()
    text = f"HTTP {status}: {message}" if message else f"HTTP {status}"
    kw: dict[str, Any] = {"status": status, "body": body[:4000], "partial_text": partial_text}
    if any(m in haystack for m in _CONTEXT_MARKERS):
        window, prompt = overflow_numbers(haystack, body)
        return ContextLengthExceeded(text, window=window, prompt_tokens=prompt, **kw)
    if status == 413:  # a request too large for the server or a proxy before it: the
        # history grew past its size limit (nginx's client_max_body_size is 1 MiB), which
        # compacting it answers; as a BadRequest it ended the run, uncompacted
        return ContextLengthExceeded(f"{text} ({TOO_LARGE})", **kw)
    if status in (401, 403):
        return AuthenticationError(text, **kw)
    if status == 404 or any(m in haystack for m in _NOT_FOUND_MARKERS):
        return ModelNotFoundError(text, **kw)
    if status in (429, 498):
        return RateLimited(text, retry_after=retry_after, **kw)
    if status >= 500:
        return ServerError(text, **kw)
    return BadRequest(text, **kw)


def overflow_numbers(message: str, body: str = "") -> tuple[int | None, int | None]:
    """``(window, prompt_tokens)`` from an overflow error, None where it does not say.
    llama.cpp puts them in the body as ``n_ctx`` and ``n_prompt_tokens``."""
    window = _first_number(_WINDOW_PATTERNS, message)
    prompt = _first_number(_PROMPT_PATTERNS, message)
    try:
        data: Any = json.loads(body) if body else None
    except (ValueError, RecursionError):  # not JSON, or nested past the parser
        data = None
    inner = data.get("error") if isinstance(data, Mapping) else None
    if isinstance(inner, Mapping):
        window = token_count(inner.get("n_ctx")) or window
        prompt = token_count(inner.get("n_prompt_tokens")) or prompt
    return window, prompt


def _first_number(patterns: tuple[str, ...], text: str) -> int | None:
    for pattern in patterns:
        if match := re.search(pattern, text):
            return token_count(match.group(1))
    return None


def stream_error(data: Any, *, partial_text: str = "") -> ModelError:
    """The typed error for an error reported inside a 200 stream (any of the three shapes)."""
    message, tags = _describe(data) if data is not None else ("", "")
    message = message or "the server reported an error during streaming"
    haystack = f"{message} {tags}".lower()
    status = None
    if isinstance(data, Mapping) and isinstance(data.get("error"), Mapping):
        code = data["error"].get("status_code") or data["error"].get("code")
        status = code if isinstance(code, int) else None
    if any(m in haystack for m in _CONTEXT_MARKERS):
        window, prompt = overflow_numbers(haystack, json.dumps(data) if data is not None else "")
        return ContextLengthExceeded(
            f"error during streaming: {message}",
            status=status or 400,
            partial_text=partial_text,
            window=window,
            prompt_tokens=prompt,
        )
    suffix = f" [{tags}]" if tags else ""
    return StreamError(f"error during streaming: {message}{suffix}", partial_text=partial_text)
