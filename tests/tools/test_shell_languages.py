"""Programs whose own language opens files: jq, sed and awk (issue 32, item 2).

A workspace holds ``credentials.json`` and ``.env`` with known secrets, a jq library, program
files for ``jq -f``/``awk -f``/``sed -f`` and plain data. Every attack runs through the real
bash tool on a LocalExecutor, bubblewrap on and off, and on the Daytona executor
(``shell_backends``), and must get its specific refusal: the
secrets never appear, no file is written, and the agent's environment does not leak. ``LEGIT``
programs (regexes and texts full of the letters w, e and r, jq object keys named import...)
still run and print what they should. A seeded differential test holds ``check_sed`` to real
GNU sed: whatever ``sed --sandbox`` refuses as an e/r/w command, the check refuses too, and
what sed runs, the check lets run; another holds ``check_jq`` to real jq: every random
program that makes jq look for a module is refused.
"""

from __future__ import annotations

import random
import shlex
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, daytona_pool, run_restricted

from rho_domain.errors import CommandRefused
from rho_domain.shell.jq import check_jq
from rho_domain.shell.options import Parsed
from rho_domain.shell.sed import check_sed

SECRETS = ("SEKRIT-CRED", "SEKRIT-ENV", "sk-SEKRIT-AGENT", "LIBRARY-LOADED")
_IMPORT = "'import' reads module or data files"
_SED_R = "the r command reads a file"
_SED_W = "the w command writes a file"
_SED_WFLAG = "the w flag of s writes a file"
_GETLINE = "'getline' runs commands or touches files"
_REDIRECT = "output redirection or pipe in print/printf"

