r"""A file's name as the file tools show it: one line, nothing a terminal acts on.

A name may hold any byte but ``/`` and NUL: a line break (``a\nsrc/app.py``), an escape
sequence (``\x1b]0;title\x07``). Shown as they are, such names split a listing line in two
(glob and list showed a file ``src/app.py`` that is not there; grep reported a match in it)
and reached the terminal of whoever reads the trace (``monitor watch``). Every control
character is shown as its ``\xNN`` escape, as a byte that is not UTF-8 already is
(``messages.unicode_text``: ``caf\xe9.txt``): the model sees that the name holds it, and
that ``bash`` (``ls``, ``find -print0``) is the tool to reach that file, since the file tools
refuse control characters in a path.
"""

from __future__ import annotations

_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))}


def shown_name(name: str) -> str:
    r"""``name`` with each control character (C0, DEL, C1) written as ``\xNN``; the same
    object when it holds none."""
    if name.isprintable():
        return name
    return name.translate(_CONTROLS)
