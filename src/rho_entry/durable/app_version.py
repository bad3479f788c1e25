"""The application version durable runs are tagged with: rho-agent's version + a fingerprint.

DBOS re-executes an interrupted run from its first step and hands back recorded results by
step order, so a run may only be recovered by the code that started it. The fingerprint is a
hash of the modules whose behaviour decides that order (the loop, the tools, the durable
adapter and runner); a change to any of them is a new version, whose workers refuse a queue
that still holds the old version's runs (``rho_adapters.durable.worker.VersionMismatch``).
"""

from __future__ import annotations

import hashlib
from importlib import resources

from rho_entry.version import VERSION

_PACKAGES = (
    "rho_domain.loop",
    "rho_domain.tools",
    "rho_adapters.durable",
    "rho_entry.durable",
)


def fingerprint() -> str:
    """12 hex digits of the SHA-256 of the Python sources of ``_PACKAGES``, in name order."""
    digest = hashlib.sha256()
    for package in _PACKAGES:
        root = resources.files(package)
        for entry in sorted(root.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".py"):
                digest.update(entry.name.encode())
                digest.update(entry.read_bytes())
    return digest.hexdigest()[:12]


def app_version() -> str:
    """``<VERSION>+<fingerprint>``, e.g. ``0.2.0+3f2a9c81d0e4``."""
    return f"{VERSION}+{fingerprint()}"
