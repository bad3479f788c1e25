"""Outside text as a message of ours quotes it: on one line, cut (``said``).

What an MCP server sends (``rho_adapters.mcp``) and what a tool's schema holds
(``schema_kinds``) are quoted in errors that go into the trace, the model's context and
the terminal; the text chooses its length and its line breaks, so both are bounded here.
"""

from __future__ import annotations

MAX_SAID = 1_000  # characters of outside words a message of ours quotes (``said``)


def said(value: object, limit: int = MAX_SAID) -> str:
    r"""What a server sent, as a message of ours quotes it: ``str``, on one line (each line
    break shown as ``\n``), cut to ``limit`` characters with how long it was. The server
    chooses both: our messages go into the trace, the model's context and the terminal,
    which prints an error event's lines at the margin, where the server's own lines would
    be drawn as rho-agent's (a tool call, an approval). Only the start that may be shown is
    split into lines: split whole, a text of 256 MiB made of line breaks (``\x1c`` and
    ``\v`` are breaks too, inside one stdio line) was a list of a string per break, some
    50 bytes each: a 30 MB line not JSON grew the agent by 755 MB."""
    text = str(value)
    head = "\\n".join(text[: limit + 2].splitlines())  # + 2: a last CRLF is dropped
    if len(text) <= limit + 2 and len(head) <= limit:
        return head
    return f"{head[:limit]}... ({len(text):,} characters)"
