"""``rho-agent eval``: run benchmarks.

::

    rho-agent eval bird --data DIR [--split dev] [--difficulty D] [--offset N] [-n/--limit N]
                        [--workers K] [--model M] [--service-tier T]
                        [--out FILE] [--timeout S] [--max-turns N]
                        [--no-evidence] [-s/--system-prompt FILE|TEXT]
                        [--durable [--durable-db URL] [--dead-after S]]
    rho-agent eval sample-data DIR

``bird`` prints one line per graded question on stderr and the summary table on stdout;
results go to ``--out`` (JSONL, default ``bird-<split>-results.jsonl``). Running the same
command again continues where an interrupted run stopped. Exit codes: 0 every selected
question is graded; 1 bad data, flags or settings; 2 some questions were not graded because
the endpoint failed (run again); 130 interrupted (run again to continue).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from rho_domain.errors import RhoError
from rho_domain.evals.bird import DIFFICULTIES
from rho_entry.cli import exit_codes
from rho_entry.cli.terminal_text import visible
from rho_entry.usage import UsageParser, parsed, seconds


def build_parser() -> argparse.ArgumentParser:
    """The ``rho-agent eval`` parser."""
    parser = UsageParser(prog="rho-agent eval", description="Run benchmarks.")
    commands = parser.add_subparsers(dest="benchmark", required=True)
    bird = commands.add_parser(
        "bird",
        help="BIRD-Bench text-to-SQL, graded by execution accuracy",
        description="Run BIRD questions, one readonly session each, graded as BIRD does.",
    )
    bird.add_argument("--data", required=True, metavar="DIR", help="folder of the split")
    bird.add_argument("--split", default="dev", help="dev (default) or train")
    bird.add_argument("-n", "--limit", type=int, metavar="N", help="only the first N questions")
    bird.add_argument(
        "--offset", type=int, default=0, metavar="N", help="skip the first N questions (0)"
    )
    bird.add_argument(
        "--difficulty", choices=DIFFICULTIES, help="only the questions of this difficulty"
    )
    bird.add_argument("--workers", type=int, default=1, metavar="K", help="sessions at once")
    bird.add_argument(
        "--store", metavar="URL", help="where the sessions are kept (as rho-agent --store)"
    )
    bird.add_argument("--out", metavar="FILE", help="results JSONL (appended; resumable)")
    bird.add_argument(
        "--timeout", type=float, default=30.0, metavar="S", help="per graded query (30)"
    )
    bird.add_argument("--max-turns", type=int, metavar="N", help="model calls per question")
    bird.add_argument(
        "--no-evidence",
        action="store_true",
        help="leave each question's evidence (external knowledge) out of its prompt "
        "(default --out: bird-<split>-no-evidence-results.jsonl)",
    )
    bird.add_argument(
        "-s",
        "--system-prompt",
        metavar="FILE|TEXT",
        help="the sessions' system prompt: a .md template (its body; variables from its "
        "front matter's defaults) or text",
    )
    bird.add_argument(
        "--durable",
        action="store_true",
        help="run the questions as durable runs on --workers worker processes (extra dbos): "
        "a killed worker's questions continue on another, each graded once",
    )
    bird.add_argument(
        "--durable-db",
        metavar="URL",
        help="the durable runs' database (default: <out>.durable.sqlite beside --out)",
    )
    bird.add_argument(
        "--dead-after",
        type=seconds,
        default=5.0,
        metavar="S",
        help="with --durable: a worker silent this long is dead and its questions continue on "
        "another (seconds, default 5; the workers beat every quarter of it, at most 1 s)",
    )
    bird.add_argument("-m", "--model", help="model id")
    bird.add_argument("--base-url", help="OpenAI-compatible endpoint")
    bird.add_argument("--provider", help="kind of server (see rho-agent --help)")
    bird.add_argument("--api-key-env", metavar="VAR", help="read the API key from VAR")
    bird.add_argument("--reasoning-effort", metavar="LEVEL", help="e.g. low, medium, high")
    bird.add_argument("--service-tier", metavar="TIER", help="e.g. flex, priority")
    sample = commands.add_parser(
        "sample-data", help="write the small sample dataset in BIRD's layout"
    )
    sample.add_argument("dir", help="where to write it")
    return parser


def main(argv: Sequence[str]) -> int:
    """Run ``rho-agent eval``; return the exit code."""
    args = parsed(build_parser(), argv)
    if isinstance(args, int):
        return args
    try:
        if args.benchmark == "sample-data":
            from rho_entry.evals.sample_data import write_sample

            root = write_sample(Path(args.dir))
            sys.stderr.write(f"sample BIRD dataset written to {root} (24 questions)\n")
            return exit_codes.OK
        return _bird(args)
    except RhoError as exc:
        sys.stderr.write(f"rho-agent eval: {visible(str(exc))}\n")
        return exit_codes.USAGE


def _bird(args: argparse.Namespace) -> int:
    from rho_domain.errors import ConfigError

    for flag, value in (("--workers", args.workers), ("--limit", args.limit)):
        if value is not None and value < 1:
            raise ConfigError(f"{flag} must be at least 1, got {value}")
    if args.offset < 0:
        raise ConfigError(f"--offset must be 0 or more, got {args.offset}")
    if not math.isfinite(args.timeout) or args.timeout <= 0:  # nan or inf: no deadline at all
        raise ConfigError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    from rho_entry.cli.eval_console import run_from_cli

    # SIGTERM and SIGHUP (the terminal closed) killed the eval where it stood: the question
    # in flight unended in its trace, a durable run's workers left consuming, no word of how
    # to continue. They now end it as Ctrl+C does, as main's do before a run listens (left
    # alone when ignored: nohup; the process's handlers put back after).
    main_thread = threading.current_thread() is threading.main_thread()
    saved = {signum: signal.getsignal(signum) for signum in exit_codes.ending_signals()}
    for signum, handler in saved.items():
        if main_thread and handler is signal.SIG_DFL:
            signal.signal(signum, _interrupt)
    try:
        return asyncio.run(run_from_cli(args))
    except KeyboardInterrupt:
        from rho_entry.cli.eval_console import results_path

        out = results_path(args)
        sys.stderr.write(
            f"rho-agent eval: interrupted; the graded questions are in {out}. "
            "Run the same command to continue.\n"
        )
        return exit_codes.cancelled()
    finally:
        if main_thread:
            for signum, handler in saved.items():
                if handler is not None:  # None: set outside Python, cannot be put back
                    signal.signal(signum, handler)


def _interrupt(signum: int, frame: object) -> None:
    exit_codes.heard(signum)  # exits 128 + signum
    raise KeyboardInterrupt
