"""Chunk assembly through the real client: every quirk of the chunk schema, tool-call deltas,
``finish_reason`` and usage, as OpenAI, vLLM, Cerebras, Groq, Ollama, llama.cpp and OpenRouter
send them."""

from __future__ import annotations

from typing import Any

import pytest
from _model_support import (
    DONE,
    calls_of,
    chunk,
    collect,
    data,
    finish_of,
    make_model,
    reasoning_of,
    refusal_of,
    request,
    run_body,
    text_of,
    usage_of,
)

from rho_adapters.fakes.wire import raw_reply
from rho_adapters.model import RetryPolicy
from rho_domain.errors import ModelProtocolError, StreamError, TruncatedStream
from rho_domain.model import StreamEvent, TextChunk, ToolCallChunk


def tc(
    index: int | None = None,
    id: str | None = None,
    name: str | None = None,
    args: str | None = None,
    **extra: object,
) -> dict[str, object]:
    out: dict[str, object] = dict(extra)
    if index is not None:
        out["index"] = index
    if id is not None:
        out["id"], out["type"] = id, "function"
    fn: dict[str, object] = {}
    if name is not None:
        fn["name"] = name
    if args is not None:
        fn["arguments"] = args
    if fn:
        out["function"] = fn
    return out


USAGE = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}


async def test_openai_text_stream_with_usage_in_a_final_empty_choices_chunk() -> None:
    events = await run_body(
        chunk({"role": "assistant", "content": ""}, usage=None, obfuscation="x"),
        chunk({"content": "Hel"}, usage=None),
        chunk({"content": "lo"}, usage=None, service_tier="default"),
        chunk({}, "stop", usage=None),
        data(
            {
                "id": "c",
                "choices": [],
                "usage": {
                    **USAGE,
                    "prompt_tokens_details": {"cached_tokens": 4},
                    "completion_tokens_details": {"reasoning_tokens": 2},
                },
            }
        ),
        DONE,
    )
    assert text_of(events) == "Hello"
    usage = usage_of(events)
    assert (usage.input_tokens, usage.output_tokens) == (12, 3)
    assert (usage.cached_tokens, usage.reasoning_tokens, usage.estimated) == (4, 2, False)
    assert finish_of(events) == "stop"


async def test_ollama_repeats_role_and_empty_content_on_every_chunk() -> None:
    events = await run_body(
        chunk({"role": "assistant", "content": ""}),
        chunk({"role": "assistant", "content": "a"}),
        chunk({"role": "assistant", "content": ""}),
        chunk({"role": "assistant", "content": "b"}, "stop"),
        DONE,
    )
    assert text_of(events) == "ab"


async def test_null_and_empty_content_are_the_same() -> None:
    events = await run_body(
        chunk({"content": None}), chunk({"content": ""}), chunk({"content": "x"}, "stop"), DONE
    )
    assert text_of(events) == "x"


async def test_cerebras_role_only_first_chunk_empty_delta_and_usage_on_finish_chunk() -> None:
    events = await run_body(
        data({"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}),
        data({"id": "c", "choices": [{"index": 0, "delta": {"reasoning": "think"}}]}),
        data({"id": "c", "choices": [{"index": 0, "delta": {}}]}),
        data(
            {
                "id": "c",
                "choices": [
                    {
                        "index": 0,
                        "delta": {"tool_calls": [tc(0, "bbd2b9d98", "list", '{"path": "."}')]},
                    }
                ],
            }
        ),
        chunk({}, "tool_calls", usage=USAGE, time_info={"queue_time": 0.1}),
        DONE,
    )
    assert reasoning_of(events) == "think"
    assert calls_of(events) == [("bbd2b9d98", "list", '{"path": "."}')]
    assert usage_of(events).input_tokens == 12
    assert finish_of(events) == "tool_calls"


async def test_mistral_content_as_typed_part_arrays() -> None:
    events = await run_body(
        chunk(
            {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}]},
            p="padding",
        ),
        chunk({"content": [{"type": "text", "text": "Answer"}]}),
        chunk({}, "stop"),
        DONE,
    )
    assert (reasoning_of(events), text_of(events)) == ("hmm", "Answer")


