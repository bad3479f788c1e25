"""The last line of a command's result: how it ended, how long it ran, the limits it met.

``[exit code 0, 0.2 s]`` (or ``refused``, ``killed``; notes after ``;``) ends what the model
reads of every bash call. Its run time is the one part that changes when nothing else did:
the same ``echo again`` takes 0.0 s on an idle machine and 0.2 s on a loaded one, so whoever
compares results (the stuck-loop check) compares them ``without_run_time``. Apart from
``bash_run`` (imported with the first call) so the loop reads the shape without importing it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# the footer as ``footer`` writes it, at the very end of a result
_RUN_TIME = re.compile(r"(\[(?:refused|killed|exit code -?\d+), )\d+\.\d s(?=(?:; [^\n]*)?\]\Z)")


def footer(status: str, seconds: float, notes: Sequence[str] = ()) -> str:
    """The line ending a command's result: ``[status, N.N s; note; note]``."""
    return f"[{status}, {seconds:.1f} s" + "".join(f"; {n}" for n in notes) + "]"


def without_run_time(content: str) -> str:
    """``content`` with the run time of a final ``footer`` taken out (``[exit code 0, s]``);
    any other text unchanged."""
    return _RUN_TIME.sub(r"\1s", content)
