"""What a server sends, as the JSON-RPC peer judges and quotes it: which ids are whose, how
many values a text may hold before it is decoded, and a server's words on one line, cut.

A server chooses all of it; what is kept of it, echoed to it or shown to the user is bounded
here, in one place (``jsonrpc`` applies it, ``client`` and ``http`` quote through ``said``).
"""

from __future__ import annotations

MAX_SAID = 1_000  # characters of a server's own words a message of ours quotes (``said``)
# characters of a server's request id an answer echoes (held until sent): ten requests with
# 20 MB ids, unread, grew the agent by 2.4 GB where the same bytes in params cost 170 MB
MAX_REQUEST_ID = 256


def our_id(value: object) -> bool:
    """Whether ``value`` may be the id of one of our requests: an int, never a bool. JSON's
    ``true`` decodes to ``True``, which Python's dict finds as the key ``1``: a response
    with ``"id": true`` answered our first request (``initialize``)."""
    return isinstance(value, int) and not isinstance(value, bool)


def answerable_id(value: object) -> bool:
    """Whether an answer may echo a server's request id: an integer, or a string of at most
    ``MAX_REQUEST_ID`` characters (JSON-RPC's ids, as MCP narrows them)."""
    if isinstance(value, str):
        return len(value) <= MAX_REQUEST_ID
    return isinstance(value, int) and not isinstance(value, bool)


def values_at_most(text: str) -> int:
    """An upper bound of the values ``text`` holds as JSON (every value but a lone one is
    led by a bracket, a comma or a colon; those inside strings count too): C-speed passes
    over the text, before ``json.loads`` spends memory on them."""
    return text.count(",") + text.count(":") + text.count("[") + text.count("{")


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


def preview(text: str) -> str:
    """A received text as a problem quotes it: stripped, said in 200 characters."""
    return said(text.strip(), 200)
