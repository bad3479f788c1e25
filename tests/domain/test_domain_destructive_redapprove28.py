"""redapprove28: what the approval check let run unasked after "always", or asked for wrongly.

* a wrapper's option values and operands read as programs (``timeout -s KILL 0 ls`` asked
  as ``kill 0``, ``env -u shutdown make`` as shutdown), and sudo's ``-a``, ``-c``, ``-R``
  values read as its command (``sudo -c ls tar -cf a.tar *`` gave ``*`` to ls);
* a glob where a program or a script stands (``sudo ./*``, ``python3 ./*``, ``bash -- *``,
  ``xargs ./*``): the first name it matches runs;
* a glob where a subcommand is read (``docker r* x``, ``kubectl d* pods``, ``npm i* -g x``);
* parallel's ``--plus``/``--rpl`` set in its config or ``$PARALLEL`` (``{/a/b}`` without
  ``--plus`` on the line; ``PARALLEL_HOME=./cfg``);
* ``"$PWD"/x`` read as ``./x``; ``$(pwd)`` asks naming itself;
* extractors without a row (``xargs bsdtar``, ``jar x``, ``cabextract``, ``dpkg -x``,
  ``python3 -m zipfile -e``/``tarfile -e``, ``uudecode``);

The check is pure: every table row in one process; the readings that need proof run the
real programs.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from destructive_support import asking, missed

from rho_domain.shell.destructive import destructive_reason
from rho_domain.shell.wrapper_words import command_start

_UNSEEN_PROGRAM = "runs is a glob or generated word"
_UNSEEN_SCRIPT = "the script"


def test_a_wrappers_option_values_and_operands_are_no_commands() -> None:
    rows = [
        "timeout -s KILL 0 ls",
        "timeout -s KILL 5 kill -0 1234",
        "timeout --sig KILL 0 make",
        "timeout -sKILL -k 1 0 pytest -x",
        "timeout -k pkill 10 ls",
        "nice -n shutdown ls",
        "env -u shutdown make",
        "env -u reboot -C /tmp ls",
        "ionice -c reboot ls",
        "chrt -T halt 10 ls",
        "flock -w reboot lockfile ls",
        "flock shred ls",  # shred is the lock file
        "sudo -u kill ls",
        "sudo -g kill ls",
        "exec -a kill ls",
        "stdbuf -o kill ls",
        "sudo -u root timeout -s KILL 0 nice -n 5 ls",
        # a program none of whose words runs a command: its words are text and names
        "echo shutdown",
        "grep shutdown log",
        "sudo grep -r reboot /etc",
        "timeout 5 grep kill 0",
        "ls shutdown",
        "touch reboot",
    ]
    assert asking(rows) == []


def test_a_command_after_a_wrappers_words_is_still_judged() -> None:
    rows = {
        "timeout -s KILL 5 rm -rf x": "rm -r",
        "timeout -s KILL rm -rf x": "rm -r",  # busybox's older timeout: no duration
        "timeout --bogus KILL 0 ls": "kill 0",  # an unknown option: every word may run
        "ionice -t rm -rf x": "rm -r",  # -t is a flag (util-linux), not -t VALUE
        "ionice -c 3 -t reboot": "reboot",
        "chrt -f 10 halt": "halt",
        "taskset -c reboot ls": "reboot",  # no CPU list: unsure
        "flock -w 5 f shred x": "shred",
        "setsid -w shred x": "shred",
        "sudo -h halt ls": "halt",  # -h alone is help; only -hHOST names a host
        "nice -n 5 rm -rf x": "rm -r",
        "echo x; shutdown": "shutdown",
        "grep -e x log | xargs rm -rf": "rm -r",
        "echo rm -rf x | sh": "a pipe into sh",
        "test -f x && reboot": "reboot",
    }
    assert missed(rows) == []


def test_sudos_valued_options_give_a_glob_to_the_command_after_them() -> None:
    rows = {
        f"sudo {option} ls tar -cf a.tar *": "given to tar"
        for option in ("-c", "-R", "-a", "--login-class", "--chroot", "-u", "--us")
    }
    rows["sudo --bogus ls tar -cf a.tar *"] = "sudo"  # unsure: asks
    assert missed(rows) == []


_READ = [
    "timeout -s KILL 0", "timeout --sig=KILL -k 1 5", "nice -n 5", "nice -5", "nice --adj 5",
    "env -u X", "env -i X=1", "env --default-signal", "env -C /tmp", "stdbuf -oL",
    "stdbuf -o L", "setsid -w", "ionice -c 3", "ionice -t -c 3", "ionice -t", "chrt -o 0",
    "chrt -b 0", "taskset 1", "taskset -c 0", "flock -w 5 {lock}", "flock -n {lock}",
    "flock -E 3 {lock}", "timeout --preserve 5",
]  # fmt: skip


@pytest.mark.parametrize("prefix", _READ)
def test_the_wrapper_tables_read_as_the_real_programs(prefix: str, tmp_path: Path) -> None:
    """Where the check says a wrapper's command starts, the real program starts it."""
    words = prefix.format(lock=tmp_path / "lock").split()
    if shutil.which(words[0]) is None:
        pytest.skip(f"{words[0]} is not installed")
    argv = [*words, "printf", "ran"]
    assert command_start(argv, 0) == len(words)
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "ran")


