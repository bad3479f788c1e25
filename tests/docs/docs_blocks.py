"""Fenced code blocks of the project's Markdown documents, as the docs tests read them."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")


def doc_files() -> list[Path]:
    """Every document whose blocks must run: README.md, architecture.md and docs/*.md."""
    return [ROOT / "README.md", ROOT / "architecture.md", *sorted((ROOT / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and the rest of its info string."""

    doc: Path
    line: int  # 1-based line of the opening fence
    lang: str
    options: dict[str, str]  # key=value words of the info string (title="ops.yaml")
    words: tuple[str, ...]  # other words of the info string
    text: str
    heading: str  # the nearest heading above it
    caption: str  # the last non-blank line above it ("PostgreSQL:")

    @property
    def where(self) -> str:
        """``README.md:129`` (relative to the repository)."""
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    """The fenced blocks of ``doc`` in order. An unclosed fence is an error."""
    found: list[Block] = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    heading, i = "", 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        match = FENCE.match(line)
        if match is None:
            i += 1
            continue
        fence, info = match.groups()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            body.append(lines[j])
            j += 1
        if j == len(lines):
            raise ValueError(f"{doc.name}:{i + 1}: unclosed code fence")
        words = shlex.split(info)
        lang = words[0] if words else ""
        options = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        rest = tuple(w for w in words[1:] if "=" not in w)
        caption = next((x for x in reversed(lines[:i]) if x.strip()), "")
        text = "\n".join(body) + "\n"
        found.append(Block(doc, i + 1, lang, options, rest, text, heading, caption))
        i = j + 1
    return found


def all_blocks() -> list[Block]:
    """The blocks of every document in ``doc_files()``."""
    return [b for doc in doc_files() for b in blocks(doc)]


def command_lines(block: Block) -> list[str]:
    """A shell block's commands: one per line (a trailing backslash continues a line);
    blank lines and whole-line comments dropped."""
    commands: list[str] = []
    pending = ""
    for raw in block.text.splitlines():
        line = pending + raw
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if line.strip() and not line.lstrip().startswith("#"):
            commands.append(line.strip())
    return commands


# A step that puts the venv's scripts on PATH, as `. .venv/bin/activate` does.
ACTIVATE = re.compile(r"^(?:\.|source) (\S*/bin/activate)$")


def readme_activation() -> str | None:
    """The step of the README's first command that activates the venv it installs into (so
    that ``rho-agent`` is on PATH for every later block), or None when it has none."""
    first = next(b for b in blocks(ROOT / "README.md") if b.lang == "bash")
    for line in command_lines(first):
        for step in line.split(" && "):
            if ACTIVATE.match(step.strip()):
                return step.strip()
    return None