ATTACKS: list[tuple[str, str]] = [
    # jq: module directives and file options
    ('jq -n \'import "credentials" as $c {search: "."}; $c\'', _IMPORT),
    ('jq -n \'import "credentials" as $c {search: [".", "/"]}; $c[0]\'', _IMPORT),
    ('jq -n \'include "lib" {search: "."}; f\'', "'include' reads module or data files"),
    ("jq -n '\"lib\" | modulemeta'", "'modulemeta' reads module or data files"),
    ('jq -n \'"\\(import "credentials" as $c; $c)"\'', _IMPORT),
    ('jq -n -- \'import "credentials" as $c {search: "."}; $c\'', _IMPORT),
    ('jq -n \'import "credentials" as $c {search: "."}; $c\' --args x', _IMPORT),
    ("jq -n '1 as $x | $x | import'", _IMPORT),
    ("jq -n '..import \"credentials\" as $c; 1'", _IMPORT),
    (
        'jq -n \'# note \\\nimport "credentials" as $c {search: "."}; $c\'',
        "a comment ending in a backslash",
    ),
    ("jq -f prog.jq data.json", "option '-f' is not allowed"),
    ("jq --from-file prog.jq data.json", "option '--from-file' is not allowed"),
    ("jq . -f prog.jq", "option '-f' is not allowed"),
    ("jq -nL. 'include \"lib\"; f'", "option '-L' is not allowed"),
    ("jq -L . -n 'include \"lib\"; f'", "option '-L' is not allowed"),
    ("jq --library-path . -n 1", "option '--library-path' is not allowed"),
    ("jq -n --argfile c credentials.json '$c'", "option '--argfile' is not allowed"),
    ("jq -n --rawfile c credentials.json '$c'", "jq: credentials.json may not be read"),
    ("jq -n --slurpfile c credentials.json '$c'", "jq: credentials.json may not be read"),
    ("jq -n 'input' credentials.json", "jq: credentials.json may not be read"),
    # sed: commands and flags that read, write or run
    ("sed -n '1r credentials.json' a.txt", _SED_R),
    ("sed -- '1r credentials.json' a.txt --sandbox", _SED_R),
    ("sed 'R credentials.json' a.txt", "the R command reads a file"),
    ("sed -e '1{r credentials.json' -e '}' a.txt", _SED_R),
    ("sed --expression='$r credentials.json' a.txt", _SED_R),
    ("sed 'y/a/b/;1R credentials.json' a.txt", "the R command reads a file"),
    ("sed -n '/x/I,+2 W out.txt' a.txt", "the W command writes a file"),
    ("sed -n 'w out.txt' a.txt", _SED_W),
    ("sed -- 'w out.txt' a.txt --sandbox", _SED_W),
    ("sed 'b x w out.txt' a.txt", _SED_W),
    ("sed -e 'a\\\\\\\\' -e 'w out.txt' a.txt", _SED_W),
    ("sed 's/a/b/w out.txt' a.txt", _SED_WFLAG),
    ("sed 's|a|b|w out.txt' a.txt", _SED_WFLAG),
    ("sed 's/a/b/ gw out.txt' a.txt", _SED_WFLAG),
    ("sed '1e cat credentials.json' a.txt", "the e command runs a shell command"),
    ("sed 's/.*/cat credentials.json/e' a.txt", "the e flag of s runs"),
    ("sed -f script.sed a.txt", "option '-f' is not allowed"),
    # awk: getline, pipes, redirections, program files, indirect ARGV
    ("awk '{getline line < \"credentials.json\"; print line}' a.txt", _GETLINE),
    ('awk \'BEGIN { f = "cred" "entials.json"; while ((getline l < f) > 0) print l }\'', _GETLINE),
    ("awk 'BEGIN{\"cat credentials.json\" | getline x; print x}'", _GETLINE),
    ("awk 'BEGIN{system(\"cat credentials.json\")}'", "'system' runs commands"),
    ("awk 'BEGIN{close(\"x\")}'", "'close' runs commands"),
    ('awk \'BEGIN{print "x" > "/dev/stderr"}\'', _REDIRECT),
    ('awk \'BEGIN{printf "cat credentials.json" | "sh"}\'', _REDIRECT),
    ("awk '{print > \"out.txt\"}' a.txt", _REDIRECT),
    ('awk \'BEGIN{print "id" |& "sh"}\'', "'|&' (two-way pipe"),
    ("awk -f prog.awk a.txt", "option '-f' is not allowed"),
    ("awk -i inplace '{print}' a.txt", "option '-i' is not allowed"),
    ("awk --include=x '{print}' a.txt", "option '--include=x' is not allowed"),
    ("awk -l filefuncs 'BEGIN{}'", "option '-l' is not allowed"),
    ("awk --load=filefuncs 'BEGIN{}'", "option '--load=filefuncs' is not allowed"),
    ("awk -E prog.awk a.txt", "option '-E' is not allowed"),
    ("awk --exec=prog.awk a.txt", "option '--exec=prog.awk' is not allowed"),
    ("awk -e 'BEGIN{system(\"id\")}'", "option '-e' is not allowed"),
    ("awk --source='BEGIN{}' a.txt", "option '--source=BEGIN{}' is not allowed"),
    ("awk --file=prog.awk a.txt", "option '--file=prog.awk' is not allowed"),
    ("awk '@include \"x\"; {print}' a.txt", "'@' (gawk directives"),
    ("awk '@load \"filefuncs\"; BEGIN{}'", "'@' (gawk directives"),
    (
        'awk \'BEGIN{SYMTAB["AR" "GV"][1]="credentials.json"; SYMTAB["AR" "GC"]=2}{print}\' a.txt',
        "'SYMTAB'",
    ),
    (
        'awk -- \'BEGIN{SYMTAB["AR" "GV"][1]="credentials.json";SYMTAB["AR" "GC"]=2}'
        "{print}' a.txt --sandbox",
        "'SYMTAB'",
    ),
    ("awk 'BEGIN{ARGV[1]=\"credentials.json\"; ARGC=2}{print}'", "ARGV/ARGC choose files"),
]