def test_a_glob_where_a_program_or_script_stands_asks() -> None:
    rows = {
        "sudo ./*": _UNSEEN_PROGRAM,
        "env ./*": _UNSEEN_PROGRAM,
        "env X=1 ./*": _UNSEEN_PROGRAM,
        "exec ./*": _UNSEEN_PROGRAM,
        "command ./*": _UNSEEN_PROGRAM,
        "timeout 5 ./*": _UNSEEN_PROGRAM,
        "timeout ./*": "timeout's words hold a glob",  # no duration: unsure
        "sudo -u root nice ./*": _UNSEEN_PROGRAM,
        "sudo --bogus ./*": "sudo's words hold a glob",
        "sudo -u r* ls": "sudo's words hold a glob",  # r* may be root rm: several words
        "xargs ./*": "the program xargs runs is a glob",
        "xargs -n1 -- ./*": "the program xargs runs is a glob",
        "parallel ./* ::: a": "the program parallel runs is a glob",
        "python3 ./*": _UNSEEN_SCRIPT,
        "python3 ./*.py": _UNSEEN_SCRIPT,
        "python3 src/*.py": _UNSEEN_SCRIPT,
        "python3 -- ./*": _UNSEEN_SCRIPT,
        "python3 -u -W ignore ./*": _UNSEEN_SCRIPT,
        "python3 -m ./*": _UNSEEN_SCRIPT,
        "sudo python3 ./*": _UNSEEN_SCRIPT,
        "ls | xargs python3": _UNSEEN_SCRIPT,
        "node ./*": _UNSEEN_SCRIPT,
        "perl -- *": _UNSEEN_SCRIPT,
        "perl -w ./*": _UNSEEN_SCRIPT,
        "ruby ./*": _UNSEEN_SCRIPT,
        "php ./*": _UNSEEN_SCRIPT,
        "Rscript ./*": _UNSEEN_SCRIPT,
        "deno run -A ./*": _UNSEEN_SCRIPT,
        "bun run ./*": _UNSEEN_SCRIPT,
        "bash -- ./*": _UNSEEN_SCRIPT,
        "sh -- *": _UNSEEN_SCRIPT,
        "bash -x -- ./*": _UNSEEN_SCRIPT,
        "source ./*": _UNSEEN_SCRIPT,
        ". ./*.sh": _UNSEEN_SCRIPT,
    }
    assert missed(rows) == []


def test_a_named_script_or_module_with_globbed_words_runs_unasked() -> None:
    rows = [
        "python3 x.py ./*",
        "python3 -m pytest ./tests/*",
        "node x.js ./*",
        "bash s.sh ./*",
        "deno run -A x.ts",
        "bun run build",
        "nice ls *",
        "timeout 5 ls *",
        "sudo ls *",
        "xargs",
        "xargs --",  # raised IndexError before
        "parallel --",
    ]
    assert asking(rows) == []


