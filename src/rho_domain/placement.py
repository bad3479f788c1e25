"""Placement: where a session's work runs (the Executor port's backend and its own id).

An operator who must find or delete what a session ran in (a Daytona sandbox) reads it here:
each run records its executor's placement on ``run_start`` and ``run_end``, the stores keep
the last one known in their summary (meta.json), and ``monitor ps``, ``--list`` and the
server's session view show it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeGuard

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class Placement:
    """Where an executor runs commands and keeps files.

    Attributes:
        backend: The executor's kind: ``local`` (this machine), ``daytona``, ``memory``.
        id: What the backend calls the place (a Daytona sandbox's id), or None where there
            is none, or none yet (a sandbox is created by the first call that needs it).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    backend: str
    id: str | None = None

    @property
    def remote(self) -> bool:
        """True when the work runs in a place of its own (a sandbox), not in this machine's
        workspace or this process's memory: the place a listing names."""
        return self.backend not in ("local", "memory")

    def __str__(self) -> str:
        """``backend:id`` (``daytona:5f2c...``), or the backend alone when there is no id."""
        return self.backend if self.id is None else f"{self.backend}:{self.id}"

    @classmethod
    def from_plain(cls, value: object) -> Placement | None:
        """A placement from its stored form (``{"backend": ..., "id": ...}``, as meta.json
        and the PostgreSQL summary keep it), or None for anything else (another version's
        shape, a hand edit): a listing shows no placement rather than failing."""
        if not isinstance(value, Mapping):
            return None
        backend, place = value.get("backend"), value.get("id")
        if not well_formed(backend) or not (place is None or well_formed(place)):
            return None
        return cls(backend=backend, id=place)


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")


def well_formed(name: object) -> TypeGuard[str]:
    """Whether ``name`` can be a placement's backend or id as stored data gives it: 1 to 128
    letters, digits and ``._:-``, the first a letter or digit (a Daytona sandbox's id is a
    UUID). Stored data is anyone's: an id of 10^6 characters was a listing line of a
    megabyte and a resume that failed with httpx's "URL too long"; one with a line break,
    a ``/`` or a URL names no sandbox."""
    return isinstance(name, str) and _NAME.match(name) is not None


def kept(known: Placement | None, told: Placement | None) -> Placement | None:
    """The placement a session's summary keeps when a run tells ``told``: the newer one,
    except that a run starting on the same backend before its sandbox is found (no id yet)
    does not erase the id a summary knows; its ``run_end`` names the sandbox it used."""
    if told is None:
        return known
    if told.id is None and known is not None and known.backend == told.backend:
        return known
    return told