# Programs that run: (command, text the output must contain). None of them writes a file.
LEGIT: list[tuple[str, str]] = [
    ("jq .name data.json", '"widget"'),
    ("jq -r --arg k name '.[$k]' data.json", "widget"),
    ("jq -n '{import: 1, include: 2}'", '"import": 1'),
    ("jq -n '\"import \\(1 + 1) include\"'", '"import 2 include"'),
    ("jq '.import' data.json", '"yes"'),
    ("jq -n '$__loc__'", '"line": 1'),
    ("jq -n --args '$ARGS.positional' a b", '"b"'),
    ("jq -n 'env | keys'", '"PATH"'),
    ("jq -n '$ENV.HOME'", '"/dev/null"'),  # ~/.jq (loaded into every program) cannot exist
    ("jq -c . -- data.json", '{"name":"widget"'),
    ("sed -n 1,2p a.txt", "alpha/w"),
    ("sed s/e/E/g a.txt", "wEst"),
    ("sed /west/d a.txt", "alpha/w"),
    ("sed y/abc/xyz/ a.txt", "xlphx/w"),
    ("sed -n '/w/p;/e/p' a.txt", "west"),
    ("sed 's|w|r|g' a.txt", "rest"),
    ("sed 's/a\\/w/b/' a.txt", "alphb"),
    ("sed 's/[/]/X/' a.txt", "alphaXw"),
    ("sed -e 'a\\' -e 'w out.txt' a.txt", "w out.txt"),
    ("sed '1i\\header' a.txt", "header"),
    ("sed -n '$=' a.txt", "3"),
    ("sed ':a;N;$!ba;s/\\n/ /g' a.txt", "alpha/w west"),
    ("sed -E 's/(e|w)+/<&>/' a.txt", "<w>"),
    ("awk '{print $1}' a.txt", "west"),
    ("awk -F/ '{print $2}' a.txt", "w"),
    ("awk '{print ($1 > \"b\")}' a.txt", "1"),
    ("awk 'BEGIN{print ENVIRON[\"HOME\"]}'", "/dev/null"),
    ("awk '/e/ {n++} END {print n}' a.txt", "2"),
    ("awk 'BEGIN{for (k in ENVIRON) print k \"=\" ENVIRON[k]}'", "PATH="),
    ("jq -n env", '"PATH"'),
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("languages") / "ws"
    root.mkdir()
    files = {
        "credentials.json": '{"token": "SEKRIT-CRED"}',
        ".env": "API_KEY=SEKRIT-ENV",
        "lib.jq": 'def f: "LIBRARY-LOADED";',
        "prog.jq": 'import "credentials" as $c {search: "."}; $c',
        "prog.awk": '{ while ((getline l < "credentials.json") > 0) print l }',
        "script.sed": "r credentials.json",
        "data.json": '{"name": "widget", "import": "yes"}',
        "a.txt": "alpha/w\nwest\nexit",
    }
    for name, text in files.items():
        (root / name).write_text(text + "\n")
    return root


# The two families run on the module's event loop and, on Daytona, through one executor
# (``daytonas``): a new one per case paid a sandbox's creation and set-up scripts first. Each
# case still runs its own command with every check the executor makes per command.
daytonas = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


async def _run(ws: Path, command: str, *, backend: str, daytonas: DaytonaPool) -> str:
    return await run_restricted(str(ws), command, backend, daytonas)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("command", "refusal"), ATTACKS, ids=[c for c, _ in ATTACKS])
@pytest.mark.asyncio(loop_scope="module")
async def test_program_languages_open_no_file(
    ws: Path,
    command: str,
    refusal: str,
    backend: str,
    monkeypatch: pytest.MonkeyPatch,
    daytonas: DaytonaPool,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-SEKRIT-AGENT")
    output = await _run(ws, command, backend=backend, daytonas=daytonas)
    assert not [s for s in SECRETS if s in output], output
    assert output.startswith(("Command refused: ", "SensitivePath: ")), output
    assert refusal in output, output
    assert not (ws / "out.txt").exists()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("command", "expected"), LEGIT, ids=[c for c, _ in LEGIT])
