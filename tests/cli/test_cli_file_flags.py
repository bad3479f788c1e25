"""Every flag that names a file the CLI reads: its refusal names the flag and the path, and a
named pipe that nothing writes to is refused instead of waited on for good.

Before: ``--config`` and ``--vars-file`` refusals named the path only ("/x.yaml: cannot read
an agent config: ..."), ``--system-prompt``'s too ("x.md: cannot read the prompt
template"), ``--dockerfile DIR`` said "no such file", and each of ``--config``,
``--vars-file``, ``--output-schema``, ``--mcp-config`` and ``--dockerfile`` naming a FIFO
held the command before its run began until it was killed (``timeout 10`` ended it)."""

from __future__ import annotations

import os
from pathlib import Path

from cli_support import clean_env, rho

# flag -> what the refusal says it could not read (the loader's own words)
_READS = {
    "--config": "an agent config",
    "--mcp-config": "it",
    "--vars-file": "the vars file",
    "--output-schema": "the answer's schema",
    "--system-prompt": "the prompt template",
    "--dockerfile": "the Dockerfile",
}


def test_each_file_flag_names_itself_and_the_path_and_never_waits_on_a_pipe(
    tmp_path: Path,
) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    (work / "dir.md").mkdir()
    os.mkfifo(work / "pipe.md")
    cases = {"missing.md": "No such file or directory", "dir.md": "Is a directory"}
    cases["pipe.md"] = "it is a named pipe (FIFO) that nothing writes to; give a file"
    for flag, what in _READS.items():
        for path, why in cases.items():
            if flag == "--system-prompt" and path == "pipe.md":
                continue  # any pipe is refused: see the test below
            run = rho("--model", "demo", flag, path, "hi", cwd=work, home=home)
            assert run.returncode == 1, (flag, path, run.stdout)
            assert run.stderr.startswith(f"rho-agent: {flag} {path}: cannot read {what}: {why}"), (
                flag,
                path,
                run.stderr,
            )
    # a refusal of the file's content names the flag too, not only the path
    (work / "list.yaml").write_text("- a\n")
    run = rho("--model", "demo", "--vars-file", "list.yaml", "hi", cwd=work, home=home)
    assert run.stderr.startswith("rho-agent: --vars-file list.yaml: a vars file must be a mapping")


_SCRIPT = """
import socket, sys
from rho_entry.cli.main import main
socket.socket(socket.AF_UNIX).bind("listening.sock")
for argv in (
    ["--config", "listening.sock"],
    ["--vars-file", "-"],
    ["--system-prompt", "/dev/stdin"],
    ["--system-prompt", "/dev/zero"],
):
    print(main(["--model", "demo", *argv, "hi"]), file=sys.stderr, flush=True)
"""


def test_a_socket_a_dash_and_a_stream_as_system_prompt_are_named(tmp_path: Path) -> None:
    """Before: a socket was "No such device or address" (the open's ENXIO), ``-`` (standard
    input to many tools) "No such file or directory", and ``--system-prompt /dev/stdin`` (or
    ``/dev/zero``, a pipe, a socket: no regular file) ran with the words "/dev/stdin" as the
    system prompt, unsaid. A system prompt's file is read again as the session is built and
    resumed, so a stream is refused, even one with a writer."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
        cwd=tmp_path,
        env=clean_env(tmp_path / "home"),
    )
    stream = (
        ": it is not a regular file (a device, a pipe or a socket), and a system prompt's "
        "file is read again when the session is built and resumed; give a file"
    )
    assert done.stderr.splitlines() == [
        "rho-agent: --config listening.sock: cannot read an agent config: it is a socket, "
        "not a file; give a file",
        "1",
        "rho-agent: --vars-file -: cannot read the vars file: No such file or directory (- is "
        "not standard input here; give a file, or /dev/stdin)",
        "1",
        f"rho-agent: --system-prompt /dev/stdin{stream}",
        "1",
        f"rho-agent: --system-prompt /dev/zero{stream}",
        "1",
    ], done.stderr


def test_a_pipe_that_trickles_and_never_closes_is_refused_in_time(tmp_path: Path) -> None:
    """Before: a writer sending a byte more often than the idle bound (every 29 s of 30),
    never closing, was read for as long as it liked: each byte reset the idle bound, and
    16 MiB at that pace take 15 years. The read now ends ``within`` seconds in all (120 by
    default; a short one here, the writer sending every 10 ms, the idle bound 60 s).
    ``O_RDWR`` opens the writer without waiting for the reader."""
    import threading

    import pytest

    from rho_domain.errors import ConfigError
    from rho_entry.config.yaml_text import read_config_text

    fifo = tmp_path / "vars.yaml"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)
    done = threading.Event()

    def trickle() -> None:  # 3 s at most, then closed: read whole, were it not bounded
        for _ in range(300):
            if done.wait(0.01):
                break
            os.write(writer, b"#")
        os.close(writer)

    thread = threading.Thread(target=trickle)
    thread.start()
    try:
        with pytest.raises(ConfigError) as refused:
            read_config_text(fifo, where="--vars-file vars.yaml", what="it", idle=60, within=0.2)
    finally:
        done.set()
        thread.join()
    assert str(refused.value) == (
        "--vars-file vars.yaml: cannot read it: it is a pipe whose writer has not closed it "
        "after 0.2 s; close the writer when it is done (or give a file)"
    )


def test_a_pipe_whose_writer_never_closes_is_refused_naming_it(tmp_path: Path) -> None:
    """Before: ``--config FIFO`` held open by a writer that never closes it (``sleep 1000 >
    FIFO``) was read as ``cat`` reads it, for good: the run never began, nothing was said,
    until it was killed. Now a writer that sends nothing for ``idle`` seconds (30 by
    default; a short one here) is refused, naming the file; one that closes is read."""
    from rho_domain.errors import ConfigError
    from rho_entry.config.yaml_text import read_config_text

    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    for sent in (b"", b"model: half"):
        writer = os.open(fifo, os.O_RDWR)  # a writer that holds it open
        try:
            os.write(writer, sent)
            try:
                read_config_text(fifo, where="--config config.yaml", what="it", idle=0.05)
            except ConfigError as refused:
                said = str(refused)
            else:
                raise AssertionError("read a pipe whose writer never closed it")
        finally:
            os.close(writer)
        assert said == (
            "--config config.yaml: cannot read it: it is a pipe whose writer sent nothing for "
            "0.05 s and has not closed it; close the writer when it is done (or give a file)"
        )
