"""One dispatched Server-Sent Event, as ``SSEDecoder`` (``rho_adapters.model.sse``) gives it.

A module of its own so that the class is built with the first event that needs one, not with
the decoder: the OpenAI client reads whole unnamed ``data:`` events as strings
(``SSEDecoder.whole_events``), so a one-shot that streams its answers never makes an
``SSEEvent``, and attrs building the class (its ``__init__`` compiled, the class made twice
for its slots) cost every one-shot about 1.4 M instructions. ``rho_adapters.model.sse``
still names it (``from rho_adapters.model.sse import SSEEvent``), importing this module then.
"""

from __future__ import annotations

import attrs

from rho_domain.value_methods import value_eq, value_repr


@attrs.define
class SSEEvent:
    """One dispatched event. ``event`` is ``""`` when the server named none.

    Not frozen, though nothing changes one: one is built for every streamed delta, and a
    frozen class sets each field through ``object.__setattr__`` (715 against 180 ns a
    build, measured)."""

    __repr__ = value_repr
    __eq__ = value_eq

    data: str
    event: str = ""
