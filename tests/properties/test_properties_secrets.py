"""The secrets policy matches its ``fnmatch`` patterns with string methods (``GlobSet``), not
with ``fnmatch`` itself: every shape must match exactly what ``fnmatch.fnmatchcase`` matches,
pattern by pattern, or a secret would pass (or a harmless file be refused) without anything
noticing. And the whole policy must give the same verdict, naming the same rule, as its rules
written out with ``fnmatch``'s expressions alone (the policy as it was before ``GlobSet``).

The reference side uses ``fnmatch.translate``, the expression ``fnmatchcase`` compiles and
matches, compiled once per pattern here: ``fnmatchcase`` itself looks each pattern up in its
cache on every call, and the edge tests make some four million such calls (about 10 s of CPU
a run, against 3 s now). A group's expressions joined by ``|`` say whether any matches, which
is what ``any(fnmatchcase(...))`` says (a block's union, then its patterns one by one, name
the first pattern that matches)."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rho_domain.glob_set import GlobSet, glob_matches
from rho_domain.secrets import (
    ALLOWED,
    LOCATIONS,
    NAMES,
    SSH_KEY,
    SSH_KEY_NOT,
    TEMPLATES,
    SecretPolicy,
)

Matcher = Callable[[str], "re.Match[str] | None"]
_Answer = TypeVar("_Answer")

# Patterns of other shapes than the policy's: overlapping pieces, repeated and lone stars,
# and the ``?``/``[`` patterns GlobSet hands to fnmatch.
TRICKY = (
    "a*a", "*a*a*", "ab*ba", "a*b*b", "*", "**", "", "x**y", "*.env*.*", "/x/*/y/*", "x\\*", "*\n",
    "?", "*[ab]", "[!a]*", "a[", "*]*", "[*]", "*?.key",
)  # fmt: skip
GROUPS = {
    "allowed": ALLOWED,
    "locations": LOCATIONS,
    "names": NAMES,
    "names and key": (*NAMES, SSH_KEY),
    "templates": TEMPLATES,
    "key": (SSH_KEY, SSH_KEY_NOT),
    "tricky": TRICKY,
}

# Pieces of the patterns themselves, so that generated paths often come close to a rule; the
# characters fnmatch would read as syntax; newlines, spaces, and letters whose casefold is
# longer than they are.
PIECES = st.sampled_from(
    [
        "",
        ".",
        "..",
        "home",
        "u",
        "root",
        "srv",
        "agent",
        "sessions",
        ".ssh",
        ".sshx",
        "a/.ssh",
        "id_rsa",
        "id_rsa.pub",
        "id_",
        "id_x.y.pub",
        ".env",
        ".ENV",
        ".env.x",
        ".env.local",
        "x.env",
        ".envrc",
        "env",
        "config",
        ".config",
        "nvim",
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
        "/proc",
        "/proc/",
        "/procx",
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
        "ssh_host__key",
        "a.example",
        "b.sample",
        "*",
        "?",
        "[x]",
        "[",
        "]",
        "!",
        "[!a]",
        "\\",
        "\n",
        " ",
        "a b",
        "é",
        "É.ENV",
        "ß",
        "İ",
        "ﬁ",
        ".netrc",
        "_netrc",
        ".bash_history",
        "secrets",
        "run",
        ".bashrc",
    ]
)
PATHS = st.builds(
    lambda absolute, parts: ("/" if absolute else "") + "/".join(parts),
    st.booleans(),
    st.lists(PIECES, max_size=6),
)
TEXTS = PATHS | PATHS.map(str.casefold) | st.text(max_size=30)


def _fnmatchers(patterns: Iterable[str]) -> tuple[tuple[str, Matcher], ...]:
    """Each pattern with ``fnmatchcase``'s own test of it: ``fnmatchcase(text, p)`` is
    ``matcher(text) is not None``."""
    return tuple((p, re.compile(fnmatch.translate(p)).match) for p in patterns)


def _fnmatch_any(patterns: Iterable[str]) -> Matcher:
    """True (a match) when any of ``patterns`` fnmatches the text: their expressions joined,
    compiled at the first text (the module's references compiled at import cost every xdist
    worker 0.4 s of each collection, for the few that run these tests)."""
    ordered = tuple(patterns)
    union = functools.cache(
        lambda: re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in ordered)).match
    )
    return lambda text: union()(text)


def _fnmatch_all(patterns: Iterable[str]) -> Callable[[str], Iterator[str]]:
    """Those of ``patterns`` that fnmatch the text, in order. The patterns in blocks of 16,
    each block's expressions joined as ``_fnmatch_any`` joins them: a block is tried pattern
    by pattern only when its union matches. The edge tests ask this of some 90,000 texts
    among up to 320 patterns, which a loop over every pattern made millions of matches. The
    expressions are compiled at the first text, as ``_fnmatch_any``'s."""
    ordered = tuple(patterns)
    blocks = [ordered[i : i + 16] for i in range(0, len(ordered), 16)]
    tried = functools.cache(
        lambda: tuple((_fnmatch_any(block), _fnmatchers(block)) for block in blocks)
    )

    def matching(text: str) -> Iterator[str]:
        for union, matchers in tried():
            if union(text):
                yield from (p for p, matcher in matchers if matcher(text))

    return matching


