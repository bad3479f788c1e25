"""``GlobSet.matching`` names the rules that match by each pattern's shape, inline: it called
``_one_matches`` (and ``_pieces_match``) for every pattern it tried, and naming a location
rule tries up to 320 patterns, most of the cost of a location refusal (the policy's edge
tests: 88-92 -> 56-66 us a path). What it names is what ``fnmatchcase`` matches, in order
(``tests/properties/test_properties_secrets.py`` holds that for every pattern's edges)."""

from __future__ import annotations

import fnmatch
import sys
from types import FrameType
from typing import Any

from rho_domain.glob_set import GlobSet

# Every shape, the one that matches last of all.
PATTERNS = (
    *(f"*.s{i}" for i in range(60)),  # suffixes
    *(f"/p{i}/*" for i in range(60)),  # prefixes
    *(f"*/i{i}/*" for i in range(60)),  # pieces anywhere
    *(f"/e{i}" for i in range(60)),  # exact
    *(f"/g{i}/*/x*.pub" for i in range(60)),  # general
    "/g/*/x?.pub",  # fnmatch's own
    "*.pub",
)


def test_naming_the_matching_rules_makes_no_call_per_pattern() -> None:
    globs = GlobSet(PATTERNS)
    text = "/g/a/x1.pub"
    # the shapes (oneshot27) and the gates (judge27) are worked out once, at the set's first
    # naming: what is counted is a naming after that
    assert list(globs.matching("/e0")) == ["/e0"]
    calls: list[str] = []

    def count(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.endswith("glob_set.py"):
            calls.append(frame.f_code.co_name)

    sys.setprofile(count)
    try:
        named = list(globs.matching(text))
    finally:
        sys.setprofile(None)
    assert named == [p for p in PATTERNS if fnmatch.fnmatchcase(text, p)]
    assert named == ["/g/*/x?.pub", "*.pub"]
    # the generator's resumptions (and a _pieces_match per general pattern that starts
    # right), not a call or two per pattern tried
    assert len(calls) < 10, calls
