"""Issue 32, item 8: no tool stalls the event loop, and every tool call ends by its deadline.

``lag_of`` (``resource_support``) times what held the event loop while each call ran: the
glob tool with ``**/`` repeated 24 times over a deep tree, the grep fallback (no ripgrep)
with ``(a+)+$`` on a long line of ``a`` ending in ``b``, a bash glob whose stars backtrack.
Real files, the real LocalExecutor, a real worker process. More in ``test_tool_offload``.
"""

from __future__ import annotations

import asyncio
import fnmatch
import functools
import random
import re
import time
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from resource_support import (
    RO,
    STALL,
    NoRipgrep,
    call,
    lag_of,
    worker_processes,
    workers_left,
)

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import InlineLineSearcher, ScriptedModel, text, tools
from rho_adapters.fakes import call as script_call
from rho_adapters.local.line_search import ProcessLineSearcher
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError, ToolError
from rho_domain.loop.session import Session
from rho_domain.messages import ToolCall, ToolResultMessage
from rho_domain.permissions import PermissionProfile, developer_profile
from rho_domain.run import RunStatus
from rho_domain.shell.glob import compile_component, expand
from rho_domain.tools.base import ToolContext
from rho_domain.tools.factory import build_registry
from rho_domain.tools.registry import DEFAULT_TOOL_TIMEOUT, default_timeout
from rho_domain.tools.walk import MAX_PATTERN, glob_matcher

T = TypeVar("T")


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    """30 nested directories, each with a few files, and one file that matches."""
    d = tmp_path
    for depth in range(30):
        d = d / f"d{depth}"
        d.mkdir()
        for i in range(3):
            (d / f"f{i}.txt").write_text("x\n")
    (d / "zz").write_text("found\n")
    return tmp_path


# ---- glob ------------------------------------------------------------------------------


async def test_glob_with_24_globstars_keeps_the_loop_running(deep: Path) -> None:
    pattern = "**/" * 24 + "zz"
    out, stall, _ = await lag_of(call(deep, "glob", pattern=pattern, timeout=10))
    want = "/".join(f"d{i}" for i in range(30)) + "/zz"
    assert out.content == f"{want}\n[1 file]"  # not the 10 s timeout's message
    assert stall < STALL


async def test_glob_with_24_globstars_matches_a_deep_path_at_once() -> None:
    """Before: one regex with ``(?:.*/)?`` per ``**/``; 12 of them took 8.7 s on one path."""
    matcher = glob_matcher("**/" * 24 + "zz", ".")
    started = time.thread_time()  # CPU, not wall: the machine's load does not count
    assert not matcher.match("a/" * 60 + "b")
    assert matcher.match("a/" * 60 + "zz")
    assert time.thread_time() - started < 0.05  # 0.1 ms measured


def _old_glob_regex(pattern: str) -> re.Pattern[str]:
    """The former translation (one backtracking regex), kept as the oracle for meaning."""
    if "/" not in pattern.rstrip("/"):
        pattern = "**/" + pattern
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            ch = pattern[i]
            if ch == "*":
                out.append("[^/]*")
            elif ch == "?":
                out.append("[^/]")
            elif ch == "[" and (end := pattern.find("]", i + 1)) >= 0:
                out.append(fnmatch.translate(pattern[i : end + 1])[4:-3])
                i = end
            else:
                out.append(re.escape(ch))
            i += 1
    return re.compile("".join(out) + r"\Z")


def test_the_linear_glob_matcher_means_what_the_regex_meant() -> None:
    """10,000 random patterns and paths (``**`` as whole components): same answers. Each of
    the 3,779 distinct patterns is compiled once both ways (0.9 -> 0.6 s of CPU): the
    matchers keep no state between matches."""
    rng = random.Random(32)
    parts = ["**", "*", "a*", "*.py", "?", "[ab]*", "src", "a", "*b*", "b", "[!a]", "?.py"]
    names = ["a", "b", "ab", "src", "x.py", "a.py", "ba", "aa", "b.py"]
    old_regex = functools.cache(_old_glob_regex)
    matcher = functools.cache(lambda pattern: glob_matcher(pattern, "."))
    for _ in range(10_000):
        pattern = "/".join(rng.choice(parts) for _ in range(rng.randint(1, 4)))
        path = "/".join(rng.choice(names) for _ in range(rng.randint(1, 5)))
        old = bool(old_regex(pattern).match(path))
        assert matcher(pattern).match(path) is old, (pattern, path)


