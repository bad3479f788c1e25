"""No git revision or path syntax reaches a blob whose path the secrets policy forbids (issue 32).

A real repository holds the history an attacker wants: ``.env`` and ``credentials.json``
committed with known secrets (``first x``), ``.env`` then renamed to ``cfg.txt`` with the secret
line stripped (``second``: the old blob is reachable only through history and renames),
``credentials.json`` removed from the tree (``third``: reachable only through history), tags
pointing straight at the secret blob, a secret copied into an ordinary file (``fourth``,
``fifth``) and a fresh untracked ``.env`` on disk. Every attack runs through the real bash tool
on a LocalExecutor, bubblewrap on and off, and on the Daytona executor (``shell_backends``):
the secret strings never appear, and where the harness refuses, the refusal is the specific
one. ``LEGIT`` history work still runs and shows non-secret content.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, daytona_pool, run_restricted

from rho_domain.shell.git_revs import revision_sides, split_rev_path

SECRETS = ("SEKRIT-ENV-1", "SEKRIT-CRED-2", "SEKRIT-DISK-3", "SEKRIT-COPY-4")
_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_GLOBAL": "/dev/null"}
_ID = ("-c", "user.name=t", "-c", "user.email=t@t")

_FOLLOW = "--follow is not allowed"
_LINE_LOG = "-L is not allowed"
_CRED = "credentials.json' is a secrets file"
_DOTENV = ".env' is a secrets file"
_BLOB = "is a file's content named by id"

# (command, the refusal it must get, or None when git runs and the secrets must stay out)
ATTACKS: list[tuple[str, str | None]] = [
    # the examples
    ("git log -L ':API*:.env'", _LINE_LOG),
    ("git show 't1^{/fir*st:*}:.env'", _DOTENV),
    ("git cat-file -p 'HEAD^{/x:*}:credentials.json'", _CRED),
    ("git log -p --follow -- .", _FOLLOW),
    ("git show --follow", _FOLLOW),
    ("git log -G 'SEKRIT-ENV' --oneline", None),
    # -L in other spellings, and through a rename
    ("git log -L1,1:cfg.txt", _LINE_LOG),
    ("git log -L 1,1:cfg.txt --oneline", _LINE_LOG),
    ("git log --oneline -L:API:cfg.txt", _LINE_LOG),
    ("git log --follow -p -- cfg.txt", _FOLLOW),
    ("git show --follow HEAD~1 -- cfg.txt", _FOLLOW),
    # revision syntax: braces, message searches, index stages, ranges, relative paths
    ("git show 'HEAD^{/x}:credentials.json'", _CRED),
    ("git show 'HEAD@{0}~4:credentials.json'", _CRED),
    ("git show 't1^{tree}:credentials.json'", _CRED),
    ("git cat-file blob 't1:credentials.json'", _CRED),
    ("git cat-file -p 't1:./credentials.json'", _CRED),
    ("git show 't1:src/../.env'", _DOTENV),
    ("cd src && git show 't1:../credentials.json'", _CRED),
    ("git show ':0:.env'", _DOTENV),
    ("git diff 't1:credentials.json..HEAD:a.txt'", _CRED),
    ("git diff 'HEAD:a.txt...t1:credentials.json'", _CRED),
    ("git diff HEAD:a.txt 't1:CREDENTIALS.JSON'", "is a secrets file"),
    ("git show ':/first'", None),
    ("git show ':/first' -- .env", _DOTENV),
    ("git log -p -- credentials.json", _CRED),
    ("git log -p --all -- '*.json'", None),
    ("git log -p -- ':(icase)CREDENTIALS.json'", "is a secrets file"),  # magic taken off
    ("git log -p -- ':(glob)**/credentials.*'", None),
    ("git show t1 -- ':(top)credentials.json'", _CRED),
    ("git blame t1 -- credentials.json", _CRED),
    ("git blame t1 credentials.json", _CRED),
    # blobs named by id, or by a tag that points at one
    ("git show blobtag", _BLOB),
    ("git cat-file -p blobtag", _BLOB),
    ("git show 'blobtag^{}'", _BLOB),
    ("git diff blobtag HEAD:a.txt", _BLOB),
    ("git diff blobtag..HEAD:a.txt", _BLOB),
    ("git show BLOB", _BLOB),
    ("git show '^BLOB'", _BLOB),
    ("git cat-file blob annblob", _BLOB),
    ("git show annblob", _BLOB),
    ("git grep -h SEKRIT blobtag", _BLOB),
    ("git grep -h -e SEK BLOB", _BLOB),
    ("git grep -c SEK annblob -- .", _BLOB),
    ("git grep --max-depth 3 -e SEK t1 blobtag", _BLOB),
    # ref formats that print the object a tag points at
    ("git tag -l --format='%(raw)' blobtag", "the raw atom"),
    ("git tag --list --format='x %(*raw:size) %(*raw)' annblob", "the raw atom"),
    ("git tag -l --sort=raw", "the raw atom"),
    ("git branch --format='%(raw)'", "the raw atom"),
    ("git tag -l --format='%(contents)%(*contents)%(subject)'", None),
    # walking history: the exclusion pathspecs keep every secret blob out
    ("git log -p", None),
    ("git log -p -M", None),
    ("git log -p -C --find-copies", None),
    ("git log -p --all --reverse", None),
    ("git log --unified=0 --word-diff", None),
    ("git show t3", None),  # it only removed credentials.json
    ("git log --stat -p --walk-reflogs", None),
    ("git show t2", None),
    ("git show t1 --color-words", None),
    ("git show t1 --word-diff=plain --no-prefix", None),
    ("git diff t1 HEAD", None),
    ("git diff -R t1", None),
    ("git show -C -C HEAD", None),  # copied from an unmodified secret
    ("git log -p --find-copies -C -C -1", None),
    ("git diff -C -C HEAD~1 HEAD", None),
    ("git diff t1 HEAD -M --find-copies", None),
    ("git diff 't1^{tree}' 'HEAD^{tree}'", "is a directory named by id"),  # 't1:' runs
    ("git diff 't1:' 'HEAD:'", None),
    ("git grep SEKRIT t1", None),
    ("git grep -e SEKRIT 't1:'", None),
    ("git grep -e SEK --no-index", None),
    ("git grep -e SEK --untracked", None),
    # content oracles: pickaxe over secret files answers nothing
    ("git log -S SEKRIT-CRED-2 --oneline", None),
    ("git log --pickaxe-regex -S 'SEK.*2' --format=%s", None),
    ("git log -G 'API_KEY=S' --format=%s --all", None),
    ("git log -G SEKRIT --name-only --format=%s", None),
    ("git log -G SEKRIT-COPY --format=%s", None),
    ("git log -p -S moved --pickaxe-all", None),  # the commit also deleted .env
    ("git log -p -G moved --pickaxe-all --pickaxe-regex -M", None),
    ("git diff --check t1 HEAD", None),
    ("git log --check -p", None),
]

# Commands whose output would answer a question about a secret file's content: it must not
# name the commits that added or removed the secret.
ORACLES = [c for c, _ in ATTACKS if " -G " in c or " -S " in c]

LEGIT: list[tuple[str, str]] = [
    ("git log -p -- src/app.py", "+def api():"),
    ("git log --oneline", "first x"),
    ("git log --oneline", "third"),
    ("git show t2", "second"),
    ("git show t1 --stat", "src/app.py"),
    ("git show t1:src/app.py", "return 1"),
    ("git cat-file -p HEAD:a.txt", "plain"),
    ("git diff HEAD~1 --stat", ""),
    ("git diff t1 HEAD", "+moved=1"),
    ("git log -p -M", "+moved=1"),
    ("git blame src/app.py", "def api():"),
    ("git blame -L 1,1 t1 -- src/app.py", "def api():"),
    ("git log -G 'return' --format=%s", "first x"),
    ("git log -S moved --format=%s", "second"),
    ("git grep -n api t1", "src/app.py"),
    ("git show ':/first' --stat", "src/app.py"),
    ("git show 'HEAD^{/fir*st}:src/app.py'", "return 1"),
    ("git log -p -1 -- a.txt", "+plain"),
    ("git log --format=%s -- cfg.txt", "second"),
    ("git show 't1:a.txt..HEAD:a.txt'", ""),
    ("git grep -e api HEAD t1", "src/app.py"),
    ("git tag -l --format='%(refname:short) %(objecttype)'", "blobtag blob"),
]


# The async tests share one event loop per module (`loop_scope="module"`): a loop per test,
# with the new thread its executor starts for the command's checks, cost about 1 ms of CPU per
# case. Each test still runs its own command and waits for it to end: locally in a new
# executor, on Daytona in the module's one (``daytonas``), as a session's commands run.
daytonas = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


def _git(ws: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *_ID, *args], cwd=ws, env=_ENV, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    ws = tmp_path_factory.mktemp("gitsecrets") / "ws"
    (ws / "src").mkdir(parents=True)
    padding = "".join(f"SETTING_{i}=value {i}\n" for i in range(12))
    (ws / ".env").write_text(f"API_KEY=SEKRIT-ENV-1\n{padding}")
    (ws / "credentials.json").write_text('{"token": "SEKRIT-CRED-2"}\n')
    (ws / "src" / "app.py").write_text("def api():\n    return 1\n")
    (ws / "a.txt").write_text("plain\n")
    _git(ws, "init", "-q")
    _git(ws, "add", "-f", ".env", "credentials.json", "src/app.py", "a.txt")
    _git(ws, "commit", "-qm", "first x")
    _git(ws, "tag", "t1")
    blob = _git(ws, "rev-parse", "HEAD:credentials.json")
    _git(ws, "mv", ".env", "cfg.txt")
    (ws / "cfg.txt").write_text(f"API_KEY=\n{padding}moved=1\n")
    _git(ws, "add", "cfg.txt")
    _git(ws, "commit", "-qm", "second")
    _git(ws, "tag", "t2")
    _git(ws, "rm", "-q", "credentials.json")
    _git(ws, "commit", "-qm", "third")
    _git(ws, "tag", "t3")
    _git(ws, "tag", "blobtag", blob)
    _git(ws, "tag", "-a", "-m", "a key", "annblob", blob)
    lines = "".join(f"line {i}\n" for i in range(20))
    (ws / "deploy").mkdir()
    (ws / "deploy" / "prod.env").write_text(f"TOKEN=SEKRIT-COPY-4\n{lines}")
    _git(ws, "add", "-f", "deploy/prod.env")
    _git(ws, "commit", "-qm", "fourth")
    (ws / "deploy" / "copy.txt").write_text(f"TOKEN=none\n{lines}")
    _git(ws, "add", "deploy/copy.txt")
    _git(ws, "commit", "-qm", "fifth")
    assert "SEKRIT-COPY-4" in _git(ws, "show", "-C", "-C", "HEAD")  # a real copy source
    (ws / ".env").write_text("API_KEY=SEKRIT-DISK-3\n")  # untracked, on disk only
    assert "SEKRIT-ENV-1" in _git(ws, "log", "-p", "--follow", "--", "cfg.txt")  # real history
    return {"ws": str(ws), "blob": blob}


async def _run(repo: dict[str, str], command: str, *, backend: str, daytonas: DaytonaPool) -> str:
    command = command.replace("BLOB", repo["blob"])
    return await run_restricted(repo["ws"], command, backend, daytonas)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("command", "refusal"), ATTACKS, ids=[c for c, _ in ATTACKS])
@pytest.mark.asyncio(loop_scope="module")
async def test_no_syntax_reaches_a_secret_blob(
    repo: dict[str, str], command: str, refusal: str | None, backend: str, daytonas: DaytonaPool
) -> None:
    output = await _run(repo, command, backend=backend, daytonas=daytonas)
    assert not [s for s in SECRETS if s in output], output
    if refusal is None:
        assert "[exit code" in output, output  # git ran (and printed no secret)
    else:
        assert output.startswith(("Command refused: ", "SensitivePath: ")), output
        assert refusal in output, output


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("command", ORACLES)
@pytest.mark.asyncio(loop_scope="module")
async def test_pickaxe_answers_nothing_about_secret_files(
    repo: dict[str, str], command: str, backend: str, daytonas: DaytonaPool
) -> None:
    output = await _run(repo, command, backend=backend, daytonas=daytonas)
    # the commits that added a secret are not named
    assert "first x" not in output, output
    assert "fourth" not in output, output


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("command", "expected"), LEGIT, ids=[f"{c}-{e}" for c, e in LEGIT])
@pytest.mark.asyncio(loop_scope="module")
async def test_history_work_still_runs(
    repo: dict[str, str], command: str, expected: str, backend: str, daytonas: DaytonaPool
) -> None:
    output = await _run(repo, command, backend=backend, daytonas=daytonas)
    assert "refused" not in output.lower(), output
    assert "[exit code 0" in output, output
    assert expected in output, output
    assert not [s for s in SECRETS if s in output], output


@pytest.mark.parametrize(
    "word",
    [
        "t1^{/fir*st:*}:.env",
        "HEAD^{/x}:credentials.json",
        "HEAD@{0}~4:credentials.json",
        "t1^{tree}:src/app.py",
        ":0:src/app.py",
        ":src/app.py",
        "HEAD:a.txt",
    ],
)
def test_split_rev_path_reads_the_word_as_git_does(repo: dict[str, str], word: str) -> None:
    rev, path = split_rev_path(word)
    assert path is not None
    ws = Path(repo["ws"])
    whole = _git(ws, "rev-parse", "--verify", word)
    if rev.startswith(":"):
        assert whole == _git(ws, "rev-parse", "--verify", f":{path}")
    else:
        tree = _git(ws, "rev-parse", "--verify", f"{rev}^{{tree}}")
        assert whole == _git(ws, "rev-parse", "--verify", f"{tree}:{path}")


def test_message_searches_and_ranges_name_no_path_of_their_own() -> None:
    assert split_rev_path(":/first:.env") == (":/first:.env", None)  # one message regex
    assert revision_sides("A:x..B:y") == ("A:x..B:y", "A:x", "B:y")
    assert revision_sides("^C^@") == ("C",)
