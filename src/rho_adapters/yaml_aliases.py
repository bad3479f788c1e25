"""YAML read with a bound on its aliases: the safe loader (libyaml's parser when PyYAML was
built with it) refusing a document whose aliases make it huge or make it contain itself.

A ``*name`` stands for its anchor's whole value, so nine lines of nine aliases each (the
"billion laughs") spell 387 million strings from 1 KB of text. The parser builds them as one
shared graph, quickly; whatever walks the value afterwards (a ``${VAR}`` check, the session's
config.yaml, an export) writes them out: rho-agent grew past 14 GB on such a databases.yaml.
An alias inside its own anchor's value makes a value that contains itself, and every walk of
it recursed to Python's limit ("internal error: RecursionError"). Both are refused while the
document is composed, before anything is constructed: every YAML file rho-agent reads (a
user's config files through ``rho_entry.config.yaml_text``, a stored session's config.yaml)
is read with ``bounded_loader``.
"""

from __future__ import annotations

import functools
from typing import Any

MOST_VALUES = 100_000
"""The values (scalars, lists and mappings) a document's aliases may add once they are read
out, beyond those its text writes (a long document without aliases is not refused)."""


@functools.cache
def bounded_loader() -> Any:
    """The safe loader class (libyaml's when present) whose documents are checked by
    ``refuse_alias_growth`` before they are constructed. ``yaml`` is imported here."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class BoundedLoader(base):  # type: ignore[valid-type,misc]
        def get_single_data(self) -> Any:
            node = self.get_single_node()
            if node is None:
                return None
            refuse_alias_growth(node)
            return self.construct_document(node)

    return BoundedLoader


def refuse_alias_growth(root: Any) -> None:
    """Raise a ``ComposerError`` (a ``YAMLError``) naming the line for an alias inside its own
    anchor's value, and for a document whose aliases add more than ``MOST_VALUES`` values to
    those its text holds. Counts each node of the parser's graph once (an alias is its anchored node
    itself), without recursion: the work is the text's size, not the value's."""
    import yaml

    sizes: dict[int, int] = {}
    path: set[int] = set()  # the nodes being counted: the current path from the root
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, counted = stack.pop()
        key = id(node)
        if counted:
            path.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            # What the aliases add: the value's size less the nodes written out so far (at
            # least its own). A long document without aliases costs its text's size alone.
            if sizes[key] - len(sizes) > MOST_VALUES:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"the aliases make this document hold more than {MOST_VALUES:,} values "
                    "(each *name repeats its anchor's whole value); write the values out instead",
                    node.start_mark,
                )
            continue
        if key in sizes:
            continue
        if key in path:
            raise yaml.composer.ComposerError(
                None,
                None,
                "an alias refers to the value that contains it, which would never end; "
                "use the anchor elsewhere",
                node.start_mark,
            )
        path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _children(node: Any) -> list[Any]:
    """A node's child nodes (a mapping's keys and values); none for a scalar."""
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def yaml_problem(exc: BaseException, text: str | None = None) -> str:
    """PyYAML's words for ``exc``, its place said as ``at line L, column C``: a document read
    from text is named ``"<unicode string>"`` there (``in "<unicode string>", line 2,
    column 1``), a name that is no file's; the caller names the file. When ``text`` (the
    document) is given and the problem's place is a tab, the fix is said too: libyaml's
    words ("found character that cannot start any token") never name the tab an editor
    put in the indentation, the commonest slip in a hand-written file."""
    words = str(exc).replace('in "<unicode string>", ', "at ")
    mark = getattr(exc, "problem_mark", None)
    if text is None or mark is None:
        return words
    lines = text.splitlines()
    line = lines[mark.line] if 0 <= mark.line < len(lines) else ""
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    if "\t" in indent and mark.column <= len(indent):  # a tab elsewhere is no indentation
        words += "\n  (a tab: YAML indents with spaces only; replace the tab with spaces)"
    return words
