"""Every code block of README.md, architecture.md and docs/*.md is run, by its language.

Python runs in a process of its own, bash commands run the ``rho-agent`` this venv puts on
PATH (each in a process forked from one that imported the library or the CLI: ``docs_zygote``,
``docs_cli_zygote``; a program written with the MCP SDK, and the shell's ``python SCRIPT``,
from ``program_zygote``'s ``mcp``), both against one loopback OpenAI-compatible server, in a
temporary workspace and config home; YAML goes through the loader it documents, Markdown through the
template renderer, SQL through the dialect's lexer and classifier, text diagrams are checked
against src/. A block in a language with no runner fails, and so does a NOT_RUN entry that no
document contains.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from docs_blocks import ROOT, Block, all_blocks, blocks, command_lines, doc_files, readme_activation
from docs_env import DocsEnv, fresh_path
from docs_runners import EXPECTED_EXIT, EXPECTED_LAST_LINE, NOT_RUN, bare, runner_for

from rho_domain.errors import RhoError

BLOCKS = all_blocks()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocsEnv]:
    docs_env = DocsEnv(tmp_path_factory.mktemp("docs"))
    try:
        yield docs_env
    finally:
        docs_env.close()


@pytest.mark.parametrize("block", BLOCKS, ids=[f"{b.where}-{b.lang}" for b in BLOCKS])
def test_block(block: Block, env: DocsEnv) -> None:
    env.fresh_config_home(f"{block.doc.stem}-{block.line}")
    runner_for(block)(block, env)


def test_the_documents_have_blocks_of_each_kind() -> None:
    langs = {b.lang for b in BLOCKS}
    assert {"python", "bash", "yaml", "markdown", "sql", "text"} <= langs
    assert any(b.doc.name == "extending.md" for b in BLOCKS)


def test_every_command_named_in_the_runners_is_in_a_document() -> None:
    lines = {bare(line) for b in BLOCKS if b.lang == "bash" for line in command_lines(b)}
    for table in (NOT_RUN, EXPECTED_EXIT, EXPECTED_LAST_LINE):
        assert set(table) <= lines, set(table) - lines


# curl's -f/--fail: an HTTP error ends it silently (exit 22), without the body
_CURL_FAIL = re.compile(r"(?<!\S)(?:-[a-zA-Z]*f[a-zA-Z]*|--fail)(?!\S)")


def test_a_documented_curl_shows_the_servers_error() -> None:
    """The README's curl was ``curl -sfN``: with the token missing or wrong (another
    ``RHO_AGENT_HOME``, a server started again) it printed nothing and exited 22, and the
    401's message saying where the token is was never shown. ``--fail-with-body`` shows it."""
    lines = [line for b in BLOCKS if b.lang == "bash" for line in command_lines(b)]
    curls = [line for line in lines if re.search(r"(?<!\S)curl\s", line)]
    assert curls
    assert [line for line in curls if _CURL_FAIL.search(line.split(" -H ")[0])] == []


def test_the_readme_puts_rho_agent_on_path_for_a_fresh_shell(env: DocsEnv) -> None:
    """Every block after the first types ``rho-agent``: the first command must leave the
    reader's shell able to (the blocks run with the PATH it leaves, nothing more)."""
    assert readme_activation() is not None, (
        "README.md's first command installs into .venv but does not activate it: add "
        "`. .venv/bin/activate` to it"
    )
    where = ["bash", "-c", "command -v rho-agent"]
    before = subprocess.run(where, env={"PATH": fresh_path()}, capture_output=True, check=False)
    assert before.returncode == 1, before.stdout  # a fresh shell has none
    after = env.run(where)
    assert after.returncode == 0, after.stderr
    assert Path(after.stdout.strip()).resolve() == (Path(sys.prefix) / "bin/rho-agent").resolve()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "in a new shell" in readme  # and it says what to do when the reader comes back


def test_the_readers_python_runs_a_script_as_the_venvs_does(env: DocsEnv) -> None:
    """docs/mcp.md's server is ``python tickets_server.py`` on the reader's PATH; the docs'
    shell forks it from the Python that has imported the MCP SDK (``DocsEnv.bin``). That
    ``python`` runs a script as the venv's interpreter does (argv, directory, stdin, output,
    status) and anything else as the interpreter itself."""
    assert env.bin is not None, "the docs' shell has no python of this venv"
    script = "import os, sys\nprint(sys.argv, os.getcwd(), sys.stdin.read(), sys.path[0])\n"
    (env.workspace / "shows.py").write_text(script + "sys.exit(3)\n", encoding="utf-8")
    shim = env.run(["bash", "-c", "command -v python && python shows.py a 'b c'"], stdin="in")
    real = env.run([sys.executable, "shows.py", "a", "b c"], stdin="in")
    found, _, shown = shim.stdout.partition("\n")
    assert found == str(env.bin / "python")
    said = f"['shows.py', 'a', 'b c'] {env.workspace} in {env.workspace}\n"
    assert (real.returncode, real.stdout, real.stderr) == (3, said, "")
    assert (shim.returncode, shown, shim.stderr) == (3, said, "")
    itself = env.run(["bash", "-c", "python -c 'import sys; print(sys.executable)'"])
    assert itself.stdout.strip() == sys.executable


# Markdown files the docs name as examples of a user's own files, not as documents to read.
USER_FILES = {"default.md", "review.md", "task.md"}


