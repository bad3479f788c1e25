"""Hypothesis settings for the property tests.

The default profile ("rho") draws few, fixed examples, so CI is deterministic and the whole
directory runs in a few seconds. ``HYPOTHESIS_PROFILE=deep`` draws many random ones, for a
search after a change to the rules; ``mutation`` fewer, for scripts/mutation.sh (see
docs/testing.md).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile(
    "rho", max_examples=100, deadline=None, derandomize=True, database=None, print_blob=True
)
settings.register_profile("deep", max_examples=3000, deadline=None, database=None)
# scripts/mutation.sh: every mutant reruns the properties, so fewer (still fixed) examples.
settings.register_profile(
    "mutation", max_examples=25, deadline=None, derandomize=True, database=None
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "rho"))
