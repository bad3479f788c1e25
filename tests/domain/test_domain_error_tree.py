"""The error tree is drawn whole, and drawn true, where readers look for it.

``rho_domain/errors.py``'s docstring draws the tree; architecture.md's "The error tree" names
every class. A class added without its line in either, or moved under another parent without
the drawing following, fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import rho_domain.errors as errors

ARCHITECTURE = Path(__file__).resolve().parents[2] / "architecture.md"
BRANCH = re.compile(r"(?:├── |└── )([A-Z]\w+)")


def _classes() -> dict[str, type[BaseException]]:
    return {
        name: value
        for name, value in vars(errors).items()
        if isinstance(value, type)
        and issubclass(value, BaseException)
        and value.__module__ == errors.__name__
    }


def drawn_parents(drawing: str) -> dict[str, str | None]:
    """Each class the drawing names, with the class drawn as its parent (the nearest line
    above it whose name starts left of it); the root's parent is ``None``."""
    parents: dict[str, str | None] = {}
    open_lines: list[tuple[int, str]] = []
    for line in drawing.splitlines():
        found = BRANCH.search(line)
        if found:
            name, column = found.group(1), found.start(1)
        elif line.strip() == "RhoError":
            name, column = "RhoError", line.index("RhoError")
        else:
            continue
        while open_lines and open_lines[-1][0] >= column:
            open_lines.pop()
        parents[name] = open_lines[-1][1] if open_lines else None
        open_lines.append((column, name))
    return parents


def test_the_docstring_draws_every_class_under_its_parent() -> None:
    parents = drawn_parents(errors.__doc__ or "")
    wrong = {
        name: (parents.get(name, "not drawn"), cls.__bases__[0].__name__)
        for name, cls in _classes().items()
        if name != "RhoError" and parents.get(name) != cls.__bases__[0].__name__
    }
    assert wrong == {}, "drawn parent, real parent"
    assert parents["RhoError"] is None


def test_architecture_md_names_every_class_of_the_tree() -> None:
    section = ARCHITECTURE.read_text(encoding="utf-8").split("\n## The error tree\n")[1]
    section = section.split("\n## ")[0]
    missing = [name for name in _classes() if f"`{name}`" not in section]
    assert missing == []


def test_the_drawing_reader_sees_a_misplaced_class() -> None:
    drawing = "    RhoError\n    ├── ToolError\n    │   └── McpError\n    └── StoreError\n"
    assert drawn_parents(drawing) == {
        "RhoError": None,
        "ToolError": "RhoError",
        "McpError": "ToolError",
        "StoreError": "RhoError",
    }
