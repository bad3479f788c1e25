"""grep's answer: the lines found, named by file (``shown_name``), cut to ``MAX_LINE``
characters, capped at ``max_results`` with the cap said, and the binary files that match
named without their lines."""

from __future__ import annotations

from rho_domain.tools.base import ToolOutput
from rho_domain.tools.shown_names import shown_name

MAX_LINE = 500
_BINARY_HINT = "it holds NUL bytes, so its lines are not shown: bash `grep -a`, `strings` or `xxd`"


def render(
    lines: list[tuple[str, int, bool, str]],
    max_results: int,
    grouped: bool,
    notes: list[str] | None = None,
    binary: list[str] | None = None,
) -> ToolOutput:
    """The tool's output for ``lines`` (path, line number, is a match, text), with the
    ``notes`` said in the footer and the ``binary`` files named; ``grouped``: ``--`` between
    groups of context lines."""
    rendered: list[str] = []
    matches = 0
    truncated = False
    previous: tuple[str, int] | None = None
    for name, number, is_match, text in lines:
        if is_match:
            if matches >= max_results:
                truncated = True
                break
            matches += 1
        if grouped and previous is not None and (previous != (name, number - 1)):
            rendered.append("--")
        if len(text) > MAX_LINE:
            text = text[:MAX_LINE] + " [...]"
        sep = ":" if is_match else "-"
        rendered.append(f"{shown_name(name)}{sep}{number}{sep}{text}")
        previous = (name, number)
    extra = "".join(f"; {n}" for n in (notes or [])[:5])
    said = [
        f"Binary file {shown_name(name)} matches ({_BINARY_HINT})" for name in (binary or [])[:20]
    ]
    if not matches and said:
        return ToolOutput(
            content="\n".join(said) + f"\n[no text lines to show{extra}]",
            metadata={"matches": 0, "binary_matches": len(binary or [])},
        )
    if not matches:
        return ToolOutput(
            content=f"No matches.{f' [{extra[2:]}]' if extra else ''}", metadata={"matches": 0}
        )
    rendered.extend(said)
    if truncated:
        footer = (
            f"[showing the first {matches} matches; more exist: narrow the search or raise "
            f"max_results{extra}]"
        )
    else:
        footer = f"[{matches} match{'es' if matches != 1 else ''}{extra}]"
    return ToolOutput(
        content="\n".join(rendered) + "\n" + footer,
        metadata={"matches": matches, "truncated": truncated, "binary_matches": len(binary or [])},
    )
