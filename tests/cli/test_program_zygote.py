"""``program_zygote``: a program forked from the zygote is a process of its own that gets
its argv, directory, environment and streams, and whose status and signals are the
client's ``Popen``'s (the durable, server and MCP tests rely on each)."""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from program_zygote import PRELOAD, ForkedPopen, popen, run

import rho_entry

PROGRAM = """
import json, os, signal, sys, time
what = sys.argv[1]
if what == "sleep":  # a program's own TERM handler, set before it says it runs
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))
print(json.dumps({"argv": sys.argv, "path0": sys.path[0], "cwd": os.getcwd(),
                  "env": os.environ.get("ZYGOTE_TEST"), "pid": os.getpid(),
                  "name": __name__, "stdin": sys.stdin.read()}), flush=True)
if what == "sleep":
    time.sleep(60)
elif what == "raise":
    raise ValueError("boom")
sys.exit(int(sys.argv[2]))
"""


def test_every_preloaded_module_exists() -> None:
    """A preloaded name that no longer exists (a module renamed or moved) is skipped by the
    zygote without a word, and every program forked from it pays that import again: the
    ``serve`` and one-shot modules listed there are about half of those programs' CPU."""
    missing = [name for names in PRELOAD.values() for name in names if not _findable(name)]
    assert missing == []


def _findable(name: str) -> bool:
    """Whether module ``name`` is on the path, found without importing it or its packages
    (``importlib.util.find_spec`` imports the parents: Starlette, uvicorn, the MCP SDK)."""
    top, *rest = name.split(".")
    spec = importlib.util.find_spec(top)
    for part in rest:
        if spec is None or not spec.submodule_search_locations:
            return False
        spec = importlib.machinery.PathFinder.find_spec(part, list(spec.submodule_search_locations))
    return spec is not None


def _program(tmp_path: Path) -> Path:
    path = tmp_path / "program.py"
    path.write_text(PROGRAM)
    return path


def _alive(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def test_argv_directory_environment_streams_and_status_are_the_programs(tmp_path: Path) -> None:
    program = _program(tmp_path)
    env = {**os.environ, "ZYGOTE_TEST": "here"}
    done = run(
        "plain", [sys.executable, str(program), "exit", "3"],
        cwd=tmp_path, env=env, input="typed", text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    seen = json.loads(done.stdout)
    assert seen["argv"] == [str(program), "exit", "3"]
    assert seen["path0"] == str(program.parent)  # as `python SCRIPT` puts it first
    assert (seen["cwd"], seen["env"], seen["name"]) == (str(tmp_path), "here", "__main__")
    assert seen["stdin"] == "typed"
    assert seen["pid"] not in (os.getpid(), 0)
    raised = run("plain", [sys.executable, str(program), "raise"], text=True, timeout=60)
    assert raised.returncode == 1
    assert "ValueError: boom" in raised.stderr


def test_signals_reach_the_program_and_its_end_is_the_clients(tmp_path: Path) -> None:
    program = _program(tmp_path)
    argv = [sys.executable, str(program), "sleep"]
    handled = popen("plain", argv, stdout=subprocess.PIPE, text=True)
    assert isinstance(handled, ForkedPopen)
    assert handled.stdout is not None
    assert handled.stdout.readline()  # the program runs, its handler set
    handled.terminate()
    assert handled.wait(30) == 7  # its own TERM handler decided
    killed = popen("plain", argv, stdout=subprocess.PIPE, text=True)
    assert killed.stdout is not None
    killed.stdout.readline()
    assert isinstance(killed, ForkedPopen)
    pid = killed.program_pid()
    assert pid is not None
    assert pid != killed.pid
    killed.kill()  # the program's SIGKILL, not only the client's
    assert killed.wait(30) == -signal.SIGKILL
    assert not _alive(pid)


def test_a_client_killed_by_someone_else_takes_its_program_along(tmp_path: Path) -> None:
    program = _program(tmp_path)
    process = popen(
        "plain", [sys.executable, str(program), "sleep"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    process.stdout.readline()
    assert isinstance(process, ForkedPopen)
    pid = process.program_pid()
    assert pid is not None
    os.kill(process.pid, signal.SIGKILL)  # the client only, as a process group's KILL would
    process.wait(30)
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive(pid)


def test_another_interpreter_is_started_plainly(tmp_path: Path) -> None:
    program = _program(tmp_path)
    (tmp_path / "python").symlink_to(sys.executable)
    other = popen("plain", [str(tmp_path / "python"), str(program), "exit", "0"])
    assert type(other) is subprocess.Popen
    assert other.wait(60) == 0


PATH_PROGRAM = """
import sys, tempfile
import team_hooks
print(repr({"path": sys.path, "hooks": team_hooks.__file__, "tempfile": tempfile.__file__}))
"""


def _site(tmp_path: Path, *names: str) -> Path:
    """A directory for ``PYTHONPATH`` with ``team_hooks.py`` and modules ``names``."""
    site = tmp_path / "site"
    site.mkdir()
    for name in ("team_hooks", *names):
        (site / f"{name}.py").write_text(f"WHERE = {name!r}\n")
    return site


def _seen(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    return dict(ast.literal_eval(out))


def test_a_directory_the_pythonpath_adds_is_forked_first_on_the_path_as_a_cold_python(
    tmp_path: Path,
) -> None:
    """A hooks module's directory on ``PYTHONPATH`` (before it, each such program started
    cold): forked, with ``sys.path`` as a cold Python's, the directory first."""
    site = _site(tmp_path)
    program = tmp_path / "program.py"
    program.write_text(PATH_PROGRAM)
    given = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(site)]))
    argv = [sys.executable, str(program)]
    env = {**os.environ, "PYTHONPATH": given}
    forked = popen("plain", argv, env=env, stdout=subprocess.PIPE, text=True)
    assert type(forked) is ForkedPopen
    cold = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    seen, expected = _seen(forked), _seen(cold)
    assert seen == expected
    assert seen["hooks"] == str(site / "team_hooks.py")


@pytest.mark.parametrize("shadow", ["tempfile", "sitecustomize"])
def test_a_directory_holding_an_imported_module_or_a_site_file_is_started_plainly(
    tmp_path: Path, shadow: str
) -> None:
    """A directory whose module the zygote imported already (``tempfile``), or with a file a
    cold Python runs at its start: a fork would not run what a cold Python runs."""
    site = _site(tmp_path, shadow)
    program = tmp_path / "program.py"
    program.write_text(PATH_PROGRAM)
    given = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(site)]))
    env = {**os.environ, "PYTHONPATH": given}
    argv = [sys.executable, str(program)]
    plain = popen("plain", argv, env=env, stdout=subprocess.PIPE, text=True)
    assert type(plain) is subprocess.Popen
    seen = _seen(plain)
    assert (seen["tempfile"] == str(site / "tempfile.py")) == (shadow == "tempfile")


