"""date never opens a zone file that a date string names.

``date -d 'TZ="ZONE" 2020-01-01'`` sets the string's own zone, and glibc opens ZONE as a file
when it is absolute, ``:``-prefixed or relative to /usr/share/zoneinfo with ``..``: a path no
word of the command names, so neither the reach nor the secrets policy judged it. Before
redshell16 the restricted shell ran it on every backend: date opened a file outside the
workspace (here a zone file beside it, which moves the printed epoch by nine hours, so the
test sees it was read), the workspace's ``.env`` or a FIFO (a command that waits for its
timeout). The date string's zone is now checked (``machine_programs.date_string_refusal``); a
zone name still works.

find's ``-newerXt`` parses its value with the same parse_datetime (varshell16b): ``find . -newermt
'TZ="FILE" 2020-01-01'`` opened FILE on every backend after that fix (a FIFO held the command
until its timeout; the outside zone file decided which files were printed). It gets the same
check.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from shell_backends import BACKENDS, run_restricted

TOKYO = Path("/usr/share/zoneinfo/Asia/Tokyo")
UTC_EPOCH = "1577836800"  # 2020-01-01 00:00 UTC
REFUSED = "names a file, which would be opened"
REFUSED_ZONE = "the date string's zone"

pytestmark = pytest.mark.skipif(not TOKYO.is_file(), reason="no tzdata on this machine")


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("datezones")
    ws = root / "ws"
    ws.mkdir()
    (ws / ".env").write_text("API_KEY=SECRET-1\n")
    zone = root / "outside-zone"
    shutil.copyfile(TOKYO, zone)
    plain = subprocess.run(
        ["date", "-d", f'TZ="{zone}" 2020-01-01 00:00', "+%s"],
        capture_output=True,
        text=True,
        check=True,
        env={"TZ": "UTC"},
    )
    assert plain.stdout.strip() != UTC_EPOCH  # date really read the file outside
    # 2019-12-31 23:00 UTC: older than 2020-01-01 00:00 UTC, newer than that time in Tokyo
    (ws / "stamp").touch()
    os.utime(ws / "stamp", (int(UTC_EPOCH) - 3600, int(UTC_EPOCH) - 3600))
    found = subprocess.run(
        ["find", "stamp", "-newermt", f'TZ="{zone}" 2020-01-01 00:00'],
        cwd=ws,
        capture_output=True,
        text=True,
        check=True,
        env={"TZ": "UTC"},
    )
    assert found.stdout.strip() == "stamp"  # find read the zone file outside too
    return ws, zone


@pytest.mark.parametrize("backend", BACKENDS)
async def test_date_strings_name_no_zone_file(rig: tuple[Path, Path], backend: str) -> None:
    ws, zone = rig
    relative = "../" * 8 + str(zone).lstrip("/")
    for spelled in (str(zone), f":{zone}", relative, f"{ws}/.env"):
        for option in ("-d", "--date="):
            command = f"date {option}'TZ=\"{spelled}\" 2020-01-01 00:00' +%s"
            out = await run_restricted(str(ws), command, backend)
            assert REFUSED in out, (command, out)
        for primary in ("-newermt", "-newerct"):
            command = f"find stamp {primary} 'TZ=\"{spelled}\" 2020-01-01 00:00'"
            out = await run_restricted(str(ws), command, backend)
            assert f"find {primary}: {REFUSED_ZONE}" in out, (command, out)
    out = await run_restricted(str(ws), "find stamp -newermt 'TZ=\"UTC\" 2020-01-01'", backend)
    assert "stamp" not in out, out
    assert "refused" not in out, out
    out = await run_restricted(
        str(ws), "date -u -d 'TZ=\"Asia/Tokyo\" 2020-01-01 09:00' +%s", backend
    )
    assert UTC_EPOCH in out, out
