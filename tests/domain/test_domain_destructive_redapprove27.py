"""redapprove27: what the approval check let run unasked after "always", or asked for wrongly.

* a file's writer fed by xargs, parallel or ``find -exec`` (``find . -name '*.gz' | xargs
  gunzip``, ``find / -name authorized_keys -exec cp k {} ';'``: find's ``;`` was read as
  cp's destination): the operands it writes are unknown;
* what ``touch``, ``mkdir`` and ``dos2unix`` create or rewrite (``touch /etc/cron.d/x``);
* a compressor's output (``zstd -o FILE``, ``lz4 IN OUT``, ``brotli --output=``), and the
  file it replaces (``gzip /etc/profile``);
* parallel's options read as parallel reads them (``--tagstring X {} -rf y`` ran ``{}``), and
  its Perl code in disguise (``--parens``, ``--plus`` strings with an argument, ``-J``);
* an extraction into a new directory by an extractor that restores symbolic links (unzip,
  tar, 7-Zip, unrar, unar, cpio): a link it plants is written through by the next one;

The check is pure: every table row in one process; the attacks that need proof run real.
"""

from __future__ import annotations

import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest
from destructive_support import asking, missed

from rho_domain.shell.destructive import destructive_reason

_UNSEEN = "writes where a generated word says"


def test_a_writer_fed_by_xargs_parallel_or_find_exec_asks() -> None:
    rows = {
        "find . -name '*.gz' | xargs gunzip": "gunzip " + _UNSEEN,
        "find . -name '*.gz' -print0 | xargs -0 -n1 gunzip": "gunzip " + _UNSEEN,
        "ls | xargs unxz": "unxz " + _UNSEEN,
        "ls | xargs zstd -d": "zstd " + _UNSEEN,
        "ls | xargs bzip2 -d": "bzip2 " + _UNSEEN,
        "ls | parallel gunzip": "gunzip " + _UNSEEN,
        "ls | parallel -j4 gzip": "gzip " + _UNSEEN,
        "ls | xargs -I X gunzip X": "gunzip " + _UNSEEN,
        "ls | sudo xargs gzip -9": "gzip " + _UNSEEN,
        "find . -name '*.gz' -exec gunzip '{}' +": "gunzip " + _UNSEEN,
        "find . -name '*.gz' -execdir gunzip '{}' ';'": "gunzip " + _UNSEEN,
        "find / -name authorized_keys -exec cp k '{}' ';'": "cp " + _UNSEEN,
        "find . -exec sudo cp a '{}' ';' -print": "cp " + _UNSEEN,
        "find . -ok tee '{}' ';'": "tee " + _UNSEEN,
        "echo /etc/cron.d/x | xargs touch": "touch " + _UNSEEN,
        "echo /etc/cron.d/x | xargs -I X touch X": "touch " + _UNSEEN,
        "echo /etc/x | xargs mkdir": "mkdir " + _UNSEEN,
        "echo x | xargs mkdir -p": "mkdir " + _UNSEEN,
        "echo x | parallel mkdir -p": "mkdir " + _UNSEEN,
        "find . -type d -exec touch '{}/.keep' ';'": "touch " + _UNSEEN,
        "ls | xargs dos2unix": "dos2unix " + _UNSEEN,
    }
    assert missed(rows) == []


