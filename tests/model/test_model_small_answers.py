"""What a server says about itself (``/props``, ``/v1/models``, a token count), read bounded.

Before: the probe and ``count_tokens`` read these with ``client.get``/``post`` and
``response.json()``: a ``/props`` nested 100,000 deep raised RecursionError out of the model
call (a traceback, not an error), and a 200 KB gzip body that inflates to 200 MB took 1 GB
(tracemalloc peak). Now each is at most 1 MiB decoded, read 64 KiB a layer a step, and a
body that is not readable JSON is no fact: the call goes on as for a server that says nothing.
"""

from __future__ import annotations

import gzip
import random
import tracemalloc

import httpx
from _model_support import DONE, chunk, request, text_of
from test_model_answer_limits import _Pieces

from rho_adapters.fakes.clock import FakeClock
from rho_adapters.model import PROVIDERS, ClientPool, ModelEndpoint, OpenAIChatModel
from rho_adapters.model.retry import RetryPolicy

DEEP = b"[" * 100_000 + b"]" * 100_000
JSON = {"content-type": "application/json"}


def _model(about_itself: bytes, encoding: str, asked: list[str]) -> OpenAIChatModel:
    """A local server (so it is probed) whose GETs and token counts answer ``about_itself``."""

    def handler(sent: httpx.Request) -> httpx.Response:
        asked.append(sent.url.path)
        if sent.method == "GET" or sent.url.path.endswith("/tokenize"):
            headers = {**JSON, "content-encoding": encoding} if encoding else JSON
            return httpx.Response(200, headers=headers, stream=_Pieces([about_itself]))
        answer = chunk({"content": "hi"}) + chunk({}, finish="stop") + DONE
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=answer)

    return OpenAIChatModel(
        model="m",
        endpoint=ModelEndpoint(
            base_url="http://localhost:8080/v1", retry=RetryPolicy(max_retries=0)
        ),
        provider=PROVIDERS["llamacpp"],  # it has a tokenizer endpoint
        http=ClientPool(transport=httpx.MockTransport(handler)),
        clock=FakeClock(),
        rng=random.Random(1),
        detect=True,
    )


async def test_what_a_server_says_of_itself_is_read_bounded() -> None:
    asked: list[str] = []
    # built here, not at import: 8 MB compressed cost every worker's collection 0.05 s
    bomb = gzip.compress(b'{"n_ctx": 4096, "pad": "' + b" " * (8 << 20) + b'"}', 9)
    for body, encoding in ((DEEP, ""), (bomb, "gzip")):
        model = _model(body, encoding, asked)
        tracemalloc.start()
        try:
            events = [event async for event in model.stream(request())]
            counted = await model.count_tokens(request())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            await model.aclose()
        assert text_of(events) == "hi"
        assert counted == model.estimate_tokens(request())  # no count read: the estimate
        assert model.window is None
        assert peak < 4 << 20, peak
    assert "/tokenize" in asked
    assert "/props" in asked
