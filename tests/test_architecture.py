"""The dependency rule, enforced by parsing every module's imports.

rho_entry -> rho_adapters -> rho_domain; rho_domain imports only the standard library and
attrs; and no two modules import each other, directly or around a loop. The checks read source
with ``ast`` (imports inside functions and TYPE_CHECKING blocks count too), so they fail the
moment someone adds a forbidden import anywhere.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

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


def imported_roots(path: Path) -> set[tuple[str, int]]:
    """Top-level package names imported by a module, with line numbers."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[tuple[str, int]] = set()
    for node in ast.walk(tree):
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
def test_dependency_rule(package: str) -> None:
    assert violations(package) == []


def module_name(path: Path, root: Path = SRC) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Module -> the project modules it imports (at module level, in functions, anywhere).

    ``from package import name`` points at ``package.name`` when that is a module, else at
    ``package``. Relative imports are resolved against the importing module.
    """
    paths = {module_name(p, root): p for pkg in FORBIDDEN for p in (root / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
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
            graph[name].update(t for t in targets if t in paths and t != name)
    return graph


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


def test_no_import_cycles() -> None:
    """Every strongly connected component of the import graph is one module."""
    assert import_cycles(import_graph()) == []


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


def test_the_check_catches_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    import httpx\n    from rho_adapters.fakes import FakeClock\n")
    assert {root for root, _ in imported_roots(bad)} == {"httpx", "rho_adapters"}


def test_importing_the_domain_loads_nothing_outside_stdlib_and_attrs() -> None:
    code = (
        "import sys, rho_domain, rho_domain.session, rho_domain.tools.registry\n"
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


# rho_entry reaches stored sessions through the ports (SessionStore, SignalSource,
# SessionCatalog, SessionControl), whose adapters are chosen in one place: rho_entry/stores.py
# (issue 27). The modules below still read the file layout directly; this list only shrinks
# (a module that stops importing the store's modules must leave it).
STORE_COMPOSITION = {"rho_entry/stores.py"}
STILL_ON_FILES = {
    "rho_entry/stored.py": "the seeds' SessionStore subclasses the file store (a URL: PG's)",
    "rho_entry/seed_state.py": "State.from_jsonl reads a trace.jsonl file the caller names",
    "rho_entry/server/host.py": "the file store's fast paths (other stores: the port)",
    "rho_entry/server/views.py": "the server's listing reads meta.json files",
    "rho_entry/server/feed.py": "the server's streams tail trace.jsonl",
    "rho_entry/server/tally.py": "the server's counts read trace.jsonl",
}


def store_imports(path: Path) -> list[str]:
    """The store adapter modules a module imports (``rho_adapters.store``/``.pgstore``...)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return [
        n
        for n in names
        if n.split(".")[:2] in (["rho_adapters", "store"], ["rho_adapters", "pgstore"])
    ]


def test_the_entry_layer_reaches_stores_only_through_the_ports() -> None:
    found = {
        str(path.relative_to(SRC))
        for path in sorted((SRC / "rho_entry").rglob("*.py"))
        if store_imports(path)
    }
    assert found - STORE_COMPOSITION == set(STILL_ON_FILES)


def test_the_store_check_finds_an_import_in_a_function(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from rho_adapters.store.layout import resolve\n")
    assert store_imports(module) == ["rho_adapters.store.layout"]
