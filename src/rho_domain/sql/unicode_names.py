r"""PostgreSQL's ``U&"..."`` identifiers, decoded as the engine decodes them.

``decode_unicode_escapes(body, escape)`` turns ``<e>XXXX``, ``<e>+XXXXXX``, ``<e><e>`` and
UTF-16 surrogate pairs into the name they spell (``U&"d\0061t\+000061"`` is ``data``), so the
checks decide on the real name, never on one spelling of it; the lexer (``lexer.py``) calls it
with the ``UESCAPE`` character it read. Anything else raises ``StatementRefused``.
"""

from __future__ import annotations

from rho_domain.errors import StatementRefused

_HEX = frozenset("0123456789abcdefABCDEF")


def decode_unicode_escapes(body: str, escape: str = "\\") -> str:
    """Decode the body of a ``U&"..."`` identifier as PostgreSQL does: ``<e>XXXX``,
    ``<e>+XXXXXX``, ``<e><e>`` and UTF-16 surrogate pairs. Raises ``StatementRefused`` for
    any other escape, a lone surrogate or code point zero."""
    out: list[str] = []
    pending_high = 0
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != escape:
            if pending_high:
                raise StatementRefused("invalid Unicode surrogate pair in a U& identifier")
            out.append(ch)
            i += 1
            continue
        if body[i + 1 : i + 2] == escape:
            if pending_high:
                raise StatementRefused("invalid Unicode surrogate pair in a U& identifier")
            out.append(escape)
            i += 2
            continue
        width, start = (6, i + 2) if body[i + 1 : i + 2] == "+" else (4, i + 1)
        digits = body[start : start + width]
        if len(digits) != width or not set(digits) <= _HEX:
            raise StatementRefused("invalid Unicode escape in a U& identifier")
        code = int(digits, 16)
        i = start + width
        if pending_high:
            if not 0xDC00 <= code <= 0xDFFF:
                raise StatementRefused("invalid Unicode surrogate pair in a U& identifier")
            out.append(chr(0x10000 + ((pending_high - 0xD800) << 10) + (code - 0xDC00)))
            pending_high = 0
        elif 0xD800 <= code <= 0xDBFF:
            pending_high = code
        elif 0xDC00 <= code <= 0xDFFF or code == 0 or code > 0x10FFFF:
            raise StatementRefused("invalid Unicode escape value in a U& identifier")
        else:
            out.append(chr(code))
    if pending_high:
        raise StatementRefused("invalid Unicode surrogate pair in a U& identifier")
    return "".join(out)