async def test_refusal_flows_in_refusal_not_content() -> None:
    events = await run_body(
        chunk({"role": "assistant", "content": None, "refusal": ""}),
        chunk({"refusal": "I can't "}),
        chunk({"refusal": "help."}, "stop"),
        DONE,
    )
    assert (refusal_of(events), text_of(events)) == ("I can't help.", "")


async def test_reasoning_content_and_reasoning_fields_and_openrouter_details_once() -> None:
    events = await run_body(
        chunk({"reasoning_content": "a"}),  # DeepSeek, vLLM < 0.11, llama.cpp
        chunk({"reasoning": "b", "reasoning_details": [{"type": "reasoning.text", "text": "b"}]}),
        chunk({"reasoning": "c", "channel": "analysis"}),  # Groq gpt-oss
        chunk({"content": "x"}, "stop"),
        DONE,
    )
    assert reasoning_of(events) == "abc"


async def test_openai_parallel_calls_streamed_sequentially_in_fragments() -> None:
    events = await run_body(
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [tc(0, "call_a", "read", "")]}),
        chunk({"tool_calls": [tc(0, args='{"pa')]}),
        chunk({"tool_calls": [tc(0, args='th": "x"}')]}),
        chunk({"tool_calls": [tc(1, "call_b", "list", "")]}),
        chunk({"tool_calls": [tc(1, args="{}")]}),
        chunk({}, "tool_calls"),
        DONE,
    )
    assert calls_of(events) == [("call_a", "read", '{"path": "x"}'), ("call_b", "list", "{}")]
    display = [e for e in events if isinstance(e, ToolCallChunk)]
    assert [d.index for d in display] == [0, 0, 0, 1, 1]
    assert "".join(d.arguments_delta for d in display if d.index == 0) == '{"path": "x"}'


async def test_content_before_tool_call_and_index_starting_at_one() -> None:
    events = await run_body(
        chunk({"content": "Reading it."}),
        chunk({"tool_calls": [tc(1, "toolu_1", "read", '{"path":')]}),
        chunk({"tool_calls": [tc(1, args=' "a"}')]}),
        chunk({}, "tool_calls"),
        DONE,
    )
    assert text_of(events) == "Reading it."
    assert calls_of(events) == [("toolu_1", "read", '{"path": "a"}')]
    assert [e.index for e in events if isinstance(e, ToolCallChunk)] == [0, 0]


async def test_missing_index_new_id_starts_a_call_else_continues_the_last() -> None:
    events = await run_body(
        chunk({"tool_calls": [tc(None, "c1", "read", '{"path"')]}),
        chunk({"tool_calls": [tc(None, args=': "a"}')]}),
        chunk({"tool_calls": [tc(None, "c2", "list", "{}")]}),
        chunk({}, "tool_calls"),
        DONE,
    )
    assert calls_of(events) == [("c1", "read", '{"path": "a"}'), ("c2", "list", "{}")]


async def test_missing_id_gets_a_generated_unique_one() -> None:
    events = await run_body(
        chunk({"tool_calls": [tc(0, name="read", args='{"path": "a"}')]}),
        chunk({"tool_calls": [tc(1, name="read", args='{"path": "b"}')]}),
        chunk({}, "tool_calls"),
        DONE,
    )
    calls = calls_of(events)
    assert [c[1:] for c in calls] == [("read", '{"path": "a"}'), ("read", '{"path": "b"}')]
    assert all(c[0] for c in calls)
    assert calls[0][0] != calls[1][0]


async def test_llama_cpp_python_repeats_id_type_and_name_on_every_fragment() -> None:
    events = await run_body(
        chunk({"tool_calls": [tc(0, "call_x", "read", '{"pa')]}),
        chunk({"tool_calls": [tc(0, "call_x", "read", 'th": ')]}),
        chunk({"tool_calls": [tc(0, "call_x", "read", '"a"}')]}),
        chunk({}, "tool_calls"),
        DONE,
    )
    assert calls_of(events) == [("call_x", "read", '{"path": "a"}')]


