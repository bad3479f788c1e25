r"""The JSON answers of the API: Starlette's, except that text UTF-8 cannot hold never fails.

A lone surrogate (a ``\ud800`` escape without its pair, which a model may stream and the
trace keeps as an escape) made Starlette's ``JSONResponse`` raise ``UnicodeEncodeError``: the
request answered 500, and so did every later read of the session. Here such a character is
written as the JSON escape it came as (``backslashreplace`` of a surrogate is exactly that
escape, and a surrogate can only stand inside a JSON string), so the answer is valid JSON that
reads back as the same text. A float JSON cannot hold (NaN, an infinity: a trace line or a
store row another writer left with ``"at": NaN`` or ``1e999``, which Python reads as a float)
made every answer that showed it raise ``ValueError``: the listing of every session failed
for one session's line. Such a number is written as null. Any other answer is byte for byte
Starlette's.
"""

from __future__ import annotations

import json
import math
from typing import Any

from starlette.responses import JSONResponse


class JsonAnswer(JSONResponse):
    """``JSONResponse`` whose body never fails to encode (see the module docstring)."""

    def render(self, content: Any) -> bytes:
        """Starlette's compact JSON, UTF-8, a lone surrogate as its escape, a number JSON
        cannot hold as null."""
        try:
            text = _dumps(content)
        except ValueError:  # NaN or an infinity: rare, so the walk is paid only then
            text = _dumps(_finite(content))
        return text.encode("utf-8", "backslashreplace")


def _dumps(content: Any) -> str:
    return json.dumps(
        content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    )


def _finite(value: Any) -> Any:
    """``value`` with every float that is NaN or infinite replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value
