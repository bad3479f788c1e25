"""The secrets policy decides by one combined expression per rule group, then names the rule
pattern by pattern: the combined expression must match exactly what some pattern of the group
matches, or a secret would pass (or a harmless file be refused) without the loops noticing."""

from __future__ import annotations

import fnmatch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rho_domain.secrets import (
    ALLOWED,
    LOCATIONS,
    NAMES,
    SSH_KEY,
    TEMPLATES,
    SecretPolicy,
    _any_of,
)

GROUPS = {
    "allowed": ALLOWED,
    "locations": LOCATIONS,
    "names": (*NAMES, SSH_KEY),
    "templates": TEMPLATES,
}

# Pieces of the patterns themselves, so that generated paths often come close to a rule.
PIECES = st.sampled_from(
    [
        "",
        ".",
        "..",
        "home",
        "u",
        ".ssh",
        "id_rsa",
        "id_rsa.pub",
        "id_",
        ".env",
        ".env.local",
        "x.env",
        ".envrc",
        "env",
        "config",
        ".config",
        "gcloud",
        "gh",
        "rho-agent",
        ".docker",
        "config.json",
        "key",
        "a.key",
        "a.pem",
        "cert.pem.txt",
        "credentials",
        "proc",
        "cpuinfo",
        "self",
        "environ",
        "dev",
        "null",
        "etc",
        "shadow",
        "shadow-",
        "sudoers.d",
        "ssh",
        "ssh_host_rsa_key",
        "ssh_host_rsa_key.pub",
        "a.example",
        "b.sample",
        "*",
        "?",
        "[x]",
        "\n",
        "é",
        "É.ENV",
        ".netrc",
        "_netrc",
        ".bash_history",
        "secrets",
        "run",
    ]
)
PATHS = st.builds(
    lambda absolute, parts: ("/" if absolute else "") + "/".join(parts),
    st.booleans(),
    st.lists(PIECES, max_size=6),
).map(str.casefold)


@pytest.mark.parametrize("group", sorted(GROUPS))
@given(path=PATHS | st.text(max_size=30))
def test_combined_expression_matches_what_some_pattern_matches(group: str, path: str) -> None:
    patterns = GROUPS[group]
    expected = any(fnmatch.fnmatchcase(path, p) for p in patterns)
    assert bool(_any_of(patterns).match(path)) == expected


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_each_pattern_alone_is_matched_by_the_combined_expression(group: str) -> None:
    # A pattern's own text (wildcards standing for themselves) is a path it matches.
    for pattern in GROUPS[group]:
        assert fnmatch.fnmatchcase(pattern, pattern)
        assert _any_of(GROUPS[group]).match(pattern), pattern


@given(path=PATHS)
def test_refusal_is_the_pattern_by_pattern_verdict(path: str) -> None:
    """The whole policy against its rules written out with ``fnmatchcase`` alone."""
    text = "/" + "/".join(p for p in path.split("/") if p not in ("", "."))
    if not path.startswith("/"):
        text = text[1:]
    name = "/" + text.rsplit("/", 1)[-1] if text.strip("/") else "/"
    matched = path.startswith("/") and any(fnmatch.fnmatchcase(text, p) for p in ALLOWED)
    low = text if path.startswith("/") else "/*/" + text
    location = any(
        fnmatch.fnmatchcase(low, p) and (path.startswith("/") or p.startswith("*"))
        for p in LOCATIONS
    )
    secret_name = not any(fnmatch.fnmatchcase(name, p) for p in TEMPLATES) and (
        any(fnmatch.fnmatchcase(name, p) for p in NAMES)
        or (fnmatch.fnmatchcase(name, SSH_KEY) and not fnmatch.fnmatchcase(name, "*/id_*.*"))
    )
    expected = bool(path) and not matched and (location or secret_name)
    assert SecretPolicy().is_secret(path) == expected
