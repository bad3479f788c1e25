"""A configuration swapped for another while it is read is never remembered under the
other's identity (redshell26).

``SettledReads`` stat'ed a path, then opened it by path: a link swapped between the two
(``ln -sfn b.conf config`` in a loop) had the parse of ``b.conf`` kept under ``a.conf``'s
device, inode and times, so every later executor reading ``a.conf`` took ``b.conf``'s
(naming no key) for it. The file is now opened first and keyed by its ``fstat``.

The swapper is a real process racing the reads; what is asserted holds on every read
whatever the interleaving, so the test cannot pass by luck with the fix in place (without
it, one read in a few hundred was kept under the wrong identity here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rho_adapters.local.settled_reads import SettledReads

_SWAPPER = """
import os, sys
link, tmp, first, second = sys.argv[1:]
sys.stdout.write("ready\\n"); sys.stdout.flush()
while True:
    for target in (first, second):
        os.symlink(target, tmp)
        os.replace(tmp, link)
"""
_FAR = 2**62  # every file settled: each parse is kept


def test_a_link_swapped_between_the_stat_and_the_open_never_keys_the_wrong_parse(
    tmp_path: Path,
) -> None:
    first = tmp_path / "a.conf"
    second = tmp_path / "b.conf"
    first.write_text("IdentityFile ~/.ssh/deploy\n")
    second.write_text("# nothing\n" * 7)  # another size too: a key that differs every way
    link = tmp_path / "config"
    link.symlink_to(first)
    swapper = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _SWAPPER,
            str(link),
            str(tmp_path / ".tmp"),
            str(first),
            str(second),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert swapper.stdout is not None
    assert swapper.stdout.readline() == "ready\n"
    readers: list[SettledReads[str]] = []
    try:
        for _ in range(2500):  # a fresh memory each time: each read opens the file
            reader: SettledReads[str] = SettledReads(str)
            reader.read(str(link), lambda: _FAR)
            readers.append(reader)
    finally:
        swapper.kill()
        swapper.wait()
    for target in (first, second):
        (tmp_path / ".tmp").unlink(missing_ok=True)
        link.unlink()
        link.symlink_to(target)
        wrong = [r for r in readers if r.read(str(link), lambda: _FAR) != target.read_text()]
        assert not wrong, (
            f"{len(wrong)} reads kept another file's text under {target.name}'s identity"
        )
