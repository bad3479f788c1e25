"""The text files a user gives rho-agent, read the one way (``yaml_text.read_config_text``): a
file that is not UTF-8 is a usage error naming the file and the byte, never an internal
error; a UTF-8 byte order mark (what some Windows editors put first) is not part of the text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import rho

LATIN1 = "model: caf\xe9\n".encode("latin-1")  # byte 0xe9 at offset 10


def _place(where: str, tmp_path: Path, data: bytes) -> tuple[list[str], dict[str, str], Path]:
    """The arguments and environment that make rho-agent read ``data`` as ``where``'s file."""
    home = tmp_path / "rho"
    home.mkdir(exist_ok=True)
    named = {
        "--config": ("cfg.yaml", ["--config", "cfg.yaml"]),
        "--profile": ("ops.yaml", ["--profile", "./ops.yaml"]),
        "--mcp-config": ("mcp.yaml", ["--mcp-config", "mcp.yaml"]),
        "--system-prompt": ("system.md", ["-s", "system.md"]),
        "--prompt": ("task.md", ["-p", "task.md"]),
        "--vars-file": ("vars.yaml", ["--vars-file", "vars.yaml"]),
    }
    if where in named:
        name, args = named[where]
        path = tmp_path / name
        path.write_bytes(data)
        return args, {}, path
    if where == "RHO_AGENT_DB_CONFIG":
        path = tmp_path / "dbs.yaml"
        path.write_bytes(data)
        return [], {"RHO_AGENT_DB_CONFIG": str(path)}, path
    path = home / where  # a file of the config directory
    path.write_bytes(data)
    return [], {}, path


PLACES = [
    "--config",
    "--profile",
    "--mcp-config",
    "--system-prompt",
    "--prompt",
    "--vars-file",
    "RHO_AGENT_DB_CONFIG",
    "databases.yaml",
    "default.md",
]


@pytest.mark.parametrize("where", PLACES)
def test_a_file_that_is_not_utf8_is_a_usage_error_naming_it(where: str, tmp_path: Path) -> None:
    args, env, path = _place(where, tmp_path, LATIN1)
    task = [] if where == "--prompt" else ["hi"]
    result = rho("-m", "demo", "-q", *args, *task, cwd=tmp_path, home=tmp_path, **env)
    assert result.returncode == 1, result
    assert "internal error" not in result.stderr
    assert path.name in result.stderr
    assert "not UTF-8 text (byte 0xe9 at offset 10)" in result.stderr
    assert result.stdout == ""


def test_a_price_file_that_is_not_utf8_names_it(tmp_path: Path) -> None:
    from rho_domain.errors import ConfigError
    from rho_entry.config.prices import read_prices

    path = tmp_path / "prices.yaml"
    path.write_bytes(b"version: 1\nmodels: {}\n# \xff\n")
    with pytest.raises(ConfigError, match=r"prices\.yaml: cannot read the price table: .*0xff"):
        read_prices(path)


BOM = b"\xef\xbb\xbf"


def test_a_template_with_a_byte_order_mark_keeps_its_frontmatter(tmp_path: Path) -> None:
    """The mark hid the frontmatter: the task sent was the whole file, ``---`` and all."""
    template = (
        "---\ndescription: a greeting\nvars:\n  name: {default: Ada}\n---\ngreet {{ name }}\n"
    )
    (tmp_path / "task.md").write_bytes(BOM + template.encode())
    result = rho("-m", "demo", "-q", "-p", "task.md", cwd=tmp_path, home=tmp_path)
    assert result.returncode == 0, result
    (trace,) = (tmp_path / "rho" / "sessions").glob("*/trace.jsonl")
    users = [
        event["message"]["content"]
        for event in map(json.loads, trace.read_text().splitlines())
        if event["kind"] == "message" and event["message"]["role"] == "user"
    ]
    assert users == ["greet Ada"]


def test_a_config_with_a_byte_order_mark_reads_as_without(tmp_path: Path) -> None:
    from rho_entry.config.config_files import load_agent_config

    (tmp_path / "cfg.yaml").write_bytes(BOM + b"max_turns: 3\n")
    assert load_agent_config(tmp_path / "cfg.yaml").max_turns == 3


def test_an_input_that_never_ends_is_refused_not_read_until_memory_runs_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: ``--config /dev/zero`` (any file the user names: a template, a vars file, an
    answer schema) and a task piped from a stream that never ends (``yes | rho-agent``) were
    read whole, until the process died on "internal error: MemoryError"."""
    import io

    from rho_domain.errors import ConfigError
    from rho_entry.cli.launch_files import load_schema
    from rho_entry.cli.stdin_task import task_from_stdin
    from rho_entry.config.yaml_text import MAX_INPUT_BYTES, read_config_text

    endless = "/dev/zero"
    with pytest.raises(ConfigError, match=r"^--config /dev/zero: cannot read a config: it holds"):
        read_config_text(endless, where="--config /dev/zero", what="a config")
    with pytest.raises(ConfigError, match=r"^--output-schema /dev/zero: .* more than 16 MiB"):
        load_schema(endless)
    exact = tmp_path / "exact.yaml"
    exact.write_bytes(b"#" * MAX_INPUT_BYTES)  # the most is still read
    assert len(read_config_text(exact, where="x", what="y")) == MAX_INPUT_BYTES

    class Endless(io.TextIOBase):
        def read(self, size: int | None = -1) -> str:
            assert size is not None  # never "all of it"
            assert size > 0
            return "y\n" * (size // 2 + 1)

    monkeypatch.setattr("sys.stdin", Endless())
    with pytest.raises(ConfigError, match=r"^the task on standard input holds more than 16 Mi"):
        task_from_stdin()
