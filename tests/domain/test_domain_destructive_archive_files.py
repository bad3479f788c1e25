"""The archive an archiver creates, appends to or updates is a destination
(``shell.destructive_archive_files``).

An uncompressed archive holds its members' bytes as they are, so ``tar -cf
/etc/profile.d/x.sh payload`` puts the payload's lines where every login shell runs them; it
ran unasked after "always", as did zip, 7-Zip, rar, ar, jar and python's ``-m zipfile -c``
into any directory. Shown with the real tar: the member's lines are in the archive verbatim.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rho_domain.shell.destructive import destructive_reason


@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("tar -cf /etc/profile.d/x.sh payload", "/etc/profile.d/x.sh"),
        ("tar czf /etc/cron.d/x a", "/etc/cron.d/x"),
        ("tar cbf 20 /etc/cron.d/x a", "/etc/cron.d/x"),  # old style: b's value first
        ("tar -c -v -f /etc/cron.d/x a", "/etc/cron.d/x"),
        ("tar -cvf/etc/cron.d/x a", "/etc/cron.d/x"),
        ("tar --create --file=/etc/cron.d/x a", "/etc/cron.d/x"),
        ("tar --append --file /etc/cron.d/x a", "/etc/cron.d/x"),
        ("tar -rf /etc/cron.d/x a", "/etc/cron.d/x"),
        ("sudo tar -uf /etc/cron.d/x a", "/etc/cron.d/x"),
        ("bsdtar -cf /etc/cron.d/x a", "/etc/cron.d/x"),
        ("jar cf /etc/cron.d/x.jar a", "/etc/cron.d/x.jar"),
        ("zip /etc/cron.d/x a", "/etc/cron.d/x"),
        ("zip -0 -r /etc/cron.d/x a", "/etc/cron.d/x"),
        ("zip -b /tmp /etc/cron.d/x a", "/etc/cron.d/x"),  # -b's value is no archive
        ("zip -O /etc/cron.d/y out.zip a", "/etc/cron.d/y"),
        ("zip --out=/etc/cron.d/y out.zip a", "/etc/cron.d/y"),
        ("7z a /etc/cron.d/x a", "/etc/cron.d/x"),
        ("7za u /etc/cron.d/x a", "/etc/cron.d/x"),
        ("rar a /etc/cron.d/x a", "/etc/cron.d/x"),
        ("ar rc /etc/cron.d/x a.o", "/etc/cron.d/x"),
        ("ar rb m.o /etc/cron.d/x a.o", "/etc/cron.d/x"),  # b takes a member's name first
        ("python3 -m zipfile -c /etc/cron.d/x a", "/etc/cron.d/x"),
        ("python3 -m tarfile --create /etc/cron.d/x a", "/etc/cron.d/x"),
        ("tar -cf .git/hooks/pre-commit a", ".git/hooks/pre-commit"),
    ],
)
def test_an_archive_written_where_the_write_tool_would_refuse_asks(
    command: str, written: str
) -> None:
    assert written in destructive_reason(command)


@pytest.mark.parametrize(
    "command",
    [
        "tar -cf out.tar src",
        "tar czf build/out.tgz src",
        "tar -cf - src",  # standard output
        "tar -cf out.tar /etc/hosts",  # what it reads is no destination
        "tar -tf /etc/x.tar",
        "zip -r out.zip src /etc/hosts",
        "7z a out.7z src",
        "7z l /etc/x.7z",
        "rar l /etc/x.rar",
        "ar t /usr/lib/x.a",
        "ar rc lib.a a.o",
        "jar tf /usr/share/java/x.jar",
        "python3 -m zipfile -l /etc/x.zip",
        "python3 -m zipfile -c out.zip src",
    ],
)
def test_an_archive_made_in_the_workspace_or_only_read_runs(command: str) -> None:
    assert destructive_reason(command) == ""


@pytest.mark.skipif(shutil.which("tar") is None, reason="no tar")
def test_tar_keeps_a_members_lines_as_they_are(tmp_path: Path) -> None:
    """Why an archive is chosen content: a shell reading the tar file meets the payload's
    line as written."""
    (tmp_path / "payload").write_text("\necho PAYLOAD-RAN\n")
    archive = tmp_path / "x.sh"
    subprocess.run(["tar", "-cf", str(archive), "payload"], cwd=tmp_path, check=True)
    assert b"\necho PAYLOAD-RAN\n" in archive.read_bytes()
