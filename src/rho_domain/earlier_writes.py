"""What earlier calls of a session wrote, as the approval policy and ``State`` share it.

``State.unreviewed_writes`` keeps the calls of ``WRITING_TOOLS`` that ran; a later bash line
that may run what they wrote asks (``shell.destructive_session``), with a reason that names
them by ``EARLIER_CALL`` and lists their files. A human who approves a call so asked about has
been told of the files the reason lists: ``State`` drops the calls that wrote only those
(``ApprovalRequested.reviews``, set by the loop, never read from the reason's text).
"""

from __future__ import annotations

WRITING_TOOLS = frozenset(["write", "edit", "bash"])
"""The tools whose calls that ran ``State.unreviewed_writes`` keeps."""

EARLIER_CALL = "an earlier call of this session"
"""How a reason to ask names what earlier calls wrote."""
