"""scripts/real_server_check.py with ``--base-url``: a server that is not llama-cpp-python is
refused before any task runs, with what to start instead, and no work files are left; the
llama-cpp-python fake is recognised (issue 30, F27)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from rho_adapters.fakes.llama_cpp_python import llama_cpp_python_rules
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "real_server_check.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_server_check", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_another_server_is_refused_first_and_nothing_is_left(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    with LoopbackServer([text_reply("hi")]) as server:
        done = subprocess.run(
            [sys.executable, str(SCRIPT), "--base-url", server.base_url],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is not a llama-cpp-python server" in done.stderr
    assert "python -m llama_cpp.server" in done.stderr
    assert "passed" not in done.stdout  # no task ran
    assert list(tmp_path.iterdir()) == []


def test_a_port_where_nothing_answers_is_named(tmp_path: Path) -> None:
    reason = _script().not_llama_cpp_python("http://127.0.0.1:9/v1")
    assert reason is not None
    assert reason.startswith("http://127.0.0.1:9/v1 did not answer as a model server")


def test_a_llama_cpp_python_server_is_accepted() -> None:
    with LoopbackServer([], rules=llama_cpp_python_rules(n_ctx=4096)) as server:
        assert _script().not_llama_cpp_python(server.base_url) is None


def test_the_help_names_the_server_it_wants() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=True
    )
    assert "running llama-cpp-python server" in " ".join(done.stdout.split())
