"""One rule for where reads go (issue 29, item 12): ``read_outside_workspace``.

Under ``deny`` (the default) no reading tool reads outside the workspace and the read roots:
not ``read``, ``grep``, ``glob``, ``list``, ``read_excel``, a ``< file``, nor any restricted
shell stage, by its operands, option values, symlinks, ``..`` or the items ``xargs`` appends;
and the bubblewrap sandbox does not even show the machine. Under ``allow`` the file tools read
what ``cat`` reads, and secrets stay refused by both. Every case runs on real files outside
the workspace (a marker that must not show), with real bwrap, with bwrap forced off, and on
the Daytona executor over FakeDaytona (real processes on this machine).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, call_tool, restricted_bash

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import InlineLineSearcher
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.permissions import FileWriteMode, PermissionProfile, readonly_profile
from rho_domain.ports.executor import Executor
from rho_domain.profile_grants import excess, within
from rho_domain.reach import OutsideReads, ReadReach
from rho_domain.tools.base import ToolHandler
from rho_domain.tools.excel import ReadExcelHandler
from rho_domain.tools.grep import GrepHandler
from rho_domain.tools.listing import GlobHandler, ListHandler
from rho_domain.tools.read import ReadHandler

MARK = "MARK-OUTSIDE-7f3a"
# Without ripgrep where the files are (FakeDaytona's processes), the patterns these tests
# wrote run in process.
GREP = GrepHandler(InlineLineSearcher())
DENIED = "is outside the workspace and the profile's read roots"


@pytest.fixture(scope="module")
def rig() -> Iterator[dict[str, Path]]:
    """A workspace and, beside it, a directory outside it holding a marker, a secret and a
    read root; under /var/tmp (not /tmp, which is the sandbox's own and closed under allow)."""
    base = Path(tempfile.mkdtemp(prefix="rho-reach-", dir="/var/tmp"))
    ws, outside, logs = base / "ws", base / "outside", base / "logs"
    for d in (ws, outside, logs):
        d.mkdir()
    (ws / "a.txt").write_text("plain text\n")
    (ws / "paths.txt").write_text("see /etc/hostname and /usr/lib\n")
    (outside / "data.txt").write_text(f"{MARK}\n")
    (outside / "data.csv").write_text(f"x,{MARK}\n")
    (outside / ".env").write_text("API_KEY=MARK-SECRET-ENV\n")
    (logs / "app.log").write_text("LOG-LINE-OK\n")
    (ws / "link.txt").symlink_to(outside / "data.txt")
    (ws / "linkdir").symlink_to(outside)
    (ws / "names.txt").write_text(f"{outside}/data.txt\n")
    yield {"base": base, "ws": ws, "outside": outside, "logs": logs}
    shutil.rmtree(base, ignore_errors=True)


# One Daytona executor per setting and event loop, kept for the module (its tests run on the
# module's loop): a new one per call paid a sandbox's creation and set-up scripts before the
# command. Each call still runs its own tool or command with every check the executor makes.
_DAYTONAS: dict[tuple[asyncio.AbstractEventLoop, OutsideReads], DaytonaExecutor] = {}


@pytest_asyncio.fixture(scope="module", loop_scope="module", autouse=True)
async def _close_daytonas() -> AsyncIterator[None]:
    yield
    executors = list(_DAYTONAS.values())
    _DAYTONAS.clear()
    for made in executors:
        await made.aclose()


def executor(backend: str, rig: dict[str, Path], outside: OutsideReads) -> Executor:
    roots = (str(rig["logs"]),)
    if backend == "daytona":
        key = (asyncio.get_running_loop(), outside)
        if key in _DAYTONAS:
            return _DAYTONAS[key]
        fake = FakeDaytona(polls_until_started=0)
        _DAYTONAS[key] = DaytonaExecutor(
            fake.settings(working_dir=str(rig["ws"])),
            file_write=FileWriteMode.OFF,
            transport=fake.transport,
            extra_read_roots=roots,
            read_outside=outside,
        )
        return _DAYTONAS[key]
    return LocalExecutor(
        str(rig["ws"]), sandbox=backend == "bwrap", extra_read_roots=roots, read_outside=outside
    )


async def answer(
    backend: str,
    rig: dict[str, Path],
    outside: OutsideReads,
    tool: ToolHandler,
    arguments: dict[str, Any] | None = None,
    **more: Any,
) -> str:
    return await call_tool(tool, {**(arguments or {}), **more}, executor(backend, rig, outside))


def shell(command: str) -> tuple[ToolHandler, dict[str, Any]]:
    return restricted_bash(command)


# Every way a reading tool could reach {o}/data.txt (o: the directory outside the workspace).
SHELL_READS = [
    "cat {o}/data.txt",
    "head -n 1 {o}/data.txt",
    "grep -r MARK {o}",
    "grep -e MARK {o}/data.txt",
    "grep MARK -- {o}/data.txt",
    "rg MARK {o}",
    "cat < {o}/data.txt",
    "cat link.txt",
    "cat linkdir/data.txt",
    "cat ../outside/data.txt",
    "cat ./../outside/./data.txt",
    "find {o} -type f",
    "ls {o}",
    "wc -c {o}/data.txt",
    "diff a.txt {o}/data.txt",
    "sort {o}/data.txt",
    "awk 1 {o}/data.txt",
    "sed -n p {o}/data.txt",
    "jq -R . {o}/data.txt",
    "grep -f {o}/data.txt a.txt",
    "tail -n 1 linkdir/data.txt",
    "cat names.txt | xargs cat",
    "echo {o}/data.txt | xargs grep MARK",
    "echo {o} | xargs grep -r MARK",
    "echo ../outside/data.txt | xargs head",
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("template", SHELL_READS)
@pytest.mark.asyncio(loop_scope="module")
async def test_deny_no_shell_reader_reads_outside(
    backend: str, rig: dict[str, Path], template: str
) -> None:
    command = template.format(o=rig["outside"])
    out = await answer(backend, rig, OutsideReads.DENY, *shell(command))
    assert MARK not in out, out
    assert (
        DENIED in out
        or "outside what this profile reads" in out  # the xargs guard dropped the item
        or "leads outside" in out  # a `< file` or cwd through the workspace walk
        or "outside the workspace" in out
        # with bwrap, an item xargs appends names nothing the sandbox shows
        or (backend == "bwrap" and "xargs" in command and "No such file or directory" in out)
    ), out


# rg --files takes no pattern: its first operand is a directory to list, not a pattern left
# unjudged. Before redshell17 these listed data.txt, out of reach, without bwrap and on Daytona.
RG_LISTINGS = ("rg --files {o}", "rg --files linkdir", "rg --files -- a.txt ../outside")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_deny_rg_files_lists_no_directory_outside(backend: str, rig: dict[str, Path]) -> None:
    for template in RG_LISTINGS:
        out = await answer(
            backend, rig, OutsideReads.DENY, *shell(template.format(o=rig["outside"]))
        )
        assert DENIED in out, (template, out)
        assert "data.txt" not in out, (template, out)
    out = await answer(backend, rig, OutsideReads.DENY, *shell("rg --files"))
    assert "a.txt" in out, out


FILE_READS: list[tuple[ToolHandler, dict[str, Any]]] = [
    (ReadHandler(), {"path": "{o}/data.txt"}),
    (ReadHandler(), {"path": "link.txt"}),
    (ReadHandler(), {"path": "../outside/data.txt"}),
    (GREP, {"pattern": "MARK", "path": "{o}"}),
    (ListHandler(), {"path": "{o}"}),
    (GlobHandler(), {"pattern": "{o}/*"}),
    (ReadExcelHandler(), {"path": "{o}/data.csv"}),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("tool", "arguments"), FILE_READS, ids=lambda x: getattr(x, "name", ""))
@pytest.mark.asyncio(loop_scope="module")
async def test_deny_no_file_tool_reads_outside(
    backend: str, rig: dict[str, Path], tool: ToolHandler, arguments: dict[str, Any]
) -> None:
    args = {k: v.format(o=rig["outside"]) for k, v in arguments.items()}
    out = await answer(backend, rig, OutsideReads.DENY, tool, **args)
    assert MARK not in out, out
    assert "data.txt" not in out or "outside" in out, out


LEGIT = [
    ("cat a.txt", "plain text"),
    ("grep /etc/hostname paths.txt", "see /etc/hostname"),  # a pattern, not a file
    ("grep -e /usr/lib -e nothing paths.txt", "/usr/lib"),
    ("sed -n /etc/p paths.txt", "see /etc"),
    ("cat {logs}/app.log", "LOG-LINE-OK"),  # a read root
    ("grep -r LOG {logs}", "LOG-LINE-OK"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("template", "expected"), LEGIT)
@pytest.mark.asyncio(loop_scope="module")
async def test_deny_legit_work_runs(
    backend: str, rig: dict[str, Path], template: str, expected: str
) -> None:
    command = template.format(logs=rig["logs"])
    out = await answer(backend, rig, OutsideReads.DENY, *shell(command))
    assert expected in out, out
    grep = await answer(backend, rig, OutsideReads.DENY, GREP, pattern="/etc/hostname", path=".")
    assert "paths.txt" in grep, grep  # the grep tool's pattern is never judged as a path
    read = await answer(
        backend, rig, OutsideReads.DENY, ReadHandler(), path=f"{rig['logs']}/app.log"
    )
    assert "LOG-LINE-OK" in read


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.asyncio(loop_scope="module")
async def test_the_same_verdict_for_read_and_cat(backend: str, rig: dict[str, Path]) -> None:
    """The issue's case: ``cat`` and ``read`` agree, under either setting, on a file outside."""
    target = f"{rig['outside']}/data.txt"
    for outside, readable in ((OutsideReads.DENY, False), (OutsideReads.ALLOW, True)):
        cat = await answer(backend, rig, outside, *shell(f"cat {target}"))
        read = await answer(backend, rig, outside, ReadHandler(), path=target)
        assert (MARK in cat, MARK in read) == (readable, readable), (outside, cat, read)
    host = "/etc/hostname"
    denied_cat = await answer(backend, rig, OutsideReads.DENY, *shell(f"cat {host}"))
    denied_read = await answer(backend, rig, OutsideReads.DENY, ReadHandler(), path=host)
    assert DENIED in denied_cat
    assert "outside the workspace" in denied_read
    expected = Path(host).read_text().strip()
    assert expected in await answer(backend, rig, OutsideReads.ALLOW, *shell(f"cat {host}"))
    assert expected in await answer(backend, rig, OutsideReads.ALLOW, ReadHandler(), path=host)


SECRET_READS = [
    "cat {o}/.env",
    "grep -r API_KEY {o}",
    "echo {o}/.env | xargs cat",
    "cat linkdir/.env",
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("template", SECRET_READS)
@pytest.mark.asyncio(loop_scope="module")
async def test_allow_still_refuses_secrets(
    backend: str, rig: dict[str, Path], template: str
) -> None:
    command = template.format(o=rig["outside"])
    out = await answer(backend, rig, OutsideReads.ALLOW, *shell(command))
    assert "MARK-SECRET-ENV" not in out, out
    read = await answer(
        backend, rig, OutsideReads.ALLOW, ReadHandler(), path=f"{rig['outside']}/.env"
    )
    assert "MARK-SECRET-ENV" not in read
    assert "SensitivePath" in read


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.asyncio(loop_scope="module")
async def test_allow_reads_outside_with_every_tool(backend: str, rig: dict[str, Path]) -> None:
    o = rig["outside"]
    for tool, args in FILE_READS[:2] + FILE_READS[3:4] + FILE_READS[6:]:
        out = await answer(
            backend, rig, OutsideReads.ALLOW, tool, **{k: v.format(o=o) for k, v in args.items()}
        )
        assert MARK in out, (tool.name, out)
    listing = await answer(backend, rig, OutsideReads.ALLOW, ListHandler(), path=str(o))
    assert "data.txt" in listing
    for command in ("cat link.txt", f"grep -r MARK {o}", "cat names.txt | xargs cat"):
        assert MARK in await answer(backend, rig, OutsideReads.ALLOW, *shell(command)), command
    # A command still runs in the workspace or a read root: cd elsewhere says so, and no
    # longer names a "deny" the profile does not have (it did before redshell16).
    out = await answer(backend, rig, OutsideReads.ALLOW, *shell(f"cd {o} && cat data.txt"))
    assert "is outside the workspace" in out, out
    assert "deny" not in out, out


needs_bwrap = pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed")


@needs_bwrap
@pytest.mark.asyncio(loop_scope="module")
async def test_the_sandbox_alone_shows_nothing_outside_under_deny(rig: dict[str, Path]) -> None:
    """The first wall on its own (argv checks off): under deny the machine is not mounted,
    only the workspace, the read roots and the programs' system directories."""
    target = f"{rig['outside']}/data.txt"
    deny = LocalExecutor(str(rig["ws"]), sandbox=True, extra_read_roots=(str(rig["logs"]),))
    for argv in (["cat", target], ["cat", "link.txt"], ["ls", str(rig["outside"])]):
        result = await deny.run_unchecked(argv)
        assert MARK not in result.output
        assert result.exit_code != 0, result.output
        assert "No such file or directory" in result.output
    assert "LOG-LINE-OK" in (await deny.run_unchecked(["cat", f"{rig['logs']}/app.log"])).output
    assert "plain text" in (await deny.run_unchecked(["cat", "a.txt"])).output
    home = (await deny.run_unchecked(["ls", "/home", "/root", "/srv"])).output
    assert "No such file or directory" in home
    wrote = await deny.run_unchecked(["sh", "-c", "echo x > /new-file"])
    assert wrote.exit_code != 0  # bwrap's own root is read-only
    allow = LocalExecutor(str(rig["ws"]), sandbox=True, read_outside=OutsideReads.ALLOW)
    assert MARK in (await allow.run_unchecked(["cat", target])).output


def test_the_setting_is_a_profile_field_compared_by_grant() -> None:
    deny = readonly_profile()
    allow = PermissionProfile(name="wide", read_outside_workspace=OutsideReads.ALLOW)
    assert deny.read_outside_workspace is OutsideReads.DENY
    assert within(deny, allow)
    assert excess(allow, deny) == ("reads outside the workspace: allow (the limit is deny)",)


def test_the_rule_and_the_guard_agree() -> None:
    deny = ReadReach.of(OutsideReads.DENY, workspace=("/w",), read_roots=("/var/log",))
    assert deny.refusal("/w/a") is None
    assert deny.refusal("/var/log/x") is None
    assert deny.refusal("/w-evil/a") is not None  # by components, not a string prefix
    assert deny.refusal("/etc/hostname") is not None
    assert deny.refusal("relative") is None  # judged once resolved
    allow = ReadReach.of(OutsideReads.ALLOW, workspace=("/home/u/w",), homes=("/home/u",))
    assert allow.refusal("/etc/hostname") is None
    assert allow.refusal("/home/u/notes") is not None
    assert allow.refusal("/home/u/w/a") is None
    assert allow.refusal("/tmp/x") is not None
    assert "o=1" in deny.guard_case()
    assert ReadReach().guard_case() == ""


@needs_bwrap
@pytest.mark.asyncio(loop_scope="module")
async def test_deny_runs_a_program_linked_from_outside_the_system_directories(
    rig: dict[str, Path],
) -> None:
    """``/usr/local/bin/rg`` may be a link into ``/opt``: the confined sandbox shows the real
    directory of the program a stage runs (and of xargs's target), nothing else there."""
    opt = rig["base"] / "opt" / "bin"
    links = rig["base"] / "links"
    opt.mkdir(parents=True, exist_ok=True)
    links.mkdir(exist_ok=True)
    shutil.copy2("/usr/bin/head", opt / "head")
    (opt / "data.txt").write_text(f"{MARK}\n")  # beside the program: never named, never read
    if not (links / "head").is_symlink():
        (links / "head").symlink_to(opt / "head")
    executor = LocalExecutor(
        str(rig["ws"]), sandbox=True, search_path=(str(links), "/usr/bin", "/bin")
    )
    out = await call_tool(*shell("head -n 1 a.txt"), executor)
    assert out.startswith("plain text"), out
    out = await call_tool(*shell("echo a.txt | xargs head -n 1"), executor)
    assert out.startswith("plain text"), out
    refused = await call_tool(*shell(f"head {opt}/data.txt"), executor)
    assert MARK not in refused
    assert DENIED in refused
