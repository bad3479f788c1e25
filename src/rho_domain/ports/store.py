"""SessionStore: where sessions and their traces are kept."""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

import attrs

from rho_domain.lazy_names import lazy_names
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    # Named in annotations only: the port does not build every event class (or the config's)
    # for an importer that only lists sessions or names the port.
    from rho_domain.config import AgentConfig
    from rho_domain.events import Event
    from rho_domain.ports.session_info import SessionInfo as SessionInfo
    from rho_domain.ports.signals import SignalSource

# A listing's line is built by ``list`` alone: a run that never lists builds no SessionInfo.
__getattr__ = lazy_names(__name__, {"SessionInfo": "rho_domain.ports.session_info"})


# How much of the first prompt a store keeps for listings (``SessionInfo.first_prompt``).
# The whole prompt is in the trace; a summary holding all of a 50 MB prompt was rewritten
# whole at every status change and heartbeat, and read whole by every listing.
EMPTY_ID = (
    "an empty session id (an unset shell variable?): give a session's id, a prefix of one, "
    "latest, or a session directory"
)
"""What every store (``open`` of a blank id) and ``--resume`` say of an empty session id."""

FIRST_PROMPT_CHARS = 1000


def first_prompt_summary(prompt: str) -> str:
    """``prompt`` as a listing keeps it: its first ``FIRST_PROMPT_CHARS`` characters, and
    ``…`` after them when it is longer."""
    if len(prompt) <= FIRST_PROMPT_CHARS:
        return prompt
    return prompt[:FIRST_PROMPT_CHARS] + "…"


# Labels are copied into every listing of the session (``SessionInfo.labels``, the dashboard,
# ``monitor ps --json``) and every meta.json rewrite: they name, they do not carry data.
LABEL_KEY_CHARS = 256
LABELS_CHARS = 8_192  # keys and values, all together (connect's name up to ~200 sessions)
LABELS_MAX = 64


def label_problem(labels: Mapping[str, str]) -> str | None:
    """What makes ``labels`` more than a listing should copy (too many, a key over
    ``LABEL_KEY_CHARS``, more than ``LABELS_CHARS`` in all, naming the largest label); None
    when they are fine; a key or value that is not a text (``labels={"run": 7}``, which
    failed on "object of type 'int' has no len()") is named first."""
    given: Mapping[Any, object] = labels  # typed texts; a caller's are whatever they are
    for key, value in given.items():
        if not isinstance(key, str) or not isinstance(value, str):
            return (
                f"the label {key!r:.40}: {value!r:.40} is not text to text ({type(key).__name__}"
                f": {type(value).__name__}); give each as a str: labels={{'run': '7'}}"
            )
    if len(labels) > LABELS_MAX:
        return f"{len(labels)} labels, over the limit of {LABELS_MAX}"
    for key in labels:
        if len(key) > LABEL_KEY_CHARS:
            return (
                f"the label key {key[:40]!r}... has {len(key)} characters, over {LABEL_KEY_CHARS}"
            )
    total = sum(len(key) + len(value) for key, value in labels.items())
    if total > LABELS_CHARS:
        largest = max(labels, key=lambda key: len(labels[key]))
        return (
            f"labels of {total} characters in all, over {LABELS_CHARS} (the label {largest!r} "
            f"has {len(labels[largest])}): keep data in the prompt, not in labels"
        )
    return None


@attrs.frozen(kw_only=True)
class SessionRecord:
    """What a store keeps about a session besides its trace."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    id: str
    created_at: float
    config: AgentConfig
    parent_id: str | None = None
    labels: Mapping[str, str] = attrs.field(factory=dict)


class SessionStore(Protocol):
    """Persists sessions as an append-only sequence of events."""

    @abstractmethod
    async def create(self, record: SessionRecord) -> None:
        """Create a new session and take its lock. Raises ``StoreError`` if it exists."""

    @abstractmethod
    async def open(self, session_id: str) -> tuple[SessionRecord, tuple[Event, ...]]:
        """Take the lock of an existing session and return its record and events.

        ``session_id`` may be a unique prefix (adapters may also accept ``latest`` or a path).
        Raises ``SessionNotFound``, or ``SessionLocked`` when a live process holds it. A torn
        last trace line is skipped with a warning, never an error.
        """

    @abstractmethod
    async def append(self, session_id: str, events: Sequence[Event]) -> None:
        """Append persistent events in order. Run boundaries and status changes are durable
        (fsynced) when this returns; other events are at least flushed. A failure means none
        was taken (the journal appends them again), except a cancellation: cancelled while it
        writes, it finishes the write it began and then raises ``CancelledError``, so a
        cancelled append has taken its events (never written twice), or raises the write's own
        failure when it took none."""

    @abstractmethod
    async def list(self, *, limit: int = 50) -> tuple[SessionInfo, ...]:
        """Sessions, newest first."""

    @abstractmethod
    async def release(self, session_id: str) -> None:
        """Release the lock taken by ``create`` or ``open``. Idempotent."""


@runtime_checkable
class SignalingStore(Protocol):
    """A store whose sessions also carry signals other processes send them (cancel, pause,
    directives). Optional: a ``SessionStore`` that implements it gets its sessions' signals
    wired without the wiring knowing the store (``FileSessionStore``: sentinel files in each
    session directory)."""

    @abstractmethod
    def signals(self) -> SignalSource:
        """The signals of this store's sessions, found by session id."""


def signals_of(store: SessionStore) -> SignalSource | None:
    """``store.signals()`` for a ``SignalingStore``, else None. Decided by the store's class
    when the class has the method, once per class (a runtime-checkable Protocol's
    ``isinstance`` walks the protocol's attributes at every call, ~20 µs, and a service
    builds a Session per request); any other store is asked as before (``isinstance``: an
    instance given the method counts too)."""
    if _signaling_class(type(store)) or isinstance(store, SignalingStore):
        return cast("SignalingStore", store).signals()
    return None


@functools.lru_cache(maxsize=256)
def _signaling_class(cls: type) -> bool:
    return issubclass(cls, SignalingStore)
