"""Where a resumed session's model calls go: the resumer's endpoint, never the stored one.

``base_url``, ``provider`` and ``api_key_env`` decide where an API key (and the conversation,
with every file a tool read) is sent; without a provider or base URL the model's name chooses
the provider (``claude-...``: Anthropic). ``resume_policy.authorise`` holds a stored session
to the resumer's ``Endpoint`` through ``held_endpoint``; the server's admission asks
``other_provider`` of a model a client names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.ports.store import SessionRecord
from rho_domain.value_methods import value_eq, value_hash, value_repr

ENDPOINT_FIELDS = ("base_url", "provider", "api_key_env")
"""The settings that decide where a model call, and the API key with it, goes."""


@attrs.frozen(kw_only=True)
class Endpoint:
    """Where model calls go, as the resumer configured it (None: not set)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    base_url: str | None = None
    provider: str | None = None
    api_key_env: str | None = None
    sends_to: str | None = None
    """The provider (its row's name) the resumer's model calls go to; None: not compared."""
    keys_set: frozenset[str] = frozenset()
    """Names of the ``*_API_KEY`` variables set, which choose a provider when nothing else
    does (``settings.provider_of``)."""

    @classmethod
    def of(cls, config: AgentConfig, env: Mapping[str, str] | None = None) -> Endpoint:
        """The endpoint settings of ``config``; with ``env`` (the resumer's environment),
        also where its model calls go (its base URL, else the environment's, as wiring
        reads them)."""
        endpoint = cls(
            base_url=config.base_url, provider=config.provider, api_key_env=config.api_key_env
        )
        if env is None:
            return endpoint
        from rho_entry.config.env_settings import base_url_of
        from rho_entry.config.settings import provider_of

        keys = frozenset(name for name, value in env.items() if value and name.endswith("_API_KEY"))
        own = attrs.evolve(config, base_url=base_url_of(config, env))
        return attrs.evolve(endpoint, sends_to=provider_of(own, env).name, keys_set=keys)


def held_endpoint(
    record: SessionRecord,
    endpoint: Endpoint | None,
    given: Mapping[str, Any],
    *,
    hint: str,
) -> dict[str, Any]:
    """The resumer's endpoint settings for ``record`` (none when nothing is checked: no
    ``endpoint``, or the demo model, which sends nothing anywhere). Raises ``ConfigError``
    when a stored setting differs and is not in ``given``; ``hint`` (with ``{field}`` and
    ``{flag}``) says how to give it again."""
    # Imported here: the model adapters are not part of importing the library facade.
    from rho_adapters.model.providers import DEMO_MODEL

    if endpoint is None or given.get("model", record.config.model) == DEMO_MODEL:
        return {}
    current = {field: getattr(endpoint, field) for field in ENDPOINT_FIELDS}
    out: dict[str, Any] = {}
    differs: list[str] = []
    for field in ENDPOINT_FIELDS:
        if field in given:
            continue
        stored = getattr(record.config, field)
        if stored is not None and stored != current[field]:
            now = current[field] if current[field] is not None else "not set"
            differs.append(f"{field} {stored!r} (yours now: {now})")
        out[field] = current[field]
    if differs:
        fixes = ", ".join(hint.format(field=f, flag=f.replace("_", "-")) for f in _fields(differs))
        raise ConfigError(
            f"session {record.id} was stored with {'; '.join(differs)}. Your API key and the "
            f"conversation go only to the endpoint you configure: {fixes}"
        )
    if "model" not in given:
        _check_provider(record, endpoint, {**given, **out})
    return out


def other_provider(
    model: str, endpoint: Endpoint, *, provider: str | None, base_url: str | None
) -> str | None:
    """Why ``model``, sent with ``provider`` and ``base_url`` (the endpoint settings it would
    run with), would not go where ``endpoint``'s own calls go (``sends_to``): without a
    provider or base URL a model's name chooses one. None when it goes there (or nothing is
    compared)."""
    from rho_adapters.model.providers import DEMO_MODEL, resolve_provider

    if endpoint.sends_to is None or model == DEMO_MODEL:  # the demo model sends nothing
        return None
    row = resolve_provider(provider, base_url, model=model, keys_set=endpoint.keys_set)
    if row.name == endpoint.sends_to:
        return None
    where = f" ({row.default_base_url})" if row.default_base_url else ""
    return (
        f"model {model!r}, whose calls would go to {row.name}{where} with your "
        f"{row.key_variable}; your model calls go to {endpoint.sends_to}"
    )


def _check_provider(record: SessionRecord, endpoint: Endpoint, given: Mapping[str, Any]) -> None:
    """The stored model, sent through the resumer's endpoint settings (``given`` holds them
    now), goes to the provider the resumer's own model goes to."""
    why = other_provider(
        record.config.model, endpoint, provider=given["provider"], base_url=given["base_url"]
    )
    if why is None:
        return
    raise ConfigError(
        f"session {record.id} was stored with {why}. Your API key and the conversation go "
        "only to the endpoint you configure: choose the model again (the CLI: --model; "
        "Session.resume: overrides={'model': ...})"
    )


def _fields(differs: Sequence[str]) -> list[str]:
    return [d.split(" ", 1)[0] for d in differs]
