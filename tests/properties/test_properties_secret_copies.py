"""The secrets policy's judgement of copy-like names (``a copy of id_rsa``, ``.env.bak``, a
directory such as ``pytest-1`` that may itself be a copy) gives the verdict, naming the same
rule and stem, that its rules give written out as they were before judge27 made them cheaper:
every stem of ``twin_stems`` worked out afresh (no directory remembered), and every rule
group's patterns tried one by one with ``fnmatch``'s own expressions (no gate, no shape).

The corpus is the Daytona scan test's (``tests/daytona/test_daytona_hard_links.py``): a
concrete name for each name and location pattern, cased, with a suffix, ``#name#``, "Copy of",
a mark before the extension, and every seventh as a disk folds it; below directories that may
be copies, a home, a location of the policy and a relative one."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections import deque
from collections.abc import Callable, Iterable

from rho_domain.names import folded, folded_text, short_name_refusal
from rho_domain.secret_patterns import in_loose_fanout
from rho_domain.secret_twins import may_be_copy, name_stems
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


def _first(patterns: Iterable[str]) -> Callable[[str], str | None]:
    """The first of ``patterns``, in order, that ``fnmatchcase`` matches the text with: in
    blocks of 16, a block's expressions joined by ``|`` and its patterns tried one by one
    only when the union matches (a pattern at a time cost this test 10 s); remembered per
    text, which the paths' stems repeat. The expressions are compiled at the first text (at
    import, every xdist worker compiled the module's 836 at collection: 0.4 s of CPU each)."""
    ordered = tuple(patterns)
    blocks = [ordered[i : i + 16] for i in range(0, len(ordered), 16)]

    @functools.cache
    def tried() -> tuple[tuple[Matcher, tuple[tuple[str, Matcher], ...]], ...]:
        return tuple(
            (
                re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in block)).match,
                tuple((p, re.compile(fnmatch.translate(p)).match) for p in block),
            )
            for block in blocks
        )

    @functools.lru_cache(maxsize=1 << 16)
    def first(text: str) -> str | None:
        for union, each in tried():
            if union(text):
                return next(p for p, match in each if match(text))
        return None

    return first


_ALLOWED, _LOCATION, _TEMPLATE = _first(ALLOWED), _first(LOCATIONS), _first(TEMPLATES)
_RELATIVE_LOCATION = _first(p for p in LOCATIONS if p.startswith("*"))
_NAME, _KEY, _KEY_NOT = _first(NAMES), _first((SSH_KEY,)), _first((SSH_KEY_NOT,))


def _parts(path: str) -> tuple[str, ...]:
    return tuple(part for part in path.split("/") if part not in ("", "."))


def _stems(path: str) -> tuple[str, ...]:
    """``twin_stems`` as it was: the whole path asked whether it may be a copy, the reduced
    directory worked out for every path."""
    if not may_be_copy(path):
        return (path,)
    head, _, last = path.rstrip("/").rpartition("/")
    reduced = head
    if may_be_copy(head):
        ends = (deque(name_stems(folded(p)), maxlen=1) for p in head.split("/"))
        reduced = "/".join(stem.pop() if stem else "" for stem in ends)
    stems = [path]
    for directory in dict.fromkeys((head, reduced)):
        for stem in name_stems(folded(last)):
            stems.append(f"{directory}/{stem}" if directory or path.startswith("/") else stem)
    return tuple(dict.fromkeys(stems))


def _location(policy: SecretPolicy, path: str) -> str | None:
    parts = _parts(path)
    for location in policy.locations:
        if path.startswith("/") and parts[: len(_parts(location))] == _parts(location):
            return f"{path!r} is inside {location}, a secret location the agent never reads"
    for name in policy.anywhere:
        width = len(_parts(name))
        if any(parts[i : i + width] == _parts(name) for i in range(len(parts) - width + 1)):
            return f"{path!r} is {name} below some directory, a secret wherever it is"
    low = folded_text(path)
    low = low if low.startswith("/") else "/*/" + low
    # a relative path is named only by a location that starts with a star
    if pattern := (_LOCATION if path.startswith("/") else _RELATIVE_LOCATION)(low):
        return f"{path!r} is a secret location ({pattern.removesuffix('/*')})"
    if in_loose_fanout(path):
        return f"{path!r} is a secret location (*/objects/<two hex digits>)"
    for home in policy.homes:
        base = _parts(home)
        inside = len(parts) > len(base) and parts[: len(base)] == base
        opened = any(parts[: len(_parts(t))] == _parts(t) for t in policy.open_trees)
        if path.startswith("/") and inside and parts[len(base)][:1] == "." and not opened:
            return (
                f"{path!r} is a hidden entry of the home directory {home}, a secret location "
                "(tools keep credentials there under any name)"
            )
    return None