def _fnmatch_first(patterns: Iterable[str]) -> Callable[[str], str | None]:
    """The first of ``patterns``, in order, that fnmatches the text (None when none does)."""
    matching = _fnmatch_all(patterns)
    return lambda text: next(matching(text), None)


def _near(pattern: str) -> list[str]:
    """Texts at a pattern's edges: its own text (a star standing for itself), the stars
    taken as nothing, as a slash or a newline, one character more or fewer at either end."""
    variants = {pattern.replace("*", fill) for fill in ("*", "", "/", "\n", "x/y", "**")}
    return sorted({t for v in variants for t in (v, v[1:], v[:-1], v + "x", "x" + v, v + "/")})


@pytest.mark.parametrize("group", sorted(GROUPS))
@given(text=TEXTS)
def test_a_glob_set_matches_what_fnmatch_matches(group: str, text: str) -> None:
    patterns = GROUPS[group]
    expected = [p for p in patterns if fnmatch.fnmatchcase(text, p)]
    globs = GlobSet(patterns)
    assert globs.matches(text) == bool(expected)
    assert list(globs.matching(text)) == expected
    assert [p for p in patterns if glob_matches(text, p)] == expected
    assert [p for p in patterns if GlobSet((p,)).matches(text)] == expected


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_each_pattern_at_its_edges(group: str) -> None:
    """Every pattern of the group against the texts around it and around every other one."""
    patterns = GROUPS[group]
    globs = GlobSet(patterns)
    fnmatching = _fnmatch_all(patterns)
    singles = [(p, GlobSet((p,))) for p in patterns]  # read-only once built: built once
    texts = {t for p in patterns for t in _near(p)}
    for text in sorted(texts):
        expected = list(fnmatching(text))
        assert list(globs.matching(text)) == expected, text
        assert globs.matches(text) == bool(expected), text
        assert [p for p, single in singles if single.matches(text)] == expected, text


def _remembered(answer: Callable[[str], _Answer]) -> Callable[[str], _Answer]:
    """``answer``, remembered per text: the reference's pattern look-ups are pure functions of
    the folded text, and the edge test asks them again for each policy and for the path's
    spellings that fold alike (``text.upper()``): 3.4 s of the reference's 3.5 a policy
    before, 1.7 and 0.6 s after, the verdicts the same."""
    return functools.lru_cache(maxsize=1 << 17)(answer)


# The policy before GlobSet, written out with fnmatch's expressions: the verdict and the rule named.
_ALLOWED = _remembered(_fnmatch_any(ALLOWED))
# a relative path is named only by a location that starts with a star
_LOCATION = _remembered(_fnmatch_first(LOCATIONS))
_RELATIVE_LOCATION = _remembered(_fnmatch_first(p for p in LOCATIONS if p.startswith("*")))
_TEMPLATES = _remembered(_fnmatch_any(TEMPLATES))
_NAME = _remembered(_fnmatch_first(NAMES))
_KEY, _KEY_NOT = _fnmatch_any((SSH_KEY,)), _fnmatch_any((SSH_KEY_NOT,))


def _parts(path: str) -> tuple[str, ...]:
    return tuple(part for part in path.split("/") if part not in ("", "."))


def _text(path: str) -> str:
    return ("/" if path.startswith("/") else "") + "/".join(_parts(path))


