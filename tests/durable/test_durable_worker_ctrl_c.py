"""Ctrl+C while a real ``rho-agent worker`` process starts, and SIGTERM as it says it is
consuming, on a real PostgreSQL.

The worker's durable database is a database of the test's own on the shared server; its
DBOS tables are made by a first worker. The test then holds a lock on DBOS's
``workflow_status`` table, so that the second worker's start waits on the server (DBOS's
launch and the version check read that table), sends that worker SIGINT while it waits, and
lets the server answer. The worker must end at once, with the CLI's status for Ctrl+C (130)
and a line instead of a traceback, with nothing left running when its interpreter ends (a
probe run by ``atexit``, through ``sitecustomize``, lists the threads still alive and counts
the worker's connections to the database on the server), and with nothing half-written: a
next worker starts on the same database.

The probe is how the clean-up of a cancelled start shows in a process that ends right after
it: once the process is gone the server drops its connections whatever it did, while a
library caller's process goes on with whatever the start left behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from durable_support import Worker, clean_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))  # the PostgreSQL rig
from pg_rig import pg_server_url

from rho_entry.cli import exit_codes

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)
__all__ = ["pg_server_url"]

# Run at the interpreter's end in the worker: after non-daemon threads are joined and before
# daemon threads (DBOS's, the heartbeat's) die with the process.
PROBE = """
import atexit, faulthandler, json, os, signal, threading, time

faulthandler.register(signal.SIGUSR1, all_threads=True)  # a hung worker says where

def _left():
    import psycopg

    alive = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    with psycopg.connect(os.environ["RHO_TEST_PROBE_URL"], autocommit=True) as conn:
        (count,) = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND pid <> %s AND client_port IS NOT NULL",
            (int(os.environ["RHO_TEST_PROBE_HOLDER"]),),
        ).fetchone()
    return {"threads": alive, "connections": count}

def _probe():
    # a 5 s grace: a pool thread told to stop may still be ending, and the server drops a
    # closed connection's backend shortly after the close
    deadline = time.monotonic() + 5
    left = _left()
    while left != {"threads": [], "connections": 0} and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _left()
    with open(os.environ["RHO_TEST_PROBE_OUT"], "w") as out:
        json.dump(left, out)

atexit.register(_probe)
"""


@pytest.fixture
def durable_db(pg_server_url: str) -> Iterator[str]:
    """A database of its own on the shared server for the workers' DBOS tables."""
    import psycopg

    name = f"durable_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield f"{pg_server_url.rsplit('/', 1)[0]}/{name}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def _waiting_on_a_lock(url: str, holder: int) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> %s",
            (holder,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_ctrl_c_while_the_worker_starts_ends_it_with_nothing_left(
    durable_db: str, tmp_path: Path
) -> None:
    import psycopg

    model = "http://127.0.0.1:9/v1"  # no run is taken: never asked
    Worker(tmp_path, "first", db=durable_db, base_url=model).wait_ready().stop()
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "sitecustomize.py").write_text(PROBE)
    probed = tmp_path / "probe.json"
    env = clean_env(
        tmp_path / "home",
        PYTHONPATH=os.pathsep.join(
            filter(None, [str(tmp_path / "probe"), os.environ.get("PYTHONPATH")])
        ),
        RHO_TEST_PROBE_URL=durable_db,
        RHO_TEST_PROBE_OUT=str(probed),
    )  # and RHO_TEST_PROBE_HOLDER: the test's own connection, not counted
    argv = [sys.executable, "-m", "rho_entry", "worker", "--durable-db", durable_db]
    argv += ["--store", str(tmp_path / "store"), "-m", "demo", "--executor-id", "second"]
    argv += ["--poll", "0.1", "--heartbeat", "0.1"]
    with psycopg.connect(durable_db) as holder:
        holder.execute("LOCK TABLE dbos.workflow_status IN ACCESS EXCLUSIVE MODE")
        env["RHO_TEST_PROBE_HOLDER"] = str(holder.info.backend_pid)
        worker = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not _waiting_on_a_lock(durable_db, holder.info.backend_pid):
                assert worker.poll() is None, worker.communicate()[1]
                assert time.monotonic() < deadline, "the worker's start never reached DBOS"
                time.sleep(0.05)
            worker.send_signal(signal.SIGINT)
            time.sleep(0.5)  # the signal lands while the start waits on the server
            holder.rollback()  # the server answers
            released = time.monotonic()
            try:
                _, err = worker.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                worker.send_signal(signal.SIGUSR1)  # the probe's faulthandler: every stack
                time.sleep(1)
                worker.kill()
                _, err = worker.communicate()
                pytest.fail(f"the worker did not end 60 s after the server answered:\n{err}")
            took = time.monotonic() - released
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    assert worker.returncode == exit_codes.CANCELLED, err
    assert "Traceback" not in err, err
    assert "interrupted" in err, err
    assert took < 30, f"{took:.1f} s from the server's answer to the worker's end"
    left = json.loads(probed.read_text())
    assert left == {"threads": [], "connections": 0}, left
    # nothing half-written: the next worker starts on the same database
    Worker(tmp_path, "third", db=durable_db, base_url=model).wait_ready().stop()


def _blocked_writing(pid: int) -> bool:
    """Whether the process's main thread sleeps in a write to a full pipe."""
    try:
        return "pipe_write" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


def test_sigterm_as_the_banner_is_written_stops_the_worker_cleanly(
    durable_db: str, tmp_path: Path
) -> None:
    """A supervisor that waits for "consuming" and then stops the worker must get a clean
    stop (status 0), never a death by SIGTERM: the worker listens for its signals before it
    says it is consuming. The banner is held in a write to a full pipe (a 4 KiB pipe the test
    fills first), the signal is sent while it is held, then the pipe is read."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # one page
    os.set_blocking(write_end, False)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(write_end, b"." * 4096)
    os.set_blocking(write_end, True)
    argv = [sys.executable, "-m", "rho_entry", "worker", "--durable-db", durable_db]
    argv += ["--store", str(tmp_path / "store"), "-m", "demo", "--executor-id", "banner"]
    argv += ["--poll", "0.1", "--heartbeat", "0.1"]
    env = clean_env(tmp_path / "home")
    worker = subprocess.Popen(argv, env=env, stderr=write_end, stdout=subprocess.DEVNULL)
    os.close(write_end)
    try:
        deadline = time.monotonic() + 60
        while not _blocked_writing(worker.pid):
            assert worker.poll() is None, "the worker ended before it wrote its banner"
            assert time.monotonic() < deadline, "the worker never wrote to its stderr"
            time.sleep(0.05)
        worker.send_signal(signal.SIGTERM)
        time.sleep(0.3)  # the signal lands while the banner's write is held
        with os.fdopen(read_end, "rb") as pipe:
            err = pipe.read().decode().lstrip(".")
        worker.wait(60)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    assert "consuming" in err, err
    assert worker.returncode == exit_codes.OK, (worker.returncode, err)
