"""What a tool's output may hold: head + tail truncation, with a marker saying how much was
cut; text only (``unicode_text``)."""

from __future__ import annotations

from rho_domain.messages import unicode_text

__all__ = ["truncate_middle", "unicode_text"]


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
