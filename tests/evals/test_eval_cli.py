"""``rho-agent eval`` as a user runs it: a real process, a real socket for the model (the
loopback OpenAI-compatible server answering like the sample's scripted model), Ctrl+C in the
middle, and the same command again. The commands around the runs (the listing, an export,
a resume, the refusals of bad flags) run by the CLI's ``main`` in this process: what they
say is the test, and a process costs ~0.5 s of CPU."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import Exchange, Reply, call, stall, text_reply, tool_reply
from rho_entry.evals.sample_content import QUESTIONS, SAMPLE_ANSWERS
from rho_entry.evals.sample_data import write_sample

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))  # the in-process CLI
from cli_support import rho as cli_here
from program_zygote import run


def sample_rule(*, stall_on: int | None = None) -> Any:
    """Answer each chat request as the sample's scripted model does (``sample_turn``)."""

    def rule(exchange: Exchange) -> Reply | None:
        if not exchange.is_chat:
            return None
        messages = exchange.body["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        qid = next(q[0] for q in QUESTIONS if f"Question: {q[3]}\n" in prompt)
        if qid == stall_on:
            return text_reply("thinking", faults=(stall(),))
        done = sum(m["role"] == "tool" for m in messages)
        sql = SAMPLE_ANSWERS[qid]
        if done == 0:
            return tool_reply(call("sqlite", {"operation": "list_tables"}, f"c{qid}a"))
        if done == 1 and sql is not None:
            return tool_reply(call("submit_sql", {"sql": sql}, f"c{qid}b"))
        return text_reply("Done.")

    return rule


def env(tmp_path: Path, server: LoopbackServer) -> dict[str, str]:
    """A minimal environment; PYTHONPATH passes on, so the process runs the sources under
    test (a worktree's src), not whatever the venv's editable install points at."""
    return {
        # the sources under test (a worktree's src), not whatever the venv installed
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "RHO_AGENT_HOME": str(tmp_path / "rho"),
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
    }


def rho(*args: str, cwd: Path, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``rho-agent ARGS`` in a process of its own, forked from the zygote that has imported
    the CLI (``program_zygote``; the Ctrl+C test starts its own, as a terminal would)."""
    return run(
        "rho", [sys.executable, "-m", "rho_entry", *args],
        cwd=cwd, env=environ, text=True, timeout=120,
    )  # fmt: skip


def rho_here(*args: str, cwd: Path, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``rho`` by the CLI's ``main`` in this process, with ``environ`` as its environment."""
    return cli_here(*args, cwd=cwd, home=Path(environ["HOME"]), **environ)


def test_sample_data_then_a_run_with_two_workers(tmp_path: Path) -> None:
    with LoopbackServer([], rules=[sample_rule()]) as server:
        environ = env(tmp_path, server)
        made = rho("eval", "sample-data", "bird", cwd=tmp_path, environ=environ)
        assert made.returncode == 0, made.stderr
        assert (tmp_path / "bird" / "dev_databases" / "shop" / "shop.sqlite").is_file()
        done = rho(
            "eval", "bird", "--data", "bird", "--limit", "6", "--workers", "2", "-m", "m",
            "--out", "out/r.jsonl", cwd=tmp_path, environ=environ,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        lines = [json.loads(x) for x in (tmp_path / "out" / "r.jsonl").read_text().splitlines()]
        assert sorted(x["question_id"] for x in lines) == [0, 1, 2, 3, 4, 5]
        assert {x["question_id"] for x in lines if x["correct"]} == {0, 1, 2, 4, 5}
        table = done.stdout.splitlines()
        assert table[0].split() == [
            "difficulty", "count", "correct", "accuracy", "tokens", "in", "tokens", "out", "cost",
            "USD", "wall", "s",
        ]  # fmt: skip
        assert table[1].split()[:4] == ["simple", "4", "3", "75.00%"]
        assert table[2].split()[:4] == ["moderate", "2", "2", "100.00%"]
        assert table[4].split()[:4] == ["total", "6", "5", "83.33%"]
        assert "question 3 (simple): wrong" in done.stderr
        # the sessions are the user's, and open like any other, from any directory: their
        # working directory and database are stored absolute
        listed = rho_here("--list", cwd=tmp_path, environ=environ)
        assert sum("Answer this question" in line for line in listed.stdout.splitlines()) == 6
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        failure = next(x["session_id"] for x in lines if x["question_id"] == 3)
        exported = rho_here("export", failure, cwd=elsewhere, environ=environ)
        assert exported.returncode == 0, exported.stderr
        # a stored database and working directory are not authority: the resumer gives them
        # again (the database in its config; the workspace with --working-dir)
        shop = (tmp_path / "bird" / "dev_databases" / "shop" / "shop.sqlite").resolve()
        config = elsewhere / "shop.yaml"
        config.write_text(f"databases:\n  shop: {{engine: sqlite, path: '{shop}'}}\n")
        resume = ("--resume", failure, "-c", str(config), "-m", "m", "and more?")
        refused = rho_here(*resume, cwd=elsewhere, environ=environ)
        assert refused.returncode == 1
        assert "does not choose where the tools read and write" in refused.stderr
        workspace = str(tmp_path / "rho" / "evals" / "workspace")
        again = rho_here(*resume, "--working-dir", workspace, cwd=elsewhere, environ=environ)
        assert again.returncode == 0, again.stderr
        assert "Done." in again.stdout
    # nothing is left in the directory the command ran in but the data and the results
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bird", "elsewhere", "out", "rho"]
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["r.jsonl"]
    assert not any((tmp_path / "rho" / "evals" / "workspace").iterdir())  # kept, and empty


def test_ctrl_c_in_the_middle_then_the_same_command_continues(tmp_path: Path) -> None:
    command = [
        "eval", "bird", "--data", "bird", "--limit", "6", "-m", "m", "--out", "r.jsonl",
    ]  # fmt: skip
    out = tmp_path / "r.jsonl"
    with LoopbackServer([], rules=[sample_rule(stall_on=3)]) as server:
        environ = env(tmp_path, server)
        write_sample(tmp_path / "bird")  # as `eval sample-data bird` (its process: the first test)
        process = subprocess.Popen(
            [sys.executable, "-m", "rho_entry", *command],
            cwd=tmp_path, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=_sigint_as_on_a_terminal,
        )  # fmt: skip
        deadline = time.monotonic() + 60  # a wait for the process, not a speed assertion
        while not (out.exists() and out.read_text().count("\n") == 3):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the first three questions were not graded"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)  # it is now waiting for the model on question 3
        try:
            _stdout, stderr = process.communicate(timeout=60)
        except subprocess.TimeoutExpired as exc:
            child, here = _signal_state(process.pid), _signal_state(os.getpid())
            process.kill()
            process.wait()
            raise AssertionError(f"Ctrl+C did not stop the eval: {child}; test: {here}") from exc
    assert process.returncode == 130, stderr
    assert "interrupted; the graded questions are in r.jsonl" in stderr
    assert [json.loads(x)["question_id"] for x in out.read_text().splitlines()] == [0, 1, 2]
    with LoopbackServer([], rules=[sample_rule()]) as server:
        again = rho(*command, cwd=tmp_path, environ=env(tmp_path, server))
    assert again.returncode == 0, again.stderr
    assert "3 question(s) were already graded in r.jsonl" in again.stderr
    ids = [json.loads(x)["question_id"] for x in out.read_text().splitlines()]
    assert ids == [0, 1, 2, 3, 4, 5]
    assert again.stdout.splitlines()[4].split()[:4] == ["total", "6", "5", "83.33%"]


def test_the_terminal_closing_ends_the_eval_as_ctrl_c_does(tmp_path: Path) -> None:
    """Before, SIGHUP (and SIGTERM) killed ``eval bird`` where it stood: exit -1, nothing said,
    the question in flight unended in its trace. Now it ends as Ctrl+C does."""
    command = ["eval", "bird", "--data", "bird", "--limit", "1", "-m", "m", "--out", "r.jsonl"]
    with LoopbackServer([], rules=[sample_rule(stall_on=QUESTIONS[0][0])]) as server:
        environ = env(tmp_path, server)
        write_sample(tmp_path / "bird")
        process = subprocess.Popen(
            [sys.executable, "-m", "rho_entry", *command],
            cwd=tmp_path, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=_sighup_as_on_a_terminal,
        )  # fmt: skip
        deadline = time.monotonic() + 60  # a wait for the process, not a speed assertion
        while not server.requests:  # it is now waiting for the model on its one question
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the question was never asked"
            time.sleep(0.05)
        process.send_signal(signal.SIGHUP)
        try:
            _stdout, stderr = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert process.returncode == 128 + signal.SIGHUP, stderr  # 129; it was 130
    assert "interrupted; the graded questions are in r.jsonl" in stderr


def _sighup_as_on_a_terminal() -> None:
    """In the child, before exec: SIGHUP's default action, as a terminal gives it. A test run
    under nohup ignores SIGHUP; the child inherited that and rightly kept ignoring it (as
    rho-agent does under nohup), and the test waited out its 60 s timeout."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _sigint_as_on_a_terminal() -> None:
    """In the child, before exec: SIGINT's default action, as a shell in the foreground gives
    it. A test run started in the background of a non-interactive shell (``(pytest &)``)
    ignores SIGINT; the child inherited that, Python then installs no KeyboardInterrupt
    handler, and the test's Ctrl+C did nothing (it waited out its 60 s timeout)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_state(pid: int) -> str:
    """The signal lines of /proc/PID/status: an ignored or blocked SIGINT (bit 2 of SigIgn or
    SigBlk), inherited from the process that started it, looks like a hang here."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return " ".join(line.strip() for line in status if line.startswith("Sig"))
    except OSError as exc:
        return f"no status: {exc}"


def test_bad_data_and_flags_say_what_to_fix(tmp_path: Path) -> None:
    with LoopbackServer([], rules=[sample_rule()]) as server:
        environ = env(tmp_path, server)
        missing = rho_here(
            "eval", "bird", "--data", "nowhere", "-m", "m", cwd=tmp_path, environ=environ
        )
        workers = rho_here(
            "eval", "bird", "--data", ".", "--workers", "0", cwd=tmp_path, environ=environ
        )  # fmt: skip
        # nan and inf passed `<= 0`: the grader's deadline never passed
        timeouts = [
            rho_here("eval", "bird", "--data", ".", "--timeout", t, cwd=tmp_path, environ=environ)
            for t in ("nan", "inf")
        ]
        dead_after = rho_here(
            "eval", "bird", "--data", ".", "--durable", "--dead-after", "0", cwd=tmp_path,
            environ=environ,
        )  # fmt: skip
        write_sample(tmp_path / "bird")  # as `eval sample-data bird` (its process: the first test)
        (tmp_path / "bird" / "dev_databases" / "flights" / "flights.sqlite").unlink()
        partial = rho(
            "eval", "bird", "--data", "bird", "-m", "m", "--limit", "2", cwd=tmp_path,
            environ=environ,
        )  # fmt: skip
    assert missing.returncode == 1
    assert missing.stderr.strip() == "rho-agent eval: --data nowhere: not a directory"
    assert workers.returncode == 1
    no_data = rho_here("eval", "bird", cwd=tmp_path, environ=environ)
    assert no_data.returncode == 1
    assert "error: the following arguments are required: --data" in no_data.stderr
    assert "--workers must be at least 1, got 0" in workers.stderr
    for timeout, shown in zip(timeouts, ("nan", "inf"), strict=True):
        assert timeout.returncode == 1
        assert f"--timeout must be a positive number of seconds, got {shown}" in timeout.stderr
    assert dead_after.returncode == 1
    assert "--dead-after: expected a positive number of seconds, got '0'" in dead_after.stderr
    assert partial.returncode == 0, partial.stderr
    assert "skipped dev.json: question 19: database 'flights' is missing" in partial.stderr
    assert partial.stdout.splitlines()[4].split()[:3] == ["total", "2", "2"]