def _inside(parts: tuple[str, ...], tree: str) -> bool:
    return parts[: len(_parts(tree))] == _parts(tree)


# Names as a case-insensitive disk compares them, written out from rho_domain.names' contract
# (not its code): casefolded, without the code points HFS+ ignores, an NTFS stream's type and
# the trailing dots and spaces Windows drops.
_HFS_IGNORED = "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u206a\u206b\u206c"
_HFS_IGNORED += "\u206d\u206e\u206f\ufeff"


_DROP_HFS_IGNORED = dict.fromkeys(map(ord, _HFS_IGNORED))
# compiled once: the edge tests fold some 300,000 parts
_STREAM_TYPE = re.compile(r"(:[^:]*)?:\$[a-z0-9_]+\Z")
_SHORT_SHAPE = re.compile(r"[^.~/]{1,6}~[0-9]{1,6}(\.[^.~/]{1,3})?")


@functools.lru_cache(maxsize=1 << 16)  # pure; the edge paths repeat their parts
def _fold(part: str) -> str:
    low = _STREAM_TYPE.sub("", part.casefold().translate(_DROP_HFS_IGNORED))
    return low.rstrip(". ") or low


def _short(part: str) -> bool:
    """A Windows 8.3 name's shape: a stem of at most 8 with ``~N``, an extension of at most 3."""
    return _SHORT_SHAPE.fullmatch(_fold(part)) is not None


def reference_judge(policy: SecretPolicy, path: str) -> str | None:
    parts, absolute = _parts(path), path.startswith("/")
    if absolute and _ALLOWED(_text(path)):
        return None
    for location in policy.locations:
        if absolute and _inside(parts, location):
            return f"{path!r} is inside {location}, a secret location the agent never reads"
    folded = ("/" if absolute else "") + "/".join(map(_fold, parts))
    low = folded if absolute else "/*/" + folded
    if pattern := (_LOCATION if absolute else _RELATIVE_LOCATION)(low):
        return f"{path!r} is a secret location ({pattern.removesuffix('/*')})"
    for home in policy.homes:
        base = _parts(home)
        entry = len(parts) > len(base) and _inside(parts, home) and parts[len(base)][:1] == "."
        if absolute and entry and not any(_inside(parts, t) for t in policy.open_trees):
            return (
                f"{path!r} is a hidden entry of the home directory {home}, a secret location "
                "(tools keep credentials there under any name)"
            )
    name = "/" + _fold(parts[-1]) if parts else "/"
    if not _TEMPLATES(name):
        if pattern := _NAME(name):
            return f"{path!r} is a secrets file ({pattern.removeprefix('*/')})"
        if _KEY(name) and not _KEY_NOT(name):
            return f"{path!r} is a secret (an SSH private key)"
    for part in _parts(path):
        if _short(part):
            return (
                f"{path!r}: {part!r} has the shape of a Windows short (8.3) name, which NTFS "
                "opens as another, longer name that may be a secret; name it by its long name"
            )
    return None


POLICIES = (
    SecretPolicy(),
    SecretPolicy(
        locations=("/srv/agent/sessions", "/home/u/.config/rho-agent"),
        homes=("/home/u", "/root/"),
        open_trees=("/home/u/.config/nvim",),
    ),
)


@pytest.mark.parametrize("policy", POLICIES, ids=["default", "with locations and homes"])
@given(path=TEXTS)
def test_the_policy_gives_the_pattern_by_pattern_verdict(policy: SecretPolicy, path: str) -> None:
    assert policy.judge(path) == reference_judge(policy, path)


@pytest.mark.parametrize("policy", POLICIES, ids=["default", "with locations and homes"])
def test_the_policy_at_every_patterns_edges(policy: SecretPolicy) -> None:
    patterns = (*ALLOWED, *LOCATIONS, *TEMPLATES, *NAMES, SSH_KEY, SSH_KEY_NOT)
    # and a secret's name made a template's (``.env.example``): what rule 3 lets through
    templated = {n.replace("*", "a") + t.removeprefix("*") for n in NAMES for t in TEMPLATES}
    for text in sorted({t for p in patterns for t in _near(p)} | templated):
        for path in (text, text.upper(), "/home/u/" + text, "src/" + text.lstrip("/")):
            assert policy.judge(path) == reference_judge(policy, path), path