def test_what_touch_mkdir_and_compressors_write_is_a_destination() -> None:
    rows = {
        "touch /etc/cron.d/x": "touch writes /etc/cron.d/x",
        "touch -d 2020-01-01 /etc/profile.d/x.sh": "touch writes /etc/profile.d/x.sh",
        "mkdir /etc/cron.d/x": "mkdir writes /etc/cron.d/x",
        "mkdir -p -m 755 /usr/local/bin/x": "mkdir writes /usr/local/bin/x",
        "mkdir .vscode": "mkdir writes .vscode",
        "dos2unix /etc/profile": "dos2unix writes /etc/profile",
        "zstd -o /etc/profile.d/x.sh a": "zstd writes /etc/profile.d/x.sh",
        "zstd a -o .git/hooks/pre-commit": ".git",
        "zstd --output=/etc/x a": "zstd writes /etc/x",
        "zstd -d a.zst -o /etc/profile.d/x.sh": "zstd writes /etc/profile.d/x.sh",
        "zstd a --output-dir-flat /etc/cron.d": "zstd writes /etc/cron.d",
        "pzstd -o /etc/x a": "pzstd writes /etc/x",
        "lz4 a /etc/profile.d/x.sh": "lz4 writes /etc/profile.d/x.sh",
        "lz4 -d a.lz4 /etc/profile.d/x.sh": "lz4 writes /etc/profile.d/x.sh",
        "lz4 -l a /etc/x": "lz4 writes /etc/x",  # -l: the legacy format, not a listing
        "brotli -o /etc/x a": "brotli writes /etc/x",
        "brotli --output=/etc/x a": "brotli writes /etc/x",
        "lzop -o /etc/x a": "lzop writes /etc/x",
        "lzip -o /etc/x a": "lzip writes /etc/x",
        "gzip /etc/profile": "gzip writes /etc/profile",  # replaced by /etc/profile.gz
        "xz /etc/profile.d/a.sh": "xz writes /etc/profile.d/a.sh",
        "gzip -S .sh x && sh x.sh": "runs x.sh, which this command line writes",
        "gzip --suffix=.sh x && sh x.sh": "runs x.sh, which this command line writes",
        "timeout 9 zstd -o /etc/x a": "zstd writes /etc/x",
    }
    assert missed(rows) == []


def test_ordinary_compression_and_creation_run_unasked() -> None:
    rows = [
        "gzip a",
        "gzip -9k data.csv",
        "zstd -19 -T0 a -o a.zst",
        "zstd -d a.zst",
        "zstd -d a.zst -o out/a",
        "lz4 a a.lz4",
        "xz -T0 a",
        "pigz -p 4 a",
        "gunzip data.gz",
        "ls | xargs gunzip -c",
        "ls | xargs zcat",
        "ls | xargs -n1 gzip -t",
        "parallel gzip ::: a b",
        "touch a b",
        "touch -r setup.py x",
        "mkdir -p build/out",
        "mkdir -m 700 x",
        "dos2unix a.txt",
        "find . -name '*.py' -exec cp '{}' backup/ ';'",
        "find . -name '*.py' -exec grep -l TODO '{}' +",
        "find . -type f -exec wc -l '{}' +",
        "touch conftest.py && pytest -q",  # an empty file runs nothing new
    ]
    assert asking(rows) == []


def test_find_exec_really_writes_every_file_found(tmp_path: Path) -> None:
    """Shown on real files: cp's destination is each path find puts for ``{}``, not the
    ``;`` that ends find's command (which the check read as cp's destination)."""
    (tmp_path / "ssh").mkdir()
    (tmp_path / "ssh" / "authorized_keys").write_text("theirs\n")
    (tmp_path / "k").write_text("mine\n")
    line = "find ssh -name authorized_keys -exec cp k '{}' ';'"
    subprocess.run(["bash", "-c", line], cwd=tmp_path, check=True)
    assert (tmp_path / "ssh" / "authorized_keys").read_text() == "mine\n"
    assert "cp " + _UNSEEN in destructive_reason(line)


