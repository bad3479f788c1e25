"""The bash schema is one object per timeout, so the token estimate's schema JSON is reused."""

from __future__ import annotations

import json

from rho_adapters.model import tokens
from rho_domain.model import ModelRequest
from rho_domain.tools.bash import BashHandler
from rho_domain.tools.registry import ToolRegistry


def _timeout_text(handler: BashHandler) -> str:
    return str(handler.parameters["properties"]["timeout"]["description"])


def test_handlers_with_one_timeout_share_the_schema_and_a_new_timeout_gets_its_own() -> None:
    first = BashHandler(restricted=True, timeout=30)
    second = BashHandler(restricted=True, timeout=30)
    assert first.parameters is second.parameters
    assert _timeout_text(first) == "Seconds before the command is killed (max 30)."
    first.timeout = 45  # the cache is keyed by the timeout, so the schema follows it
    assert _timeout_text(first) == "Seconds before the command is killed (max 45)."
    assert _timeout_text(second) == "Seconds before the command is killed (max 30)."
    assert first.parameters is not second.parameters


def test_a_new_sessions_registry_reuses_the_encoded_schema_text() -> None:
    tokens._SCHEMAS.clear()

    def request() -> ModelRequest:
        registry = ToolRegistry([BashHandler(restricted=True, timeout=30)])
        return ModelRequest(model="m", system="s", messages=(), tools=registry.specs())

    text = tokens.prompt_text(request())
    assert len(tokens._SCHEMAS) == 1
    assert tokens.prompt_text(request()) == text  # a fresh registry and handler: no new entry
    assert len(tokens._SCHEMAS) == 1
    schema = json.loads(text.split("\n", 1)[1])
    assert schema[0]["function"]["parameters"]["required"] == ["command"]


class _Described(BashHandler):
    """A handler whose description can change after it is registered."""

    text = "first"

    @property
    def description(self) -> str:
        return self.text


def test_registry_specs_are_reused_until_a_schema_or_description_changes() -> None:
    bash = _Described(restricted=True, timeout=30)
    registry = ToolRegistry([bash])
    specs = registry.specs()
    assert registry.specs() is specs  # nothing changed: the same specs, nothing rebuilt
    bash.timeout = 45
    after_timeout = registry.specs()
    assert after_timeout is not specs
    assert after_timeout[0].parameters is bash.parameters
    assert "max 45" in json.dumps(after_timeout[0].to_openai())
    bash.text = "second"
    assert registry.specs()[0].description == "second"
    assert registry.specs() is registry.specs()


def test_registry_specs_are_sorted_by_name_whatever_the_order_given() -> None:
    from rho_domain.tools.listing import ListHandler
    from rho_domain.tools.read import ReadHandler

    registry = ToolRegistry(
        [ReadHandler(), BashHandler(restricted=True, timeout=30), ListHandler()]
    )
    assert [s.name for s in registry.specs()] == ["bash", "list", "read"]
    assert registry.names == ("bash", "list", "read")


def test_the_prompt_text_follows_the_registrys_specs_asked_again() -> None:
    """The text of the last specs tuple is reused while the registry gives that same tuple,
    and follows a description or schema change (the registry gives a new tuple)."""
    bash = _Described(restricted=True, timeout=30)
    registry = ToolRegistry([bash])

    def text() -> str:
        request = ModelRequest(model="m", system="s", messages=(), tools=registry.specs())
        return tokens.prompt_text(request)

    first = text()
    assert text() == first
    assert '"description":"first"' in first
    bash.text = "second"
    assert '"description":"second"' in text()
    bash.timeout = 45
    assert "max 45" in text()
    assert tokens.prompt_text(ModelRequest(model="m", system="s", messages=(), tools=())) == "s"