# ---- bash globs ---------------------------------------------------------------------------


def test_a_component_with_many_stars_matches_a_long_name_at_once() -> None:
    """``.*a.*a...`` placed 24 stars every way over a 255-byte name: it never ended."""
    regex = compile_component("*a" * 24 + "*b")
    assert regex is not None
    started = time.thread_time()  # CPU, not wall: the machine's load does not count
    assert regex.fullmatch("a" * 255) is None
    assert regex.fullmatch("a" * 254 + "b") is not None
    assert time.thread_time() - started < 0.05  # 5 µs measured


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        ("*a*a*b", "xaxab", True),
        ("*a*a*b", "aab", True),
        ("*a*a*b", "ab", False),
        ("a*b*c", "abbc", True),
        ("a*b*c", "acb", False),
        ("*ab*ab", "abab", True),
        ("*ab*ab", "aabab", True),
        ("*ab*ab", "ab", False),
        ("?*?", "ab", True),
        ("?*?", "a", False),
        ("*[0-9]*[0-9]", "a1b2", True),
        ("*[0-9]*[0-9]", "a1b", False),
        ("**", "", True),
    ],
)
def test_stars_still_match_as_bash_does(pattern: str, name: str, matches: bool) -> None:
    regex = compile_component(pattern)
    assert regex is not None
    assert (regex.fullmatch(name) is not None) is matches


async def test_bash_glob_with_many_stars_over_long_names_keeps_the_loop_running(
    tmp_path: Path,
) -> None:
    for i in range(50):
        (tmp_path / ("a" * 240 + f"{i:03d}")).write_text("")
    command = "ls " + "*a" * 24 + "*b"  # matches nothing: the word stays as written
    # Judged by the loop thread's CPU, which the machine's load cannot swell: one callback
    # read 0.40 s of wall, less the waits for a core, at load 15 (a blocking call waiting on
    # a busy disk counts there); a backtracking match on the loop is seconds of its CPU.
    cpu = time.thread_time()
    out, _, _ = await lag_of(call(tmp_path, "bash", command=command, timeout=10))
    on_loop = time.thread_time() - cpu
    assert "No such file" in out.content  # not the 10 s timeout's message
    assert on_loop < STALL, on_loop


async def test_expand_over_a_lister_with_long_names_is_fast() -> None:
    names = [("a" * 250 + str(i), False) for i in range(200)]

    async def lister(path: str) -> Sequence[tuple[str, bool]]:
        return names

    started = time.thread_time()  # CPU, not wall: the machine's load does not count
    assert await expand("*a" * 30 + "*1", ".", lister) == tuple(
        sorted(n for n, _ in names if n.endswith("1"))
    )
    assert time.thread_time() - started < 0.5  # 0.6 ms measured


# ---- grep without ripgrep -----------------------------------------------------------------