async def test_ollama_numbers_every_parallel_call_zero_another_id_is_another_call() -> None:
    # Before, the two calls were merged into one: ("c2", "write", '{"path": "a"}{"path": "b"}'),
    # the read lost and a write run with arguments that are not JSON.
    events = await run_body(
        chunk({"tool_calls": [tc(0, "c1", "read", '{"path":')]}),
        chunk({"tool_calls": [tc(0, args=' "a"}')]}),
        chunk({"tool_calls": [tc(0, "c2", "write", '{"path":')]}),
        chunk({"tool_calls": [tc(0, args=' "b"}')]}),
        chunk({"tool_calls": [tc(1, "c3", "list", "{}")]}),
        chunk({}, "tool_calls"),
        DONE,
    )
    assert calls_of(events) == [
        ("c1", "read", '{"path": "a"}'),
        ("c2", "write", '{"path": "b"}'),
        ("c3", "list", "{}"),
    ]
    assert [e.index for e in events if isinstance(e, ToolCallChunk)] == [0, 0, 1, 1, 2]
    assert finish_of(events) == "tool_calls"
    # a new id on a fragment of unfinished arguments is the same call (vLLM's gpt-oss gives
    # every fragment a new id and the name; Poolside changes it after the first)
    events = await run_body(
        chunk({"tool_calls": [tc(0, "f1", "read", '{"path":')]}),
        chunk({"tool_calls": [tc(0, "f2", "read", ' "a"}')]}),
        chunk({"tool_calls": [tc(1, "g1", "list", "")]}),
        chunk({"tool_calls": [tc(1, "g2", args="{}")]}),
        chunk({}, "tool_calls"),
        DONE,
    )
    assert calls_of(events) == [("f2", "read", '{"path": "a"}'), ("g2", "list", "{}")]


async def test_groq_whole_arguments_in_one_delta_and_usage_on_finish_and_x_groq() -> None:
    events = await run_body(
        chunk({"role": "assistant", "content": None}, x_groq={"id": "req_1", "seed": 1}),
        chunk({"tool_calls": [tc(0, "tk85n1k4m", "grep", '{"pattern": "x"}')]}),
        chunk({}, "tool_calls", x_groq={"usage": {**USAGE, "queue_time": 0.01}}),
        DONE,
    )
    assert calls_of(events) == [("tk85n1k4m", "grep", '{"pattern": "x"}')]
    assert usage_of(events).input_tokens == 12


async def test_vllm_remaining_arguments_ride_the_finish_chunk_with_stop_reason() -> None:
    # Named tool_choice: vLLM reports "stop", the call must still be reported.
    events = await run_body(
        chunk({"tool_calls": [tc(0, "chatcmpl-tool-1", "read", '{"path": "a')]}),
        data(
            {
                "id": "c",
                "choices": [
                    {
                        "index": 0,
                        "delta": {"tool_calls": [tc(0, args='bc"}')]},
                        "finish_reason": "stop",
                        "stop_reason": None,
                    }
                ],
            }
        ),
        data({"id": "c", "choices": [], "usage": USAGE, "system_fingerprint": "vllm-0.24"}),
        DONE,
    )
    assert calls_of(events) == [("chatcmpl-tool-1", "read", '{"path": "abc"}')]
    assert finish_of(events) == "stop"


