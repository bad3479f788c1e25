"""How soon a cancel reaches a durable run whose store has no signals (a library's own
``SessionStore``): the run reads the queue's record of a cancel every ``poll`` seconds
(``RunSignals``, 1 s by default), so the cancel is heard at the first read after it is
recorded: within one poll and one read of the queue's database (docs/durable.md). Counted
in reads, not timed."""

from __future__ import annotations

from rho_entry.durable.run_signals import RunSignals


async def test_a_cancel_is_heard_at_the_first_read_after_it_is_recorded() -> None:
    reads: list[bool] = []
    recorded_at = 3  # the record is written between the third read and the fourth

    async def asked() -> bool:
        reads.append(len(reads) >= recorded_at)
        return reads[-1]

    signals = RunSignals(None, asked, poll=0)
    await signals.clear_cancel("s1")  # the run's start: the first read
    await signals.wait_for_cancel("s1")
    assert reads == [False, False, False, True]


async def test_a_cancel_recorded_before_the_start_is_heard_with_no_wait() -> None:
    reads: list[bool] = []

    async def asked() -> bool:
        reads.append(True)
        return True

    signals = RunSignals(None, asked, poll=3600)  # a wait would not end within the test
    await signals.clear_cancel("s1")
    await signals.wait_for_cancel("s1")
    assert reads == [True]


def test_the_default_poll_is_one_second() -> None:
    async def asked() -> bool:
        return False

    assert RunSignals(None, asked).poll == 1.0  # the figure docs/durable.md gives
