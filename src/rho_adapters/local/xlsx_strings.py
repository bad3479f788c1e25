"""A workbook's shared strings read as openpyxl reads them, without openpyxl's object per string.

openpyxl (3.1) reads the shared-strings part by building a ``Text`` object for every ``<si>``
(its descriptors validate each field) only to take its ``content``: 400,000 short strings cost
4.6 s of CPU on this machine, most of a workbook's opening, and ``read_excel`` opens a workbook
twice per call (its sheets, then its rows). ``read_string_table`` gives the same list from the
same parser (ElementTree's ``iterparse``, as openpyxl's) by walking each ``<si>``'s children:
its plain text (``<t>``) then the text of its rich runs (``<r><t>``), phonetic runs
(``<rPh>``) left out, and ``x005F_`` taken out, as ``Text.content`` and openpyxl's reader do.
What the text does not need is not read: a malformed phonetic setting or run property, which
openpyxl's validation refused (the whole workbook "not readable"), no longer stops the read.

Imported by ``workbook`` once openpyxl is known to be installed.
"""

from __future__ import annotations

from typing import IO, Any

from openpyxl.reader.excel import ExcelReader
from openpyxl.xml.constants import SHARED_STRINGS, SHEET_MAIN_NS
from openpyxl.xml.functions import iterparse

_SI = f"{{{SHEET_MAIN_NS}}}si"


def _name(element: Any) -> str:
    """An element's tag without its namespace (openpyxl matches children by that)."""
    tag: str = element.tag
    return tag.rpartition("}")[2]


def read_string_table(source: IO[bytes]) -> list[str]:
    """The shared strings of the part in ``source``, in order, as openpyxl's
    ``read_string_table`` reads them."""
    strings = []
    for _, node in iterparse(source):
        if node.tag != _SI:
            continue
        plain: str | None = None
        runs: list[str] = []
        for child in node:
            name = _name(child)
            if name == "t":
                plain = child.text  # the last one, as openpyxl keeps it
            elif name == "r":
                run: str | None = None
                for part in child:
                    if _name(part) == "t":
                        run = part.text
                if run is not None:
                    runs.append(run)
        text = "".join(runs) if plain is None else plain + "".join(runs)
        strings.append(text.replace("x005F_", ""))
        node.clear()
    return strings


class StringsReader(ExcelReader):  # type: ignore[misc]
    """openpyxl's ``ExcelReader`` with ``read_string_table`` for the shared strings (plain
    text only: this reader never asks for rich text)."""

    def read_strings(self) -> None:
        """The shared-strings part, if the package has one, read into ``shared_strings``."""
        part = self.package.find(SHARED_STRINGS)
        if part is not None:
            with self.archive.open(part.PartName[1:]) as source:
                self.shared_strings = read_string_table(source)


def load_workbook(source: IO[bytes]) -> Any:
    """``openpyxl.load_workbook(source, read_only=True, data_only=True)`` through
    ``StringsReader``."""
    reader = StringsReader(source, read_only=True, data_only=True)
    reader.read()
    return reader.wb
