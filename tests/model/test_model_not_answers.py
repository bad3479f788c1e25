"""Responses that are not a model's answer, told by their head: a redirect (3xx) and an HTML
page with status 200 (a proxy's login or error page), for both clients.

Before: both were read as an answer. Chat Completions resent the request without streaming,
then failed on "a chunk that is not JSON" (the page quoted as if the model had sent it);
Anthropic said "the stream ended without message_stop". The redirect was never followed (the
key stays home) and is not now: the error names where it pointed and what to set.
"""

from __future__ import annotations

import asyncio
import contextlib
import random

import httpx
import pytest
from _model_support import DONE, chunk, collect, request

from rho_adapters.fakes.clock import FakeClock
from rho_adapters.model import (
    AnswerLimits,
    AnthropicModel,
    ClientPool,
    ModelEndpoint,
    OpenAIChatModel,
    Timeouts,
)
from rho_adapters.model.retry import RetryPolicy
from rho_domain.errors import (
    AnswerTooLong,
    BadRequest,
    ModelError,
    ModelProtocolError,
    ServerError,
)

KEY = "sk-secret-0123456789abcdef"


async def _refused(response: httpx.Response) -> list[tuple[ModelError, list[str]]]:
    """What each client raises for ``response``, with the URLs it requested."""
    out = []
    for cls in (OpenAIChatModel, AnthropicModel):
        urls: list[str] = []

        def handler(sent: httpx.Request, urls: list[str] = urls) -> httpx.Response:
            urls.append(str(sent.url))
            return response

        model = cls(
            model="m",
            endpoint=ModelEndpoint(
                base_url="http://fake.test/v1", api_key=KEY, retry=RetryPolicy(max_retries=2)
            ),
            http=ClientPool(transport=httpx.MockTransport(handler)),
            clock=FakeClock(),
            rng=random.Random(1),
        )
        with pytest.raises(ModelError) as caught:
            [event async for event in model.stream(request())]
        out.append((caught.value, urls))
    return out


@pytest.mark.parametrize("status", [301, 307, 308])
async def test_a_redirect_is_an_error_naming_where_it_points(status: int) -> None:
    moved = httpx.Response(
        status,
        headers={"location": "http://elsewhere.test/v1/chat/completions"},
        content=b"<html>Moved</html>",
    )
    for error, urls in await _refused(moved):
        assert isinstance(error, BadRequest)
        assert error.status == status
        assert "redirects to 'http://elsewhere.test/v1/chat/completions'" in str(error)
        assert "set the base URL" in str(error)
        assert len(urls) == 1  # neither followed nor retried
        assert all("fake.test" in url for url in urls)


async def test_an_html_page_with_status_200_is_no_answer() -> None:
    page = httpx.Response(
        200,
        headers={"content-type": "text/html; charset=utf-8"},
        content=b"<html><body>Please log in</body></html>",
    )
    for error, urls in await _refused(page):
        assert type(error) is ModelProtocolError
        assert "answered 200 with an HTML page" in str(error)
        assert "Please log in" in str(error)
        assert len(urls) == 1  # no resend without streaming


# Python's http.server, POSTed to: what `--base-url` pointed at a plain web server gets
_HTTP_SERVER_501 = b"""<!DOCTYPE HTML>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <title>Error response</title>
        <style type="text/css">body { font: 12px sans-serif }</style>
    </head>
    <body>
        <h1>Error response</h1>
        <p>Error code: 501</p>
        <p>Message: Unsupported method (&#x27;POST&#x27;).</p>
    </body>
</html>
"""


async def test_an_html_error_page_is_said_as_a_page_and_a_501_is_not_retried() -> None:
    """Before: the page's markup was the message (``HTTP 501: <!DOCTYPE HTML> <html ...``,
    13 lines on the terminal), with no word on what to fix, after three attempts."""
    page = httpx.Response(
        501, headers={"content-type": "text/html;charset=utf-8"}, content=_HTTP_SERVER_501
    )
    for error, urls in await _refused(page):
        said = str(error)
        assert isinstance(error, ServerError)
        assert "HTTP 501: the server answered with an HTML page, not an API's error" in said
        assert "is the base URL an OpenAI-compatible or Anthropic API?" in said
        assert "Error code: 501 Message: Unsupported method ('POST')." in said
        assert "<" not in said
        assert "font:" not in said
        assert len(urls) == 1  # 501: the server does not do POST; waiting will not change it


async def test_a_response_head_past_what_the_client_reads_is_no_answer_and_not_retried() -> None:
    """A server whose response head carries a 200 KB header, over a real socket: h11 stops
    at 100 KiB. Before: "connection failed ... the server answered, then closed the
    connection mid-response; try again", and it was tried again."""
    heads = 0

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal heads
        heads += 1
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nx-big: " + b"a" * 200_000 + b"\r\n\r\n")
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    listener = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    model = OpenAIChatModel(
        model="m",
        endpoint=ModelEndpoint(
            base_url=f"http://127.0.0.1:{port}/v1", retry=RetryPolicy(max_retries=2)
        ),
        clock=FakeClock(),
    )
    try:
        with pytest.raises(ModelProtocolError, match=r"response head .* longer than"):
            await asyncio.wait_for(collect(model, request()), 30)
    finally:
        await model.aclose()
        listener.close()
    assert heads == 1


async def test_a_response_head_sent_a_byte_at_a_time_ends_at_the_answer_deadline() -> None:
    """httpx's read timeout is reset by every byte: a head dripped a byte every 10 ms (600
    of them, then a good answer) went on for as long as the server liked. It is held to
    model_answer_timeout, counted from the request; the dripping server here would take 6 s,
    the deadline is 0.2 s (wait_for: a hang)."""
    dripped = 0

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal dripped
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-slow: ")
        with contextlib.suppress(ConnectionError):
            for _ in range(600):
                writer.write(b"a")
                await writer.drain()
                dripped += 1
                await asyncio.sleep(0.01)
            good = chunk({"content": "late"}) + chunk({}, finish="stop") + DONE
            writer.write(b"\r\ncontent-length: %d\r\n\r\n%s" % (len(good), good))
            await writer.drain()
        writer.close()

    listener = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    model = OpenAIChatModel(
        model="m",
        endpoint=ModelEndpoint(
            base_url=f"http://127.0.0.1:{port}/v1",
            retry=RetryPolicy(max_retries=0),
            timeouts=Timeouts(idle=5),
            limits=AnswerLimits(max_seconds=0.2),
        ),
        clock=FakeClock(),
    )
    try:
        with pytest.raises(AnswerTooLong, match=r"no whole response head in 0.2 s"):
            await asyncio.wait_for(collect(model, request()), 30)
    finally:
        await model.aclose()
        listener.close()
    assert dripped < 600
