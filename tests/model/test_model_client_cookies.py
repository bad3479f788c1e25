"""A pooled model client reads a response into its cookie jar only when the response sets a
cookie: httpx built urllib's views of every response and its request to find none. A cookie a
server sets is still kept and sent back."""

from __future__ import annotations

import httpx
import pytest

from rho_adapters.model.loop_clients import SetCookiesOnly, new_client


async def test_a_set_cookie_is_kept_and_sent_back_and_other_answers_are_not_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers.get("cookie"))
        first = len(sent) == 1
        return httpx.Response(200, headers={"set-cookie": "affinity=b7; Path=/"} if first else {})

    views: list[int] = []

    class Counted(httpx.Cookies._CookieCompatResponse):
        def __init__(self, response: httpx.Response) -> None:
            views.append(1)
            super().__init__(response)

    monkeypatch.setattr(httpx.Cookies, "_CookieCompatResponse", Counted)
    client = new_client(
        "http://model.test",
        {},
        proxy=None,
        max_in_flight=4,
        keepalive_seconds=5.0,
        transport=httpx.MockTransport(answer),
    )
    assert isinstance(client.cookies, SetCookiesOnly)
    async with client:
        for _ in range(3):
            (await client.post("http://model.test/v1/chat/completions", json={})).raise_for_status()
    assert sent == [None, "affinity=b7", "affinity=b7"]
    assert len(views) == 1  # the answer that set one; httpx's own jar read all 3
