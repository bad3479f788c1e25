"""Create-only mode creates documents and data, never a file a tool of the user's runs later.

Red-team pass (redwrite15): a profile with ``file_write: create-only`` created conftest.py
(pytest imports it at the next run), a Python package's __main__.py, a Makefile, a
package.json, a pre-commit configuration, cargo's config (its rustc-wrapper runs at the next
build), Copilot's instructions and AGENTS.md (sitecustomize.py, a .pth, installed packages
and a devcontainer are never written in any mode: test_redteam_write_runs_later.py). Each
executor judges the path as given and as resolved (through a link)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from write_backends import writers

from rho_adapters.clock import SystemClock
from rho_adapters.fakes.memory_executor import MemoryExecutor
from rho_domain.errors import PermissionDenied
from rho_domain.messages import ToolCall
from rho_domain.permissions import FileWriteMode, PermissionProfile
from rho_domain.ports.executor import Executor
from rho_domain.tools.base import ToolContext
from rho_domain.tools.factory import build_registry

CO = FileWriteMode.CREATE_ONLY
HIDDEN = "a hidden directory where tools keep their configuration"
NOT_DATA = "is not a document or data file; create-only mode creates only"
BY_NAME = "a file tools find by its name and act on"

# Each was created before (`Created ...`), and each is code some tool runs later.
ATTACKS = [
    ("conftest.py", NOT_DATA),
    ("src/pkg/__init__.py", NOT_DATA),
    ("tools/evil/__main__.py", NOT_DATA),
    (".venv/notes.txt", HIDDEN),
    ("Makefile", NOT_DATA),
    ("setup.py", NOT_DATA),
    ("tox.ini", NOT_DATA),
    ("pytest.ini", NOT_DATA),
    ("noxfile.py", NOT_DATA),
    (".pre-commit-config.yaml", NOT_DATA),
    (".gitattributes", NOT_DATA),
    (".github/workflows/ci.json", HIDDEN),
    # .github/copilot-instructions.md: never written in any mode since redmcp21
    # (test_redteam_write_local_hooks.py)
    (".github/ISSUE_TEMPLATE/bug.md", HIDDEN),
    (".cargo/config.toml", HIDDEN),
    (".circleci/config.json", HIDDEN),  # .helix/ is never written (redwrite17)
    ("package.json", BY_NAME),
    ("web/package.json", BY_NAME),
    ("CMakeLists.txt", BY_NAME),
    ("requirements.txt", BY_NAME),
    ("AGENTS.md", BY_NAME),
]


FACTORIES = writers(CO)


@pytest.fixture(params=sorted(FACTORIES))
async def create_only(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Executor]:
    executor = FACTORIES[request.param](tmp_path)
    try:
        yield executor
    finally:
        await executor.aclose()


def _nothing_written(executor: Executor, ws: Path, path: str) -> None:
    if isinstance(executor, MemoryExecutor):
        assert not executor.files
    else:
        assert not (ws / path).exists()


# The refusals share one executor and workspace per kind (on Daytona one sandbox, not one a
# case: 22 sandboxes, now 3): a refused write changes nothing, which each case asserts, so a
# write that got through fails its own case and every later one.
@pytest_asyncio.fixture(scope="module", loop_scope="module", params=sorted(FACTORIES))
async def refusing(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[Executor, Path]]:
    ws = tmp_path_factory.mktemp(f"create-only-{request.param}")
    executor = FACTORIES[request.param](ws)
    try:
        yield executor, ws
    finally:
        await executor.aclose()


@pytest.mark.parametrize(("path", "why"), ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_create_only_refuses_what_a_tool_runs_later(
    refusing: tuple[Executor, Path], path: str, why: str
) -> None:
    create_only, ws = refusing
    with pytest.raises(PermissionDenied, match="create-only mode") as refused:
        await create_only.write(path, b"import os; os.system('id')\n", overwrite=False)
    assert why in str(refused.value)
    _nothing_written(create_only, ws, path)


async def test_create_only_judges_the_path_a_link_leads_to(tmp_path: Path) -> None:
    # 'reports' looks like a harmless directory; it is .github (a link the workspace came
    # with), whose copilot-instructions.md every Copilot session of the repository follows.
    (tmp_path / ".github").mkdir()
    (tmp_path / "reports").symlink_to(".github")
    for build in (FACTORIES["local"], FACTORIES["daytona"]):
        executor = build(tmp_path)
        try:
            with pytest.raises(PermissionDenied, match=f"{HIDDEN}|which agents never write"):
                await executor.write("reports/copilot-instructions.md", b"x", overwrite=False)
            with pytest.raises(PermissionDenied, match=HIDDEN):
                await executor.write("reports/findings.md", b"x", overwrite=False)
        finally:
            await executor.aclose()
    assert not (tmp_path / ".github" / "copilot-instructions.md").exists()


async def test_create_only_still_creates_reports_and_data(
    create_only: Executor, tmp_path: Path
) -> None:
    for path in ("report.md", "out/data.csv", "findings.json", "notes/2026-11-27.txt"):
        assert await create_only.write(path, b"ok\n", overwrite=False) is False
    if not isinstance(create_only, MemoryExecutor):
        assert (tmp_path / "out" / "data.csv").read_bytes() == b"ok\n"


async def test_the_model_is_told_why(tmp_path: Path) -> None:
    profile = PermissionProfile(name="notes", file_write=CO)
    registry = build_registry(profile)
    ctx = ToolContext(
        session_id="s", call_id="c", executor=FACTORIES["local"](tmp_path), profile=profile,
        clock=SystemClock(),
    )  # fmt: skip
    arguments = json.dumps({"path": "conftest.py", "content": "import os\n"})
    out = await registry.dispatch(ToolCall(id="c", name="write", arguments=arguments), ctx)
    assert out.is_error
    assert "'conftest.py' is not a document or data file" in out.content
    assert ".md .markdown .txt" in out.content
    assert not (tmp_path / "conftest.py").exists()