def test_the_sources_of_this_process_passed_on_are_forked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``PYTHONPATH`` naming the sources this process imported ``rho_entry`` from (a test
    passes them on so that a cold process runs them) imports what the zygote did: forked,
    also where this process has no ``PYTHONPATH`` (CI: the editable install's path). One
    without them (or with a relative or empty entry) is started plainly."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    sources = str(Path(rho_entry.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": sources}
    argv = [sys.executable, str(_program(tmp_path)), "exit", "0"]
    forked = popen("plain", argv, env=env)
    assert type(forked) is ForkedPopen
    assert forked.wait(60) == 0
    for other in ("", f"{sources}{os.pathsep}site", f"{sources}{os.pathsep}"):
        plain = popen("plain", argv, env={**env, "PYTHONPATH": other})
        assert type(plain) is subprocess.Popen
        assert plain.wait(60) == 0


WORKER = """
import sys, time
import program_zygote
where = program_zygote.zygote("plain")
print("zygote", (where.dir / "pid").read_text(), flush=True)
done = program_zygote.run("plain", [sys.executable, "-c", "print('ran')"], timeout=60, text=True)
print("program", done.stdout.strip(), flush=True)
sys.stdin.readline()  # the session's end
program_zygote.close_all()
print("closed", flush=True)
"""


def _worker(shared: Path) -> subprocess.Popen[str]:
    """A Python that uses the plain zygote as an xdist worker of the run ``shared`` does."""
    env = {**os.environ, "RHO_TEST_ZYGOTES": str(shared)}
    env.pop("RHO_TEST_OWN_ZYGOTES", None)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, "-c", WORKER],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_the_workers_of_a_run_share_a_zygote_its_starter_stopping_it_after_the_others(
    tmp_path: Path,
) -> None:
    first, second = _worker(tmp_path), _worker(tmp_path)
    try:
        pids = {_line(first).split()[1], _line(second).split()[1]}
        assert len(pids) == 1, pids  # one zygote for both
        zygote = int(pids.pop())
        assert _line(first) == _line(second) == "program ran\n"
        starter, other = (first, second) if zygote in _children(first.pid) else (second, first)
        _end_session(starter)
        time.sleep(0.5)  # the starter's session ended; the other's has not
        assert starter.poll() is None
        assert _alive(zygote)
        _end_session(other)
        assert other.wait(30) == 0
        assert starter.wait(30) == 0  # then the starter stops the zygote and ends
        assert not _alive(zygote)
    finally:
        for worker in (first, second):
            worker.kill()
            worker.wait()


def _line(worker: subprocess.Popen[str]) -> str:
    assert worker.stdout is not None
    return worker.stdout.readline()


def _end_session(worker: subprocess.Popen[str]) -> None:
    assert worker.stdin is not None
    worker.stdin.write("end\n")
    worker.stdin.flush()


def _children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
