"""Durable runs (the ``dbos`` extra): runs on a queue that workers on any host consume.

- ``app_version``: the code version DBOS gates recovery on (rho-agent's version and a
  fingerprint of the code a re-executed run must retrace).
- ``runner``: what a worker does with one queued run (open the session from the shared
  store, replay what its trace holds, run on with each model and tool call a step).
- ``queueing``: the library API: ``enqueue_prompt``, ``answer_run``, ``run_status``,
  ``wait_run``.
The worker command is ``rho_entry/cli/worker.py``; docs/durable.md tells the whole story.
Nothing is imported here.
"""
