"""What ``rho-agent eval bird`` does between parsing and exiting: settings, store, progress
lines on stderr, the summary on stdout."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import attrs

from rho_domain.evals.accuracy import QuestionResult, format_summary, summarize
from rho_entry.cli import exit_codes
from rho_entry.cli.terminal_text import visible


async def run_from_cli(args: argparse.Namespace) -> int:
    """Load the data, run it with the CLI's model settings, print; return the exit code."""
    from rho_domain.evals.bird import select_questions
    from rho_entry.config.home import config_dir
    from rho_entry.config.settings import check_endpoint, environment, resolve_settings
    from rho_entry.config.stores import choose_store, store_setting
    from rho_entry.evals.bird_data import load_bird
    from rho_entry.evals.bird_run import run_bird

    env = environment()
    url, origin = store_setting(args.store, env)
    flags = {
        "model": args.model,
        "base_url": args.base_url,
        "provider": args.provider,
        "api_key_env": args.api_key_env,
        "reasoning_effort": args.reasoning_effort,
        "service_tier": args.service_tier,
        "max_turns": args.max_turns,
        "profile": "readonly",
    }
    settings = resolve_settings(flags, env)
    check_endpoint(settings, env)
    dataset = load_bird(Path(args.data), split=args.split)
    # --difficulty and --offset choose among the questions; --limit counts from there
    selected = select_questions(dataset.questions, difficulty=args.difficulty, offset=args.offset)
    dataset = attrs.evolve(dataset, questions=selected)
    for problem in dataset.problems:
        sys.stderr.write(f"rho-agent eval: skipped {visible(str(problem))}\n")
    out = results_path(args)
    counter = _Progress()
    config = attrs.evolve(settings.config, auto_approve=False)
    if args.system_prompt is not None:
        config = attrs.evolve(config, system_prompt=system_prompt_text(args.system_prompt))
    # one empty directory for every eval session, kept (a resumed session runs in it),
    # not left in the directory the command ran in
    workspace = config_dir(env) / "evals" / "workspace"
    if args.durable:
        from rho_entry.cli.eval_durable import run_durable

        run = await run_durable(args, dataset, out, config, workspace, counter)
    else:
        chosen = choose_store(url, env, origin=origin)
        try:
            run = await run_bird(
                dataset,
                out,
                config=config,
                workers=args.workers,
                limit=args.limit,
                timeout=args.timeout,
                store=chosen.store,
                on_result=counter,
                workspace=workspace,
                evidence=not args.no_evidence,
            )
        finally:  # an error's and Ctrl+C's too: a PostgreSQL store's share of the pool
            await chosen.aclose()
    if run.skipped:
        sys.stderr.write(f"{run.skipped} question(s) were already graded in {out}\n")
    for question_id, why in run.not_graded:
        sys.stderr.write(f"question {question_id} not graded (endpoint failed: {visible(why)})\n")
    sys.stdout.write(format_summary(summarize(run.results)) + "\n")
    sys.stderr.write(f"results: {out}\n")
    return exit_codes.MODEL if run.not_graded else exit_codes.OK


def results_path(args: argparse.Namespace) -> Path:
    """``--out``, else ``bird-<split>-results.jsonl`` (``-no-evidence-`` before ``results``
    with ``--no-evidence``: a run without evidence never continues one with it)."""
    if args.out:
        return Path(args.out)
    setting = "-no-evidence" if args.no_evidence else ""
    return Path(f"bird-{args.split}{setting}-results.jsonl")


def system_prompt_text(given: str) -> str:
    """``--system-prompt``'s prompt, read once: a template file's body rendered with its own
    defaults (the reference used the body and ignored variables), or the text as given. A
    file that cannot be read, or a variable without a default, is a ``ConfigError`` naming
    it (the reference fell back to its default prompt without a word)."""
    from rho_domain.errors import ConfigError
    from rho_entry.cli import launch_files as files
    from rho_entry.config.home import expanded
    from rho_entry.config.system_prompt import template_path
    from rho_entry.config.templates import load_template, render_template

    if files.is_template_path(given):
        with files.read_by("--system-prompt", given):
            template = load_template(files.a_regular_file(expanded(given)))
            text = render_template(template, {}).system_prompt.strip()
    else:
        text = given.strip()
    if not text or template_path(text) is not None:
        raise ConfigError(
            f"--system-prompt {given!r}: its text is empty or one line naming a .md file; "
            "give the prompt's text or a template file"
        )
    return text


class _Progress:
    """One stderr line per graded question."""

    def __init__(self) -> None:
        self.done = 0

    def __call__(self, result: QuestionResult) -> None:
        self.done += 1
        # the error quotes SQLite, which quotes the model's SQL: shown, never obeyed
        verdict = "right" if result.correct else f"wrong ({result.error or 'mismatch'})"
        line = f"[{self.done}] question {result.question_id} ({result.difficulty}): {verdict} "
        sys.stderr.write(visible(f"{line}· session {result.session_id}", newlines=False) + "\n")
