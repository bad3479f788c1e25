"""The runtime's request field (issue 29, item 2): ``dispatch_prompt(..., output_schema=)``
shapes one session's answers over the runtime's own, new or continued (a session of its
own here: the runtime's own session stays unshaped); a schema with a
keyword that is not checked is refused at dispatch."""

from __future__ import annotations

from pathlib import Path

import pytest

from rho_adapters.fakes import MemorySessionStore, ScriptedModel, text
from rho_domain.errors import ConfigError
from rho_entry import (
    AgentConfig,
    RunStatus,
    close_runtime,
    create_runtime,
    dispatch_prompt,
    run_prompt,
    start_runtime,
)

COUNT = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}


async def test_a_dispatch_shapes_its_own_session_and_no_other(tmp_path: Path) -> None:
    model = ScriptedModel([text('{"count": 2}'), text("two, in words"), text('{"count": 3}')])
    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path)), model=model, store=MemorySessionStore()
    )
    await start_runtime(runtime)
    try:
        shaped = await run_prompt(runtime, "how many?", output_schema=COUNT, new_session=True)
        plain = await run_prompt(runtime, "how many, in words?")
        again = await run_prompt(
            runtime, "and now?", session_id=shaped.session_id, output_schema=COUNT
        )
        with pytest.raises(ConfigError, match="'if' at #"):
            _ = await dispatch_prompt(runtime, "x", output_schema={"if": {}})
        # compiled in a worker, never on the runtime's loop (check_schema does not compile)
        with pytest.raises(ConfigError, match="pattern at # is not a valid regex: invalid"):
            _ = await dispatch_prompt(runtime, "x", output_schema={"pattern": "a{2,1}"})
    finally:
        await close_runtime(runtime)
    assert (shaped.status, shaped.output) == (RunStatus.COMPLETED, {"count": 2})
    assert (plain.status, plain.output, plain.text) == (RunStatus.COMPLETED, None, "two, in words")
    assert (again.status, again.output) == (RunStatus.COMPLETED, {"count": 3})
    assert model.requests[0].output_schema == COUNT
    assert model.requests[1].output_schema is None
    assert model.requests[2].output_schema == COUNT