def test_python_runs_the_first_name_a_glob_matches(tmp_path: Path) -> None:
    """``python3 ./*`` runs ``./a.py`` with ``./b.txt`` as its argument: the glob is the
    script, chosen by whoever named the files."""
    (tmp_path / "a.py").write_text("import sys; open('ran', 'w').write(sys.argv[1])\n")
    (tmp_path / "b.txt").write_text("data\n")
    subprocess.run(["bash", "-c", "python3 ./*"], cwd=tmp_path, check=True)
    assert (tmp_path / "ran").read_text() == "./b.txt"


def test_a_glob_where_a_subcommand_is_read_is_judged_as_each_it_may_be() -> None:
    rows = {
        "docker r* x": "docker rb: deletes resources",
        "DOCKER R* x": "deletes resources",
        "docker [^a]m x": "docker",
        "kubectl d* pods": "deletes resources",
        "aws s3 r* s3://b/x": "deletes resources",
        "aws ec2 t* --instance-ids i-1": "aws terminate-x",
        "npm uninst* -g x": "npm uninstall",
        "npm i* -g x": "npm i -g",
        "pip ins* --user x": "pip install --user",
        "gem i* x": "gem i",
        "cargo inst* x": "cargo install",
        "helm un* x": "deletes resources",
        "terraform d*": "deletes resources",
        "docker service sc* web=0": "scales a service to zero",
        "gh repo d* x": "deletes resources",
        "docker compose d*": "deletes resources",
        "sudo docker r* x": "deletes resources",
        "timeout -s KILL 5 kubectl d* pods": "deletes resources",
    }
    assert missed(rows) == []


def test_a_glob_that_matches_no_subcommand_runs_unasked() -> None:
    rows = [
        "docker run --rm -v ./*:/x img",
        "docker build -f ./Dockerfile* .",
        "pip install ./dist/*.whl",
        "pip install dist/*.whl",
        "npm test -- src/*.js",
        "kubectl apply -f k8s/*.yaml",
        "docker images",
    ]
    assert asking(rows) == []


def test_parallels_perl_strings_ask_as_if_its_config_set_plus_or_rpl() -> None:
    """``--plus`` and ``--rpl`` in ``~/.parallel/config``, ``/etc/parallel/config`` or
    ``$PARALLEL`` change how parallel reads the line's words: read as if they do."""
    perl = "pasted into Perl code"
    rows = {
        "parallel echo '{/a/b}' ::: a": perl,
        "parallel echo '{%.gz}' ::: a.gz": perl,
        "parallel echo '{:1:3}' ::: abcd": perl,
        "parallel echo '{foo}' ::: a": perl,  # an --rpl tag of the config's
        "env PARALLEL=--plus parallel echo '{}' ::: a": "PARALLEL=...",
        "env PARALLEL_HOME=./cfg parallel echo '{}' ::: a": "PARALLEL_HOME=...",
        "export PARALLEL='--rpl x'": "PARALLEL=...",
        "env PARALLEL_SHELL=./sh parallel echo ::: a": "PARALLEL_SHELL=...",
    }
    assert missed(rows) == []
    assert asking(["parallel echo '{}' ::: a", "parallel echo '{.}' '{1}' ::: a"]) == []


