"""What a reader has installed when they run a Python block: ``rho-agent[all]`` and what the
same document tells them to ``pip install``, with everything those require, and nothing else.

The suite's own venv also holds the dev tools (the OpenTelemetry SDK, pytest, ...), so a
block that imports one of them runs here and fails for the reader. ``check_imports`` finds
the file each imported module is loaded from and requires it to belong to one of the
reader's distributions.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.metadata as metadata
import importlib.util
import re
import shlex
import sys
from functools import cache
from pathlib import Path

from docs_blocks import ROOT, Block, blocks, command_lines
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PROJECT = "rho-agent"
OWN = ("rho_domain", "rho_adapters", "rho_entry", "rho_agent")  # the sources under test
# What a test block needs besides: it is run with pytest, as the docs say to run it.
TEST_RUNNER = ("pytest",)
_PIP = re.compile(r"^(?:\S*/)?pip install\b")


def installs(doc: Path) -> tuple[tuple[str, frozenset[str]], ...]:
    """The (distribution, extras) that the bash blocks of ``doc`` install with ``pip``,
    ``rho-agent[all]`` first (the README's install, which every document assumes)."""
    found = [(PROJECT, frozenset({"all"}))]
    for block in blocks(doc):
        if block.lang != "bash":
            continue
        for line in command_lines(block):
            for step in line.split(" && "):
                if not _PIP.match(step.strip()):
                    continue
                words = shlex.split(step.split("  #")[0])
                for target in words[words.index("install") + 1 :]:
                    if target.startswith("-"):
                        continue
                    name, _, extras = target.partition("[")
                    name = PROJECT if name in {".", ""} else name
                    found.append((name, frozenset(filter(None, extras.rstrip("]").split(",")))))
    return tuple(found)


@cache
def files_of(wanted: tuple[tuple[str, frozenset[str]], ...]) -> frozenset[Path]:
    """Every installed file of the wanted distributions and of all they require."""
    seen: set[str] = set()
    todo = list(wanted)
    files: set[Path] = set()
    while todo:
        name, extras = todo.pop()
        key = f"{canonicalize_name(name)}{sorted(extras)}"
        if key in seen:
            continue
        seen.add(key)
        dist = metadata.distribution(name)
        files |= _files(canonicalize_name(name))
        for raw in dist.requires or ():
            req = Requirement(raw)
            contexts = [{"extra": e} for e in extras] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(c) for c in contexts):
                todo.append((req.name, frozenset(req.extras)))
    return frozenset(files)


@cache
def _files(name: str) -> frozenset[Path]:
    """The installed files of distribution ``name``, resolved: kept per distribution, as
    every document's closure holds ``rho-agent[all]``'s (2,800 files, 0.3 s of CPU)."""
    dist = metadata.distribution(name)
    return frozenset(Path(str(dist.locate_file(f))).resolve() for f in dist.files or ())


def imported_modules(text: str) -> dict[str, bool]:
    """The absolute module names a block imports, each with whether it must be a module:
    ``from a.b import c`` imports ``a.b``, and ``a.b.c`` when ``c`` is a submodule (how a
    namespace package such as ``opentelemetry`` is used)."""
    names: dict[str, bool] = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names.update((alias.name, True) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names[node.module] = True
            names.update((f"{node.module}.{a.name}", False) for a in node.names if a.name != "*")
    return names


def check_imports(block: Block, *, is_test: bool) -> None:
    """Every module the block imports is the standard library's, ours, or a file of a
    distribution the reader installed (``installs``)."""
    wanted = installs(block.doc)
    if is_test:
        told = {name for name, _ in (*wanted, *installs(ROOT / "README.md"))}
        untold = [name for name in TEST_RUNNER if name not in told]
        where = " or ".join(dict.fromkeys((block.doc.name, "README.md")))
        # A reader who typed `pytest` got another Python's: "No module named 'rho_adapters'".
        assert not untold, (
            f"{block.where}: a test file, run with {untold[0]}, which no `pip install` in "
            f"{where} installs: say how to run it "
            f"(`pip install {untold[0]} && python -m {untold[0]} -q FILE`)"
        )
        wanted += tuple((name, frozenset()) for name in TEST_RUNNER)
    allowed = files_of(wanted)
    for name, module in sorted(imported_modules(block.text).items()):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top in OWN:
            continue
        spec = _spec(name)
        if spec is None:
            assert not module, f"{block.where}: no module {name!r} here either"
            continue  # ``from a import c``: c is a name in a, not a module
        if spec.origin is None or spec.origin == "namespace":
            continue  # a namespace package holds no file; its submodules are checked
        assert Path(spec.origin).resolve() in allowed, (
            f"{block.where}: imports {name}, which neither rho-agent[all] nor a `pip install` "
            f"in {block.doc.name} installs: add that install step to the document"
        )


def _spec(name: str) -> importlib.machinery.ModuleSpec | None:
    """Where ``name`` would be loaded from, or None, found as ``importlib.util.find_spec``
    finds it but without running its parent packages: ``find_spec("a.b")`` imports ``a``
    first, and ``mcp``'s import alone is 0.8 s of CPU in the test process. Each level is
    looked up in the search path of the package above it."""
    parts = name.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])  # a top-level name imports nothing
        for depth in range(2, len(parts) + 1):
            if spec is None or spec.submodule_search_locations is None:
                return None  # a module, not a package: no submodules
            locations = list(spec.submodule_search_locations)
            spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:depth]), locations)
    except ImportError:
        return None
    except KeyError:  # a namespace package in one: PathFinder wants its parent imported
        try:
            return importlib.util.find_spec(name)  # namespace packages run no code
        except ImportError:
            return None
    return spec
