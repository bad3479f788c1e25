"""A queued BIRD question does not choose where a worker's model calls (and API key) go.
``eval bird --durable`` put its endpoint (``base_url``, ``api_key_env``, ``model``, ...) in
each question's payload, and the worker took it from there: anyone who can write the
durable queue (a shared SQLite file, a PostgreSQL system database) could enqueue a question
naming their own server and any of the worker's environment variables as the key, and a
worker (any ``rho-agent worker`` on that queue, a server's too) sent it there, with the
question and its database's rows. Now the worker runs a question on its own endpoint only,
refusing a payload that names another; ``eval bird --durable`` gives its workers its
endpoint in their environment."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from durable_support import Rig, worker_rig

from rho_adapters.fakes import RecordingSteps
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_adapters.store import FileSessionStore
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.ports.durable import QueuedRun
from rho_entry.durable.queueing import open_queue
from rho_entry.evals.bird_durable import run_question
from rho_entry.evals.bird_workers import worker_environ
from rho_entry.evals.sample_data import write_sample

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    with worker_rig(tmp_path_factory.mktemp("bird-endpoint"), "worker-bird", {}) as rig:
        yield rig


class Recorder:
    """An HTTP server on loopback that records each request's first line and Authorization
    header, then answers 401 and closes."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
                    data += chunk
                head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
                auth = next((h for h in head[1:] if h.lower().startswith("authorization:")), "")
                self.seen.append((head[0], auth))
                conn.sendall(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n")

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.listener.close()


def test_a_queued_question_naming_another_endpoint_sends_nothing_there(rig: Rig) -> None:
    data = write_sample(rig.root / "bird")
    recorder = Recorder()
    forged = QueuedRun(
        run_id="bird-forged000001",
        session_id="f0rged000001",
        prompt=None,
        settings={
            "kind": "bird",
            "data": str(data),
            "split": "dev",
            "question_id": "0",
            "timeout": "30",
            "workspace": str(rig.work),
            "model": "fake-model",
            "base_url": recorder.url,
            "api_key_env": "OPENAI_API_KEY",  # the worker's key (any variable would do)
        },
    )

    async def enqueue_and_wait() -> str | None:
        queue = open_queue(rig.db)
        try:
            await queue.enqueue(forged)
            # a graded question's status is its results line: wait for any end, not wait()'s
            for _ in range(400):
                status = await queue.status(forged.run_id)
                if status not in (None, "queued", "running"):
                    return status
                await asyncio.sleep(0.1)
            return status
        finally:
            queue.close()

    try:
        status = asyncio.run(enqueue_and_wait())
    finally:
        recorder.close()
    assert recorder.seen == []  # before: POST /v1/chat/completions, Bearer sk-test
    assert status == "error"
    log = (rig.root / "worker-bird.log").read_text()
    assert "does not choose where this worker's model calls go" in log, log


def test_the_eval_gives_its_workers_its_endpoint() -> None:
    from rho_domain.config import AgentConfig

    config = AgentConfig(model="m", base_url="http://127.0.0.1:9/v1", max_turns=7)
    env = worker_environ("/store", {"PATH": "/bin"}, config)
    assert env["RHO_AGENT_MODEL"] == "m"
    assert env["RHO_AGENT_BASE_URL"] == "http://127.0.0.1:9/v1"
    assert env["RHO_AGENT_MAX_TURNS"] == "7"
    assert "RHO_AGENT_PROVIDER" not in env


async def test_a_queued_question_does_not_choose_the_workspace_or_the_data_a_worker_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The payload's ``workspace`` (the agent's working directory) and ``data`` (the dataset:
    the question that is the prompt, the database it reads) were taken as queued: a forged
    question had a worker's tools read any directory of its host and send it to the model,
    the tool results kept in the shared store. Now they must be what the eval gave its
    workers ($RHO_AGENT_BIRD_DATA, $RHO_AGENT_BIRD_WORKSPACE); a worker the eval did not
    start runs no question. Nor a grading timeout that never ends (``nan``, ``inf``: the
    grader's deadline never passed) or is none. Refused before any model call or session."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data, workspace = write_sample(tmp_path / "bird"), tmp_path / "ws"
    secrets_dir = tmp_path / "elsewhere"
    for directory in (workspace, secrets_dir):
        directory.mkdir()
    (secrets_dir / "id_rsa").write_text("key\n")
    other_data = write_sample(tmp_path / "other")
    store = FileSessionStore(tmp_path / "store")
    lists = [tool_reply(call("list", {"path": "."}, "l1")), text_reply("done")]
    with LoopbackServer(lists) as model:
        config = AgentConfig(model="fake-model", base_url=model.base_url, profile="readonly")
        asked = {
            "kind": "bird", "data": str(data), "split": "dev", "question_id": "0",
            "timeout": "30", "workspace": str(workspace), "model": "fake-model",
            "base_url": model.base_url,
        }  # fmt: skip
        refusals = []
        for n, (environ, changes) in enumerate(
            [
                (worker_environ(store.root, {}, config, data=data, workspace=workspace), {}),
                ({}, {}),  # a worker the eval did not start: any worker on the queue
            ]
            + [
                (worker_environ(store.root, {}, config, data=data, workspace=workspace), forged)
                for forged in (
                    {"workspace": str(secrets_dir)},
                    {"data": str(other_data)},
                    *({"timeout": bad} for bad in ("nan", "inf", "0", "-1", "soon")),
                )
            ]
        ):
            for name in ("RHO_AGENT_BIRD_DATA", "RHO_AGENT_BIRD_WORKSPACE"):
                monkeypatch.delenv(name, raising=False)
                if name in environ:
                    monkeypatch.setenv(name, environ[name])
            queued = QueuedRun(
                run_id=f"bird-q{n}", session_id=f"q{n}", prompt=None,
                settings={**asked, **changes},
            )  # fmt: skip
            if n == 0:  # the eval's own question runs
                await run_question(queued, RecordingSteps(), config=config, store=store)
                assert len(model.requests) == 2
                continue
            with pytest.raises(ConfigError) as refused:
                await run_question(queued, RecordingSteps(), config=config, store=store)
            refusals.append(str(refused.value))
            assert not (tmp_path / "store" / f"q{n}").exists()
        assert len(model.requests) == 2  # none for a refused question
    assert refusals == [
        "queued question bird-q1 is a BIRD question of `rho-agent eval bird --durable`, "
        "whose own workers run them ($RHO_AGENT_BIRD_DATA and $RHO_AGENT_BIRD_WORKSPACE are "
        "unset here): a queued run does not choose the data or the directory a worker's "
        "tools read",
        f"queued question bird-q2 asks for workspace {str(secrets_dir)!r} (this worker's: "
        f"{str(workspace)!r}); a queued run does not choose the data or the directory a "
        "worker's tools read: the eval gives its workers both",
        f"queued question bird-q3 asks for data {str(other_data)!r} (this worker's: "
        f"{str(data)!r}); a queued run does not choose the data or the directory a "
        "worker's tools read: the eval gives its workers both",
        *(
            f"queued question bird-q{n} asks for a grading timeout of {bad!r}: a queued run's "
            "timeout is a finite number of seconds, more than 0 (the eval's --timeout)"
            for n, bad in enumerate(("nan", "inf", "0", "-1", "soon"), start=4)
        ),
    ]


async def test_a_durable_question_keeps_no_evidence_and_the_system_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--no-evidence`` and ``--system-prompt`` travel in the question's payload (a worker's
    own config has neither); a payload whose system prompt names a file is refused, since a
    payload must not make a worker read one."""
    from rho_entry.evals.bird_data import load_bird
    from rho_entry.evals.bird_durable import question_run

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data, workspace = write_sample(tmp_path / "bird"), tmp_path / "ws"
    workspace.mkdir()
    dataset = load_bird(data)
    store = FileSessionStore(tmp_path / "store")
    with LoopbackServer([text_reply("done")]) as model:
        config = AgentConfig(
            model="fake-model", base_url=model.base_url, profile="readonly",
            system_prompt="Answer in SQLite.",
        )  # fmt: skip
        for name, value in worker_environ(
            store.root, {}, config, data=data, workspace=workspace
        ).items():
            if name.startswith("RHO_AGENT_BIRD_"):
                monkeypatch.setenv(name, value)
        queued = question_run(
            dataset, tmp_path / "r.jsonl", dataset.questions[0], config=config, timeout=30,
            workspace=workspace, evidence=False,
        )  # fmt: skip
        worker_config = AgentConfig(model="fake-model", base_url=model.base_url)
        await run_question(queued, RecordingSteps(), config=worker_config, store=store)
        forged = QueuedRun(
            run_id="bird-f", session_id="f", prompt=None,
            settings={**queued.settings, "system_prompt": "~/notes/keys.md"},
        )  # fmt: skip
        with pytest.raises(ConfigError, match=r"its system prompt names a file '~/notes/keys\.md'"):
            await run_question(forged, RecordingSteps(), config=worker_config, store=store)
    (request,) = model.requests
    system, user = request["messages"][:2]
    assert system == {"role": "system", "content": "Answer in SQLite."}
    assert "External knowledge" not in user["content"]
    assert dataset.questions[0].question in user["content"]
