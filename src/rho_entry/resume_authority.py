"""What the user or operator resuming a stored session allows now: ``ResumeAuthority``.

``resume_policy.authorise`` judges a stored session against one; this module says what one
holds and builds the default one (``Session.resume`` without ``authority=``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from rho_domain.config import AgentConfig, Budget, DatabaseConfig, HookConfig
from rho_domain.permissions import PermissionProfile, readonly_profile
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.resume_endpoint import ENDPOINT_FIELDS, Endpoint

__all__ = ["ResumeAuthority", "default_authority", "resolve_profiles"]


@attrs.frozen(kw_only=True)
class ResumeAuthority:
    """What the user or operator resuming a session allows now.

    Attributes:
        profiles: A stored profile must grant nothing beyond one of these (by content).
        given: Config fields the resumer sets now; they replace the stored ones unquestioned.
        endpoint: The resumer's endpoint settings, or None when no model is built from the
            config (a model port is passed in, or the demo model): nothing is sent anywhere.
        databases: The resumer's database aliases, or None to not check them (a ``databases=``
            port is passed in).
        roots: Resolved directories a stored local working directory must lie in, or None to
            keep the stored one unchecked (the CLI shows it in its header).
        hint: How to choose a profile, ``{profile}`` the suggested one: ``pass --profile
            {profile}`` (CLI), ``overrides={{'profile': ...}}`` (library), ...
        endpoint_hint: How to give an endpoint setting again: ``{field}`` is its name,
            ``{flag}`` the same with dashes.
        workspace: The resumer's workspace (absolute), or None to not check a stored
            ``working_dir`` (a server checks its own roots).
        workspace_hint: How to give the working directory again, ``{path}`` the stored one
            (``{path:sh}``: as one shell word, ``resume_hints``).
        hooks: The resumer's hooks by reference (its configuration's): the resumed session
            runs them. A stored reference must be one of them or of ``hook_names``, else the
            resume is refused (unless ``given`` has ``hooks``).
        hook_names: ``module.qualname`` of the hooks the resumer gives as functions
            (``Session.resume(hooks=...)``, a runtime's agent).
        hooks_hint: How to give hooks again.
        system_prompt: The resumer's own ``system_prompt``: a stored template path is read
            only when it names the same file (or ``given`` has ``system_prompt``).
        system_prompt_hint: How to give the system prompt again, ``{path}`` the stored one
            (``{path:sh}`` too).
        budget: The resumer's budget: the stored one is held to it (``tighter_budget``);
            None (or no limit set) keeps the stored one.
        max_turns: The resumer's ``max_turns`` (0: no limit), held as ``budget``: the
            tighter of it and the stored one; None keeps the stored one.
        repeat_limit: The resumer's ``repeat_limit``, held the same way.
        tool_output_limit: The resumer's ``tool_output_limit``: the smaller of it and the
            stored one; None keeps the stored one.
        backend: The resumer's backend: a stored one that differs is refused (unless
            ``given`` has ``backend``); None keeps the stored one unchecked.
        backend_hint: How to give the backend again, ``{backend}`` the stored one.
        deadlines: The resumer's ``tool_timeout`` and model transport settings
            (``resume_limits.deadlines_of``; a None value is the default): a stored one is
            kept only when it is no longer than the resumer's; None keeps the stored ones.
        max_output_tokens: The resumer's cap on one call's answer: the smaller of it and the
            stored one; None keeps the stored one.
        held: Fields whose stored value is replaced by the resumer's (unless ``given``):
            ``service_tier`` (``held_fields``), which chooses the price of every call
            (priority) and how long one may wait (flex); None keeps the stored ones.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    profiles: tuple[PermissionProfile, ...] = attrs.field(validator=attrs.validators.min_len(1))
    given: Mapping[str, Any] = attrs.field(factory=dict)
    endpoint: Endpoint | None = None
    databases: Mapping[str, DatabaseConfig] | None = None
    roots: tuple[Path, ...] | None = None
    hint: str = "pass overrides={{'profile': {profile!r}}} to resume it with that profile"
    endpoint_hint: str = "pass overrides={{'{field}': ...}} to use it again"
    workspace: str | None = None
    workspace_hint: str = "pass overrides={{'working_dir': {path!r}}} to work there"
    hooks: HookConfig = HookConfig()
    hook_names: frozenset[str] = frozenset()
    hooks_hint: str = "pass hooks=Hooks(...) or overrides={'hooks': HookConfig(...)}"
    system_prompt: str = ""
    system_prompt_hint: str = "pass overrides={{'system_prompt': {path!r}}} to read it again"
    budget: Budget | None = None
    max_turns: int | None = None
    repeat_limit: int | None = None
    tool_output_limit: int | None = None
    backend: str | None = None
    backend_hint: str = "pass overrides={{'backend': {backend!r}}} to run it there"
    deadlines: Mapping[str, float | None] | None = None
    held: Mapping[str, Any] | None = None
    max_output_tokens: int | None = None


def resolve_profiles(
    specs: Sequence[PermissionProfile | str], *, config_dir: Path | None
) -> tuple[PermissionProfile, ...]:
    """Profiles from names, paths or values (``config_files.resolve_profile``)."""
    from rho_entry.config.config_files import resolve_profile

    return tuple(resolve_profile(spec, config_dir=config_dir) for spec in specs)


def default_authority(
    given: Mapping[str, Any], ports: Mapping[str, Any], env: Mapping[str, str]
) -> ResumeAuthority:
    """What ``Session.resume`` allows when its caller says nothing: the readonly profile, the
    endpoint of the environment (``RHO_AGENT_BASE_URL``, ``OPENAI_BASE_URL``, and the provider
    a new ``AgentConfig()``'s model goes to there; none checked when a ``model`` port is
    passed), the databases the environment configures, as a new
    ``Agent(config)`` would get them (none checked when a ``databases`` port is passed), and
    the ``overrides`` as given."""
    from rho_entry.config.databases_config import load_databases
    from rho_entry.wiring import base_url_from

    endpoint = None
    if ports.get("model") is None:  # where a new Agent(AgentConfig(**overrides)) calls here
        fields = {f: given[f] for f in (*ENDPOINT_FIELDS, "model") if given.get(f) is not None}
        mine = AgentConfig(**fields)
        endpoint = attrs.evolve(
            Endpoint.of(mine, env), base_url=base_url_from(env), provider=None, api_key_env=None
        )
    return ResumeAuthority(
        profiles=(readonly_profile(),),
        given=dict(given),
        endpoint=endpoint,
        databases=None if ports.get("databases") is not None else load_databases(env),
    )
