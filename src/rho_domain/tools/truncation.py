"""What a tool's output may hold: head + tail truncation, with a marker saying how much was
cut; text only (``unicode_text``)."""

from __future__ import annotations


def truncate_middle(text: str, limit: int) -> str:
    """Return ``text`` unchanged if it fits in ``limit`` characters, else its head and tail.

    The marker states how many characters and lines were cut, so the model knows the output
    is partial and can narrow its request.
    """
    if limit <= 0 or len(text) <= limit:
        return text
    half = limit // 2
    head, tail = text[:half], text[len(text) - half :]
    cut = text[half : len(text) - half]
    cut_lines = cut.count("\n")
    marker = (
        f"\n\n[... {len(cut):,} characters ({cut_lines:,} lines) cut from the middle of "
        f"{len(text):,} characters; narrow the request to see them ...]\n\n"
    )
    return head + marker + tail


def unicode_text(text: str) -> str:
    r"""``text`` with each lone surrogate written as an escape: ``\xe9`` for a byte that is
    not UTF-8 (a file name as Python lists it: ``caf\xe9.txt``), ``\ud800`` for any other.
    Such a character cannot be encoded: a tool result holding one broke whatever encoded it
    next (the terminal, ``stats``, a request), so no tool's output keeps one. Text without
    one is returned as it is (the same object)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return text
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return data.decode("utf-8", "backslashreplace")
