"""``serve --max-runs``, ``serve --durable --concurrency`` and ``worker --concurrency`` take a
whole number from 1. ``serve --max-runs 0`` was refused naming $RHO_AGENT_SERVER_MAX_RUNS, a
variable nobody had set; ``serve --durable --concurrency 0`` (or -1, or 10**9) served, and
``worker --concurrency 0`` or ``-1`` consumed one run at a time, without a word. Each is now a
usage error (exit 1) naming the flag, before anything is bound or consumed."""

from __future__ import annotations

import pytest

from rho_entry.cli import worker
from rho_entry.server import serve


def _never(*_: object) -> object:
    raise AssertionError("the command went on past its flags")


@pytest.mark.parametrize("value", ["0", "-1", "x", "1.5"])
@pytest.mark.parametrize(
    "flags", [["--max-runs"], ["--max-streams"], ["--durable", "--concurrency"]]
)
def test_serve_refuses_a_count_below_one_naming_the_flag(
    value: str,
    flags: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RHO_AGENT_MODEL", "demo")
    monkeypatch.setattr("rho_entry.server.serve.listen", _never)
    assert serve.main(["--port=0", *flags[:-1], f"{flags[-1]}={value}"]) == 1
    err = capsys.readouterr().err
    assert f"argument {flags[-1]}: expected a whole number from 1, got {value!r}" in err
    assert "RHO_AGENT_SERVER_MAX_RUNS" not in err


@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_worker_refuses_a_concurrency_below_one(
    value: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("rho_entry.cli.worker._serve", _never)
    with pytest.raises(SystemExit) as stopped:
        worker.main(["--durable-db", "runs.sqlite", f"--concurrency={value}"])
    assert stopped.value.code == 1
    err = capsys.readouterr().err
    assert f"argument --concurrency: expected a whole number from 1, got {value!r}" in err


def test_a_count_from_one_is_taken() -> None:
    args = worker.build_parser().parse_args(["--durable-db", "runs.sqlite", "--concurrency=3"])
    assert args.concurrency == 3
