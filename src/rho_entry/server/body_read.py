"""A request's body read as JSON: bounded in bytes and in time, one reading of its text.

``bodies`` checks the value it gives field by field; this module only turns the bytes that
arrive into that value, or into the refusal that says why they were not read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from rho_domain.json_text import one_reading
from rho_entry.server.errors import BodyTooLarge, Invalid, SlowBody


async def read_json(
    chunks: AsyncIterator[bytes], *, length: str | None, limit: int, seconds: float = 30.0
) -> Any:
    """The body as JSON (an empty body is ``{}``). Raises ``BodyTooLarge`` as soon as the
    declared or received size passes ``limit``, ``SlowBody`` when it has not all arrived
    within ``seconds``, and ``Invalid`` for malformed JSON, a key given twice in one object,
    and ``NaN`` or ``Infinity``."""
    if length is not None and length.isdigit() and int(length) > limit:
        raise BodyTooLarge(f"request body of {length} bytes is over the limit of {limit}")
    received = bytearray()
    try:
        async with asyncio.timeout(seconds):
            async for chunk in chunks:
                received += chunk
                if len(received) > limit:
                    raise BodyTooLarge(f"request body is over the limit of {limit} bytes")
    except TimeoutError:
        raise SlowBody(
            f"the request body did not arrive within {seconds:g} s ({len(received)} bytes "
            "came): send it whole, at once"
        ) from None
    if not received.strip():
        return {}
    try:
        value = one_reading(received)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise Invalid(f"the body is not valid JSON: {exc}", field="body") from None
    except ValueError as exc:  # a key twice, NaN or Infinity: two parsers read it apart
        raise Invalid(f"the body {exc}", field="body") from None
    except RecursionError:  # [[[[...]]]]: legal JSON no route takes, deeper than Python parses
        raise Invalid(
            "the body is not valid JSON here: it nests arrays or objects too deeply",
            field="body",
        ) from None
    if (b"\\ud" in received or b"\\uD" in received) and not _unicode(value):
        raise Invalid(
            "the body holds a lone surrogate (a \\ud800-\\udfff escape without its pair): "
            "it is not Unicode text",
            field="body",
        )
    return value


def _unicode(value: Any) -> bool:
    """Whether every string of a parsed body is Unicode text (JSON's escapes can spell a
    lone surrogate, which no UTF-8 writer accepts: the trace, a response, a request)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
