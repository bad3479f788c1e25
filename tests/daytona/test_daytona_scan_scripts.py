"""What the Daytona executor's per-command scripts cost the sandbox, pinned by their shape.

Each command that names a path runs ``realpaths_script`` in the sandbox, each command that
walks runs the alias scan (``aliases.scan_script``), whose ``find -iregex`` compiles the
policy's expression every time, and each command runs in ``capped``'s wrapper. These tests pin
the cheaper forms (one ``base64`` for all the words; the expression's shared beginnings
written once, ``alternation``; the command's script given as an argument, no ``cat``) and
that they answer what the dearer ones answered. The walls themselves are tested by the
red-team files.
"""

from __future__ import annotations

import itertools
import os
import random
import re
import subprocess
from pathlib import Path

import pytest

from rho_adapters.daytona import path_scripts
from rho_adapters.daytona.alternation import alternation, atoms, split
from rho_adapters.daytona.leftovers import ARGUMENT_BYTES
from rho_adapters.daytona.scripts import Captured, capped, parse_capped
from rho_adapters.daytona.secret_regex import SECRET_REGEX
from rho_domain.errors import ExecutorError

_ATOMS = ("a", "b", "\\.", "/", "[^/]*", ".*", "(a|/)?", "[ab]", "(#|copy.*of )?")
_STRINGS = ["".join(p) for n in range(5) for p in itertools.product("ab/#", repeat=n)]


def test_alternation_matches_exactly_what_the_plain_alternation_matches() -> None:
    """Random alternatives of the atoms ``secret_regex`` writes: the factored group and
    ``(a|b|...)`` accept the same strings (every string of up to four characters over the
    atoms' alphabet, Python's ``re`` as the judge of the one language both denote)."""
    rng = random.Random(27)
    for _ in range(40):
        alternatives = [
            "".join(rng.choice(_ATOMS) for _ in range(rng.randint(0, 4)))
            for _ in range(rng.randint(1, 7))
        ]
        plain = re.compile(f"({'|'.join(alternatives)})")
        factored = re.compile(alternation(alternatives))
        for text in _STRINGS:
            assert bool(plain.fullmatch(text)) == bool(factored.fullmatch(text)), (
                alternatives,
                text,
            )


def test_alternation_reads_its_atoms_whole() -> None:
    """A bracket with ``]`` or ``|`` in it, an escape and a nested group are one atom each;
    a ``|`` only outside them splits; a quantifier alone is refused."""
    assert atoms("[]|a]*x\\.(a|(b|c))?") == ["[]|a]*", "x", "\\.", "(a|(b|c))?"]
    assert split("a[|]|(b|c)|d") == ["a[|]", "(b|c)", "d"]
    assert alternation(["ab", "ac", "a"]) == "(a(b|c)?)"
    with pytest.raises(ValueError, match="not an atom"):
        atoms("*a")


def _groups(text: str) -> list[str]:
    """The bodies of every group of ``text`` (an extended regular expression), nested ones
    included."""
    out: list[str] = []
    for atom in atoms(text):
        if atom.startswith("("):
            body = atom.rstrip("?*")[1:-1]
            out.append(body)
            for branch in split(body):
                out += _groups(branch)
    return out


def test_the_scan_expression_writes_each_shared_beginning_once() -> None:
    """No group of the alias scan's ``-iregex`` has two alternatives that begin with the
    same atom: glibc compiled the plain form's 12,961 characters (``\\.git/(#|copy.*of )?``
    written 17 times) in 15 ms of the sandbox's CPU at every scan, this one in 5."""
    groups = _groups(SECRET_REGEX.removeprefix(".*/"))
    assert len(groups) > 50
    for body in groups:
        firsts = [atoms(branch)[:1] for branch in split(body)]
        assert len(firsts) == len({tuple(f) for f in firsts}), body[:200]


def test_the_words_are_resolved_with_one_base64(tmp_path: Path) -> None:
    """Every word's kind, canonical path and git place come back in one ``base64`` line
    (two ``base64`` a word before): a file, a hard-linked one, a directory through a link,
    a missing name, a name with a newline and trailing blanks, a file in a git directory's
    shape; run by the sandbox's ``sh``."""
    (tmp_path / "ws" / "repo" / ".git" / "refs").mkdir(parents=True)
    (tmp_path / "ws" / "repo" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    ws = tmp_path / "ws"
    (ws / "a.txt").write_text("a")
    os.link(ws / "a.txt", ws / "twin.txt")
    (ws / "odd\nname  ").write_text("b")
    (ws / "to-repo").symlink_to(ws / "repo")
    words = ["a.txt", "twin.txt", "to-repo", "missing", "odd\nname  ", "repo/.git/HEAD"]
    script = path_scripts.realpaths_script(str(ws), words)
    assert script.count("base64") == 1
    answer = subprocess.run(["sh", "-c", script], capture_output=True, check=True, text=True).stdout
    assert answer.count("\n") == 1
    git = f"g{ws}/repo/.git"
    assert path_scripts.parse_realpaths(answer, len(words)) == [
        (f"{ws}/a.txt", "l", ""),
        (f"{ws}/twin.txt", "l", ""),
        (f"{ws}/repo", "d", ""),
        None,
        (f"{ws}/odd\nname  ", "f", ""),
        (f"{ws}/repo/.git/HEAD", "f", git),
    ]
    with pytest.raises(ExecutorError, match="unreadable path answer"):
        path_scripts.parse_realpaths(answer, len(words) - 1)


@pytest.mark.parametrize("mark", [None, "call-27"])
def test_a_command_reaches_its_shell_as_an_argument_when_it_fits(mark: str | None) -> None:
    """The run's script is ``timeout``'s shell's argument, no ``cat`` of it (one program a
    command less), unless longer than ``ARGUMENT_BYTES``, which still goes on stdin (Linux
    takes 128 KiB in one argument): both print what they run, quotes and ``exit`` too."""
    short = "printf '%s\\n' \"it's\"; exit 3"
    long = f"x={'y' * (ARGUMENT_BYTES + 10)}; printf '%s\\n' \"${{#x}}\"; exit 4"
    for inner, printed, code in ((short, "it's", 3), (long, str(ARGUMENT_BYTES + 10), 4)):
        script = capped(inner, 1_000, deadline=30, mark=mark)
        assert ("$(cat)" in script) is (inner is long)
        answer = subprocess.run(
            ["sh", "-c", script], capture_output=True, check=True, text=True
        ).stdout
        assert parse_capped(answer) == Captured(exit_code=code, output=f"{printed}\n", omitted=0)