@pytest.mark.asyncio(loop_scope="module")
async def test_programs_that_only_read_their_input_still_run(
    ws: Path,
    command: str,
    expected: str,
    backend: str,
    monkeypatch: pytest.MonkeyPatch,
    daytonas: DaytonaPool,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-SEKRIT-AGENT")
    output = await _run(ws, command, backend=backend, daytonas=daytonas)
    assert "[exit code 0" in output, output
    assert expected in output, output
    assert not [s for s in SECRETS if s in output], output
    assert not (ws / "out.txt").exists()


def test_jq_imports_really_read_files(ws: Path) -> None:
    """The attacks above are real: plain jq (1.6 here) loads the data file and the library."""
    done = subprocess.run(
        ["jq", "-n", 'import "credentials" as $c {search: "."}; $c'],
        cwd=ws,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "SEKRIT-CRED" in done.stdout
    done = subprocess.run(
        ["jq", "-n", "-L", "/nonexistent", 'include "lib" {search: "."}; f'],
        cwd=ws,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "LIBRARY-LOADED" in done.stdout  # -L does not stop a search in the metadata
    home = ws.parent / "home"
    home.mkdir(exist_ok=True)
    (home / ".jq").write_text('def length: "FROM-HOME";\n')
    done = subprocess.run(
        ["jq", "-n", "[1] | length"],
        env={"HOME": str(home)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert "FROM-HOME" in done.stdout  # ~/.jq is loaded into every program: HOME is /dev/null


# Pieces of sed scripts: commands, addresses, delimiters, texts and the letters that matter.
_PIECES = (
    "p", "d", "s/a/b/", "s/x/y/g", "s|a|b|w f", "s/a\\/w/b/", "s/[/]/x/", "s/[]w/]/x/", "w f",
    "r f", "R f", "W f", "e", "e id", "a foo", "a\\", "a\\\\", "i\\", "c text", "\n", ";", " ",
    "{", "}", "!", "1", "$", "/x/", "/w/", "\\,w,", "\\;x;", "I", "M", ",", "+2", "~3", "0~2",
    "b", "b x", ":x", "t", "T", "y/abc/xyz/", "y/w/e/", "#c", "l", "q", "Q 3", "=", "F", "z",
    "s/a/b/e", "s/a/b/ w f", "s/a/b/2p", "s/e/w/ ; p", "\\", "[", "]", "[:alpha:]", "[.", ".]",
    "/", "w", "r", "s", "y", "x", "h", "G", "N", "v", "\t", "s/a/\\\nw f/", "s e w e", "sxwxex",
)  # fmt: skip


def test_check_sed_reads_scripts_as_gnu_sed_does(tmp_path: Path) -> None:
    """400 random scripts (one or two -e each): sed --sandbox's e/r/w refusals are all
    refused by the check, and no script sed runs is refused."""
    rng = random.Random(32)
    missed, over, sandbox_refusals = [], [], 0
    for _ in range(400):
        scripts = [
            "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 5)))
            for _ in range(rng.randint(1, 2))
        ]
        args = [word for script in scripts for word in ("-e", script)]
        done = subprocess.run(
            ["sed", "--sandbox", "-n", *args],
            input="a\nw\nx\n",
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=False,
        )
        try:
            check_sed(Parsed(options=tuple(("e", s) for s in scripts), operands=()))
            refused = False
        except CommandRefused:
            refused = True
        if "disabled in sandbox mode" in done.stderr:
            sandbox_refusals += 1
            if not refused:
                missed.append(scripts)
        elif done.returncode == 0 and refused:
            over.append(scripts)
    assert missed == []
    assert over == []
    assert sandbox_refusals > 50  # the corpus really exercises the refused commands
    assert list(tmp_path.iterdir()) == []


_JQ_PIECES = (
    'import "m" as $m {search: "."};', 'import "m" as m {search: "."};', 'import "m" as $m;',
    'include "m" {search: "."};', "$m", "m::f", '"m" | modulemeta', '"x"', '"\\(', ")", '"',
    "#", "# c\\", "\n", ".", ".import", "$import", "import", "include", "modulemeta",
    "{import: 1}", "$__loc__", " ", "|", ";", "1", "(", "\\", '"\\\\"', " as $x | ",
    "def g: 1; ", "@sh ", "[", "]", "{", "}", ":", ",", ".[]", "?", "//", "..",
)  # fmt: skip


def _jq_looks_for_a_module(cwd: Path, program: str) -> bool:
    """Whether real jq, running ``program`` in ``cwd``, looked for or read a module there."""
    done = subprocess.run(
        ["jq", "-n", program], capture_output=True, text=True, cwd=cwd, check=False
    )
    return (
        any(mark in done.stderr for mark in ("module not found", "m.jq", "m.json"))
        or '"deps"' in done.stdout
    )


def test_check_jq_refuses_every_program_that_reaches_a_module(tmp_path: Path) -> None:
    """300 random programs (each distinct one once) next to a module whose every load fails
    loudly (``m.jq`` does not compile, ``m.json`` is not JSON): each program the check lets
    through runs in real jq, which must not have looked for or read a module. Refused ones
    run only until six are seen to reach a module (the corpus is not vacuous): a refusal
    needs no proof, and each jq costs 20 ms of CPU."""
    (tmp_path / "m.jq").write_text("def f: ;;\n")
    (tmp_path / "m.json").write_text("{bad\n")
    rng = random.Random(32)
    programs = dict.fromkeys(
        "".join(rng.choice(_JQ_PIECES) for _ in range(rng.randint(1, 7))) for _ in range(300)
    )
    missed, reached = [], 0
    for program in programs:
        try:
            check_jq(["-n", program])
        except CommandRefused:
            if reached <= 5:
                reached += _jq_looks_for_a_module(tmp_path, program)
            continue
        if _jq_looks_for_a_module(tmp_path, program):
            missed.append(program)
    assert missed == []
    assert reached > 5  # the corpus really reaches modules


_SED_ATTACKS = [c for c, _ in ATTACKS if c.startswith("sed ") and " -f " not in c]


@pytest.mark.parametrize("command", _SED_ATTACKS)
def test_every_refused_sed_script_is_one_gnu_sed_would_refuse(ws: Path, command: str) -> None:
    """Each sed script the check refuses is an e/r/w command for GNU sed itself: with
    --sandbox where sed reads options (first), sed refuses it too."""
    args = [a for a in shlex.split(command)[1:] if a != "--sandbox"]
    done = subprocess.run(
        ["sed", "--sandbox", *args], cwd=ws, capture_output=True, text=True, check=False
    )
    assert "e/r/w commands disabled in sandbox mode" in done.stderr, done.stderr
    assert not (ws / "out.txt").exists()
