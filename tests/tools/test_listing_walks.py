"""Walks that list never show what is inside a secret directory (varshell19b).

Before varshell19b, without bubblewrap and on Daytona, ``find . -printf '%s %p'``, ``du -ab``,
``tree -a`` and ``ls -laR`` run from the workspace printed the names and sizes of the files
inside ``.ssh`` (``id_rsa``, ``sub/deep``), ``.ssh.~1~``, ``.aws.bak``, ``Copy of .ssh``,
``.config/gh`` and ``.config.old/gcloud``, though ``ls .ssh`` is refused; under bubblewrap
they were empty. The harness now adds the options that keep each walker out of them
(``rho_domain/shell/listing_walks.py``); what is not secret lists as before.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, daytona_pool, run_restricted

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.errors import CommandRefused
from rho_domain.secrets import SecretPolicy
from rho_domain.shell.programs import check_argv, harden_argv
from rho_domain.shell.reads import secret_safe_argv

# Each file inside a secret directory is named for itself: its name must never show.
INSIDE = {
    ".ssh/in-ssh-key": "K",
    ".ssh/in-ssh-sub/in-ssh-deep": "K",
    ".ssh.~1~/in-numbered": "K",
    ".aws.bak/in-aws-bak": "K",
    "Copy of .ssh/in-copy-of": "K",
    "lib/.Kube-old/in-kube-old": "K",
    ".config/gh/in-gh": "K",
    ".config.old/gcloud/in-gcloud-old": "K",
    ".local/share/keyrings/in-keyrings": "K",
    ".local/share/uv/credentials/in-uv-credentials": "K",
    # find's "." matches no newline: ".*/" missed a .ssh below such a parent, and under -depth
    # a file so named inside one (probe19c)
    "a\nb/.ssh/in-ssh-below-newline": "K",
    ".ssh/in-ssh-\nnewline": "K",
}
ORDINARY = {"src/a.py": "print('K')\n", ".git/HEAD": "ref\n", ".git/objects/ab": "x" * 9000}
LISTINGS = [
    "find . -printf '%s %p\\n'",
    "find . -depth -name 'in-*'",
    "find . -mindepth 2 -print0",
    "find -H . -maxdepth 9 -type f",
    "du -ab",
    "du -a .config .config.old lib",
    "tree -a",
    "tree -a --noreport -P 'in-*' .",
    "ls -laR",
    "ls -AR --recursive lib .config",
    "echo . | xargs ls -AR",
    "echo . | xargs du -a",
    # a reader: Daytona's scan met .config.old/gcloud by no test, and grep -r read it there
    "grep -rl K .",
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("listing") / "ws"
    for rel, text in {**INSIDE, **ORDINARY}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


pool = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


def _inside(out: str) -> list[str]:
    return [name for name in ("in-ssh", "in-numbered", "in-aws", "in-copy", "in-kube", "in-gh",
                              "in-gcloud", "in-keyrings", "in-uv") if name in out]  # fmt: skip


def _scanned(ws: Path) -> SecretPolicy:
    """What the executors' scan adds: the secret directories no fixed name says (a copy's,
    another case's; du is given no pattern with a wildcard) and the secret trees below
    another directory, which tree and ls can only skip by their names."""
    found = {rel.rsplit("/", 1)[0] for rel in INSIDE}
    found -= {".ssh", ".ssh/in-ssh-sub", ".local/share/uv/credentials", "a\nb/.ssh"}  # named
    return SecretPolicy(locations=tuple(f"{ws}/{rel}" for rel in sorted(found)))


def test_the_argv_alone_keeps_each_walker_out(ws: Path) -> None:
    """The harness's argv, run by the real programs with no executor around them (the
    allowlist wall alone), lists nothing inside a secret directory; the plain commands did."""
    plain = subprocess.run("find . ; du -a ; tree -a ; ls -AR", shell=True, cwd=ws,
                           capture_output=True, text=True).stdout  # fmt: skip
    assert len(_inside(plain)) == 9, plain  # every attack reaches its names
    policy = _scanned(ws)
    for argv in (
        ["find", ".", "-depth"],
        ["find", ".", "-name", "in-*", "-o", "-name", "a.py", "-maxdepth", "5"],
        ["find", "-H", ".", "-mindepth", "2", "-ls"],
        ["du", "-ab"],
        ["tree", "-a", "-I", "nothing"],
        ["ls", "-laR"],
    ):
        check_argv(argv)
        built = secret_safe_argv(harden_argv(argv), policy, [str(ws)])
        done = subprocess.run(built, cwd=ws, capture_output=True, text=True)
        assert (done.returncode, done.stderr) == (0, ""), built
        assert _inside(done.stdout) == [], (argv, done.stdout)
        assert "a.py" in done.stdout or argv[0] == "du", (argv, done.stdout)
    # The model's ")" closed the harness's parentheses, and its "," (find's loosest operator)
    # then printed every path, under -depth or -mindepth 2 inside .ssh too (probe19c): built
    # with the check skipped, the argv still does; the check refuses it.
    for argv in (["find", ".", "-depth", "-false", ")", ",", "(", "-print"],
                 ["find", ".", "-mindepth", "2", "-true", ")", ",", "(", "-print"],
                 ["find", ".", "(", "-print"]):  # fmt: skip
        built = secret_safe_argv(argv, policy, [str(ws)])  # not harden_argv: it checks
        done = subprocess.run(built, cwd=ws, capture_output=True, text=True)
        assert _inside(done.stdout) != [] or ")" not in argv, (argv, done.stdout)
        with pytest.raises(CommandRefused, match="parentheses do not pair"):
            check_argv(argv)
    # Not a walk: ls without -R lists one directory as it is.
    assert secret_safe_argv(("ls", "-A", "--", "."), policy, [str(ws)]) == ("ls", "-A", "--", ".")


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("backend", BACKENDS)
async def test_listing_walks_show_nothing_inside_secret_directories(
    ws: Path, backend: str, pool: DaytonaPool
) -> None:
    for command in LISTINGS:
        out = await run_restricted(str(ws), command, backend, pool)
        assert _inside(out) == [], (command, out)
        assert "exit code 0" in out, (command, out)
    # Ordinary use lists as before: .git's size is its objects', .py files are found.
    out = await run_restricted(str(ws), "du -sb .git", backend, pool)
    assert int(out.split()[0]) > 9000, out
    out = await run_restricted(str(ws), "find . -name '*.py'", backend, pool)
    assert out.splitlines()[0] == "./src/a.py", out
    out = await run_restricted(str(ws), "tree src", backend, pool)
    assert "a.py" in out, out
    out = await run_restricted(str(ws), "find . -depth -false ')' , '(' -print", backend, pool)
    assert "parentheses do not pair" in out, out
    # Naming one is refused, as before.
    out = await run_restricted(str(ws), "find .ssh", backend, pool)
    assert "SensitivePath" in out, out


def test_the_argv_alone_holds_from_inside_a_secret_trees_parent(ws: Path) -> None:
    """With no scan (an empty policy: the executors found nothing), a walk started in
    ``.config`` or naming it as a relative start listed ``.config/gh``'s files: find's prune
    wanted a directory above ``.config/gh``, and from inside ``.config`` every walker met a
    plain ``gh`` (redshell20). Each walker now skips it by the argv alone."""
    inner = ws / ".config"
    for cwd, argv in (
        (ws, ["find", ".config"]),
        (ws, ["find", ".config", "-depth"]),
        (inner, ["find", "."]),
        (inner, ["find", ".", "-mindepth", "2"]),
        (inner, ["du", "-a"]),
        (inner, ["tree", "-a"]),
        (inner, ["ls", "-AR"]),
    ):
        walked = [str(cwd), *(str(cwd / a) for a in argv[1:2] if a != ".")]
        plain = subprocess.run(argv, cwd=cwd, capture_output=True, text=True).stdout
        assert _inside(plain) == ["in-gh"], (argv, plain)  # the attack reaches gh
        check_argv(argv)
        built = secret_safe_argv(harden_argv(argv), SecretPolicy(), walked)
        done = subprocess.run(built, cwd=cwd, capture_output=True, text=True)
        assert (done.returncode, done.stderr) == (0, ""), built
        assert _inside(done.stdout) == [], (argv, done.stdout)


def test_the_argv_alone_holds_tree_and_ls_from_above_a_secret_trees_parent(ws: Path) -> None:
    """With no scan, ``tree -a`` and ``ls -AR`` started above ``.config`` (or its copy
    ``.config.old``) listed ``gh``'s and ``gcloud``'s files (redshell21): they say names only,
    and ``gh`` is no secret name by itself. They now never enter the directories that hold
    such trees (``.config``, ``.local``, their copies); find, which says paths, prunes
    ``.config.old/gcloud`` as it prunes ``.config/gcloud``, and a walk started in the copy
    skips ``gcloud`` by name; the rest lists as before."""
    for argv in (["tree", "-a"], ["tree", "-a", "-I", "x"], ["ls", "-AR"], ["ls", "-laR"],
                 ["find", "."], ["find", ".", "-depth"]):  # fmt: skip
        plain = subprocess.run(argv, cwd=ws, capture_output=True, text=True).stdout
        assert {"in-gh", "in-gcloud", "in-keyrings"} <= set(_inside(plain)), (argv, plain)
        check_argv(argv)
        built = secret_safe_argv(harden_argv(argv), SecretPolicy(), [str(ws)])
        done = subprocess.run(built, cwd=ws, capture_output=True, text=True)
        assert (done.returncode, done.stderr) == (0, ""), built
        assert _inside(done.stdout) == [], (argv, done.stdout)
        assert "a.py" in done.stdout, (argv, done.stdout)
        assert ".git" in done.stdout, (argv, done.stdout)
    # Started in the copy of .config, where gcloud is a plain name.
    inner = ws / ".config.old"
    for argv in (["find", "."], ["tree", "-a"], ["ls", "-AR"]):
        plain = subprocess.run(argv, cwd=inner, capture_output=True, text=True).stdout
        assert _inside(plain) == ["in-gcloud"], (argv, plain)
        built = secret_safe_argv(harden_argv(argv), SecretPolicy(), [str(inner)])
        done = subprocess.run(built, cwd=inner, capture_output=True, text=True)
        assert (done.returncode, _inside(done.stdout)) == (0, []), (argv, done.stdout)


@pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed")
async def test_the_sandbox_alone_keeps_each_walker_out(ws: Path) -> None:
    """Wall 5 alone (varshell20b): with no argv rule at all (``run_unchecked``: no check, no
    hardening, no exclusion), every walker, started above the secret directories, from
    ``.config`` (where ``gh`` is a plain name) and naming the copies of secret directories
    (``du -a`` of ``.ssh.~1~``, ``.aws.bak``, which du's argv does not name without the
    scan), sees them empty: the sandbox masks what its scan of the workspace found."""
    executor = LocalExecutor(str(ws), sandbox=True)
    for cwd, argv in (
        (".", ["find", "."]),
        (".", ["du", "-a"]),
        (".", ["du", "-a", ".ssh.~1~", ".aws.bak", "Copy of .ssh"]),
        (".", ["tree", "-a"]),
        (".", ["ls", "-AR"]),
        (".config", ["tree", "-a"]),
        (".config", ["ls", "-AR"]),
        (".config", ["find", "."]),
    ):
        plain = subprocess.run(argv, cwd=ws / cwd, capture_output=True, text=True).stdout
        assert _inside(plain), (cwd, argv, plain)  # out of the sandbox, the walk lists them
        done = await executor.run_unchecked(argv, cwd=cwd)
        assert done.exit_code == 0, (argv, done.output)
        assert _inside(done.output) == [], (cwd, argv, done.output)
    done = await executor.run_unchecked(["ls", "-A", ".ssh.~1~"])
    assert (done.exit_code, done.output) == (0, ""), done.output  # there, and empty


def test_tree_holds_with_its_last_exclusion_alone(ws: Path) -> None:
    """tree before 2.0 (RHEL 9's 1.8.0: ``ipattern = argv[n++]``) keeps only the last ``-I``
    and compares a pattern's ``/`` with the name itself; the harness's ``-I .ssh/ -I .aws/
    ...`` hid nothing there (probeshell20c). Its argv now ends in one ``-I`` with every name
    joined by ``|`` and no ``/``, and run with that ``-I`` alone, as an old tree reads it,
    lists nothing inside a secret directory."""
    built = secret_safe_argv(harden_argv(["tree", "-a", "-I", "x"]), _scanned(ws), [str(ws)])
    end = built.index("--")
    flags = [i for i, w in enumerate(built[:end]) if w == "-I"]
    assert built[flags[0] + 1] == "x", built  # the model's own, then the harness's
    assert "/" not in built[flags[-1] + 1], built
    as_old_tree_reads = [w for i, w in enumerate(built) if not {i, i - 1} & set(flags[:-1])]
    done = subprocess.run(as_old_tree_reads, cwd=ws, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, ""), as_old_tree_reads
    assert _inside(done.stdout) == [], done.stdout
    assert "a.py" in done.stdout, done.stdout
