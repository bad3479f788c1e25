"""``rho-agent eval bird --workers 2 --durable``: the questions fan out over the queue to two
worker processes; both are SIGKILLed while one of them waits inside a model call; the command
starts new workers, which recover the dead ones' runs through their stale heartbeats; every
question is graded once, none lost, and each question's session ends once."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from durable_support import trace
from program_zygote import popen

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import Exchange, Reply, call, stall, text_reply, tool_reply
from rho_entry.cli import eval as eval_cli
from rho_entry.cli import worker as worker_cli
from rho_entry.evals.bird_workers import worker_command, worker_environ
from rho_entry.evals.sample_content import QUESTIONS, SAMPLE_ANSWERS
from rho_entry.evals.sample_data import write_sample

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)


HELD = 5  # the question whose submission hangs until its worker is dead


def slow_sample_rule(held: threading.Event) -> Any:
    """The sample's scripted answers; question ``HELD``'s submission stalls 3 s (``held`` is
    set when it starts: its worker is inside that model call)."""

    def rule(exchange: Exchange) -> Reply | None:
        if not exchange.is_chat:
            return None
        messages = exchange.body["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        qid = next(q[0] for q in QUESTIONS if f"Question: {q[3]}\n" in prompt)
        done = sum(m["role"] == "tool" for m in messages)
        sql = SAMPLE_ANSWERS[qid]
        if done == 0:
            return tool_reply(call("sqlite", {"operation": "list_tables"}, f"c{qid}a"))
        if done == 1 and sql is not None:
            submit = call("submit_sql", {"sql": sql}, f"c{qid}b")
            if qid == HELD and not held.is_set():
                held.set()
                return tool_reply(submit, faults=(stall(seconds=3),))
            return tool_reply(submit)
        return text_reply("Done.")

    return rule


def test_a_killed_worker_loses_no_question_and_grades_none_twice(tmp_path: Path) -> None:
    held = threading.Event()
    with LoopbackServer([], rules=[slow_sample_rule(held)]) as server:
        environ = {
            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path / "home"),
            "RHO_AGENT_HOME": str(tmp_path / "rho"),
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-test",
            "LANG": "C.UTF-8",
        }
        rho = [sys.executable, "-m", "rho_entry"]
        # `eval sample-data bird`, in this process (tests/evals runs the command itself)
        write_sample(tmp_path / "bird")
        # the dead workers' questions wait out --dead-after (5 s by default): 2 s, as the
        # other takeover tests' workers, whose beats (0.5 s) run on a thread of their own
        command = [
            *rho, "eval", "bird", "--data", "bird", "--workers", "2", "--durable", "-m", "m",
            "--out", "out/r.jsonl", "--dead-after", "2",
        ]  # fmt: skip
        # the command forked from the CLI's zygote (its start is not the subject); the workers
        # it starts are its own cold processes, as a user's
        evaluation = popen(
            "rho", command, cwd=tmp_path, env=environ, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert evaluation.stderr is not None
        workers: list[int] = []
        for line in evaluation.stderr:
            if "worker" in line and "started" in line:
                workers.append(int(line.split("worker ")[1].split()[0]))
            if len(workers) == 2:
                break
        assert held.wait(60), "question 5 never reached its submission"
        for pid in workers:  # the command passes its --dead-after on to its workers
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            assert argv[argv.index(b"--dead-after") + 1] == b"2.0", argv
        for pid in workers:  # both: one of them is inside question 5's model call
            os.kill(pid, signal.SIGKILL)
        rest, errors = evaluation.communicate(timeout=180)
    assert evaluation.returncode == 0, errors
    assert errors.count("started") == 2  # the two replacements (the first two were read)
    log = (tmp_path / "out" / "r.jsonl.workers.log").read_text()
    assert "stopped beating; 1 of its runs put back on the queue" in log
    lines = [json.loads(x) for x in (tmp_path / "out" / "r.jsonl").read_text().splitlines()]
    ids = [x["question_id"] for x in lines]
    assert sorted(ids) == sorted(q[0] for q in QUESTIONS)  # every question, once
    assert len(ids) == len(set(ids)) == 24
    store = tmp_path / "rho" / "sessions"
    for line in lines:
        ends = [e for e in trace(store, line["session_id"]) if e["kind"] == "run_end"]
        assert len(ends) == 1, line
    assert "total            24" in rest


@pytest.mark.parametrize(
    ("flags", "dead_after", "heartbeat"), [((), 5.0, 1.0), (("--dead-after", "2"), 2.0, 0.5)]
)
def test_the_workers_take_the_eval_s_dead_after_and_beat_a_quarter_of_it(
    flags: tuple[str, ...], dead_after: float, heartbeat: float
) -> None:
    args = eval_cli.build_parser().parse_args(["bird", "--data", "d", "--durable", *flags])
    command = worker_command("q.sqlite", "rho-bird", dead_after=args.dead_after)
    assert command[:4] == [sys.executable, "-m", "rho_entry", "worker"]
    worker = worker_cli.build_parser().parse_args(command[4:])
    assert (worker.dead_after, worker.heartbeat, worker.poll) == (dead_after, heartbeat, 0.1)


def test_the_workers_store_is_not_on_their_command_line() -> None:
    """A command line is anyone's to read (ps, /proc/PID/cmdline): a store URL with a
    password taken from $RHO_AGENT_STORE was put on each worker's. The worker finds it in its
    environment, where it looks when no --store is given."""
    from rho_entry.config.stores import store_setting

    store = "postgresql://rho:pw-store-8c21@db.internal/rho"
    command = worker_command("q.sqlite", "rho-bird")
    environ = worker_environ(store, {"PATH": "/usr/bin", "RHO_AGENT_STORE": "/elsewhere"})
    assert not any("pw-store-8c21" in word for word in command)
    worker = worker_cli.build_parser().parse_args(command[4:])
    assert worker.store is None
    assert store_setting(worker.store, environ) == (store, "$RHO_AGENT_STORE")
    assert environ["PATH"] == "/usr/bin"
