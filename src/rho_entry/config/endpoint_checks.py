"""Which provider a config's model calls go to, the variable its API key is read from, and
why no call could work before any is made: no endpoint at all, or a hosted API's own URL
with no key for it.

``rho_entry.config.settings`` names these too; the CLI (``settings.check_endpoint``), the
library (``model_wiring.build_model``) and ``rho-agent serve`` ask ``missing_endpoint``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import attrs

from rho_adapters.model.providers import DEMO_MODEL
from rho_domain.config import AgentConfig
from rho_entry.config.env_settings import base_url_of

if TYPE_CHECKING:
    from rho_adapters.model.providers import Provider

__all__ = ["api_key_variable", "hosted_key_missing", "missing_endpoint", "provider_of"]


def provider_of(config: AgentConfig, env: Mapping[str, str] | None = None) -> Provider:
    """The provider row for ``config``: the named one, else guessed from the base URL, else
    (no base URL) from the model name or from which provider key alone is set in ``env``.

    Raises ConfigError for an unknown provider.
    """
    from rho_adapters.model.providers import resolve_provider

    keys: set[str] = set()
    if not (config.provider or config.base_url):  # only then do the keys set decide
        keys = {name for name, value in (env or {}).items() if value and name.endswith("_API_KEY")}
    return resolve_provider(config.provider, config.base_url, model=config.model, keys_set=keys)


def api_key_variable(config: AgentConfig, env: Mapping[str, str] | None = None) -> str:
    """The environment variable the API key is read from: ``api_key_env``, else the
    provider's ``key_variable`` (``provider_of``; ``rho_adapters.model.providers``).

    Raises ConfigError for an unknown provider.
    """
    if config.api_key_env:
        return config.api_key_env
    return provider_of(config, env).key_variable


def missing_endpoint(config: AgentConfig, env: Mapping[str, str]) -> str | None:
    """Why no model call of ``config`` could work, or None: no base URL (in the config or
    ``env``) and no API key for a hosted provider, or a hosted API's URL without its key
    (``hosted_key_missing``). The demo model and a provider whose default server is local
    (ollama, llama.cpp, vLLM) need neither. Raises ConfigError for an unknown provider. The
    library and ``rho-agent serve`` refuse to start on it; the CLI says more
    (``settings.check_endpoint``)."""
    if config.model == DEMO_MODEL:
        return None
    url = base_url_of(config, env)
    if url:
        # a Session per request asks this each time: the config is copied (its validators
        # run again) only when the URL is the environment's, not already the config's own
        given = config if url == config.base_url else attrs.evolve(config, base_url=url)
        return hosted_key_missing(given, env)
    variable = api_key_variable(config, env)
    provider = provider_of(config, env)
    if env.get(variable) or not provider.default_base_url.startswith("https://"):
        return None
    return (
        f"no model endpoint configured: {variable} is not set and no base URL is given "
        f"(the {provider.name} API needs a key)"
    )


def hosted_key_missing(config: AgentConfig, env: Mapping[str, str]) -> str | None:
    """Why ``config.base_url``, the hosted API of a provider (``https://api.openai.com/v1``,
    ``https://api.anthropic.com``...), cannot be called, or None: its key's variable is unset.
    Before, the call went out without a key and the server's 401 said so, after the session
    was made; an ``ANTHROPIC_API_KEY`` set for an OpenAI URL was not named. Another server
    (a gateway, a local one) may need no key: it is not judged."""
    if config.base_url is None or config.model == DEMO_MODEL:
        return None
    row = provider_of(config, env)
    variable = api_key_variable(config, env)
    hosted = row.default_base_url
    if env.get(variable) or not hosted.startswith("https://"):
        return None
    if urlsplit(config.base_url).hostname != urlsplit(hosted).hostname:
        return None
    others = sorted(n for n, v in env.items() if v and n.endswith("_API_KEY") and n != variable)
    aside = f" ({', '.join(others)} is set, but it is not read for this URL)" if others else ""
    return (
        f"no API key for {config.base_url}, the {row.name} API: {variable} is not set{aside}; "
        f"export {variable}=<your key>, or name the variable that holds it with --api-key-env "
        "(AgentConfig.api_key_env)"
    )
