"""Hard links in the Daytona backend: a secret under a second, innocent name.

A hard link is the same file under two names: ``notes.txt`` linked to ``.env`` has no target
a real-path check could resolve. The local executor finds such names by inode
(``local/hardlinks.py``); before this suite the Daytona executor judged names and real paths
only, so every command below printed the secret on Daytona (``cat notes.txt``, ``rg SECRET``,
the read and grep tools...). FakeDaytona runs real programs on real files, so each attack
really executes. Legit work on a hard-linked pair of ordinary files keeps working.
"""

from __future__ import annotations

import json
import os
import posixpath
import random
import re
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from rho_adapters.clock import SystemClock
from rho_adapters.daytona import DaytonaExecutor, aliases, secret_regex
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local.line_search import ProcessLineSearcher
from rho_domain.errors import SensitivePath
from rho_domain.messages import ToolCall
from rho_domain.paths import components, is_within
from rho_domain.permissions import FileWriteMode, readonly_profile
from rho_domain.secrets import LOCATIONS, NAMES, SSH_KEY, SecretPolicy
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.factory import build_registry

MARKS = ("SECRET-ENV", "SECRET-CRED", "SECRET-SSH")
ATTACKS = [
    "cat notes.txt",
    "cat keycopy.txt",
    "cat src/cred.bak",
    "head -c 100 ./src/../notes.txt",
    "cat < notes.txt",
    "cat *.txt",
    "tail -n 1 k*",
    "grep SECRET src/*",
    "base64 -w0 keycopy.txt",
    "jq -R . src/cred.bak",
    "diff README.md notes.txt",
    "grep -r SECRET .",
    "grep -rh SECRET src",
    "rg SECRET",
    "rg -uuu SECRET src",
    "diff -rN old src",
    "echo notes.txt | xargs cat",
    "ls | xargs cat",
    "find . -type f | xargs grep SECRET",
    "echo src | xargs grep -r SECRET",
]


# One rig and executor for the module, on the module's event loop (a session has one
# sandbox): a rig per case paid the sandbox's creation and set-up scripts before its command.
# No case writes to the workspace; each still runs its own command or tool call.
@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def rig(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Any]]:
    tmp_path = tmp_path_factory.mktemp("daytona-hard-links")
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/id_rsa").write_text("SECRET-SSH-KEY\n")
    (ws / "src").mkdir(parents=True)
    (ws / "old").mkdir()
    for rel, text in {
        ".env": "API_KEY=SECRET-ENV-1\n",
        "credentials.json": '{"token": "SECRET-CRED-1"}\n',
        "README.md": "# readme\n",
        "twin-a.txt": "twin\n",
    }.items():
        (ws / rel).write_text(text)
    os.link(ws / ".env", ws / "notes.txt")
    os.link(home / ".ssh/id_rsa", ws / "keycopy.txt")
    os.link(ws / "credentials.json", ws / "src/cred.bak")
    os.link(ws / "twin-a.txt", ws / "twin-b.txt")  # two ordinary names: still readable
    fake = FakeDaytona(polls_until_started=0)
    executor = DaytonaExecutor(
        fake.settings(working_dir=str(ws)),
        file_write=FileWriteMode.OFF,
        transport=fake.transport,
        homes=(str(home),),
    )
    try:
        yield {"executor": executor, "home": home, "ws": ws, "fake": fake}
    finally:
        await executor.aclose()


async def _call(rig: dict[str, Any], tool: str, **args: Any) -> ToolOutput:
    profile = readonly_profile()
    ctx = ToolContext(
        session_id="s", call_id="c", executor=rig["executor"], profile=profile, clock=SystemClock()
    )
    call = ToolCall(id="c", name=tool, arguments=json.dumps(args))
    return await build_registry(profile, line_searcher=ProcessLineSearcher()).dispatch(call, ctx)


def _leaked(text: str) -> list[str]:
    flat = "".join(text.split())
    return [m for m in MARKS if m in text or m in flat] + [
        m
        for m in ("U0VDUkVU",)
        if m in flat  # "SECRET" in base64
    ]


