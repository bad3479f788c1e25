"""Anchor item 11 (the reference's resume with a flag dropped the stored settings), re-tried on
``fork`` with a task: it runs as a ``--resume`` of the new session, whose stored endpoint is
refused until it is given again. The refusal said "pass --base-url again", but ``fork`` had no
``--base-url``: a session on a local server (or any endpoint but the default) could be forked
with a task only through environment variables. ``fork`` now takes the endpoint flags."""

from __future__ import annotations

from pathlib import Path

from cli_support import rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply


def test_a_fork_with_a_task_takes_the_endpoint_again(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    replies = [text_reply("first"), text_reply("second"), text_reply("from the fork")]
    with LoopbackServer(replies) as server:
        url = ("--base-url", server.base_url)
        assert rho(*url, "-m", "m", "one", cwd=work, home=home).returncode == 0
        assert rho(*url, "--resume", "latest", "two", cwd=work, home=home).returncode == 0
        (original,) = (home / "rho" / "sessions").iterdir()
        refused = rho("fork", original.name, "--at", "2", "again", cwd=work, home=home)
        assert refused.returncode == 1
        assert "pass --base-url again" in refused.stderr
        forked = rho("fork", original.name, "--at", "2", *url, "instead", cwd=work, home=home)
    assert forked.returncode == 0, forked.stderr
    assert forked.stdout.strip() == "from the fork"
    sent = [m["content"] for m in server.requests[-1]["messages"][1:]]
    assert sent == ["one", "first", "instead"]


def test_a_fork_with_a_task_takes_the_system_prompt_template_again(tmp_path: Path) -> None:
    """The same for a session started with ``-s TEMPLATE.md``: "pass --system-prompt ...
    again", which fork did not take either."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    (work / "review.md").write_text("---\ndescription: r\n---\nYou review code.\n")
    assert rho("-m", "demo", "-s", "review.md", "one", cwd=work, home=home).returncode == 0
    (original,) = (home / "rho" / "sessions").iterdir()
    refused = rho("fork", original.name, "--at", "1", "-m", "demo", "x", cwd=work, home=home)
    assert refused.returncode == 1
    assert "pass --system-prompt" in refused.stderr
    forked = rho(
        "fork", original.name, "--at", "1", "-m", "demo", "-s", "review.md", "instead",
        cwd=work, home=home,
    )  # fmt: skip
    assert forked.returncode == 0, forked.stderr
    assert "[demo model" in forked.stdout
