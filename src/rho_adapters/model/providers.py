"""Providers: every kind of model server we speak to, as one table, and which row is chosen.

The rows (``Provider``, ``PROVIDERS``: adapter, usual base URL, key variable, hosts, owners,
what the server accepts) are ``provider_rows``'s, named here too. A provider is chosen by
name (``provider`` in the config) or from the base URL's host; with no base URL, from the
model name (the rows' ``model_prefixes``: ``claude-*`` is Anthropic), else from which key
variable alone is set, else OpenAI. A local or unknown host gets
``generic`` (``max_tokens``, which every server honours) until ``detect.probe`` asks the
server what it is (``/props``, ``/v1/models`` ``owned_by`` matched against the rows'
``owners``): never from the port, since any server runs on any port. Every field can be
overridden with ``attrs.evolve``.

Adding an OpenAI-compatible server is one row in ``PROVIDERS``; a quirk of a model rather
than of a server (whatever serves it) is one row in ``MODEL_QUIRKS``, which ``for_model``
applies over the server's row.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping
from urllib.parse import urlsplit

import attrs

from rho_adapters.model.provider_rows import (
    DEMO_MODEL,
    OPENAI_BASE_URL,
    OPENAI_KEY,
    PROVIDERS,
    Adapter,
    Provider,
    StructuredOutput,
)
from rho_domain.errors import ConfigError
from rho_domain.value_methods import value_eq, value_hash, value_repr

__all__ = [
    "DEMO_MODEL",
    "MODEL_QUIRKS",
    "OPENAI_BASE_URL",
    "OPENAI_KEY",
    "PROVIDERS",
    "Adapter",
    "ModelQuirk",
    "Provider",
    "StructuredOutput",
    "for_model",
    "guess_provider_name",
    "guessed_from_model",
    "provider_owning",
    "resolve_provider",
]


@attrs.frozen(kw_only=True)
class ModelQuirk:
    """What a model accepts differently from its server's row, on every server that runs it.

    ``prefixes`` are model-name beginnings (lower case) it applies to; ``providers`` the rows
    it applies on (empty: every row). ``dropped_params`` are added to the row's; ``changes``
    replace other ``Provider`` fields (``{"stream_tools": False}``).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    prefixes: tuple[str, ...]
    providers: tuple[str, ...] = ()
    dropped_params: frozenset[str] = frozenset()
    changes: Mapping[str, object] = attrs.field(factory=dict)

    def applies(self, provider: Provider, model: str) -> bool:
        """Whether this quirk holds for ``model`` served by ``provider``."""
        on_row = not self.providers or provider.name in self.providers
        return on_row and model.lower().startswith(self.prefixes)


# Quirks of models rather than servers, in order (a later one wins on the same field).
MODEL_QUIRKS: tuple[ModelQuirk, ...] = (
    # OpenAI's o-series reasoning models answer 400 to a temperature other than the default
    # ("Unsupported value: 'temperature' does not support 0.2 with this model"), and to
    # top_p, logprobs and the penalties.
    ModelQuirk(
        prefixes=("o1", "o3", "o4"),
        providers=("openai",),
        dropped_params=frozenset(
            {"temperature", "top_p", "presence_penalty", "frequency_penalty", "logprobs"}
        ),
    ),
)


def for_model(
    provider: Provider, model: str, quirks: tuple[ModelQuirk, ...] = MODEL_QUIRKS
) -> Provider:
    """``provider``'s row with the ``quirks`` that hold for ``model`` applied."""
    for quirk in quirks:
        if quirk.applies(provider, model):
            provider = attrs.evolve(
                provider,
                dropped_params=provider.dropped_params | quirk.dropped_params,
                **quirk.changes,  # type: ignore[arg-type]  # Provider's own fields, by name
            )
    return provider


# Other spellings users write for a provider (after lower-casing and removing "-" and ".").
_ALIASES = {
    "llama": "llamacpp",
    "llamacppserver": "llamacpp",
    "llamaserver": "llamacpp",
    "llamacpppython": "llama-cpp-python",
    "llamacpp_python": "llama-cpp-python",
    "azureopenai": "azure",
}


def guess_provider_name(
    base_url: str | None, *, model: str = "", keys_set: Collection[str] = ()
) -> str:
    """The provider a base URL names by its host, ``generic`` for a host that says nothing (a
    local server: ``detect.probe`` finds out which). Without a base URL: the hosted provider
    whose ``model_prefixes`` begin ``model``, else the one whose key variable is the only
    provider key in ``keys_set`` (names of the variables that are set), else ``openai``."""
    if not base_url:
        return _hosted_guess(model.lower(), frozenset(keys_set))
    return _provider_of_host((urlsplit(base_url).hostname or "").lower())


@functools.lru_cache(maxsize=256)
def _provider_of_host(host: str) -> str:
    # Asked several times per Session (wiring, adapter, settings): one pass over the table.
    for provider in PROVIDERS.values():
        if any(fragment in host for fragment in provider.hosts):
            return provider.name
    return "generic"


def _hosted_guess(model: str, keys_set: frozenset[str]) -> str:
    for provider in PROVIDERS.values():
        if model.startswith(provider.model_prefixes):
            return provider.name
    hosted = [p for p in PROVIDERS.values() if p.default_base_url and p.model_prefixes]
    present = {p.key_variable for p in hosted} & keys_set
    if len(present) == 1:
        return next(p.name for p in hosted if p.key_variable in present)
    return "openai"


def guessed_from_model(provider: Provider, model: str) -> bool:
    """True when ``model``'s name is what selects ``provider`` (for hints naming why)."""
    return bool(provider.model_prefixes) and model.lower().startswith(provider.model_prefixes)


def provider_owning(owner: str) -> str | None:
    """The provider whose ``/v1/models`` says ``owned_by: owner``, or None."""
    owner = owner.lower()
    for provider in PROVIDERS.values():
        if owner in provider.owners:
            return provider.name
    return None


def resolve_provider(
    provider: str | None,
    base_url: str | None,
    *,
    model: str = "",
    keys_set: Collection[str] = (),
) -> Provider:
    """The named provider, or the guess (``guess_provider_name``) from ``base_url``, ``model``
    and ``keys_set``. Raises ConfigError for an unknown name, listing the known ones."""
    name = (provider or "").strip().lower().replace("-", "").replace(".", "")
    if name in ("", "auto", "openaicompatible"):
        return PROVIDERS[guess_provider_name(base_url, model=model, keys_set=keys_set)]
    name = _ALIASES.get(name, name)
    if name not in PROVIDERS:
        known = ", ".join(sorted(PROVIDERS))
        raise ConfigError(f"unknown provider {provider!r}: expected one of {known}")
    return PROVIDERS[name]
