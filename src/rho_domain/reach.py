"""Where reads may go: one rule for every reading tool, beside the secrets policy.

A profile's ``read_outside_workspace`` (``OutsideReads``) decides, the same way for the file
tools (``read``, ``grep``, ``glob``, ``list``, ``read_excel``, a ``< file``), every path word
of a restricted shell stage, every item ``xargs`` appends (the guard script) and what the
bubblewrap sandbox shows:

* ``deny`` (the default): the workspace and the profile's ``extra_read_roots``, nothing else.
  The sandbox shows those and the programs' own system directories only (``/usr``, ``/lib``,
  ``/etc``...: a program needs them to start; naming anything there is refused by this rule).
* ``allow``: the whole machine, except what the sandbox hides from commands anyway (every home
  directory, ``/tmp`` and ``/run``, which are the sandbox's own), unless the workspace or a
  read root is there. So a file the ``read`` tool may read is one ``cat`` may read, and the
  other way round.

Secrets are refused everywhere by ``SecretPolicy``, judged first; this rule only says where
reads may go at all. Paths are judged as given (absolute, normalised) and again as resolved by
the executor, so a symlink in a read root cannot lead outside it.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Sequence
from enum import Enum

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


class OutsideReads(Enum):
    """Whether reading tools may read outside the workspace and the extra read roots."""

    DENY = "deny"
    ALLOW = "allow"


# The sandbox's own mounts (a private /tmp, an empty /run): a command never sees the host's.
SANDBOX_OWN = ("/tmp", "/run")  # noqa: S108 - names of the sandbox's mounts, not temp files


@functools.cache
def _allowed() -> tuple[str, ...]:
    """The harmless devices and /proc files the secrets policy lets through (/dev/null,
    /proc/cpuinfo...), normalized once per process: every executor's reach (one per session)
    opens them. Read from the secrets policy at the first reach, not at import: a profile
    (``from rho_agent import AgentConfig``) names ``OutsideReads`` without judging a path."""
    from rho_domain.secrets import ALLOWED

    return tuple(posixpath.normpath(p) for p in ALLOWED)


def _within(path: str, root: str) -> bool:
    return root == "/" or path == root or path.startswith(root.rstrip("/") + "/")


@attrs.frozen(kw_only=True)
class ReadReach:
    """Where reads may go. ``open``: trees always readable (the workspace, with every spelling
    of it, and the read roots); ``closed``: trees refused unless within an open one (``("/",)``
    under deny; homes, /tmp and /run under allow); ``outside``: the profile's setting, for the
    messages. The default reaches everywhere (no rule: tests and the memory fake)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    open: tuple[str, ...] = ()
    closed: tuple[str, ...] = ()
    outside: OutsideReads = OutsideReads.ALLOW

    @classmethod
    def of(
        cls,
        outside: OutsideReads,
        *,
        workspace: tuple[str, ...],
        read_roots: tuple[str, ...] = (),
        homes: tuple[str, ...] = (),
    ) -> ReadReach:
        """The reach of a profile's setting for a workspace (every spelling of it: as given
        and canonical), its read roots (idem) and the machine's home directories."""
        return _reach_of(outside, workspace, read_roots, homes)

    def refusal(self, path: str) -> str | None:
        """Why the absolute ``path`` may not be read, or None. A relative path is not judged
        here (the executor judges what it resolves to)."""
        if not path.startswith("/"):
            return None
        path = posixpath.normpath(path)
        if any(_within(path, root) for root in self.open):
            return None
        if not any(_within(path, top) for top in self.closed):
            return None
        if self.outside is OutsideReads.DENY:
            return (
                f"{path} is outside the workspace and the profile's read roots, and this "
                "profile reads nowhere else (read_outside_workspace: deny; add the directory "
                "to extra_read_roots)"
            )
        return (
            f"{path} is in a home directory, /tmp or /run, which commands never see; only the "
            "workspace and the read roots are readable there"
        )

    def guard_case(self) -> str:
        """A POSIX ``sh`` fragment for the xargs guard: sets ``o=1`` when the canonical
        ``$p`` of argument ``$i`` is out of reach (the same rule as ``refusal``); argument 1,
        the program the guard runs, is not judged. Empty when nothing is closed."""
        if not self.closed or "/" in self.open:
            return ""
        import shlex  # with the first guarded xargs, not with every permission profile

        opened = "".join(f"{shlex.quote(r)}|{shlex.quote(r.rstrip('/'))}/*) ;; " for r in self.open)
        closed = "|".join(
            "/*" if c == "/" else f"{shlex.quote(c)}|{shlex.quote(c.rstrip('/'))}/*"
            for c in self.closed
        )
        return f'      [ "$i" = 1 ] || case $p in {opened}{closed}) o=1;; esac\n'


@functools.lru_cache(maxsize=64)
def _reach_of(
    outside: OutsideReads,
    workspace: tuple[str, ...],
    read_roots: tuple[str, ...],
    homes: tuple[str, ...],
) -> ReadReach:
    """``ReadReach.of``: a pure function of its strings (a frozen value), remembered per
    process, since every Session's executor builds the same reach for the same workspace."""
    closed = ("/",) if outside is OutsideReads.DENY else (*homes, *SANDBOX_OWN)
    # ``_allowed()``: every sandbox has its own /dev and /proc.
    given = (posixpath.normpath(p) for p in (*workspace, *read_roots))
    opened = tuple(dict.fromkeys((*given, *_allowed())))
    return ReadReach(
        open=opened,
        closed=tuple(dict.fromkeys(posixpath.normpath(c) for c in closed if c)),
        outside=outside,
    )


def held_roots(extra: Sequence[str], paths: Sequence[str]) -> tuple[str, ...]:
    """The read roots ``extra`` holding one of ``paths`` (resolved), "/" left out: a file
    with several names in a read root may be the twin of a secret anywhere in that root
    (``docs/notes.txt`` of the root's ``.env``), so the executors scan the root, as they scan
    the workspace; "/" could never be scanned whole (a secret there is found by its name
    where it is)."""
    return tuple(
        r for r in extra if r != "/" and any(p.startswith(r.rstrip("/") + "/") for p in paths)
    )