@pytest.mark.skipif(shutil.which("lz4") is None, reason="needs lz4")
def test_lz4_really_writes_its_second_operand(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("echo pwned\n")
    subprocess.run(["bash", "-c", "lz4 -q a out.sh"], cwd=tmp_path, check=True)
    assert (tmp_path / "out.sh").exists()
    assert "lz4 writes /etc/profile.d/x.sh" in destructive_reason("lz4 -q a /etc/profile.d/x.sh")


def test_parallels_hidden_perl_and_option_values_ask() -> None:
    rows = {
        # --tagstring takes a value: the program is {}, which its input names
        "echo rm | parallel --tagstring x '{}' -rf y": "parallel runs a program its input names",
        "echo rm | parallel --joblog j.log '{}' -rf y": "parallel runs a program its input names",
        "echo rm | parallel --colsep , --delay 1 '{}' -rf y": "runs a program its input names",
        "echo a | parallel --parens ,,,, echo ',, system(1) ,,'": "parallel --parens: runs Perl",
        "echo a | parallel --plus echo '{/a/b}'": "parallel {/a/b}: a replacement",
        "echo a | parallel --plus echo '{%.gz}'": "parallel {%.gz}",
        "echo a | parallel --plus echo 'x{:-d}'": "parallel {:-d}",
        "echo a | parallel --plus --tagstring '{/a/b}' echo '{}'": "parallel {/a/b}",
        "echo a | parallel -J prof echo": "parallel -J: reads options",
        "echo a | parallel -Jprof echo": "parallel -Jprof: reads options",
        "echo a | parallel --profile=prof echo": "parallel --profile=prof: reads options",
        "ls | parallel --joblog /etc/cron.d/x echo": "parallel writes /etc/cron.d/x",
        "ls | parallel --results=/etc/x echo": "parallel writes /etc/x",
    }
    assert missed(rows) == []


def test_parallels_plain_replacement_strings_and_tags_run_unasked() -> None:
    rows = [
        "parallel --tagstring '{}' echo '{}'",
        "parallel --ctagstring 'job {#}' echo '{}' ::: a b",
        "echo a | parallel --plus echo '{..}' '{+/}' '{##}' '{#}' '{2.}' '{/.}'",
        "echo a | parallel -j4 --tag echo '{}'",
        "ls | parallel --joblog j.log gzip -c",
    ]
    assert asking(rows) == []


_LINKS = "a member may be a symbolic link (to /etc, ~/.ssh) that a later member"


def test_extracting_an_archive_that_may_hold_links_asks() -> None:
    rows = {
        "unzip a.zip -d out": "unzip extracts members the approval check cannot see into out",
        "unzip -o -q a.zip -d build/x": _LINKS,
        "7z x a.7z -oout": "7z extracts members",
        "7zz x a.7z -oout": _LINKS,
        "tar -xf a.tar -C out": "tar extracts members",
        "tar xzf a.tgz -C out": _LINKS,
        "gtar --extract -f a.tar --directory=out": _LINKS,
        "unrar x a.rar out/": _LINKS,
        "unar -o out a.rar": _LINKS,
        "cpio -id -D out --no-absolute-filenames < a.cpio": _LINKS,
        "bsdtar -xPf a.tar -C out": _LINKS,  # -P: writes through links
        "bsdtar -xf a.tar --insecure -C out": _LINKS,
        "sudo tar -xf a.tar -C out": _LINKS,
        "cd build && unzip ../a.zip": _LINKS,
    }
    assert missed(rows) == []


def test_archives_bsdtar_and_ar_extract_and_listings_run_unasked() -> None:
    rows = [
        "bsdtar -xf a.tar -C out",
        "bsdtar -xf a.zip -C out",
        "ar x --output=out lib.a",
        "unzip -l a.zip",
        "unzip -p a.zip x.txt",
        "tar -tf a.tar",
        "7z l a.7z",
        "tar -czf a.tgz src",
        "zip -r a.zip src",
    ]
    assert asking(rows) == []


@pytest.mark.skipif(shutil.which("unzip") is None, reason="needs unzip")
def test_a_link_an_archive_planted_is_written_through_by_the_next(tmp_path: Path) -> None:
    """Shown real: b.zip plants ``out/m -> outside``, c.zip's ``m/y`` lands in outside; GNU
    tar does the same. Each extraction into a new directory asks; bsdtar's does not."""
    outside = tmp_path / "outside"
    outside.mkdir()
    work = tmp_path / "w"
    work.mkdir()
    with zipfile.ZipFile(work / "b.zip", "w") as planted:
        link = zipfile.ZipInfo("m")
        link.create_system = 3  # unix: the mode bits below are read
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        planted.writestr(link, str(outside))
    with zipfile.ZipFile(work / "c.zip", "w") as through:
        through.writestr("m/y", "pwned\n")
    line = "unzip -q b.zip -d out && unzip -q c.zip -d out"
    subprocess.run(["bash", "-c", line], cwd=work, check=True)
    assert (outside / "y").read_text() == "pwned\n"
    assert _LINKS in destructive_reason(line)
    assert destructive_reason("bsdtar -xf b.zip -C out") == ""


def test_a_glob_is_judged_by_the_program_it_reaches() -> None:
    """A wrapper reads its options only up to its command; an interpreter's end at the
    script (what follows goes to the script)."""
    rows = {
        "sudo tar -cf a.tar *": "the glob * given to tar " + _GLOB,
        "sudo -u ls tar -cf a.tar *": "given to tar",  # ls is sudo's user, not the program
        "sudo --us ls tar -cf a.tar *": "given to tar",  # --us: --user, abbreviated
        "sudo -Eu ls tar -cf a.tar *": "given to tar",
        "nice -n 5 chown u *": "given to chown",
        "timeout 60 tar -cf a.tar *": "given to tar",
        "env LC_ALL=C tar -cf a.tar *": "given to tar",
        "sudo env tar -cf a.tar *": "given to tar",
        "env make *": "the glob * given to make may expand to a file name read as a setting",
        "env -S 'tar -cf' a.tar *": "env's words hold a glob",  # a string: unsure
        "sudo -u ls *": "the program sudo runs is a glob",  # (redapprove28's reason)
        "python3 -m pytest *": "the glob * given to pytest",  # --basetemp=DIR removes DIR
        "python3 *": "the script python3 runs is a glob",  # (redapprove28's reason)
        "python3 -Q x.py *.json": "given to python3",  # an option not in its table
        "node --foo x.js *": "given to node",
        "python3 * x.py": "the script python3 runs is a glob",
    }
    assert missed(rows) == []


_GLOB = "may expand to a file name read as an option"


def test_globs_a_harmless_program_or_a_script_reads_run_unasked() -> None:
    rows = [
        "sudo ls *",
        "sudo -u bob ls -la *",
        "timeout 60 ls *",
        "nice cat *.txt",
        "env LC_ALL=C grep -r foo *",
        "python3 x.py *.json",
        "python3 -u -X dev x.py *.json",
        "python3.12 tools/gen.py *",
        "sudo python3 x.py *",
        "node x.js *",
        "node --require ./r.js x.js *",
        "ruby -Ilib x.rb *",
        "perl -w x.pl *",
        "bash script.sh *",
        "sh -e script.sh *.txt",
    ]
    assert asking(rows) == []


def test_a_glob_that_starts_with_a_path_is_no_option_to_any_row() -> None:
    """``./*``, ``../x/*``, ``/src/*`` expand to paths: the rows that ask for an unknown word
    because it may be an option (rsync, fallocate, dd, zip, 7-Zip) read them as paths."""
    rows = [
        "rsync -a ./* dest/",
        "rsync -a .//* dest/",
        "rsync -av ../shared/*.py dest/",
        "rsync -a /srv/data/* dest/",
        "sudo rsync -a ./* dest/",
        "fallocate -l 1M ./*.img",
        "zip a.zip ./*",
        "7z a a.7z ./*",
    ]
    assert asking(rows) == []


def test_other_globs_and_rows_that_judge_the_files_still_ask() -> None:
    rows = {
        "rsync -a * dest/": "rsync with a glob or generated operand",
        "rsync -a x* dest/": "rsync with a glob",  # x:host/ is a remote
        "rsync -a ./* /etc/cron.d/": "rsync writes /etc/cron.d/",
        "rsync --delete ./* d/": "rsync --delete",
        "zip -r a.zip *": "zip with a glob",  # -TT, -m
        "rm ./*": "rm with a glob or generated operand",  # the files removed are unnamed
        "7z x ./*.7z -oout": "7z extracts members",
        "echo x | xargs rsync -a ./* d/": "rsync " + _UNSEEN,
    }
    assert missed(rows) == []


def test_what_ln_links_to_is_judged_as_written() -> None:
    """A write through a symbolic link lands in its target, through a hard link in the file
    itself: the link a line plants is the extraction's link, made by hand."""
    rows = {
        "ln -s /etc/cron.d out && cp x out/": "ln writes /etc/cron.d",
        "ln -s /etc/cron.d": "ln writes /etc/cron.d",
        "ln /etc/passwd x": "ln writes /etc/passwd",
        "ln -sf /root/.ssh/authorized_keys k": "ln writes /root/.ssh/authorized_keys",
        "ln -s -t links /etc/profile.d": "ln writes /etc/profile.d",
        "ln -s .git/hooks h": ".git",
        "ln -s /usr/share/dict d": "ln writes /usr/share/dict",  # a write through it: /usr
        "echo /etc | xargs ln -s": "ln " + _UNSEEN,
    }
    assert missed(rows) == []
    assert (
        asking(["ln -s ../lib/x.py x.py", "ln -sf src/a.py b.py", "ln -s build/out latest"]) == []
    )


def test_a_planted_link_really_takes_the_next_write_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "w").mkdir()
    line = f"ln -s {outside} out && echo pwned > x && cp x out/"
    subprocess.run(["bash", "-c", line], cwd=tmp_path / "w", check=True)
    assert (outside / "x").read_text() == "pwned\n"
    assert destructive_reason("ln -s /etc/cron.d out && cp x out/").startswith("ln writes /etc")
