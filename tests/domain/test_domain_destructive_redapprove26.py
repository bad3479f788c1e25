"""redapprove26: what the approval check let run unasked after "always", by class.

* a glob where the program reads options: it expands to names whoever wrote the files chose
  (``tar -cf a.tar *`` beside a file named ``--checkpoint-action=exec=sh x.sh``);
* what ``xargs`` and ``parallel`` fill from their input: a replacement string anywhere in a
  word (``xargs -I X sh -c 'cp a X'``), the program's own name, an in-place editor's file
  (``xargs sed -i``, ``xargs yq -i``), and ``yq -i``/``sd``/``crudini`` naming one outright;

The check is pure: every table row in one process; one row is shown real (the attack runs).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from destructive_support import asking, missed

from rho_domain.shell.destructive import destructive_reason

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
        "env LC_ALL=C tar -cf a.tar *": "the glob * given to env",
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
