"""``rho-agent monitor connect A B [C...] ["instruction"]``: the command around
``rho_entry.connect.connect``. The coordinator is stored, then the instruction runs in it as
``rho-agent --resume ID "instruction"`` would (through the one-shot runner, not ``main``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rho_domain.errors import SessionNotFound
from rho_entry.cli.terminal_text import visible
from rho_entry.config.stores import StoreChoice, choose_store, run_sync
from rho_entry.connect import connect


def split_instruction(
    root: Path | str | StoreChoice, words: Sequence[str]
) -> tuple[list[str], str]:
    """``A B [C...] ["instruction"]``: the last word is the instruction when it names no
    session (an instruction that happens to be a session id must be given with ``--``).
    ``root`` is a store (the caller's, left open) or what ``connect``'s ``root`` takes (a
    sessions directory or a store URL: the store opened here is closed on every path)."""
    refs = list(words)
    if len(refs) > 1 and not run_sync(_names_a_session(root, refs[-1])):
        return refs[:-1], refs[-1]
    return refs, ""


async def _names_a_session(root: Path | str | StoreChoice, ref: str) -> bool:
    if isinstance(root, StoreChoice):
        return await _found(root, ref)
    chosen = choose_store(root, {}, origin="root=")
    try:
        return await _found(chosen, ref)
    finally:  # an error's and a cancellation's too: a PostgreSQL store's share of the pool
        await chosen.aclose()


async def _found(chosen: StoreChoice, ref: str) -> bool:
    try:
        await chosen.sessions.info(ref)
    except SessionNotFound:
        return False
    return True


def connect_main(chosen: StoreChoice, words: Sequence[str], *, wait: float) -> int:
    """``rho-agent monitor connect``: store the coordinator, then run the instruction in it
    (as ``rho-agent --resume ID "instruction"``) or say how to continue it."""
    refs, instruction = split_instruction(chosen, words)
    connected = run_sync(connect(refs, store=chosen, wait=wait))
    # the sources' ids are directory names or rows another machine wrote: data, escaped
    for export in connected.sources:
        print(visible(f"{export.session_id}: {export.source}", newlines=False))
    print(f"coordinator: {connected.session_id}")
    if not instruction:
        print(f'continue it with: rho-agent --resume {connected.session_id} "..."')
        return 0
    from rho_entry.cli.app import run_words

    return run_words(["--resume", connected.session_id, instruction])
