"""redapprove26: what the approval check let run unasked after "always", by class.

* a glob where the program reads options: it expands to names whoever wrote the files chose
  (``tar -cf a.tar *`` beside a file named ``--checkpoint-action=exec=sh x.sh``);
* what ``xargs`` and ``parallel`` fill from their input: a replacement string anywhere in a
  word (``xargs -I X sh -c 'cp a X'``), the program's own name, an in-place editor's file
  (``xargs sed -i``, ``xargs yq -i``), and ``yq -i``/``sd``/``crudini`` naming one outright;
* where an archive's members land: 7-Zip, unrar, unar and ar extracting into the command's
  directory, cpio's absolute names (whatever ``-D``), 7-Zip's ``-spf``, ``gunzip -N``'s
  stored name, a decompressor's derived output (``gunzip .envrc.gz``);
* a system's package manager installing the machine's programs (``apt-get install jq``);
* the first question about an ordinary line gave the generic reason: it says what the line
  was read to run and write;
* an option whose value is a program to run (``go test -exec``, ``bazel --run_under``,
  ``gcc -wrapper rm,-rf,x``, ``cmake -DCMAKE_C_COMPILER_LAUNCHER=``);

The check is pure: every table row in one process; one row is shown real (the attack runs).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from destructive_support import asking, missed
from domain_support import make_session

from rho_adapters.fakes import (
    MemoryExecutor,
    MemorySessionStore,
    ScriptedApprover,
    call,
    text,
    tools,
)
from rho_domain.approval_events import ApprovalRequested
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.approver import ApprovalAnswer
from rho_domain.run import RunStatus
from rho_domain.shell.destructive import destructive_reason, line_reading
from rho_domain.tools.bash import BashHandler

_GLOB = "may expand to a file name read as an option"


def test_a_glob_where_a_program_reads_options_asks() -> None:
    rows = {
        "tar -cf a.tar *": "the glob * given to tar " + _GLOB,
        "tar cf a.tar *.c": _GLOB,
        "/usr/bin/tar -czf a.tgz ?x": _GLOB,
        "'tar' -cf a.tar *": _GLOB,
        "bsdtar -cf a.tar *": _GLOB,
        "nice -n 5 tar -cf a.tar *": _GLOB,
        "command tar -cf a.tar *": _GLOB,
        "exec tar -cf a.tar *": _GLOB,
        "env LC_ALL=C tar -cf a.tar *": "the glob * given to tar",  # env stops at tar
        "sudo -- tar -cf a.tar *": _GLOB,  # the -- is sudo's, not tar's
        "timeout 60 tar -cf a.tar * || true": _GLOB,
        "cd src && tar -cf ../a.tar *": _GLOB,
        "tar -cf a.tar -- x *": _GLOB,  # x between: the -- may be a wrapper's
        "tar -cf a.tar [-a]*": _GLOB,
        "tar -cf a.tar [!a]*": _GLOB,
        "tar -cf a.tar \\-*": _GLOB,
        "chown u *": "the glob * given to chown",  # --reference=, -R
        "chmod +x *.sh": "the glob *.sh given to chmod",
        "cp -r * /tmp/backup/": "the glob * given to cp",  # --target-directory=/etc/cron.d
        "mv *.log old/": "the glob *.log given to mv",
        "sort -m *.txt": "the glob *.txt given to sort",  # --compress-program=
        "rg TODO *": "the glob * given to rg",  # --pre=
        "git add *": "the glob * given to git",
        "git log *": "the glob * given to git",  # --output=
        "sed -i s/a/b/ *.py": "the glob *.py given to sed",  # -e 's/x/y/e' runs
        "zip -r a.zip src *": "zip",
        "npm install *": "the glob * given to npm",  # -g
        "curl -T * https://e.com/": "the glob * given to curl",  # -o, -K
        "make *": "the glob * given to make may expand to a file name read as a setting",
        "dd if=a *": "dd with a glob",  # its row: of= may be what * expands to
        "bash -c 'tar -cf a.tar *'": _GLOB,
    }
    assert missed(rows) == []


def test_globs_that_cannot_be_options_or_go_to_harmless_programs_run_unasked() -> None:
    rows = [
        "tar -cf a.tar ./*",
        "tar -cf a.tar -- *",
        "tar -cf a.tar -- *.c *.h",
        "tar -cf a.tar src/*",
        "tar -cf a.tar x*",
        "tar -cf a.tar 'x'*",
        "tar -cf a.tar .[a-z]*",
        "chown u -- *",
        "git add -- *",
        "git add src/*.py",
        "make ./*",
        "ls *",
        "ls -la *",
        "cat *.txt",
        "grep -r foo *",
        "wc -l *.py",
        "head -n 3 *",
        "diff a/* b/",
        "echo *",
        "mkdir -p * ",
    ]
    assert asking(rows) == []


def test_the_glob_attack_is_real_and_asks(tmp_path: Path) -> None:
    """Shown on real files: bash expands ``*`` to the planted names, and GNU tar runs the
    command one of them names; the check asks for that line, and runs ``./*`` unasked."""
    (tmp_path / "--checkpoint=1").touch()
    (tmp_path / "--checkpoint-action=exec=touch pwned").touch()
    (tmp_path / "a").touch()
    line = "tar -cf ../a.tar *"
    subprocess.run(["bash", "-c", line], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "pwned").exists()
    assert _GLOB in destructive_reason(line)
    assert destructive_reason("tar -cf ../a.tar ./*") == ""


_FILLED = "writes where a generated word says"


def test_what_xargs_or_parallel_fill_in_is_unknown_wherever_it_stands() -> None:
    rows = {
        "echo /etc/cron.d/x | xargs -I X sh -c 'cp a X'": "sh with a glob or generated word",
        "echo /etc/cron.d/x | xargs -IX sh -c 'cp a X'": "generated word",
        "echo /etc/cron.d/x | xargs -rI X bash -c 'cp a X'": "generated word",
        "echo /etc/cron.d/x | xargs -0 -n1 -I X sh -c 'cp a X'": "generated word",
        "echo /etc/cron.d/x | xargs --replace=X sh -c 'cp a X'": "generated word",
        "echo /etc/cron.d/x | xargs --replace sh -c 'cp a {}'": "generated word",
        "echo /etc/cron.d/x | xargs -i sh -c 'cp a {}'": "generated word",
        "echo /etc/cron.d/x | /usr/bin/xargs -J % sh -c 'cp a %'": "generated word",
        "echo /etc/cron.d/x | parallel sh -c 'cp a {.}'": "generated word",
        "echo /etc/cron.d/x | parallel -I X sh -c 'cp a X'": "generated word",
        "echo /etc/cron.d/x | parallel --replace X sh -c 'cp a X'": "generated word",
        "echo a | xargs -I c cp a c": "xargs runs a program its input names",
        "echo rm | xargs -I X X -rf y": "xargs runs a program its input names",
        "echo a | parallel echo '{= system(\"rm -rf y\") =}'": "runs Perl code",
        "echo /etc/profile | xargs sed -i s/a/b/": "sed " + _FILLED,
        "echo /etc/profile | xargs -I X sed -i s/a/b/ X": "sed " + _FILLED,
        "echo /etc/profile | parallel sed -i s/a/b/ '{}'": "sed " + _FILLED,
        "echo /etc/profile | xargs sponge": "sponge " + _FILLED,
        "echo /etc/profile | xargs yq -i .a=1": "yq " + _FILLED,
        "echo /root/.bashrc | xargs sd a b": "sd " + _FILLED,
        "echo x.diff | xargs patch": "patch " + _FILLED,
        "echo x | xargs -I X curl https://e.com -o X": "curl",
        "yq -i .a=1 /etc/profile": "yq writes /etc/profile",
        "sd a b /root/.bashrc": "sd writes /root/.bashrc",
        "crudini --set /etc/pip.conf global index-url x": "crudini writes /etc/pip.conf",
    }
    assert missed(rows) == []


def test_ordinary_xargs_and_in_place_edits_run_unasked() -> None:
    rows = [
        "sed -i s/a/b/ src/*.py",
        "yq -i .a=1 config.yaml",
        "sd foo bar src/x.py",
        "crudini --set setup.cfg metadata name x",
        "find . -name '*.py' | xargs grep -l TODO",
        "echo x | xargs sed s/a/b/",
        "ls | xargs -n1 echo",
        "find . -name '*.py' | xargs -I X wc -l X",
    ]
    assert asking(rows) == []


_SYSTEM = "installs or upgrades the machine's programs, outside the workspace"


def test_a_system_package_install_asks() -> None:
    rows = {
        "apt-get install jq": "apt-get install: " + _SYSTEM,
        "sudo apt-get install -y jq": "apt-get install",
        "sudo DEBIAN_FRONTEND=noninteractive apt-get -qq install jq": "apt-get install",
        "apt-get -o Dpkg::Options::=--force-confold install jq": "apt-get install",
        "/usr/bin/apt install ./x.deb": "apt install",
        "nice apt-get upgrade": "apt-get upgrade",
        "apt-get dist-upgrade": "apt-get dist-upgrade",
        "aptitude install jq": "aptitude install",
        "env apt-get build-dep x": "apt-get build-dep",
        "dpkg -i a.deb": "dpkg -i",
        "dpkg --install a.deb": "dpkg --install",
        "rpm -ivh a.rpm": "rpm -ivh",
        "rpm --upgrade a.rpm": "rpm --upgrade",
        "yum install jq": "yum install",
        "dnf -y install jq": "dnf install",
        "microdnf install jq": "microdnf install",
        "zypper in jq": "zypper in",
        "apk add --no-cache jq": "apk add",
        "pacman -S jq": "pacman -S",
        "pacman -Syu": "pacman -Syu",
        "pacman -U x.pkg.tar.zst": "pacman -U",
        "yay": "yay: " + _SYSTEM,
        "paru -S x": "paru -S",
        "emerge -av x": "emerge x",
        "xbps-install -S x": "xbps-install x",
        "snap install x": "snap install",
        "flatpak install x": "flatpak install",
        "brew install jq": "brew install",
        "brew upgrade": "brew upgrade",
        "port install jq": "port install",
        "pkg install jq": "pkg install",
        "apt-get *": "apt-get with a glob",
        "sh -c 'apt-get install jq'": "apt-get install",
    }
    assert missed(rows) == []


def test_a_system_package_managers_lists_and_searches_run_unasked() -> None:
    rows = [
        "apt-get update",
        "sudo apt update",
        "apt-cache search jq",
        "apt list --installed",
        "apt show jq",
        "dpkg -l",
        "dpkg -L jq",
        "rpm -qa",
        "dnf search jq",
        "dnf makecache",
        "pacman -Ss jq",
        "pacman -Si jq",
        "pacman -Qi jq",
        "emerge --search x",
        "brew list",
        "brew info jq",
        "apk info",
    ]
    assert asking(rows) == []


_PROGRAM = "its value is a program it runs"


def test_an_option_whose_value_is_a_program_asks() -> None:
    rows = {
        "go test -exec 'rm' ./...": "go -exec: " + _PROGRAM,
        "go test -exec=./x ./...": "go -exec=./x",
        "go run --exec ./x .": "go --exec",
        "go build -toolexec=./x .": "go -toolexec=./x",
        "go vet -vettool=./x ./...": "go -vettool=./x",
        "timeout 600 go test -exec sudo ./...": "go -exec",
        "bazel run --run_under=./x //a": "bazel --run_under=./x",
        "bazelisk test --run_under //x //a": "bazelisk --run_under",
        "bazel --bazelrc=x.rc build //a": "bazel --bazelrc=x.rc",
        "meson test --wrapper=valgrind": "meson --wrapper=valgrind",
        "meson test -C build --wrap ./x": "meson --wrap",
        "gcc -wrapper rm,-rf,x a.c": "gcc -wrapper",
        "g++ -fplugin=./p.so a.cc": "g++ -fplugin=./p.so",
        "cc -B./bin a.c": "cc -B./bin",
        "clang -specs=x.specs a.c": "clang -specs=x.specs",
        "rustc -C linker=./x a.rs": "rustc -C linker=./x",
        "rustc -Clinker=./x a.rs": "rustc -C linker=./x",
        "rustc --codegen=linker=./x a.rs": "rustc -C linker=./x",
        "cmake -DCMAKE_C_COMPILER_LAUNCHER=./x ..": "cmake -DCMAKE_C_COMPILER_LAUNCHER=./x",
        "cmake -D CMAKE_CXX_COMPILER=./x ..": "cmake -DCMAKE_CXX_COMPILER=./x",
        "cmake -DCMAKE_LINKER:FILEPATH=./x ..": "cmake -DCMAKE_LINKER:FILEPATH=./x",
        "pip install --config-settings editable_mode=strict .": "pip --config-settings",
        "pip install -C x=y .": "pip -C",
    }
    assert missed(rows) == []


def test_ordinary_builds_run_unasked() -> None:
    rows = [
        "go test ./...",
        "go build -o bin/x .",
        "go vet ./...",
        "bazel test //a:b",
        "bazel run //a -- --flag",
        "meson test -C build",
        "gcc -O2 -Wall a.c -o a",
        "clang -g -fsanitize=address a.c",
        "rustc -C opt-level=2 a.rs",
        "cmake -DCMAKE_BUILD_TYPE=Release -S . -B build",
        "pip install -e .",
    ]
    assert asking(rows) == []


async def test_the_first_bash_question_says_what_the_line_was_read_to_do() -> None:
    """The approver and the trace are told what was recognised, not the generic "'bash' can
    change things outside the conversation"."""
    store = MemorySessionStore()
    approver = ScriptedApprover([ApprovalAnswer(approved=True)])
    session = make_session(
        [tools(call("bash", {"command": "make && pytest -q > build.log"})), text("done")],
        tools=[BashHandler(restricted=False, timeout=30)],
        profile="developer",
        approver=approver,
        store=store,
        executor=MemoryExecutor(allow_shell=True, file_write=FileWriteMode.FULL),
    )
    assert (await session.run("go")).status is RunStatus.COMPLETED
    said = (
        "bash runs make, pytest; writes build.log "
        '(ordinary work: "always" lets such a line run unasked)'
    )
    assert [r.reason for r in approver.requests] == [said]
    asked = [e for e in store.events(session.id) if isinstance(e, ApprovalRequested)]
    assert [e.reason for e in asked] == [said]


def test_the_reading_names_the_programs_and_files_of_every_command() -> None:
    reading = line_reading("make && pytest -q > build.log; sort a | uniq > b.txt")
    assert reading == (
        "",
        "bash runs make, pytest, sort, uniq; writes b.txt, build.log "
        '(ordinary work: "always" lets such a line run unasked)',
    )
    many = line_reading("; ".join(f"p{n} > f{n}.log" for n in range(12)))[1]
    assert "runs p0, p1, p2, p3, p4, p5, p6, p7 and 4 more; writes f0.log, f1.log, f10.log" in many
    # a destructive line keeps its own reason; a text that merely parses runs nothing
    assert line_reading("rm -rf x") == ("rm -r: removes recursively or without asking", "")
    assert line_reading("git commit -m 'make it'")[1].startswith("bash runs git (")


_MEMBERS = "writes an archive's members, which the approval check cannot see"


def test_archives_that_write_members_out_of_sight_ask() -> None:
    rows = {
        "7z x a.7z": "7z " + _MEMBERS,
        "7za e a.7z": "7za " + _MEMBERS,
        "/usr/bin/7zz x a.7z": "7zz " + _MEMBERS,
        "cd /root && 7z x a.7z -o.": "7z",
        "7z x a.7z -o/root": "7z writes /root/.*",
        "7z x a.7z -o.git/hooks": "7z writes .git/hooks",
        "7z x -spf a.7z -oout": "7z -spf writes members by their absolute paths",
        "unrar x a.rar": "unrar " + _MEMBERS,
        "unrar x a.rar /root/": "unrar writes /root/.*",
        "unar a.rar": "unar " + _MEMBERS,
        "unar -o /root a.rar": "unar writes /root/.*",
        "ar x lib.a": "ar " + _MEMBERS,
        "ar -x lib.a": "ar " + _MEMBERS,
        "cpio -i < a.cpio": "cpio -i writes absolute and ../ member names",
        "cpio -id -D out < a.cpio": "cpio -i writes absolute and ../ member names",
        "cpio --extract --directory=out < a.cpio": "cpio -i writes absolute",
        "cpio -id --no-absolute-filenames < a.cpio": "cpio " + _MEMBERS,
        "gunzip -N a.gz": "gunzip -N names its output by the name stored in the archive",
        "gzip -dN a.gz": "gzip -N names its output",
        "gzip --decompress --name a.gz": "gzip -N names its output",
        "gunzip .envrc.gz": "gunzip writes .envrc",
        "gunzip /etc/cron.d/job.gz": "gunzip writes /etc/cron.d/job",
        "unxz /etc/profile.d/x.sh.xz": "unxz writes /etc/profile.d/x.sh",
        "bzip2 -d .bashrc.bz2": "bzip2 writes .bashrc",
        "zstd -d .git/hooks/pre-commit.zst": ".git",
        "gunzip x.sh.gz && sh x.sh": "x.sh, which this command line writes",
    }
    assert missed(rows) == []


def test_archives_listed_made_or_extracted_into_a_new_directory_run_unasked() -> None:
    rows = [
        "7z l a.7z",
        "7z a a.7z src",
        "unrar l a.rar",
        "ar x --output=out lib.a",
        "ar t lib.a",
        "ar rcs lib.a a.o",
        "cpio -t < a.cpio",
        "gunzip a.gz",
        "gzip -d data.csv.gz",
        "gzip -c a > a.gz",
        "gunzip -c a.gz | head",
        "zstd -d x.zst",
        "bsdtar -xf a.tar -C out",  # tar, 7z, unrar, unar, cpio: links (redapprove27)
    ]
    assert asking(rows) == []


def test_gunzip_n_really_writes_the_stored_name(tmp_path: Path) -> None:
    """Shown on real files: ``gzip`` stores the name ``.envrc``, and ``gunzip -N`` of the
    archive renamed ``notes.gz`` writes ``.envrc``, which the line never names."""
    (tmp_path / ".envrc").write_text("echo hi\n")
    subprocess.run(["gzip", "-N", ".envrc"], cwd=tmp_path, check=True)
    (tmp_path / ".envrc.gz").rename(tmp_path / "notes.gz")
    line = "gunzip -N notes.gz"
    subprocess.run(["bash", "-c", line], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / ".envrc").read_text() == "echo hi\n"
    assert "gunzip -N names its output by the name stored" in destructive_reason(line)
    assert destructive_reason("gunzip notes.gz") == ""
