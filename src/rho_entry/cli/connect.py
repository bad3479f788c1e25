"""``rho-agent monitor connect A B [C...] ["instruction"]``: the command around
``rho_entry.connect.connect``. The coordinator is stored, then the instruction runs in it as
``rho-agent --resume ID "instruction"`` would (through the one-shot runner, not ``main``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rho_domain.errors import SessionNotFound
from rho_entry.connect import connect
from rho_entry.stores import StoreChoice, choose_store, run_sync


def split_instruction(root: Path | StoreChoice, words: Sequence[str]) -> tuple[list[str], str]:
    """``A B [C...] ["instruction"]``: the last word is the instruction when it names no
    session (an instruction that happens to be a session id must be given with ``--``)."""
    chosen = root if isinstance(root, StoreChoice) else choose_store(root, {}, origin="root=")
    refs = list(words)
    if len(refs) > 1:
        try:
            run_sync(chosen.sessions.info(refs[-1]))
        except SessionNotFound:
            return refs[:-1], refs[-1]
    return refs, ""


def connect_main(chosen: StoreChoice, words: Sequence[str], *, wait: float) -> int:
    """``rho-agent monitor connect``: store the coordinator, then run the instruction in it
    (as ``rho-agent --resume ID "instruction"``) or say how to continue it."""
    refs, instruction = split_instruction(chosen, words)
    connected = run_sync(connect(refs, store=chosen, wait=wait))
    for export in connected.sources:
        print(f"{export.session_id}: {export.source}")
    print(f"coordinator: {connected.session_id}")
    if not instruction:
        print(f'continue it with: rho-agent --resume {connected.session_id} "..."')
        return 0
    from rho_entry.cli.app import run_words

    return run_words(["--resume", connected.session_id, instruction])