async def test_grep_fallback_catastrophic_regex_ends_by_the_deadline(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a" * 40 + "b\nplain line\n")
    out, stall, elapsed = await lag_of(call(tmp_path, "grep", pattern="(a+)+$", timeout=1))
    assert out.is_error
    assert out.content.startswith("Tool 'grep' timed out after 1 s and was stopped")
    assert out.metadata["timeout"] is True
    assert stall < STALL
    assert elapsed < 30  # a hang, not a speed: without the deadline 2^40 steps never end
    assert await workers_left() == []  # the worker was killed, not left spinning


async def test_grep_fallback_still_finds_lines(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\naaab\nthree\n")
    (tmp_path / "b.txt").write_text("no\n")
    out = await call(tmp_path, "grep", pattern="(a+)+b$", context=1)
    assert out.content == "a.txt-1-one\na.txt:2:aaab\na.txt-3-three\n[1 match]"
    assert worker_processes() == []


async def test_grep_fallback_invalid_regex_is_named(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    out = await call(tmp_path, "grep", pattern="(unclosed")
    assert out.is_error
    assert "invalid regular expression: missing ), unterminated subpattern" in out.content


async def test_the_worker_is_killed_when_the_caller_stops_reading(tmp_path: Path) -> None:
    async def texts() -> Any:
        yield "a" * 40 + "b"

    searching = ProcessLineSearcher().search("(a+)+$", texts(), ignore_case=False)
    assert isinstance(searching, AsyncGenerator)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.5):
            await anext(searching)
    await searching.aclose()
    assert worker_processes() == []


async def test_grep_without_ripgrep_or_searcher_says_what_to_install(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    ctx = ToolContext(
        session_id="s",
        call_id="c",
        executor=NoRipgrep(str(tmp_path)),
        profile=RO,
        clock=SystemClock(),
    )
    out = await build_registry(RO).dispatch(
        ToolCall(id="c", name="grep", arguments='{"pattern": "x"}'), ctx
    )
    assert out.is_error
    assert "grep needs ripgrep (rg)" in out.content


async def test_the_inline_fake_searcher_gives_the_same_lines() -> None:
    async def texts() -> Any:
        yield "a\nb\na"
        yield "c"

    fake = InlineLineSearcher()
    got = [hits async for hits in fake.search("A", texts(), ignore_case=True)]
    real = [hits async for hits in ProcessLineSearcher().search("A", texts(), ignore_case=True)]
    assert got == real == [(0, 2), ()]
    assert fake.patterns == [("A", True)]
    with pytest.raises(ToolError, match="invalid regular expression"):
        await anext(fake.search("(", texts(), ignore_case=False))


# ---- deadlines ----------------------------------------------------------------------------


def test_every_call_has_a_deadline_by_default() -> None:
    assert default_timeout("grep", RO) == DEFAULT_TOOL_TIMEOUT
    long_shell = PermissionProfile(name="ops", shell_timeout=3600.0)
    assert default_timeout("bash", long_shell) == 3630.0
    assert default_timeout("delegate", developer_profile()) is None


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), "10"])
def test_tool_timeout_must_be_positive_seconds(value: Any) -> None:
    with pytest.raises(ConfigError, match="tool_timeout must be a number of seconds"):
        AgentConfig(tool_timeout=value)


# ---- deadlines in a session, caps --------------------------------------------------------


async def test_a_session_s_tool_timeout_stops_a_stuck_call_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    """``AgentConfig.tool_timeout`` reaches every call of a real session: the model reads the
    "timed out" result and answers; the loop kept running meanwhile."""
    (tmp_path / "a.txt").write_text("a" * 40 + "b\n")
    config = AgentConfig(profile=RO, tool_timeout=1.5)
    agent = Agent(
        config=config,
        profile=RO,
        registry=build_registry(RO, line_searcher=ProcessLineSearcher()),
        system_prompt="test",
    )
    session = Session(
        agent,
        model=ScriptedModel(
            [tools(script_call("grep", {"pattern": "(a+)+$"})), text("the search timed out")]
        ),
        executor=NoRipgrep(str(tmp_path)),
        clock=SystemClock(),
    )
    result, stall, elapsed = await lag_of(session.run("search"))
    assert result.status is RunStatus.COMPLETED
    assert result.text == "the search timed out"
    answer = session.state.messages[-2]
    assert isinstance(answer, ToolResultMessage)
    assert answer.content.startswith("Tool 'grep' timed out after 1.5 s and was stopped")
    assert stall < STALL
    assert elapsed < 30  # a hang, not a speed: the deadline, asserted above, ended it
    assert worker_processes() == []


async def test_glob_patterns_are_capped_in_length(tmp_path: Path) -> None:
    pattern = "*a" * 600
    out = await call(tmp_path, "glob", pattern=pattern)
    assert out.is_error
    assert f"arguments.pattern must be at most {MAX_PATTERN:,} characters, got 1,200" in (
        out.content
    )
    out = await call(tmp_path, "grep", pattern="x", glob=pattern)
    assert f"arguments.glob must be at most {MAX_PATTERN:,} characters, got 1,200" in out.content
    (tmp_path / "ok.py").write_text("")
    out = await call(tmp_path, "glob", pattern="*" * MAX_PATTERN)
    assert out.content == "ok.py\n[1 file]"


async def test_the_worker_s_memory_is_bounded() -> None:
    """``^(?:(a)|b)*c`` keeps a state per repetition: 4 MB of ``a`` took 593 MB in the agent's
    interpreter. 8 MB pass the worker's 1 GiB: the agent reads an error, and grows nothing."""

    async def texts() -> Any:
        yield "a" * 8_000_000

    searching = ProcessLineSearcher().search("^(?:(a)|b)*c", texts(), ignore_case=False)
    with pytest.raises(ToolError, match="the pattern needs more than 1,024 MiB of memory"):
        async for _ in searching:
            pass
    assert worker_processes() == []
