"""Benchmarks: ``rho-agent eval bird`` (BIRD-Bench text-to-SQL) and the Harbor adapter.

- ``bird_data``: the published BIRD layout on disk (questions file, one SQLite per db_id).
- ``bird_run``: one readonly session per question, graded by execution accuracy, results as
  JSONL (``bird_results``), resumable.
- ``sample_data``: the small dataset in the BIRD layout that the tests and docs run on.
- ``harbor``: rho-agent as a Harbor installed agent (``harbor`` imported lazily).
The ``rho-agent eval`` subcommand is ``rho_entry.cli.eval`` (and ``cli.eval_console``).
"""
