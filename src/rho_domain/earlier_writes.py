"""What earlier calls of a session wrote, as the approval policy and ``State`` share it.

``State.unreviewed_writes`` keeps the calls of ``WRITING_TOOLS`` that ran; a later bash line
that may run what they wrote asks (``shell.destructive_session``), with a reason that names
them by ``EARLIER_CALL``. A human who approves a call asked about with such a reason has been
told of those files, and ``State`` starts keeping again from there.
"""

from __future__ import annotations

WRITING_TOOLS = frozenset(["write", "edit", "bash"])
"""The tools whose calls that ran ``State.unreviewed_writes`` keeps."""

EARLIER_CALL = "an earlier call of this session"
"""How a reason to ask names what earlier calls wrote."""
