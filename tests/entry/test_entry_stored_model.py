"""``Session.resume`` keeps its endpoint promise for a stored ``model`` too: a new
``AgentConfig()`` here sends its calls to OpenAI, and a stored ``model: claude-...`` (whose
name chooses Anthropic when nothing else does) would send the conversation to Anthropic with
the user's ``ANTHROPIC_API_KEY``. Refused unless the model (or the endpoint) is given again;
before, the default authority compared ``base_url``, ``provider`` and ``api_key_env`` only."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_entry_stored_authority import craft

from rho_adapters.store import FileSessionStore
from rho_domain.errors import ConfigError
from rho_entry import Session

KEYS = {"OPENAI_API_KEY": "sk-openai-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RHO_AGENT_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)


async def test_a_stored_model_of_another_provider_is_refused(tmp_path: Path, keys: None) -> None:
    store = FileSessionStore(tmp_path / "sessions")
    sid = craft(tmp_path / "sessions", tmp_path, model="claude-sonnet-4-5")
    with pytest.raises(ConfigError, match="whose calls would go to anthropic"):
        await Session.resume(sid, store=store)


async def test_the_model_given_again_resumes(tmp_path: Path, keys: None) -> None:
    store = FileSessionStore(tmp_path / "sessions")
    sid = craft(tmp_path / "sessions", tmp_path, model="claude-sonnet-4-5")
    for overrides in ({"model": "claude-sonnet-4-5"}, {"provider": "anthropic"}):
        session = await Session.resume(sid, store=store, overrides=overrides)
        await session.close()
    sid = craft(tmp_path / "sessions", tmp_path, "c0ffee000002", model="gpt-4.1-mini")
    session = await Session.resume(sid, store=store)  # the same provider as the default's
    await session.close()
