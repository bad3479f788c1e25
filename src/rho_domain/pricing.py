"""Prices per model, so a call's cost is known when the server does not report one.

A ``PriceTable`` maps model ids to ``ModelPrice`` (USD per million tokens, with the date the
price was taken). ``PriceTable.priced(usage, model)`` fills ``Usage.cost_usd`` when the server
left it empty; a cost the server reported is never replaced. The entry layer loads the table
(a shipped data file, overridden by the user's ``prices.yaml``); the domain only applies it,
so the cost budget (``Budget.max_cost_usd``) works with every endpoint that has a price.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from rho_domain.messages import Usage
from rho_domain.value_methods import value_eq, value_hash, value_repr

PER_TOKENS = 1_000_000


@attrs.frozen(kw_only=True)
class ModelPrice:
    """What one model costs, in USD per million tokens.

    Attributes:
        input: Price of a prompt token that was not a cache hit.
        output: Price of a completion token (reasoning tokens included, as providers bill).
        cached_input: Price of a prompt token served from the prompt cache; None: ``input``.
        taken: The date (``YYYY-MM-DD``) the price was read from the provider's price list.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    input: float
    output: float
    cached_input: float | None = None
    taken: str = ""

    def cost(self, usage: Usage) -> float:
        """The cost of ``usage`` at this price. ``input_tokens`` includes the cached ones
        (as OpenAI-compatible servers report them), so the cached share is billed at
        ``cached_input``."""
        cached = min(usage.cached_tokens, usage.input_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return (
            (usage.input_tokens - cached) * self.input
            + cached * cached_price
            + usage.output_tokens * self.output
        ) / PER_TOKENS


@attrs.frozen
class PriceTable:
    """Model id → price. Lookup is exact, then without a ``provider/`` prefix, then the
    longest known id the model id starts with followed by ``-`` (a dated snapshot such as
    ``gpt-4o-2024-08-06`` takes ``gpt-4o``'s price)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    prices: Mapping[str, ModelPrice] = attrs.field(factory=dict)

    def lookup(self, model: str) -> ModelPrice | None:
        """The price of ``model``, or None when the table does not know it."""
        for name in (model, model.rsplit("/", 1)[-1]):
            price = self.prices.get(name)
            if price is not None:
                return price
        bare = model.rsplit("/", 1)[-1]
        candidates = [known for known in self.prices if bare.startswith(known + "-")]
        if not candidates:
            return None
        return self.prices[max(candidates, key=len)]

    def priced(self, usage: Usage, model: str) -> Usage:
        """``usage`` with ``cost_usd`` filled from the table when the server gave none."""
        if usage.cost_usd is not None:
            return usage
        price = self.lookup(model)
        if price is None:
            return usage
        return attrs.evolve(usage, cost_usd=price.cost(usage))

    def merged(self, other: PriceTable) -> PriceTable:
        """This table with ``other``'s entries added or replacing (user overrides)."""
        return PriceTable({**self.prices, **other.prices})
