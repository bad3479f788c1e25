"""The dependency rule, enforced by parsing every module's imports.

rho_entry -> rho_adapters -> rho_domain; rho_domain imports only the standard library and
attrs; and no two modules import each other, directly or around a loop. The checks read source
with ``ast`` (imports inside functions and TYPE_CHECKING blocks count too), so they fail the
moment someone adds a forbidden import anywhere.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
DOMAIN_ALLOWED = {"attr", "attrs", "rho_domain"}
# rho_agent is the seeds' import name: a thin alias of rho_entry, at the entry layer (or
# above it): it may import anything, and nothing of ours imports it.
FORBIDDEN = {
    "rho_domain": {"rho_adapters", "rho_entry", "rho_agent"},
    "rho_adapters": {"rho_entry", "rho_agent"},
    "rho_entry": {"rho_agent"},
    "rho_agent": set(),
}


def parse(path: Path) -> ast.Module:
    """``path``'s syntax tree, parsed once per run and content: the checks below walk each
    source file up to six times. Callers only read the tree."""
    return _parse(path.read_text(encoding="utf-8"), str(path))


@functools.cache
def _parse(source: str, filename: str) -> ast.Module:
    return ast.parse(source, filename=filename)


@functools.cache
def nodes(tree: ast.AST) -> tuple[ast.AST, ...]:
    """Every node of ``tree`` in ``ast.walk``'s order, walked once: a file's checks walk
    its tree up to five times, and the walk, not the work per node, is what costs."""
    return tuple(ast.walk(tree))


def imported_roots(path: Path) -> set[tuple[str, int]]:
    """Top-level package names imported by a module, with line numbers."""
    tree = parse(path)
    found: set[tuple[str, int]] = set()
    for node in nodes(tree):
        if isinstance(node, ast.Import):
            found.update((alias.name.split(".")[0], node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add((node.module.split(".")[0], node.lineno))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and not node.args[0].value.startswith(".")  # relative: inside its own package
        ):
            found.add((node.args[0].value.split(".")[0], node.lineno))
    return found


def violations(package: str) -> list[str]:
    problems = []
    for path in sorted((SRC / package).rglob("*.py")):
        for root, line in sorted(imported_roots(path)):
            where = f"{path.relative_to(SRC)}:{line} imports {root}"
            if root in FORBIDDEN[package]:
                problems.append(where)
            if (
                package == "rho_domain"
                and root not in DOMAIN_ALLOWED
                and (root not in sys.stdlib_module_names)
            ):
                problems.append(where + " (rho_domain: standard library and attrs only)")
    return problems


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_dependency_rule(package: str, kept: Kept) -> None:
    assert kept(f"dependency-rule-{package}", lambda: violations(package)) == []


# The domain's stateful objects: the entry layer and the adapters compose them (hold one and
# show its members), never subclass them, so nothing outside the domain reaches their privates.
SEALED = {
    "rho_domain.agent": "Agent",
    "rho_domain.session": "Session",
    "rho_domain.state": "State",
}


def subclasses_of_sealed(root: Path = SRC) -> list[str]:
    """``path:line Class(Base)`` for every class outside ``rho_domain`` whose bases name one of
    ``SEALED``: imported by name (``from rho_domain.session import Session as S``) or through
    its module (``from rho_domain import session as s``; ``s.Session``)."""
    found = []
    for package in ("rho_entry", "rho_adapters", "rho_agent"):
        for path in sorted((root / package).rglob("*.py")):
            tree = parse(path)
            names: dict[str, str] = {}  # local name -> what it is: a sealed class or module
            for node in nodes(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    for alias in node.names:
                        full = f"{node.module}.{alias.name}"
                        local = alias.asname or alias.name
                        if SEALED.get(node.module) == alias.name or full in SEALED:
                            names[local] = full
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        names[alias.asname or alias.name] = alias.name
            for node in nodes(tree):
                if not isinstance(node, ast.ClassDef):
                    continue
                for base in node.bases:
                    dotted = ast.unparse(base)
                    head, _, attr = dotted.rpartition(".")
                    target = f"{names.get(head, head)}.{attr}" if head else names.get(attr, "")
                    module, _, name = target.rpartition(".")
                    if SEALED.get(module) == name:
                        found.append(
                            f"{path.relative_to(root)}:{node.lineno} {node.name}({dotted})"
                        )
    return found


def test_no_class_outside_the_domain_subclasses_agent_session_or_state(kept: Kept) -> None:
    assert kept("sealed-subclasses", subclasses_of_sealed) == []


def attrs_classes_compiling_methods(root: Path = SRC) -> list[str]:
    """``path:line Class method`` for each method attrs would compile for a class decorated
    ``attrs.frozen``/``attrs.define``: a ``__repr__`` its body neither assigns
    (``__repr__ = value_repr``) nor defines, and unless its decorator says ``eq=False``, an
    ``__eq__`` (and for a frozen class a ``__hash__``) likewise (``rho_domain/value_methods.py``
    says why ours share them)."""
    found = []
    for package in sorted(FORBIDDEN):
        for path in sorted((root / package).rglob("*.py")):
            for node in nodes(parse(path)):
                if not isinstance(node, ast.ClassDef):
                    continue
                decorators = [
                    d
                    for d in node.decorator_list
                    if ast.unparse(d.func if isinstance(d, ast.Call) else d)
                    in ("attrs.frozen", "attrs.define", "attrs.mutable")
                ]
                if not decorators:
                    continue
                decorator = decorators[0]
                said = {
                    k.arg: ast.unparse(k.value)
                    for k in (decorator.keywords if isinstance(decorator, ast.Call) else [])
                }
                frozen = ast.unparse(decorator).startswith("attrs.frozen") or (
                    said.get("frozen") == "True"
                )
                wanted = [] if "repr" in said else ["__repr__"]
                if said.get("eq") != "False":
                    wanted += ["__eq__", "__hash__"] if frozen else ["__eq__"]
                own = {s.name for s in node.body if isinstance(s, ast.FunctionDef)}
                own |= {
                    ast.unparse(t)
                    for s in node.body
                    if isinstance(s, ast.Assign)
                    for t in s.targets
                }
                found += [
                    f"{path.relative_to(root)}:{node.lineno} {node.name} {method}"
                    for method in wanted
                    if method not in own
                ]
    return found


def test_our_attrs_classes_share_their_methods(kept: Kept) -> None:
    assert kept("attrs-methods", attrs_classes_compiling_methods) == []


# the standard library's public names that begin with "_": os._exit ends a process without
# its interpreter's teardown (stop_signals.end_as_returned), documented as such
_PUBLIC_UNDERSCORED = frozenset({"os._exit"})


def foreign_private_reads(package: str, root: Path = SRC) -> list[str]:
    """``path:line expr`` for each read of another module's private member in ``package``:
    ``obj._name`` where ``obj`` is not ``self``/``cls`` and no class of the same module owns a
    ``_name`` (a module may use its own privates across its classes; a ``Protocol`` that
    names another object's private member does not make it this module's)."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        tree = parse(path)
        own = {
            node.attr
            for node in nodes(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        } | {
            target.id
            for node in nodes(tree)
            # a Protocol's members describe another module's object: not this module's own
            if isinstance(node, ast.ClassDef)
            and not any(ast.unparse(base).endswith("Protocol") for base in node.bases)
            for statement in node.body
            if isinstance(statement, ast.Assign | ast.AnnAssign)
            for target in (
                statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            )
            if isinstance(target, ast.Name)
        }
        for node in nodes(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                and node.attr not in own
                and ast.unparse(node) not in _PUBLIC_UNDERSCORED
            ):
                found.append(f"{path.relative_to(root)}:{node.lineno} {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("package", ["rho_domain", "rho_entry"])
def test_no_module_reads_another_modules_private_members(package: str, kept: Kept) -> None:
    """The loop's collaborators get what they need through public members (a sub-agent's
    parent gives ``current_run`` and ``related``, not ``_tally`` and ``_related``)."""
    assert kept(f"private-reads-{package}", lambda: foreign_private_reads(package)) == []


def test_the_subclass_check_sees_each_spelling(tmp_path: Path) -> None:
    module = tmp_path / "rho_entry" / "m.py"
    module.parent.mkdir()
    (tmp_path / "rho_adapters").mkdir()
    (tmp_path / "rho_agent").mkdir()
    module.write_text(
        "import rho_domain.state\n"
        "from rho_domain import session as domain_session\n"
        "from rho_domain.agent import Agent as A\n"
        "from rho_domain.config import AgentConfig\n"
        "class S(domain_session.Session): ...\n"
        "class B(A): ...\n"
        "class T(rho_domain.state.State): ...\n"
        "class C(AgentConfig): ...\n"
        "class Fine: ...\n"
    )
    assert subclasses_of_sealed(tmp_path) == [
        "rho_entry/m.py:5 S(domain_session.Session)",
        "rho_entry/m.py:6 B(A)",
        "rho_entry/m.py:7 T(rho_domain.state.State)",
    ]


def module_name(path: Path, root: Path = SRC) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Module -> the project modules it imports (at module level, in functions, anywhere).

    ``from package import name`` points at ``package.name`` when that is a module, else at
    ``package``. Relative imports are resolved against the importing module. A string that
    names a module of the tree is an import too: a table of names that importlib reads later
    is an import the ``import`` statements do not show, and it can hide a cycle. An absolute
    name of ours (``"rho_entry.cli.monitor"``, ``"rho_entry.cli.monitor:main"``) counts
    wherever it stands; a relative one (``".monitor"``) only where it reaches an importer
    (``_import_strings``), and a bare one (``"files"``) only where an importer builds the
    name from it (``import_module(f"pkg.{NAMES[name]}")``): a directory name such as
    ``".git"`` or ``".agent"`` elsewhere is text, not the module ``git`` or ``agent`` of
    the package. Logger names (``logging.getLogger("rho_entry.server")``) and a module's own
    packages (``resources.files("rho_entry.server")`` in ``rho_entry.server.dashboard``)
    are not imports.
    """
    paths = {module_name(p, root): p for pkg in FORBIDDEN for p in (root / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = parse(path)
        imported = _import_strings(tree)
        loggers = _logger_names(tree)
        for node in nodes(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names
                ]
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in loggers
                and (id(node) in imported or node.value.split(".")[0] in FORBIDDEN)
            ):
                bare = imported.get(id(node), False)
                targets = _named_modules(node.value, package, paths, bare=bare)
                # its own packages were imported before it: naming one (resources.files) adds
                # no import
                targets = [t for t in targets if not name.startswith(f"{t}.")]
            graph[name].update(t for t in targets if t in paths and t != name)
    return graph


_DOTTED = re.compile(r"(\.*)([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?::[A-Za-z_]\w*)?")


def _named_modules(text: str, package: str, paths: Mapping[str, Path], *, bare: bool) -> list[str]:
    """The module a string names: ``a.b``, ``a.b:attr``, ``a.b.attr`` (the module ``a.b``),
    ``.b`` (relative to ``package``), and, when ``bare``, ``b`` (a module of ``package``)."""
    match = _DOTTED.fullmatch(text)
    if match is None:
        return []
    dots, dotted = match.groups()
    if dots:
        anchor = package.split(".")[: len(package.split(".")) - len(dots) + 1]
        candidates = [".".join([*anchor, dotted])]
    else:
        candidates = [dotted, f"{package}.{dotted}"] if bare else [dotted]
    found = []
    for candidate in candidates:
        if candidate in paths:
            found.append(candidate)
        elif candidate.rpartition(".")[0] in paths and "." in dotted:
            found.append(candidate.rpartition(".")[0])  # module.attribute
    return found


# What hands a string to the import system: importlib's and the builtin's, and our
# ``lazy_names`` (rho_domain/lazy_names.py), whose table of names goes to ``import_module``.
_IMPORTERS = frozenset({"import_module", "__import__", "lazy_names"})


def _import_strings(tree: ast.AST) -> dict[int, bool]:
    """The ids of the string nodes that reach an importer's call (``_IMPORTERS``): written in
    its arguments, or in what the module assigns to a name they use (a table such as
    ``_EXPORTS``, followed through names it uses in turn). Each id maps to whether a bare
    name counts: the call's first argument is built (``import_module(f"pkg.{NAMES[n]}")``),
    so any string that reaches it may be a module of the package."""
    assigned: dict[str, list[ast.expr]] = {}
    for node in nodes(tree):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                assigned.setdefault(target.id, []).append(value)
    found: dict[int, bool] = {}
    for node in nodes(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called not in _IMPORTERS:
            continue
        built = called != "lazy_names" and not isinstance(node.args[0], ast.Constant)
        todo: list[ast.expr] = [*node.args, *(k.value for k in node.keywords)]
        followed: set[str] = set()
        while todo:
            for part in ast.walk(todo.pop()):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    found[id(part)] = found.get(id(part), False) or built
                elif isinstance(part, ast.Name) and part.id not in followed:
                    followed.add(part.id)
                    todo.extend(assigned.get(part.id, ()))
    return found


def _logger_names(tree: ast.AST) -> set[int]:
    """The ids of the string nodes given to ``getLogger``: names of loggers, not modules."""
    found = set()
    for node in nodes(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called == "getLogger" and isinstance(node.args[0], ast.Constant):
                found.add(id(node.args[0]))
    return found


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


Kept = Callable[[str, Callable[[], Any]], Any]


UNUSED_FOR = 7 * 24 * 3600  # a source's findings no run has read for a week are removed


@pytest.fixture(scope="session")
def kept(machine_cache: Path | None) -> Kept:
    """``kept(name, compute)``: what ``compute()`` finds in src (a JSON value), kept in the
    machine's test cache (``machine_cache``, shared by every checkout) under a digest of this
    module, the Python that parses, and every source file (paths and bytes): a changed source
    or check computes it again, and a fresh clone of a tree a run already checked reads the
    findings. Parsing and walking the ~640 files cost about 2 s of CPU in each test process
    that ran one of these checks (5.8 s in all, a fresh clone's run). Each finding is written
    beside its name and renamed over it: other checkouts' runs read at the same time.
    Without the machine cache: computed each time."""
    digest = hashlib.sha256(Path(__file__).read_bytes() + sys.version.encode())
    for path in sorted(p for pkg in sorted(FORBIDDEN) for p in (SRC / pkg).rglob("*.py")):
        digest.update(f"\0{path.relative_to(SRC)}\0".encode())
        digest.update(path.read_bytes())
    shelf = None if machine_cache is None else machine_cache / "architecture"
    store = None if shelf is None else shelf / digest.hexdigest()[:32]
    if shelf is not None and shelf.is_dir():
        for old in shelf.iterdir():  # another source's, unread for a week
            with contextlib.suppress(OSError):
                if old != store and time.time() - old.stat().st_mtime > UNUSED_FOR:
                    shutil.rmtree(old)

    def get(name: str, compute: Callable[[], Any]) -> Any:
        if store is None:
            return compute()
        path = store / f"{name}.json"
        with contextlib.suppress(OSError, ValueError):
            found = json.loads(path.read_text(encoding="utf-8"))
            os.utime(store)  # read now: kept another week
            return found
        value = compute()
        partial = path.with_name(f"{path.name}.{uuid.uuid4().hex}")
        try:
            store.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps(value), encoding="utf-8")
            partial.replace(path)
        except OSError:  # a read-only or full cache: computed again next time
            partial.unlink(missing_ok=True)
        return value

    return get


@pytest.fixture(scope="session")
def src_graph(kept: Kept) -> dict[str, set[str]]:
    """``import_graph(SRC)``, kept (``kept``)."""

    def compute() -> dict[str, list[str]]:
        return {module: sorted(targets) for module, targets in import_graph().items()}

    graph: dict[str, list[str]] = kept("import-graph", compute)
    return {module: set(targets) for module, targets in graph.items()}


def test_no_import_cycles(src_graph: dict[str, set[str]]) -> None:
    """Every strongly connected component of the import graph is one module."""
    assert import_cycles(src_graph) == []


def rooms(graph: Mapping[str, set[str]], package: str) -> dict[str, set[str]]:
    """The import graph among ``package``'s rooms: its modules and subpackages, each
    subpackage one node holding everything under it (the package's own ``__init__`` aside)."""

    collapsed: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if (here := _room_of(module, package)) is None:
            continue
        collapsed.setdefault(here, set())
        for target in targets:
            if (there := _room_of(target, package)) is not None and there != here:
                collapsed[here].add(there)
                collapsed.setdefault(there, set())
    return collapsed


def floor_violations(graph: Mapping[str, set[str]]) -> list[str]:
    """Inside every package, rooms that import each other (around a loop), with the imports
    that close it: an import from a lower floor to a higher one.

    A package's rooms stand on floors: a room imports only rooms on lower floors. Module
    cycles are caught by ``import_cycles``; this catches the ones a package hides, such as a
    root module importing ``cli/parser`` while ``cli/`` imports that module.
    """
    packages = sorted({m.rpartition(".")[0] for m in graph if "." in m})
    problems = []
    for package in packages:
        collapsed = rooms(graph, package)
        for cycle in import_cycles(collapsed):
            edges = sorted(
                f"{source} -> {target}"
                for source, targets in graph.items()
                for target in targets
                if _room_of(source, package) in cycle
                and _room_of(target, package) in cycle
                and _room_of(source, package) != _room_of(target, package)
            )
            problems.append(f"{package}: {', '.join(cycle)} ({'; '.join(edges)})")
    return problems


def _room_of(module: str, package: str) -> str | None:
    if not module.startswith(f"{package}."):
        return None
    return f"{package}.{module[len(package) + 1 :].split('.')[0]}"


def floors(graph: Mapping[str, set[str]], package: str) -> list[list[str]]:
    """``package``'s rooms by floor, lowest first: a room stands one floor above the highest
    room it imports (for architecture.md's map; needs ``floor_violations`` empty)."""
    collapsed = rooms(graph, package)
    level: dict[str, int] = {}

    def floor(room: str) -> int:
        if room not in level:
            level[room] = 1 + max((floor(t) for t in collapsed[room]), default=-1)
        return level[room]

    for room in collapsed:
        floor(room)
    return [sorted(r for r in level if level[r] == n) for n in range(max(level.values()) + 1)]


def test_no_import_runs_up_a_floor(src_graph: dict[str, set[str]]) -> None:
    """In every package, the rooms (modules and subpackages) stand on floors."""
    assert floor_violations(src_graph) == []


def drawn_floors(text: str) -> dict[str, list[set[str]]]:
    """architecture.md's floor map: each package's floors, lowest first, as the room names
    each floor's lines hold outside parentheses (a room's description) and after a ``/``."""
    block = text[text.index("```text\nrho_domain (") :]
    block = block[: block.index("\n```\n")]
    drawn: dict[str, list[set[str]]] = {}
    floors: list[set[str]] = []
    for line in block.splitlines()[1:]:
        if line.startswith("rho_"):
            floors = drawn.setdefault(line.split()[0], [])
            continue
        number = re.match(r"  (\d+) ", line)
        if number is not None:
            assert int(number.group(1)) == len(floors), line
            floors.append(set())
        floors[-1] |= set(re.findall(r"[A-Za-z_]\w*", re.sub(r"\([^)]*\)", "", line)))
    return drawn


def test_architecture_md_draws_every_room_on_its_floor(src_graph: dict[str, set[str]]) -> None:
    """The floor map in architecture.md is the code's: a room moved to another floor, or a new
    one, is drawn there (the map went stale once: ``names``, ``earlier_writes``...)."""
    drawn = drawn_floors((SRC.parent / "architecture.md").read_text(encoding="utf-8"))
    wrong = []
    for package, drawn_here in drawn.items():
        computed = floors(src_graph, package)
        if len(computed) != len(drawn_here):
            wrong.append(f"{package}: {len(computed)} floors, {len(drawn_here)} drawn")
            continue
        for number, rooms_here in enumerate(computed):
            names = (room.rsplit(".", 1)[-1] for room in rooms_here)
            wrong += [
                f"{package}: {name} stands on floor {number}"
                for name in names
                if name not in drawn_here[number]
            ]
    assert wrong == []


def test_the_cycle_check_finds_a_two_module_cycle(tmp_path: Path) -> None:
    package = tmp_path / "rho_domain"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from rho_domain import b\n")
    (package / "b.py").write_text("from rho_domain.a import f\n")
    (package / "c.py").write_text("from . import a\n")
    for other in ("rho_adapters", "rho_entry"):
        (tmp_path / other).mkdir()
    graph = import_graph(tmp_path)
    assert graph["rho_domain.c"] == {"rho_domain.a"}
    assert import_cycles(graph) == [["rho_domain.a", "rho_domain.b"]]


def _tree(root: Path, files: Mapping[str, str]) -> dict[str, set[str]]:
    """The import graph of a made-up tree: ``{"rho_entry/cli/main.py": source}``; every
    directory is a package."""
    for package in FORBIDDEN:
        (root / package).mkdir(exist_ok=True)
    for relative, source in files.items():
        path = root / relative
        for parent in path.relative_to(root).parents:
            if parent != Path(".") and not (root / parent / "__init__.py").exists():
                (root / parent).mkdir(exist_ok=True)
                (root / parent / "__init__.py").write_text("")
        path.write_text(source)
    return import_graph(root)


def test_a_string_naming_a_module_is_an_import(tmp_path: Path) -> None:
    """A table of module names is an import: absolute, ``module:function``, relative where it
    reaches an importer (``lazy_names`` too), and bare names where the importer builds the
    name. Logger names, a module's own package, and a relative or bare name that reaches no
    importer (a directory name: ``".git"``, ``".agent"``) are not."""
    graph = _tree(
        tmp_path,
        {
            "rho_entry/cli/main.py": (
                "import importlib, logging\n"
                "log = logging.getLogger('rho_entry.quiet')\n"
                "TABLE = {'monitor': 'rho_entry.monitor', 'ps': 'rho_entry.cli.short:ps',\n"
                "         'fork': '.fork', 'stats': 'rho_entry.stats.main'}\n"
                "PROSE = 'see rho_entry.export for the format'\n"
                "def load(name):\n"
                "    return importlib.import_module(TABLE[name].partition(':')[0], __package__)\n"
            ),
            "rho_entry/cli/walls.py": "NEVER = ('.git', '.fork', 'short')\n",
            "rho_entry/cli/__init__.py": (
                "from rho_domain.lazy_names import lazy_names\n"
                "_EXPORTS = {'Short': '.short', 'git': '.fork:git'}\n"
                "__getattr__ = lazy_names(__name__, _EXPORTS)\n"
            ),
            "rho_entry/cli/git.py": "",
            "rho_entry/cli/short.py": "",
            "rho_entry/cli/fork.py": "",
            "rho_entry/monitor.py": "from rho_entry.cli.main import TABLE\n",
            "rho_entry/stats.py": "",
            "rho_entry/export.py": "",
            "rho_entry/quiet.py": "",
            "rho_entry/lazy/__init__.py": (
                "import importlib\nNAMES = {'Thing': 'things'}\n"
                "def get(name):\n"
                "    return importlib.import_module(f'rho_entry.lazy.{NAMES[name]}')\n"
            ),
            "rho_entry/lazy/things.py": "from importlib import resources\n"
            "resources.files('rho_entry.lazy')\n",
            "rho_entry/plain.py": "WORDS = ('things', 'monitor')\n",
        },
    )
    assert graph["rho_entry.cli.main"] == {
        "rho_entry.monitor",
        "rho_entry.cli.short",
        "rho_entry.cli.fork",
        "rho_entry.stats",
    }
    assert graph["rho_entry.cli.walls"] == set()
    assert graph["rho_entry.cli"] == {"rho_entry.cli.short", "rho_entry.cli.fork"}
    assert graph["rho_entry.lazy"] == {"rho_entry.lazy.things"}
    assert graph["rho_entry.lazy.things"] == set()
    assert graph["rho_entry.plain"] == set()
    assert import_cycles(graph) == [["rho_entry.cli.main", "rho_entry.monitor"]]


def test_the_floor_check_finds_an_import_up_a_floor(tmp_path: Path) -> None:
    """No module cycle, yet ``rho_entry``'s rooms ``cli`` and ``otel`` import each other: the
    floor check names them and the imports that close the loop; one direction is fine."""
    files = {
        "rho_entry/cli/parser.py": "VERSION = '1'\n",
        "rho_entry/cli/app.py": "from rho_entry.otel import instrument\n",
        "rho_entry/otel.py": "def instrument():\n    from rho_entry.cli.parser import VERSION\n",
    }
    graph = _tree(tmp_path, files)
    assert import_cycles(graph) == []
    assert floor_violations(graph) == [
        "rho_entry: rho_entry.cli, rho_entry.otel "
        "(rho_entry.cli.app -> rho_entry.otel; rho_entry.otel -> rho_entry.cli.parser)"
    ]
    (tmp_path / "rho_entry/otel.py").write_text("VERSION = '1'\n")
    graph = import_graph(tmp_path)
    assert floor_violations(graph) == []
    assert floors(graph, "rho_entry") == [["rho_entry.otel"], ["rho_entry.cli"]]
    assert floors(graph, "rho_entry.cli") == [["rho_entry.cli.app", "rho_entry.cli.parser"]]


def test_the_check_catches_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    import httpx\n    from rho_adapters.fakes import FakeClock\n")
    assert {root for root, _ in imported_roots(bad)} == {"httpx", "rho_adapters"}


def test_importing_the_domain_loads_nothing_outside_stdlib_and_attrs() -> None:
    code = (
        "import sys, rho_domain, rho_domain.loop.session, rho_domain.tools.registry\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)"
        " - {'attr', 'attrs', 'rho_domain', '__main__', '_distutils_hack'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_importing_the_entry_package_is_light() -> None:
    code = (
        "import sys, rho_entry, rho_agent\n"
        "heavy = {'httpx', 'yaml', 'cattrs', 'psycopg', 'pymysql', 'openpyxl'}\n"
        "print(','.join(sorted(heavy & {m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_rho_agent_is_an_alias_of_the_entry_api() -> None:
    """Every public name of rho_entry is importable from rho_agent, and is the same object;
    the design documents' other names are the objects of the modules they alias."""
    import importlib

    import rho_agent
    import rho_entry

    documents = rho_agent._DOCUMENT_NAMES
    assert set(rho_agent.__all__) == set(rho_entry.__all__) | set(documents)
    for name in rho_entry.__all__:
        assert getattr(rho_agent, name) is getattr(rho_entry, name)
    for name, module in documents.items():
        assert getattr(rho_agent, name) is getattr(importlib.import_module(module), name)


# rho_entry reaches stored sessions only through the ports (SessionStore, SignalSource,
# SessionCatalog, SessionControl), whose adapters are chosen in one place:
# rho_entry/config/stores.py
# (issue 27). The server's fast paths on the file store are the file adapter's own (meta.json
# listings, trace reads resumed from the last one's end), behind the same ports.
STORE_COMPOSITION = {"rho_entry/config/stores.py"}


def store_imports(path: Path) -> list[str]:
    """The store adapter modules a module imports (``rho_adapters.store``/``.pgstore``...)."""
    tree = parse(path)
    names: list[str] = []
    for node in nodes(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return [
        n
        for n in names
        if n.split(".")[:2] in (["rho_adapters", "store"], ["rho_adapters", "pgstore"])
    ]


def test_the_entry_layer_reaches_stores_only_through_the_ports(kept: Kept) -> None:
    def compute() -> list[str]:
        return [
            str(path.relative_to(SRC))
            for path in sorted((SRC / "rho_entry").rglob("*.py"))
            if store_imports(path)
        ]

    assert set(kept("store-importers", compute)) - STORE_COMPOSITION == set()


def test_the_store_check_finds_an_import_in_a_function(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from rho_adapters.store.layout import resolve\n")
    assert store_imports(module) == ["rho_adapters.store.layout"]
