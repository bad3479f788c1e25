"""Programs whose words are never judged as paths must really never look at a path.

``date --reference=FILE`` prints FILE's modification time, ``realpath`` and ``readlink``
resolve a path through every link and say whether it exists: all three stat the files their
words name. They were listed with ``echo`` and ``basename`` as programs whose words name no
file (``reads.NON_READING``), so ``date --reference=.env +%s`` printed the mtime that
``stat -c %Y .env`` is refused, and ``realpath -e`` told whether a key existed outside the
workspace (``ls`` of it is refused under ``read_outside_workspace: deny``), without
bubblewrap and on Daytona. Each target below exists.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, daytona_pool, run_restricted


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("nonreading")
    (root / "ws/src").mkdir(parents=True)
    (root / "ws/.env").write_text("API_KEY=SECRET-ENV\n")
    (root / "ws/src/a.py").write_text("x = 1\n")
    (root / "keys/.ssh").mkdir(parents=True)
    (root / "keys/.ssh/id_rsa").write_text("SECRET-KEY\n")
    (root / "outside.txt").write_text("elsewhere\n")
    (root / "ws/out").symlink_to(root / "outside.txt")
    return root


# The tests on the module's workspace share one event loop and, on Daytona, one sandbox per
# root (``daytonas``): a sandbox per case paid its creation and set-up scripts (about 70 ms of
# CPU) each time. Each case still runs its own command with every check the executor makes.
daytonas = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("command", "refusal"),
    [
        ("date --reference=.env +%s", "may not be read"),
        ("date --reference .env", "may not be read"),
        ("date -u --reference=ROOT/keys/.ssh/id_rsa", "may not be read"),
        ("realpath -e ROOT/keys/.ssh/id_rsa", "may not be read"),
        ("realpath .env", "may not be read"),
        ("readlink -f ROOT/keys/.ssh/id_rsa", "may not be read"),
        ("date --reference=ROOT/outside.txt +%s", "outside the workspace"),
        ("realpath -e ROOT/outside.txt", "outside the workspace"),
        ("readlink -e out", "outside the workspace"),
    ],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_a_path_they_stat_is_judged(
    base: Path, backend: str, command: str, refusal: str, daytonas: DaytonaPool
) -> None:
    out = await run_restricted(
        str(base / "ws"), command.replace("ROOT", str(base)), backend, daytonas
    )
    assert refusal in out, out
    assert "exit code 0" not in out, out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.asyncio(loop_scope="module")
async def test_their_ordinary_use_still_runs(
    base: Path, backend: str, daytonas: DaytonaPool
) -> None:
    command = (
        "date -u -d @0 +%Y && date --reference=src/a.py +%Y && realpath src/a.py "
        "&& readlink -f src && basename /etc/passwd && dirname ROOT/keys/.ssh/id_rsa"
    )
    out = await run_restricted(
        str(base / "ws"), command.replace("ROOT", str(base)), backend, daytonas
    )
    assert "1970\n" in out, out
    assert f"{base}/ws/src/a.py" in out, out
    assert "passwd\n" in out, out
    assert f"{base}/keys/.ssh\n" in out, out
