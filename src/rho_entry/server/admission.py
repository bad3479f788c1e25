"""Admission: what a client of the server may create and touch.

A new session's config is the server's base config (endpoint, key variable, provider: what
clients cannot choose) with the client's choices checked: a profile the server allows, a
working directory inside one of its roots (symlinks followed), a model whose calls go where
the server's go (without a provider or base URL a model's name chooses one: ``claude-...``
would send them to Anthropic with the server's key for it). A stored session is shown or
driven only when its working directory lies in the roots, and driven only when what its
config.yaml grants is within an allowed profile, judged by content, never by its name
(``rho_entry.resume_policy``; the runtime checks it again when it opens the session).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.ports.store import SessionRecord
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.config.home import expanded
from rho_entry.resume_endpoint import Endpoint, other_provider
from rho_entry.resume_policy import ResumeAuthority, authorise
from rho_entry.server.bodies import CreateSession
from rho_entry.server.errors import Conflict, Forbidden, Invalid
from rho_entry.server.settings import ServerSettings


@attrs.frozen
class Admission:
    """The server's rules for new and stored sessions (see the module docstring)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    settings: ServerSettings
    base_config: AgentConfig
    home: Path  # the config directory: prompts/ holds the templates
    # where the server's model calls go (its runtime's; None: a model port, nothing sent)
    endpoint: Endpoint | None = None

    def config_for(self, request: CreateSession) -> AgentConfig:
        """A new session's config. Raises ``Forbidden`` (profile, working_dir), ``Invalid``."""
        profile = request.profile or self.settings.profiles[0]
        if profile not in self.settings.profiles:
            allowed = ", ".join(self.settings.profiles)
            raise Forbidden(
                f"profile {profile!r} is not allowed here (allowed: {allowed})", field="profile"
            )
        changes: dict[str, Any] = {
            "profile": profile,
            "working_dir": self.working_dir(request.working_dir),
        }
        if request.model is not None:
            self._check_model(request.model)
            changes["model"] = request.model
        if request.max_turns is not None:
            changes["max_turns"] = request.max_turns
        if request.output_schema is not None:
            changes["output_schema"] = request.output_schema
        return attrs.evolve(self.base_config, **changes)

    def _check_model(self, model: str) -> None:
        """``Forbidden`` for a model whose name would send the calls elsewhere than the
        server's own (a client chooses a model, never the endpoint)."""
        if self.endpoint is None:
            return
        why = other_provider(
            model,
            self.endpoint,
            provider=self.base_config.provider,
            base_url=self.endpoint.base_url,
        )
        if why is not None:
            raise Forbidden(
                f"{why}: a client chooses a model of this server's endpoint, not where its "
                "calls go (the operator configures that: --provider, --base-url)",
                field="model",
            )

    def working_dir(self, given: str | None) -> str:
        """A client's working directory, resolved, inside the roots and existing."""
        roots = self.settings.roots
        path = roots[0] if given is None else roots[0] / expanded(given)
        resolved = path.resolve()  # symlinks followed: a link out of a root is outside it
        if not self.inside_roots(resolved):
            shown = ", ".join(str(r) for r in roots)
            raise Forbidden(
                f"working_dir {given!r} is outside the server's roots ({shown})",
                field="working_dir",
            )
        if not resolved.is_dir():
            raise Invalid(f"working_dir {given!r} is not a directory", field="working_dir")
        return str(resolved)

    def inside_roots(self, path: Path) -> bool:
        """Whether ``path`` (resolved) is a root or lies under one."""
        return any(path == root or root in path.parents for root in self.settings.roots)

    def visible(self, working_dir: object) -> bool:
        """Whether a stored session's working directory lets this server show it."""
        # A relative directory (a library session's ".") names a place only in the process
        # that stored it: resolved here it would be judged against this server's cwd.
        if not isinstance(working_dir, str) or not Path(working_dir).is_absolute():
            return False
        return self.inside_roots(Path(working_dir).resolve())

    def drivable_config(
        self, session_id: str, record: SessionRecord, authority: ResumeAuthority
    ) -> AgentConfig:
        """The stored config a run here may use: granted no more than an allowed profile, the
        server's endpoint, a working directory in the roots that still exists. Raises
        ``Forbidden`` (profile, working_dir) or ``Conflict`` (the directory is gone)."""
        try:
            # the working directory is checked below, to name that field in the 403
            config = authorise(
                record, attrs.evolve(authority, roots=None), config_dir=self.home
            ).config
        except ConfigError as exc:
            raise Forbidden(str(exc), field="profile") from None
        if not self.visible(config.working_dir):
            raise Forbidden(
                f"session {session_id} runs in {config.working_dir!r}, outside the server's roots",
                field="working_dir",
            )
        if config.working_dir is not None and not os.path.isdir(config.working_dir):
            # else the run would fail after the 202, with nothing to show for it
            raise Conflict(
                f"session {session_id} cannot run: its working directory "
                f"{config.working_dir!r} does not exist (removed or moved); recreate it, "
                f"or start a new session"
            )
        return config

    def render_template(self, name: str, values: Mapping[str, str]) -> str:
        """The prompt of template ``name`` (``prompts/<name>[.md]``) with ``values``."""
        from rho_entry.config.templates import load_template, render_template

        prompts = self.home / "prompts"
        for candidate in (prompts / name, prompts / f"{name}.md"):
            if candidate.is_file():
                try:
                    return render_template(load_template(candidate), values).system_prompt.strip()
                except ConfigError as exc:
                    raise Invalid(str(exc), field="vars") from None
        raise Invalid(f"no template {name!r} in {prompts}", field="template")