@pytest.mark.parametrize("command", ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_no_secret_under_a_hard_link_name(rig: dict[str, Any], command: str) -> None:
    out = await _call(rig, "bash", command=command)
    assert _leaked(out.content) == [], out.content


@pytest.mark.parametrize("path", ["notes.txt", "keycopy.txt", "src/cred.bak", "./src/../notes.txt"])
@pytest.mark.asyncio(loop_scope="module")
async def test_the_read_tool_refuses_a_hard_link_to_a_secret(
    rig: dict[str, Any], path: str
) -> None:
    with pytest.raises(SensitivePath, match="hard link"):
        await rig["executor"].read(path)
    out = await _call(rig, "read", path=path)
    assert out.is_error, out.content
    assert _leaked(out.content) == [], out.content


@pytest.mark.parametrize("args", [{"path": "."}, {"path": "src"}, {"path": "notes.txt"}])
@pytest.mark.asyncio(loop_scope="module")
async def test_the_grep_tool_skips_a_hard_link_to_a_secret(
    rig: dict[str, Any], args: dict[str, str]
) -> None:
    out = await _call(rig, "grep", pattern="SECRET", **args)
    assert _leaked(out.content) == [], out.content


@pytest.mark.asyncio(loop_scope="module")
async def test_a_hard_link_named_is_refused_by_name(rig: dict[str, Any]) -> None:
    out = await _call(rig, "bash", command="cat README.md notes.txt")
    assert out.is_error, out.content
    assert "notes.txt may not be read: it is another name (a hard link)" in out.content


@pytest.mark.asyncio(loop_scope="module")
async def test_ordinary_twins_and_legit_work_still_run(rig: dict[str, Any]) -> None:
    out = await _call(rig, "bash", command="cat twin-a.txt twin-b.txt && grep -rn twin .")
    assert not out.is_error, out.content
    assert "./twin-b.txt:1:twin" in out.content, out.content
    assert "./twin-a.txt:1:twin" in out.content, out.content
    found = await _call(rig, "bash", command="echo twin-b.txt | xargs cat")
    assert "twin" in found.content, found.content
    assert await rig["executor"].read("twin-b.txt") == b"twin\n"


def _scan_roots_by_pairs(candidates: list[str]) -> tuple[str, ...]:
    """``aliases.scan_roots``'s trees as it found them before: each tree compared with every
    one kept (4 ms of CPU a call with the default policy's locations)."""
    pruned = [components(p) for p in ("/proc", "/sys", "/dev")]
    kept: list[tuple[str, ...]] = []
    for path in dict.fromkeys(posixpath.normpath(c) for c in candidates if c.startswith("/")):
        parts = components(path)
        if any(is_within(parts, p) for p in pruned):
            continue
        if not any(is_within(parts, other) for other in kept):
            kept = [k for k in kept if not is_within(k, parts)] + [parts]
    return tuple("/" + "/".join(parts) for parts in kept)


def test_scan_roots_keeps_the_outermost_trees_in_their_order() -> None:
    """The look-up per component finds the trees, in the order, that comparing every pair
    found: the default policy's locations, and (``outermost``, the policy's locations left
    out) random sets of nested, repeated, pruned, relative and unnormalised paths (``//a``
    is ``/a``; ``/`` holds every other)."""
    policy = SecretPolicy(homes=("/home/u",))
    ws, opened = "/home/u/ws", ["/home/u/ws/a.txt", "/etc/ssl/private/k", "/proc/1/environ"]
    pairs = [w for path in opened for w in (path, posixpath.dirname(path))]
    expected = _scan_roots_by_pairs([ws, *policy.absolute_locations(), *pairs])
    assert aliases.scan_roots(policy, (ws,), opened) == expected
    assert "/etc/ssl/private" in expected
    names = ["/", "//a", "/a", "/a/b", "/a/b/", "/a/./b/c", "/a/b/../x", "/ab", "/proc", "/proc/9",
             "/sys/k", "/devx", "/dev", "rel/x", "/x/y", "/x", "/x/y/z"]  # fmt: skip
    rng = random.Random(18)
    for _ in range(500):
        chosen = rng.choices(names, k=rng.randint(0, 8))
        assert aliases.outermost(chosen) == _scan_roots_by_pairs(chosen), chosen


def _edge_names() -> list[str]:
    """A concrete name for each name and file-location pattern of the policy, and its copies:
    cased, with a suffix, emacs' ``#name#``, "Copy of", a mark before the extension; every
    seventh also spelled as ``names.folded`` reads it (the Kelvin sign for ``k``, a trailing
    dot for NTFS, U+200C inside for HFS+)."""
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


@pytest.fixture(scope="module")
def edge_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    """A tree of the policy's edge names (``_edge_names``), some below a directory whose
    name is not UTF-8: its root and the paths made."""
    root = tmp_path_factory.mktemp("scan-edges")
    paths = [f"{root}/n/{name}" for name in _edge_names()]
    paths += [f"{root}/\udcff/{name}" for name in _edge_names()[::9]]  # not UTF-8
    for path in map(os.fsencode, paths):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.isdir(path):
            open(path, "wb").close()
    return str(root), paths


def test_the_scan_lists_every_name_the_policy_refuses(edge_tree: tuple[str, list[str]]) -> None:
    """The scan's one ``-iregex`` (secret_regex.secret_regex) lists, as ``s`` records, every entry
    of a tree of the policy's edge names that the policy refuses (the entry or a directory
    above it), in a UTF-8 locale too (the scan sets the C locale: a directory whose name is
    not UTF-8 hides nothing from it). The 665 ``-iname``/``-ipath`` tests it replaced cost
    find 40 ms of CPU a walk of a small workspace, and missed the trailing dot, the Kelvin
    sign and U+200C spellings."""
    root, paths = edge_tree
    script = aliases.scan_script([root])
    assert script.count("-iregex") == 1
    assert "-iname" not in script
    env = {"PATH": os.environ["PATH"], "LC_ALL": "C.UTF-8"}
    line = subprocess.run(["bash", "-c", script], env=env, capture_output=True, check=True)
    policy = SecretPolicy()
    found = aliases.parse_aliases(line.stdout.decode(), policy).secrets
    refused = [p for p in paths if policy.refusal(p)]
    missed = [p for p in refused if not any(d in found for d in _and_above(p, root))]
    assert len(refused) > 500
    assert missed == [], missed[:20]


def test_the_scan_expression_lists_what_its_plain_alternation_lists(
    edge_tree: tuple[str, list[str]],
) -> None:
    """The scan's expression, its shared beginnings written once (``alternation``: 7,798
    characters that glibc compiles in a third of the time), lists exactly the entries the
    plain ``(a|b|...)`` of the same alternatives (12,961 characters) lists, through the
    sandbox's own ``find``, over every ninth of the policy's edge names (below a directory
    whose name is not UTF-8: the plain form costs find 0.7 s of CPU over the whole tree, this
    one 0.15 s)."""
    root = os.path.join(edge_tree[0], "\udcff")
    plain = secret_regex.secret_regex(lambda alternatives: f"({'|'.join(alternatives)})")
    assert len(secret_regex.SECRET_REGEX) < len(plain) * 2 // 3
    listed = [
        subprocess.run(
            [
                "find",
                "-P",
                root,
                "-regextype",
                "posix-extended",
                "-iregex",
                expression,
                "-printf",
                "%p\\0",
            ],
            env={"PATH": os.environ["PATH"], "LC_ALL": "C"},
            capture_output=True,
            check=True,
        ).stdout.split(b"\0")
        for expression in (secret_regex.SECRET_REGEX, plain)
    ]
    assert len(listed[0]) > 150
    assert listed[0] == listed[1]


def _and_above(path: str, root: str) -> list[str]:
    out = []
    while path != root:
        out.append(path)
        path = posixpath.dirname(path)
    return out


@pytest.mark.asyncio(loop_scope="module")
async def test_a_word_naming_the_workspace_never_scans_its_parent(rig: dict[str, Any]) -> None:
    """``find .`` named the workspace, and the scan took the word's directory too: the
    workspace's parent (all of ``/tmp``, or a home, for a workspace directly there: 1.1 s of
    the sandbox's CPU and ~30 s of wall time on the test machine). The parent is no tree to
    scan; a file's own directory still is (redshell20)."""
    ws, parent = str(rig["ws"]), str(rig["ws"].parent)
    trees = aliases.scan_roots(SecretPolicy(), (ws, ws), [ws, f"{ws}/src"])
    assert parent not in trees
    assert trees[0] == ws
    assert "/srv/x" in aliases.scan_roots(SecretPolicy(), (ws,), ["/srv/x/a.txt"])
    out = await _call(rig, "bash", command="find . -name README.md")
    assert "README.md" in out.content, out.content
    scans = [s for s in rig["fake"].scripts if "-links +1" in s]
    assert scans, rig["fake"].scripts[-1:]
    assert all(f"find -P {parent} " not in s and f"'{parent}' " not in s for s in scans), scans[-1]
