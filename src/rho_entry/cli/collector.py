"""The cyclic garbage collector, paused while ``rho-agent``'s own process starts a run.

A run's start-up imports ~500 modules and builds the session: ~150 attrs classes, the ports,
the adapters, objects that live as long as the process. The collector's passes over them
while they are being built (~100 young collections and ~10 older ones for a one-shot, ~5% of
its CPU) free nothing. ``pause`` stops it for the process's own command line (never for
``main([...])`` in a process that goes on); ``resume``, when the session is open and the run
begins, freezes what start-up built (kept out of every later collection, as the end of the
process does) and lets the collector run again for the run's own objects.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Stop the collector until ``resume`` (a collector someone else disabled stays so)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Start-up is over: freeze what it built, and collect again if ``pause`` stopped it."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
