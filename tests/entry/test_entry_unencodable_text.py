"""Text UTF-8 cannot hold (a lone surrogate) in a message: what a library caller's prompt
holds when it was read with ``surrogateescape`` (``os.environ``, ``sys.argv``, a file name),
or what a model server writes as a ``"\\ud800"`` escape in its JSON. Before, the first run
ended in error (``UnicodeEncodeError: ... surrogates not allowed`` from the model request)
and so did every later run of the session, whatever was asked: the message stayed in the
history each request carries. Now a message shows such a character as an escape
(``messages.unicode_text``), the run completes and the next one too."""

from __future__ import annotations

from pathlib import Path

from rho_adapters.fakes import FakeClock, MemoryExecutor, WireTransport
from rho_adapters.fakes.wire import raw_reply, text_reply
from rho_adapters.model import ClientPool, ModelEndpoint, OpenAIChatModel
from rho_entry import Agent, AgentConfig, Session

# the answer's text as a server escapes it in JSON: a lone surrogate once decoded
ANSWER = (
    b'data: {"choices": [{"index": 0, "delta": {"content": "a\\ud800b"}}]}\n\n'
    b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


async def test_a_lone_surrogate_in_a_prompt_or_an_answer_ends_no_run(tmp_path: Path) -> None:
    transport = WireTransport([raw_reply(ANSWER), text_reply("ok")])
    model = OpenAIChatModel(
        model="m",
        endpoint=ModelEndpoint(base_url="http://fake.test/v1", api_key="k"),
        http=ClientPool(transport=transport),
    )
    agent = Agent(AgentConfig(model="m", working_dir=str(tmp_path)))
    session = Session(agent, model=model, executor=MemoryExecutor(), clock=FakeClock())
    async with session:
        first = await session.run("caf\udce9 read")  # b"caf\xe9" decoded with surrogateescape
        second = await session.run("and now?")
    assert (first.status.value, first.error) == ("completed", None)
    assert (second.status.value, second.text) == ("completed", "ok")
    sent = [message["content"] for message in transport.requests[1]["messages"][1:]]
    assert sent == ["caf\\xe9 read", "a\\ud800b", "and now?"]
