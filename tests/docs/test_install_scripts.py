"""The install steps of scripts/test.sh say what they install and keep apt's and dpkg's
output in a log (issue 30, F3). Run with stand-in ``apt-get`` and ``id`` on a PATH without
chromium, so nothing is installed on this machine."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOISE = "\n".join(f"Unpacking libfoo{i} (1.0) ..." for i in range(200))


def _bin(tmp_path: Path, apt_status: int) -> Path:
    """A PATH directory: a root ``id``, an ``apt-get`` that prints dpkg's progress and ends
    with ``apt_status``, and the few real tools the script uses."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "id").write_text("#!/bin/sh\necho 0\n")
    (bin_dir / "apt-get").write_text(f"#!/bin/sh\ncat <<'END'\n{NOISE}\nEND\nexit {apt_status}\n")
    for name in ("id", "apt-get"):
        (bin_dir / name).chmod(0o755)
    for tool in ("tail", "cat"):
        real = shutil.which(tool)
        assert real is not None
        (bin_dir / tool).symlink_to(real)
    return bin_dir


def _run(tmp_path: Path, apt_status: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    log = tmp_path / "install.log"
    env = {
        "PATH": str(_bin(tmp_path, apt_status)),
        "RHO_AGENT_INSTALL_LOG": str(log),
        "HOME": str(tmp_path),
    }
    bash = shutil.which("bash")
    assert bash is not None
    done = subprocess.run(
        [bash, str(ROOT / ".ci" / "install-browser.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done, log


def test_the_browser_install_says_what_and_keeps_dpkg_in_the_log(tmp_path: Path) -> None:
    done, log = _run(tmp_path, apt_status=0)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # not 200 lines of progress on the terminal
    assert "installing chromium" in done.stderr
    assert str(log) in done.stderr  # where the output went
    assert "Unpacking libfoo199" in log.read_text()


def test_a_failed_install_shows_the_end_of_the_log(tmp_path: Path) -> None:
    done, log = _run(tmp_path, apt_status=100)
    assert done.returncode == 1
    assert "chromium could not be installed" in done.stderr
    assert "Unpacking libfoo199" in done.stderr  # the log's last lines, to see why
    assert "Unpacking libfoo0 " not in done.stderr  # only its end
    assert log.is_file()


def test_the_test_script_names_its_log_and_each_install() -> None:
    script = (ROOT / "scripts" / "test.sh").read_text()
    assert "RHO_AGENT_INSTALL_LOG" in script
    assert "installing rho-agent with every extra" in script
    servers = (ROOT / ".ci" / "install-db-servers.sh").read_text()
    assert "packages+=(mariadb-server gawk)" in servers  # awk becomes gawk on purpose
