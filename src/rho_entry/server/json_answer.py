r"""The JSON answers of the API: Starlette's, except that text UTF-8 cannot hold never fails.

A lone surrogate (a ``\ud800`` escape without its pair, which a model may stream and the
trace keeps as an escape) made Starlette's ``JSONResponse`` raise ``UnicodeEncodeError``: the
request answered 500, and so did every later read of the session. Here such a character is
written as the JSON escape it came as (``backslashreplace`` of a surrogate is exactly that
escape, and a surrogate can only stand inside a JSON string), so the answer is valid JSON that
reads back as the same text; any other answer is byte for byte Starlette's.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse


class JsonAnswer(JSONResponse):
    """``JSONResponse`` whose body never fails to encode (see the module docstring)."""

    def render(self, content: Any) -> bytes:
        """Starlette's compact JSON, UTF-8, a lone surrogate as its escape."""
        text = json.dumps(
            content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
        )
        return text.encode("utf-8", "backslashreplace")