# Where a document or an error names an extra: `pip install 'rho-agent[postgres]'`,
# `'.[dbos]'`, "the `otel` extra", "extra `dbos`", "`[mysql]` (PyMySQL)", and
# missing_extra("psycopg", "postgres", ...) (or MissingExtra(...)).
_EXTRA_NAMED = re.compile(
    r"rho-agent\[([\w,-]+)\]|'\.\[([\w,-]+)\]'|the `([\w-]+)` extra|\bextra `([\w-]+)`"
    r"|`\[([\w-]+)\]` \(|(?:MissingExtra|missing_extra)\(\s*\"[^\"]+\",\s*\"([\w-]+)\""
)


def extras_named(text: str) -> set[str]:
    """Every extra ``text`` names in one of the ways of ``_EXTRA_NAMED``."""
    marks = ("xtra", "rho-agent[", ".[", "`[")  # lines without one cannot match: skipped
    lines = "\n".join(line for line in text.splitlines() if any(m in line for m in marks))
    groups = (g for match in _EXTRA_NAMED.findall(lines) for g in match if g)
    return {name for group in groups for name in group.split(",")}


def test_every_extra_the_documents_and_the_errors_name_is_declared() -> None:
    """A newcomer types the extra a document or a missing driver's error names: each is one
    pyproject.toml declares (a renamed extra would make `pip install` warn and install
    nothing, and the error repeat)."""
    import tomllib

    declared = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    )
    sources = [*doc_files(), *(ROOT / "src").rglob("*.py")]
    named = {path: extras_named(path.read_text(encoding="utf-8")) for path in sources}
    assert {"postgres", "server", "excel", "dbos"} <= set().union(*named.values())  # it reads them
    for path, names in named.items():
        assert names <= declared, (
            f"{path.relative_to(ROOT)} names extras {sorted(names - declared)}"
        )
    assert extras_named("pip install 'rho-agent[postgress]'") == {
        "postgress"
    }  # what it would catch


def test_the_documents_cite_only_what_the_repository_holds() -> None:
    """No "see protocols.md §7": a cited document exists here, and nothing cites sections.
    The docstrings and comments of the code and the tests are held to the same rule."""
    root = Path(__file__).resolve().parents[2]
    code = [
        path
        for folder in ("src", "tests", "bench", "scripts")
        for path in sorted((root / folder).rglob("*.py"))
        if path != Path(__file__).resolve()
    ]
    for path in code:
        text = path.read_text(encoding="utf-8")
        assert "§" not in text, f"{path.relative_to(root)} cites a section of a document"
        for name in ("protocols.md", "security-notes.md", "anchor-rho-agent.md", "seeds/"):
            assert name not in text, f"{path.relative_to(root)} cites {name}, not in the repository"
    for doc in doc_files():
        text = doc.read_text(encoding="utf-8")
        assert "§" not in text, f"{doc.name} cites a section of a document"
        for name in set(re.findall(r"[\w./-]+\.md\b", text)):
            here = [root / name, doc.parent / name]
            assert Path(name).name in USER_FILES or any(p.is_file() for p in here), (
                f"{doc.name} cites {name}, which is not in the repository"
            )


# -- the docs test fails when the docs are wrong -----------------------------------------------


def _block(lang: str, text: str, *, caption: str = "") -> Block:
    doc = Path(__file__).resolve().parents[2] / "README.md"
    return Block(doc, 1, lang, {}, (), text, "Use it as a library", caption)


@pytest.mark.parametrize(
    ("lang", "text", "caption"),
    [
        ("bash", 'rho-agent --no-such-flag "hi"\n', ""),
        ("bash", "rho-agent monitor pause ID\n", ""),
        ("bash", "pip install -e '.[postgress]'\n", ""),
        ("bash", "bash scripts/no-such-script.sh\n", ""),
        ("python", "from rho_entry import Agent, Session\nagent.run()\n", ""),
        ("python", "print('error: the run failed')\n", ""),
        # the exit status and stdout are the block's own (it runs in a forked child)
        ("python", "print('completed')\nraise SystemExit(3)\n", ""),
        ("python", "import sys\nprint('completed', file=sys.stderr)\n", ""),
        # the dev venv has the SDK; a reader of README.md, which never installs it, does not
        # (each prints what the heading's block must, so only the import check refuses it)
        ("python", "from opentelemetry.sdk.trace import TracerProvider\nprint('completed')\n", ""),
        ("python", "import hypothesis\nprint('completed')\n", ""),
        ("yaml", "shell: restricted\nfile_writes: off\n", ""),
        ("yaml", "model: gpt-5-mini\nmax_turn: 3\n", ""),
        ("markdown", "---\nvars:\n  a: {required: true}\n---\n{{ a }} {{ b }}\n", ""),
        ("sql", "CREATE ROLE x LOGIN PASSWORD 'open;\n", "PostgreSQL:"),
        ("sql", "CREATE ROLE x;\n", "PostgreSQL (`docs/sql/no-such-role.sql`):"),
        ("sql", "SELECT 1;\n", "Oracle:"),
        ("text", "tools/no_such_module.py\n", ""),
        ("rust", "fn main() {}\n", ""),
    ],
)
def test_a_wrong_block_fails(lang: str, text: str, caption: str, env: DocsEnv) -> None:
    block = _block(lang, text, caption=caption)
    with pytest.raises((AssertionError, RhoError)):
        runner_for(block)(block, env)


def test_blocks_are_read_with_their_language_and_caption(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text('# Title\n\nPostgreSQL:\n\n```yaml title="ops.yaml"\na: 1\n```\n\n```\nx\n```\n')
    first, second = blocks(doc)
    assert (first.lang, first.options, first.caption, first.heading) == (
        "yaml",
        {"title": "ops.yaml"},
        "PostgreSQL:",
        "Title",
    )
    assert (first.line, first.text, second.lang) == (5, "a: 1\n", "")
