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

from cli_support import rho

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
