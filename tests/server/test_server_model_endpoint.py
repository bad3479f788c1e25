"""A client of ``rho-agent serve`` chooses a model, never where the server's calls go: with no
provider or base URL configured a model's name chooses the provider, so ``POST /api/sessions
{"model": "claude-..."}`` on a server whose model goes to OpenAI sent the conversation to
Anthropic with the server's ``ANTHROPIC_API_KEY`` (docs/server.md: a client cannot pick the
model endpoint). Now 403 naming ``model``, nothing sent; a model of the server's provider is
taken. Seen through a proxy on loopback that records where each request was going."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from server_support import UvicornThread, http, place, settings

# isort: split
from proxy_support import recording_proxy  # tests/cli/, put on sys.path by server_support

from rho_domain.config import AgentConfig
from rho_entry.server.app import create_app

KEYS = {"OPENAI_API_KEY": "sk-openai-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


def _wait_for(seen: list[str], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not seen and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_client_cannot_choose_another_provider_by_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = place(tmp_path)
    for name in ("RHO_AGENT_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with recording_proxy() as (proxy, seen):
        environ = {"RHO_AGENT_HOME": str(where.home), "HOME": str(where.home), **KEYS}
        for name, value in {**KEYS, "HTTPS_PROXY": proxy}.items():
            monkeypatch.setenv(name, value)
        app = create_app(
            settings(where),
            base_config=AgentConfig(model="gpt-4.1-mini", model_retries=0),
            environ=environ,
        )
        with UvicornThread(app) as server:
            refused = http().post(
                f"{server.url}/api/sessions",
                json={"prompt": "hi", "model": "claude-sonnet-4-5"},
                headers=server.auth,
            )
            assert refused.status_code == 403, refused.text  # 201 before
            error = refused.json()["error"]
            assert error["field"] == "model"
            assert "whose calls would go to anthropic" in error["message"]
            time.sleep(0.5)
            assert seen == []  # before: CONNECT api.anthropic.com:443

            taken = http().post(
                f"{server.url}/api/sessions",
                json={"prompt": "hi", "model": "gpt-4o-mini"},
                headers=server.auth,
            )
            assert taken.status_code == 201, taken.text
            _wait_for(seen)
            http().post(
                f"{server.url}/api/sessions/{taken.json()['id']}/cancel", headers=server.auth
            )
    assert seen
    assert seen[0].startswith("CONNECT api.openai.com:443"), seen
