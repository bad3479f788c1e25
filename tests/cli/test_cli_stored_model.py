"""A session directory does not choose the provider the conversation goes to through its
``model``: without a provider or base URL, a model's name chooses the provider
(``claude-...``: Anthropic), so a stored ``model: claude-...`` resumed by a user whose own
model goes to OpenAI sent the conversation, with every file a tool read, to Anthropic with
the user's ``ANTHROPIC_API_KEY`` (the endpoint check compared the stored ``base_url``,
``provider`` and ``api_key_env`` only). Seen here through a proxy on loopback that records
where each request was going (``CONNECT host:443``)."""

from __future__ import annotations

from pathlib import Path

from cli_support import rho
from proxy_support import recording_proxy
from test_cli_stored_budget import craft

KEYS = {"OPENAI_API_KEY": "sk-openai-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


def _session(tmp_path: Path, model: str) -> tuple[Path, Path, str]:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    sid = craft(home, work, "c0ffee00ad01", model=model, model_retries=0)
    return home, work, sid


def test_a_stored_model_does_not_send_the_conversation_to_another_provider(
    tmp_path: Path,
) -> None:
    home, work, sid = _session(tmp_path, "claude-sonnet-4-5")
    with recording_proxy() as (proxy, seen):
        result = rho("--resume", sid, "hello", cwd=work, home=home, HTTPS_PROXY=proxy, **KEYS)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "was stored with model 'claude-sonnet-4-5', whose calls would go to anthropic" in (
        result.stderr
    )
    assert "your model calls go to openai" in result.stderr
    assert seen == []  # before: CONNECT api.anthropic.com:443

    # chosen again, it is the user's choice
    with recording_proxy() as (proxy, seen):
        again = ("--model", "claude-sonnet-4-5", "--resume", sid, "hello")
        rho(*again, cwd=work, home=home, HTTPS_PROXY=proxy, **KEYS)
    assert seen, "no request went out"
    assert seen[0].startswith("CONNECT api.anthropic.com:443"), seen


def test_a_stored_model_of_the_resumers_provider_resumes(tmp_path: Path) -> None:
    home, work, sid = _session(tmp_path, "gpt-4.1-mini")
    with recording_proxy() as (proxy, seen):
        result = rho("--resume", sid, "hello", cwd=work, home=home, HTTPS_PROXY=proxy, **KEYS)
    assert "was stored with model" not in result.stderr
    assert seen, result.stderr
    assert seen[0].startswith("CONNECT api.openai.com:443"), seen