def test_every_extractor_asks_into_its_own_directory_and_unseen_words_may_extract() -> None:
    here = "into the command's directory"
    links = "a member may be a symbolic link"
    rows = {
        "xargs bsdtar": here,
        "ls *.tar | xargs -n1 bsdtar": here,
        "xargs bsdtar -C out": links,  # what xargs appends may be -P
        "xargs cpio": here,
        "xargs ar": here,
        "xargs unrar": here,
        "xargs jar": here,
        "jar xf a.jar": here,
        "jar -xf a.jar": here,
        "cabextract a.cab": here,
        "cabextract -d /etc/cron.d a.cab": "cabextract writes /etc/cron.d",
        "dpkg -x a.deb .": here,
        "dpkg-deb -x a.deb out": links,  # it runs tar
        "python3 -m zipfile -e a.zip .": here,
        "python3 -m zipfile -e a.zip /etc/cron.d": "python3 writes /etc/cron.d",
        "python3 -m tarfile -e a.tar out": "outside any directory",
        "sudo python3 -m zipfile -e a.zip /etc/cron.d": "python3 writes /etc/cron.d",
        "timeout 5 python3 -m tarfile -e a.tar out": "outside any directory",
        "sudo jar xf a.jar": here,
        "nice cabextract a.cab": here,
        "uudecode x.uu": "uudecode names its output",
    }
    assert missed(rows) == []
    listed = [
        "xargs bsdtar -tf",
        "bsdtar -xf a.tar -C out",
        "jar tf a.jar",
        "jar cf a.jar src",
        "cabextract -l a.cab",
        "cabextract -d out a.cab",
        "dpkg-deb -c a.deb",
        "python3 -m zipfile -e a.zip out",
        "sudo python3 -m zipfile -e a.zip out",
        "python3 -m pytest",
        "sudo python3 -m pip install x",
        "python3 -m zipfile -l a.zip",
        "python3 -m tarfile -l a.tar",
        "uudecode -o out.bin x.uu",
        "tar -czf out.tgz src/*.py",
    ]
    assert asking(listed) == []


def test_pythons_tarfile_extracts_a_member_outside_the_directory_named(tmp_path: Path) -> None:
    """``python3 -m tarfile -e a.tar out`` writes ``../escaped`` beside ``out`` (no filter
    before Python 3.14): the directory named does not hold what it extracts."""
    with tarfile.open(tmp_path / "a.tar", "w") as archive:
        member = tarfile.TarInfo("../escaped")
        member.size = 6
        archive.addfile(member, io.BytesIO(b"pwned\n"))
    (tmp_path / "out").mkdir()
    newer = "python3 -c 'import sys; print(sys.version_info >= (3, 14))'"
    line = f"python3 -m tarfile -e a.tar out; {newer}"
    done = subprocess.run(["bash", "-c", line], cwd=tmp_path, check=True, capture_output=True)
    if done.stdout.strip() == b"False":  # 3.14 extracts with the data filter
        assert (tmp_path / "escaped").read_text() == "pwned\n"
    assert "outside any directory" in destructive_reason("python3 -m tarfile -e a.tar out")


def test_pwd_is_read_as_the_directory_it_names() -> None:
    """``"$PWD"/x`` is ``./x``: judged as that path, not refused by the parser."""
    rows = {
        'cp x "$PWD"/.git/hooks/pre-commit': "may write inside .git",
        'cd /etc && cp x "$PWD"/cron.d/y': "cp writes /etc/cron.d/y",
        'rm -rf "$PWD"/build': "rm -r",
        "bash -c 'cp x \"$PWD\"/.bashrc'": "cp writes ./.bashrc",
        'python3 "$PWD"/*': _UNSEEN_SCRIPT,
        '"$PWD"/*': "read with $PWD as the directory it is, ./",
        "PWD=/etc; cp x $PWD/y": "is not allowed",  # set by the line: not the directory
        "printf -v P''WD /etc; cp x $PWD/y": "variable expansion",
        "cat $(pwd)/x": "$(pwd) is a command it does not run: write ./",
        "cat `pwd`/x": "`pwd` is a command it does not run",
        "ls $PWDX/a": "variable expansion",
    }
    assert missed(rows) == []
    assert asking(['ls "$PWD"/*', "ls ${PWD}/src", 'cp x "$PWD"/y', "echo '$PWD'"]) == []


def test_bash_sets_pwd_to_the_directory_it_starts_in(tmp_path: Path) -> None:
    """A ``PWD`` inherited from the environment that names another directory is replaced,
    so ``$PWD`` in a fresh bash is the call's own directory, as ``.`` is."""
    done = subprocess.run(
        ["bash", "-c", 'echo "$PWD"'],
        cwd=tmp_path,
        env={"PWD": "/etc", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == str(tmp_path)
