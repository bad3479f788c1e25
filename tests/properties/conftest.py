"""Hypothesis settings for the property tests: few, fixed examples, so CI is deterministic
and the whole directory runs in a few seconds."""

from __future__ import annotations

from hypothesis import settings

settings.register_profile(
    "rho", max_examples=100, deadline=None, derandomize=True, database=None, print_blob=True
)
settings.load_profile("rho")
