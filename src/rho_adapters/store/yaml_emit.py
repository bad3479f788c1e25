"""config.yaml's text without PyYAML: the one-shot writes a session's config and reads none,
and importing yaml cost it ~17 ms (issue 33); what reads a config still uses yaml.

``emit(mapping)`` writes what ``stored_config`` holds: a mapping whose keys are str, int,
float, bool or None and whose values are those, lists, tuples (written as lists) and
mappings, nested. The text is ``yaml.dump(data, Dumper=CSafeDumper, sort_keys=False)``'s,
byte for byte (tests/store/test_yaml_emit.py and the properties compare them): libyaml
0.2.5's emitter (src/emitter.c, unchanged at libyaml's master) for that subset, with
PyYAML's representer and resolver, so files written before and after read and diff alike.
Block style, two-space indentation, empty collections as ``{}`` and ``[]``, keys in their
order; a string is plain where it reads back as that string, else single-quoted, else
(non-ASCII, control characters, breaks libyaml will not single-quote) double-quoted with
escapes; plain and quoted text folds past column 80 as libyaml folds it; a key longer than
128 bytes or holding a line break is written ``? key``. Where a sub-tree appears twice
PyYAML would write an anchor and an alias; this writes it out twice (the same data when
read). Anything else (another type, a str subclass, a lone surrogate, a container as a key)
raises StoreError naming the key path; nothing is returned, so nothing is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rho_adapters.store.yaml_scalars import (
    PLAIN,
    SINGLE,
    Unsupported,
    escape,
    scalar_text,
    string_style,
)
from rho_domain.errors import StoreError

_WIDTH = 80  # libyaml's best_width


def emit(data: Mapping[str, Any]) -> str:
    """The YAML text of ``data`` (see the module's docstring); StoreError on a value it cannot
    write, naming where it is."""
    out = _Emitter()
    try:
        out.node(data, mapping=False, simple_key=False)
    except Unsupported as exc:
        where = "".join(reversed(exc.path)).lstrip(".") or "the top level"
        raise StoreError(f"config.yaml cannot hold {exc.what} at {where}") from None
    out.indent_line()
    return "".join(out.parts)


class _Emitter:
    """libyaml's emitter state for block collections and scalars (no flow collections but
    empty ones, no anchors, no tags: none is needed for this subset)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.column = 0
        self.indent = -1
        self.indents: list[int] = []
        self.whitespace = True  # the last thing written was whitespace
        self.indention = True  # only indentation (and indicators) on this line so far

    def put(self, text: str) -> None:
        self.parts.append(text)
        self.column += len(text)

    def indent_line(self) -> None:
        """Libyaml's ``write_indent``: a new line unless this one holds only indentation."""
        indent = max(self.indent, 0)
        if (
            not self.indention
            or self.column > indent
            or (self.column == indent and not self.whitespace)
        ):
            self.parts.append("\n")
            self.column = 0
        if self.column < indent:
            self.put(" " * (indent - self.column))
        self.whitespace = self.indention = True

    def indicator(self, text: str, *, space: bool, is_space: bool, is_indention: bool) -> None:
        if space and not self.whitespace:
            self.put(" ")
        self.put(text)
        self.whitespace = is_space
        self.indention = self.indention and is_indention

    def push(self, *, flow: bool, indentless: bool = False) -> None:
        self.indents.append(self.indent)
        if self.indent < 0:
            self.indent = 2 if flow else 0
        elif not indentless:
            self.indent += 2

    def node(self, value: Any, *, mapping: bool, simple_key: bool) -> None:
        if isinstance(value, Mapping):
            self.mapping(value)
        elif type(value) is list or type(value) is tuple:
            self.sequence(value, indentless=mapping and not self.indention)
        else:
            text, is_str = scalar_text(value)
            self.scalar(text, is_str, breaks=not simple_key)

    def mapping(self, value: Mapping[Any, Any]) -> None:
        if not value:
            self.indicator("{", space=True, is_space=True, is_indention=False)
            self.indicator("}", space=False, is_space=False, is_indention=False)
            return
        self.push(flow=False)
        for key, item in value.items():
            try:
                self.indent_line()
                if type(key) is str and len(key) <= 32 and string_style(key) == (False, PLAIN):
                    self.put(key + ":")  # most keys: what the lines below write, at once
                    self.whitespace = self.indention = False
                else:
                    self.key(key)
                self.node(item, mapping=True, simple_key=False)
            except Unsupported as exc:
                exc.path.append(f".{key}" if type(key) is str else f"[{key!r}]")
                raise
        self.indent = self.indents.pop()

    def key(self, key: Any) -> None:
        """A mapping key and its ``:``: simple (on one line, at most 128 bytes), else libyaml's
        complex key (``? key`` then ``:`` on the next line)."""
        text, _ = scalar_text(key)  # a container as a key is refused here
        multiline = type(key) is str and string_style(key)[0]
        if not multiline and (len(text) <= 32 or len(text.encode()) <= 128):
            self.node(key, mapping=True, simple_key=True)
            self.indicator(":", space=False, is_space=False, is_indention=False)
        else:
            self.indicator("?", space=True, is_space=False, is_indention=True)
            self.node(key, mapping=True, simple_key=False)
            self.indent_line()
            self.indicator(":", space=True, is_space=False, is_indention=True)

    def sequence(self, value: list[Any] | tuple[Any, ...], *, indentless: bool) -> None:
        if not value:
            self.indicator("[", space=True, is_space=True, is_indention=False)
            self.indicator("]", space=False, is_space=False, is_indention=False)
            return
        self.push(flow=False, indentless=indentless)
        for index, item in enumerate(value):
            self.indent_line()
            self.indicator("-", space=True, is_space=False, is_indention=True)
            try:
                self.node(item, mapping=False, simple_key=False)
            except Unsupported as exc:
                exc.path.append(f"[{index}]")
                raise
        self.indent = self.indents.pop()

    def scalar(self, text: str, is_str: bool, *, breaks: bool) -> None:
        """Write a scalar in the style libyaml's ``select_scalar_style`` picks; ``breaks``
        is False for a simple key (never folded)."""
        if not is_str:
            self.plain(text, breaks=breaks)  # a number, bool or null reads back as itself
            return
        style = string_style(text)[1]
        if style == PLAIN:
            self.plain(text, breaks=breaks)
        elif style == SINGLE:
            self.single_quoted(text, breaks=breaks)
        else:
            self.double_quoted(text, breaks=breaks)
        self.whitespace = self.indention = False

    def plain(self, text: str, *, breaks: bool) -> None:
        if not self.whitespace:
            self.put(" ")
        if not breaks or self.column + len(text) <= _WIDTH + 1:
            self.put(text)  # no space can be past the width, or a key: nothing to fold
        else:
            self.folded(text, quoted=False)
        self.whitespace = self.indention = False

    def folded(self, text: str, *, quoted: bool) -> None:
        """Plain or single-quoted text past the width, folded at single spaces (never at a
        quoted string's first or last character). Continuation lines are indented as libyaml
        indents a scalar: two past its collection."""
        self.push(flow=True)
        spaces = after_break = False
        last = len(text) - 1
        for index, char in enumerate(text):
            if char == " ":
                if (
                    not spaces
                    and self.column > _WIDTH
                    and text[index + 1 : index + 2] != " "
                    and not (quoted and index in (0, last))
                ):
                    self.indent_line()
                else:
                    self.put(" ")
                spaces = True
            elif char == "\n":  # single quotes only: a break is written twice, then indented
                if not after_break:
                    self.put_break()
                self.put_break()
                self.indention = after_break = True
            else:
                if after_break:
                    self.indent_line()
                self.put("''" if quoted and char == "'" else char)
                self.indention = spaces = after_break = False
        if after_break:
            self.indent_line()
        self.indent = self.indents.pop()

    def put_break(self) -> None:
        self.parts.append("\n")
        self.column = 0

    def single_quoted(self, text: str, *, breaks: bool) -> None:
        self.indicator("'", space=True, is_space=False, is_indention=False)
        quoted = text.replace("'", "''")
        if "\n" not in text and (not breaks or self.column + len(quoted) <= _WIDTH + 1):
            self.put(quoted)
        else:
            self.folded(text, quoted=True)
        self.indicator("'", space=False, is_space=False, is_indention=False)

    def double_quoted(self, text: str, *, breaks: bool) -> None:
        self.indicator('"', space=True, is_space=False, is_indention=False)
        self.push(flow=True)  # where a folded line goes on
        spaces = False
        last = len(text) - 1
        for index, char in enumerate(text):
            if char < " " or char > "~" or char in '"\\':
                self.put("\\" + escape(char))
                spaces = False
            elif char == " ":
                if breaks and not spaces and self.column > _WIDTH and 0 < index < last:
                    self.indent_line()
                    if text[index + 1] == " ":
                        self.put("\\")
                else:
                    self.put(" ")
                spaces = True
            else:
                self.put(char)
                spaces = False
        self.indent = self.indents.pop()
        self.indicator('"', space=False, is_space=False, is_indention=False)
