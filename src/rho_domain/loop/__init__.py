"""The loop: one machine, the modules that run a session's prompt from start to end.

The map of one run (``Session.run``), in the order it happens:

1. ``session`` — ``Session`` owns the ports and the ``State`` (its parts and constructor in
   ``session_core``); ``run`` opens its ``run_gate.RunGate`` (one run at a time), starts a
   ``RunTally`` (``tally``) and its frame, ``run_boundaries.bounded_run``, which asks the
   model's context window ahead (a task beside the run's start,
   ``context_fit.ask_window_ahead``) and runs ``turns.Turns.drive``, which reads top to
   bottom (steps 3-9).
2. ``run_boundaries`` — ``begin_run``: signals listened to, the stored session created on
   first use, ``run_start`` recorded, calls a dead process left open answered.
3. ``context_fit`` — ``check_window``: the window must hold the system prompt and tool
   schemas; later ``measure`` / ``context_full`` size the prompt for compaction.
4. ``tool_batch`` — ``ToolBatch.resume``: calls left waiting for approval are decided first.
5. ``tally`` — ``budget_exceeded`` before each model call (a child gets
   ``child_budget``: what is left of every limit).
6. ``control`` — ``RunControl``: cancel and pause checkpoints, operator directives applied.
7. ``compaction_run`` — ``auto_compact`` when the context is 80 % full (``compact_history``
   for a manual one, ``compact_after_overflow`` after the server refuses the size).
8. ``model_turn`` — ``call_model``: one streamed model call raced against cancellation,
   consumed by ``streaming`` into the assistant message.
9. ``tool_batch`` — ``ToolBatch.run``: each call's policy → approval → execution → result
   (judged by ``call_judgment``, a call asked about by ``tool_approval``); read-only
   batches run concurrently through ``parallel_reads``; ``delegate`` calls run child
   sessions through ``sub_agents`` (``SubAgents``), and a child that waits is answered
   through ``child_calls``.
10. ``journal`` — every change above is an event: applied to the ``State``, persisted,
    announced to listeners.
11. ``run_boundaries`` — ``end_run``: open calls answered, ``run_end`` recorded and the
    ``RunResult`` built from the tally, however the run ended; then the ``after_run`` hooks.

Vocabulary (messages, events, state, config) and pure policies (approval, compaction
planning, permissions) stay at the ``rho_domain`` root; this package holds what moves.
Nothing is imported here: import the module you need (``rho_domain.loop.session``).
"""