async def test_arguments_none_and_empty_mean_an_empty_object() -> None:
    events = await run_body(
        chunk({"tool_calls": [tc(0, "c1", "list", None)]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": None}}]}),
        chunk({"tool_calls": [tc(1, "c2", "list", "")]}),
        chunk({}, "tool_calls"),
        DONE,
    )
    assert calls_of(events) == [("c1", "list", "{}"), ("c2", "list", "{}")]


async def test_invalid_json_arguments_are_kept_raw_not_replaced_by_empty_object() -> None:
    events = await run_body(
        chunk({"tool_calls": [tc(0, "c1", "read", '{"path": "a"')]}),
        chunk({}, "length"),  # max tokens hit mid-call
        DONE,
    )
    assert calls_of(events) == [("c1", "read", '{"path": "a"')]
    assert finish_of(events) == "length"


async def test_openrouter_usage_on_a_later_chunk_with_non_empty_choices_and_cost() -> None:
    events = await run_body(
        b": OPENROUTER PROCESSING\n\n",
        chunk({"content": "x"}, provider="p", native_finish_reason=None),
        chunk({}, "stop"),
        chunk({"content": ""}, None, usage={**USAGE, "cost": 0.0015, "is_byok": False}),
        DONE,
        provider="openrouter",
    )
    usage = usage_of(events)
    assert (usage.input_tokens, usage.cost_usd) == (12, 0.0015)
    assert finish_of(events) == "stop"


async def test_azure_first_chunk_with_empty_choices_is_not_usage() -> None:
    events = await run_body(
        data({"id": "", "model": "", "choices": [], "prompt_filter_results": [{"x": 1}]}),
        chunk({"content": "ok"}, content_filter_results={}),
        chunk({}, "stop"),
        DONE,
    )
    assert text_of(events) == "ok"
    assert usage_of(events).estimated is True


async def test_choices_other_than_zero_are_ignored() -> None:
    def choice(i: int, text: str, finish: str | None = None) -> bytes:
        return data(
            {"choices": [{"index": i, "delta": {"content": text}, "finish_reason": finish}]}
        )

    events = await run_body(
        choice(0, "a"),
        choice(1, "X"),
        choice(2, "Y"),
        choice(0, "b", "stop"),
        choice(1, "Z", "stop"),
        DONE,
    )
    assert text_of(events) == "ab"


async def test_missing_usage_is_estimated_from_request_and_response() -> None:
    # llama-cpp-python ignores include_usage entirely.
    events = await run_body(chunk({"content": "x" * 40}), chunk({}, "stop"), DONE)
    usage = usage_of(events)
    assert usage.estimated is True
    assert usage.output_tokens == 10
    # "sys\nhi": 6 characters = 2 tokens, plus template framing for 2 messages (4 each + 3)
    assert usage.input_tokens == 2 + 11


async def test_vllm_continuous_usage_last_one_wins() -> None:
    events = await run_body(
        chunk({"content": "a"}, usage={"prompt_tokens": 5, "completion_tokens": 1}),
        chunk({"content": "b"}, "stop", usage={"prompt_tokens": 5, "completion_tokens": 2}),
        DONE,
    )
    assert usage_of(events).output_tokens == 2


async def test_eof_without_done_after_finish_reason_is_complete() -> None:
    events = await run_body(chunk({"content": "a"}), chunk({}, "stop"))
    assert (text_of(events), finish_of(events)) == ("a", "stop")


async def test_done_without_trailing_blank_line_and_anything_after_done_is_ignored() -> None:
    events = await run_body(chunk({"content": "a"}, "stop"), b"data: [DONE]")
    assert text_of(events) == "a"
    events = await run_body(chunk({"content": "a"}, "stop"), DONE, b"data: {garbage\n\n")
    assert text_of(events) == "a"


async def test_reasoning_then_content_then_tool_call_in_one_message() -> None:
    events = await run_body(
        chunk({"reasoning": "plan"}),
        chunk({"content": "Listing."}),
        chunk({"tool_calls": [tc(0, "c", "list", "{}")]}),
        chunk({}, "tool_calls"),
        DONE,
    )
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "ReasoningChunk",
        "TextChunk",
        "ToolCallChunk",
        "ToolCallReady",
        "UsageReport",
        "StreamFinished",
    ]


async def test_deltas_that_arrive_in_one_network_chunk_come_as_one_text_chunk() -> None:
    """Text deltas a server sent faster than they were read reach the session as one piece of
    text per network chunk (one event to announce and keep, not one per delta); a tool call's
    delta between them keeps its place, and nothing of the text is lost or reordered."""
    start = tc(0, "call_1", "list", '{"pa')
    events = await run_body(
        chunk({"content": "a"}) + chunk({"content": "b"}) + chunk({"content": "c"}),
        chunk({"content": "d"}),
        chunk({"content": "e"}) + chunk({"tool_calls": [start]}) + chunk({"content": "f"}),
        chunk({"content": "g"}) + chunk({"tool_calls": [tc(0, args='th": "."}')]}),
        chunk({}, "tool_calls") + DONE,
    )
    pieces = [
        e.text if isinstance(e, TextChunk) else type(e).__name__
        for e in events
        if isinstance(e, TextChunk | ToolCallChunk)
    ]
    assert pieces == ["abc", "d", "e", "ToolCallChunk", "f", "g", "ToolCallChunk"]
    assert text_of(events) == "abcdefg"
    assert calls_of(events) == [("call_1", "list", '{"path": "."}')]
    assert finish_of(events) == "tool_calls"


async def test_an_error_in_a_network_chunk_comes_after_the_text_that_chunk_held_before_it() -> None:
    failing = chunk({"content": "two "}) + data({"error": {"message": "bad"}})
    model, _, _ = make_model(
        raw_reply(chunk({"content": "one "}), failing + chunk({"content": "x"}))
    )
    seen: list[StreamEvent] = []

    async def read() -> None:
        async for event in model.stream(request()):
            seen.append(event)

    with pytest.raises(StreamError, match="bad") as info:
        await read()
    await model.aclose()
    assert text_of(seen) == "one two "
    assert info.value.partial_text == "one two "


async def test_a_stream_cut_at_any_byte_of_its_chunks_is_a_truncated_stream_keeping_the_text() -> (
    None
):
    """llama.cpp's shape (id, created, logprobs, a finish chunk, ``[DONE]``), the body cut at
    each byte from the first chunk's end to ``[DONE]``. Before: a cut inside a chunk said "the
    model server sent a chunk that is not JSON", a server bug to look for where the connection
    or a proxy had ended the body early. Now each is ``TruncatedStream`` saying so, with the
    text before it kept (the session keeps it as the partial answer), or, once the finish
    chunk is whole, the complete answer."""
    top: dict[str, Any] = {"created": 1795352869, "system_fingerprint": None}
    pieces = [
        chunk({"role": "assistant", "content": "Hel"}, **top).replace(
            b'"delta"', b'"logprobs": null, "delta"'
        ),
        chunk({"content": "lo"}, **top),
        chunk({}, "stop", **top),
        DONE,
    ]
    body = b"".join(pieces)
    whole = len(pieces[0])
    finish_end = len(b"".join(pieces[:3])) - 2  # the finish chunk's JSON, whole
    cut_short = ("the model stream ended without a finish_reason", "the model stream was cut")
    cuts = range(whole, len(body))
    # one model answering each cut in turn (a model per cut cost ~1.6x the time)
    model, _, _ = make_model(
        *(raw_reply(body[:cut]) for cut in cuts), retry=RetryPolicy(max_retries=0)
    )
    for cut in cuts:
        try:
            events = await collect(model)
        except TruncatedStream as exc:
            failure: TruncatedStream | None = exc
        else:
            failure = None
        if cut < finish_end:
            assert failure is not None, cut
            said = str(failure)
            assert said.startswith(cut_short), (cut, said)
            assert "at http://fake.test/v1/chat/completions" in said
            assert failure.partial_text in ("Hel", "Hello"), cut
        else:
            assert failure is None, (cut, failure)
            assert (text_of(events), finish_of(events)) == ("Hello", "stop")
    await model.aclose()


async def test_a_stream_cut_in_its_first_line_and_a_whole_answer_cut_are_said_cut() -> None:
    """Before: a stream cut at its first 1-3 bytes ("d", "da", "dat": no event yet) was taken
    as an empty stream and resent without streaming; the resent answer, cut as well, was
    "the model server sent a chunk that is not JSON: 'd'", and so was any whole (not
    streamed) answer cut before its end. Now each is a ``TruncatedStream`` saying it was
    cut; a whole answer that is other text says so without calling it a chunk."""
    import json

    body = chunk({"role": "assistant", "content": "Hello"}) + chunk({}, "stop") + DONE
    whole = json.dumps({"choices": [{"index": 0, "message": {"content": "Hello"}}]}).encode()
    cut_short = "the model stream was cut in its first line (it ends "
    streamed, _, _ = make_model(*(raw_reply(body[:n]) for n in (1, 2, 3)), stream=True)
    for n in (1, 2, 3):
        with pytest.raises(TruncatedStream) as info:
            await collect(streamed)
        assert str(info.value).startswith(f"{cut_short}{body[:n].decode()!r})"), info.value
    await streamed.aclose()
    answers = [raw_reply(whole[:n]) for n in (1, 20, len(whole) - 1)]
    not_json = b"<html>Bad gateway</html>"
    unread, _, _ = make_model(*answers, raw_reply(not_json), stream=False)
    for n in (1, 20, len(whole) - 1):
        with pytest.raises(TruncatedStream) as info:
            await collect(unread)
        assert str(info.value).startswith("the model's answer was cut before its end"), n
    with pytest.raises(ModelProtocolError) as other:
        await collect(unread)
    assert str(other.value).startswith(
        "the model server answered with a body that is not JSON: '<html>Bad gateway</html>'"
    )
    await unread.aclose()
