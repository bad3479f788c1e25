"""``--resume`` reads a stored template path only when the user names that file again: a
session directory's ``system_prompt: <path>.md`` chose a file of the user's (any file, through
a link named ``.md``) to read and send to the model."""

from __future__ import annotations

import json
import time
from pathlib import Path

import yaml
from cli_support import rho


def craft(home: Path, workspace: Path, system_prompt: str, sid: str = "c0ffee0000bb") -> str:
    directory = home / "rho" / "sessions" / sid
    directory.mkdir(parents=True)
    data = {"model": "demo", "working_dir": str(workspace), "system_prompt": system_prompt}
    (directory / "config.yaml").write_text(yaml.safe_dump(data))
    (directory / "trace.jsonl").write_text("")
    meta = {
        "id": sid,
        "status": "completed",
        "created_at": time.time(),
        "updated_at": time.time(),
        "model": "demo",
        "profile": "readonly",
        "working_dir": str(workspace),
    }
    (directory / "meta.json").write_text(json.dumps(meta))
    return sid


def test_a_stored_template_path_is_refused_unless_given_again(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    secret = tmp_path / "private" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("TOP SECRET hunter2\n")
    link = tmp_path / "private" / "notes.md"
    link.symlink_to(secret)
    sid = craft(home, work, str(link))
    refused = rho("--resume", sid, "hello", cwd=work, home=home)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert (
        f"session {sid} was stored with the system prompt template {str(link)!r}, a file that "
        "would be read and sent to the model"
    ) in refused.stderr
    assert f"pass --system-prompt {link} again" in refused.stderr
    assert (home / "rho" / "sessions" / sid / "trace.jsonl").read_text() == ""
    # The user's own choice is theirs: given again, the template is read.
    prompt = tmp_path / "analyst.md"
    prompt.write_text("You are a careful analyst.\n")
    given = rho("--resume", sid, "--system-prompt", str(prompt), "hello", cwd=work, home=home)
    assert given.returncode == 0, given.stderr


def test_a_session_started_with_a_template_resumes_when_it_is_named_again(
    tmp_path: Path,
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    prompt = tmp_path / "analyst.md"
    prompt.write_text("You are a careful analyst.\n")
    first = rho("--model", "demo", "--system-prompt", str(prompt), "hello", cwd=work, home=home)
    assert first.returncode == 0, first.stderr
    again = rho("--resume", "latest", "--system-prompt", str(prompt), "more", cwd=work, home=home)
    assert again.returncode == 0, again.stderr
    bare = rho("--resume", "latest", "more", cwd=work, home=home)
    assert bare.returncode == 1
    assert f"pass --system-prompt {prompt.resolve()} again" in bare.stderr
