"""How to install one of rho-agent's optional extras, said the way this copy was installed.

A clone installed with ``pip install -e .`` (the README's first command) was told to run
``pip install 'rho-agent[server]'``: that asks the package index for a distribution named
``rho-agent``, which is not the clone (at best an error, at worst someone else's package).
pip records where an installed distribution came from (PEP 610, ``direct_url.json``); a
local directory is named again, editable when it was (``pip install -e '/path/to/clone[server]'``).
"""

from __future__ import annotations

from rho_domain.errors import MissingExtra

__all__ = ["install_command", "missing_extra"]

DISTRIBUTION = "rho-agent"


def install_command(extra: str) -> str:
    """The pip command that adds ``extra`` to this installation: from the local directory it
    was installed from (``-e`` when editable), else from the package index by name."""
    import json  # here: only a missing extra's message needs them, never a start
    import shlex
    from importlib import metadata
    from urllib.parse import unquote, urlsplit

    origin = None
    for found in metadata.distributions(name=DISTRIBUTION):  # the first installed copy's
        try:
            text = found.read_text("direct_url.json")
            if text is None and found.read_text("PKG-INFO") is not None:
                # a clone's own ``src/rho_agent.egg-info`` (setuptools writes it there for
                # ``pip install -e .``), first when ``src`` is on PYTHONPATH: no install
                continue
            origin = json.loads(text) if text else None
        except (OSError, ValueError):  # unreadable: the index
            origin = None
        break
    if isinstance(origin, dict) and isinstance(origin.get("dir_info"), dict):
        url = urlsplit(str(origin.get("url", "")))
        if url.scheme == "file" and url.path:
            editable = "-e " if origin["dir_info"].get("editable") is True else ""
            return f"pip install {editable}{shlex.quote(f'{unquote(url.path)}[{extra}]')}"
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def missing_extra(package: str, extra: str, purpose: str = "") -> MissingExtra:
    """``MissingExtra`` for ``package``, saying ``install_command(extra)``."""
    return MissingExtra(package, extra, purpose, install=install_command(extra))