def _name(path: str) -> str | None:
    """Rule 3; "" for a template."""
    parts = _parts(path)
    name = "/" + folded(parts[-1]) if parts else "/"
    if _TEMPLATE(name):
        return ""
    if pattern := _NAME(name):
        return f"{path!r} is a secrets file ({pattern.removeprefix('*/')})"
    if _KEY(name) and not _KEY_NOT(name):
        return f"{path!r} is a secret (an SSH private key)"
    return None


def reference_judge(policy: SecretPolicy, path: str) -> str | None:
    """``SecretPolicy.judge`` as its rules were written before judge27."""

    def as_copy(stem: str, reason: str) -> str:
        return reason if stem == path else f"{path!r} is a copy of a secret: {reason}"

    stems = _stems(path)
    for stem in stems:
        text = ("/" if stem.startswith("/") else "") + "/".join(_parts(stem))
        if path.startswith("/") and _ALLOWED(text):
            return None
        if reason := _location(policy, stem):
            return as_copy(stem, reason)
    for stem in stems:
        reason = _name(stem)
        if reason == "":
            return None
        if reason is not None:
            return as_copy(stem, reason)
    return short_name_refusal(path)


def _edge_names() -> list[str]:
    """The Daytona scan test's names (its module docstring says how they are made)."""
    concrete = [
        re.sub(r"\[(.)[^]]*\]", r"\1", p.removeprefix("*/")).replace("*", "x")
        for p in (*NAMES, SSH_KEY, *LOCATIONS)
        if not p.endswith("/*") and p.startswith("*")
    ]
    names = []
    for i, path in enumerate(dict.fromkeys(concrete)):
        head, _, name = path.rpartition("/")
        dot = name.rfind(".")
        spelled = [name, name.upper(), f"{name}.bak", f"#{name}#", f"Copy of {name}"]
        spelled += [f"{name[:dot]} (2){name[dot:]}"] if dot > 0 else []
        if i % 7 == 0:
            spelled += [name.replace("k", "\u212a"), f"{name}.", name[:1] + "\u200c" + name[1:]]
        names += [f"{head}/{n}" if head else n for n in spelled]
    return names


POLICY = SecretPolicy(
    locations=("/srv/agent/sessions", "/home/u/.config/rho-agent"),
    homes=("/home/u",),
    open_trees=("/home/u/.config/nvim",),
    anywhere=("keys/deploy",),
)


def test_copy_like_names_get_the_verdicts_of_the_rules_as_they_were() -> None:
    names = _edge_names()
    assert len(names) > 1300
    paths = [f"/t/pytest-1/n/{n}" for n in names]
    # and samples below a home (its hidden entries), a copy of an open tree, of a location,
    # a relative directory, a store's fan-out and a name secret anywhere
    paths += [f"/home/u/{n}" for n in names[::9]]
    paths += [f"/home/u/.config/nvim.bak/{n}" for n in names[::23]]
    paths += [f"/srv/agent/sessions.1/{n}" for n in names[::23]]
    paths += [f"src.old/{n}" for n in names[::13]]
    paths += [f"/w/objects/5a.bak/{n}" for n in names[::29]]
    paths += [f"/w/keys.orig/deploy (copy)/{n}" for n in names[::31]]
    refused = 0
    for path in paths:
        verdict = POLICY.judge(path)
        assert verdict == reference_judge(POLICY, path), path
        refused += verdict is not None
    for path in paths[::8]:
        assert SecretPolicy().judge(path) == reference_judge(SecretPolicy(), path), path
    assert refused > len(paths) // 2
