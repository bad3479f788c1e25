"""The task piped on standard input (``echo "task" | rho-agent``, and ``--server``'s remote
run): read bounded and checked as UTF-8 text before anything runs, for the local run and
the remote one alike (the remote one read it whole and unchecked).
"""

from __future__ import annotations

import sys

from rho_domain.errors import ConfigError


def task_from_stdin() -> str | None:
    """The task piped in (None when empty). Bytes that are not UTF-8 are a ``ConfigError``
    naming the first; they failed later, where the task was first written (the trace). So is
    a task past ``MAX_INPUT_BYTES`` characters: read whole, ``yes | rho-agent`` took memory
    until the process died."""
    from rho_entry.config.yaml_text import MAX_INPUT_BYTES
    from rho_entry.usage import not_utf8

    try:
        text = sys.stdin.read(MAX_INPUT_BYTES + 1)
        if len(text) > MAX_INPUT_BYTES:
            raise ConfigError(
                f"the task on standard input holds more than {MAX_INPUT_BYTES // 2**20} Mi "
                "characters (a stream that never ends?), more than any model reads at once: "
                "give a shorter task, and let the agent read the rest from a file"
            )
    except UnicodeDecodeError as exc:  # a strict locale's decoder
        problem: str | None = f"byte 0x{exc.object[exc.start]:02x} at offset {exc.start}"
    else:
        problem = not_utf8(text)
    if problem is not None:
        raise ConfigError(
            f"the task on standard input is not UTF-8 text ({problem}): convert it first, "
            "e.g. iconv -f LATIN1 -t UTF-8"
        )
    return text.strip() or None
