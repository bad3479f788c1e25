"""DaytonaSettings: everything the Daytona backend needs, passed in by the wiring.

The adapter never reads the environment: ``rho_entry.wiring`` reads ``DAYTONA_API_KEY``,
``DAYTONA_API_URL``, ``DAYTONA_TARGET`` and ``DAYTONA_ORGANIZATION_ID`` (the SDKs' names)
and builds this value.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from rho_adapters.model.endpoint import refuse_header_text
from rho_adapters.model.proxies import NO_PROXIES, ProxyRoutes
from rho_domain.errors import ConfigError
from rho_domain.value_methods import value_eq, value_hash, value_repr

DEFAULT_API_URL = "https://app.daytona.io/api"
DEFAULT_WORKING_DIR = "/home/daytona/workspace"


def _frozen_env(value: Mapping[str, str]) -> Mapping[str, str]:
    return dict(value)


@attrs.frozen(kw_only=True)
class DaytonaSettings:
    """How to reach Daytona and what sandbox to create.

    With neither ``image``, ``dockerfile`` nor ``snapshot`` the organisation's default snapshot
    is used. ``snapshot`` wins over ``dockerfile``, which wins over ``image`` (a snapshot carries
    its own resources; ``cpu``/``memory``/``disk`` apply to image builds only). ``dockerfile``
    is the text of a Dockerfile Daytona builds the image from; it has no build context, so
    ``COPY``/``ADD`` of local files are refused here: put files in with ``--upload``.
    ``auto_stop_interval`` is in minutes (0 = never);
    ``auto_delete_interval`` (minutes after stopping, None = server default) is the safety net
    for a process that dies before ``aclose``. ``working_dir`` is the workspace root inside the
    sandbox; it is created on first use. ``env`` is set on the sandbox (unrestricted shell
    commands see it; restricted pipelines run with a fixed, minimal environment). ``proxies``
    route the requests, each by its own host: the API's and the toolbox's
    (``ProxyRoutes.from_environ``; the CLI passes the environment's). ``session_id`` (the
    rho-agent session the sandbox serves) labels it ``rho-agent-session=<id>``, so an operator
    finds a session's sandbox and a resumed session (``reattach``) finds its own again.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    api_key: str = attrs.field(repr=False)
    api_url: str = DEFAULT_API_URL
    image: str | None = None
    dockerfile: str | None = None
    snapshot: str | None = None
    target: str | None = None
    env: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_env)
    labels: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_env)
    auto_stop_interval: int = 15
    auto_delete_interval: int | None = 60
    cpu: int | None = None
    memory: int | None = None
    disk: int | None = None
    working_dir: str = DEFAULT_WORKING_DIR
    create_timeout: float = 120.0
    request_timeout: float = 60.0
    organization_id: str | None = None
    proxies: ProxyRoutes = NO_PROXIES
    session_id: str | None = None
    reattach: bool = False

    def __attrs_post_init__(self) -> None:
        if self.dockerfile is not None and (line := _local_source(self.dockerfile)):
            raise ConfigError(
                f"the Dockerfile copies local files ({line!r}), and a Daytona build has no "
                "build context: remove that line and pass the files with --upload "
                "LOCAL:REMOTE (COPY --from=<stage> and remote ADD URLs are fine)"
            )
        if not self.working_dir.startswith("/"):
            raise ConfigError(f"daytona working_dir must be absolute, got {self.working_dir!r}")
        # Sent as headers: a key with a line break (a secret file's last newline) failed each
        # request as "connection to Daytona failed ... DAYTONA_API_URL", one with a non-ASCII
        # character left the adapter as a bare UnicodeEncodeError.
        refuse_header_text(self.api_key, "the Daytona API key (DAYTONA_API_KEY)")
        if self.organization_id is not None:
            what = "the Daytona organisation id (DAYTONA_ORGANIZATION_ID)"
            refuse_header_text(self.organization_id, what)


def _local_source(dockerfile: str) -> str | None:
    """The first ``COPY``/``ADD`` instruction that reads the build context, or None."""
    for raw in dockerfile.splitlines():
        words = raw.split()
        if not words or words[0].upper() not in ("COPY", "ADD"):
            continue
        sources = [w for w in words[1:-1] if not w.startswith("--")]
        if any(w.startswith("--from=") for w in words[1:]):
            continue
        if words[0].upper() == "ADD" and all("://" in w for w in sources):
            continue
        return raw.strip()
    return None
