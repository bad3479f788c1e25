"""The dependency rule, enforced by parsing every module's imports.

rho_entry -> rho_adapters -> rho_domain; rho_domain imports only the standard library and
attrs. The check reads source with ``ast`` (imports inside functions and TYPE_CHECKING blocks
count too), so it fails the moment someone adds a forbidden import anywhere.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
DOMAIN_ALLOWED = {"attr", "attrs", "rho_domain"}
FORBIDDEN = {
    "rho_domain": {"rho_adapters", "rho_entry"},
    "rho_adapters": {"rho_entry"},
    "rho_entry": set(),
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
        "import sys, rho_entry\n"
        "heavy = {'httpx', 'yaml', 'cattrs', 'psycopg', 'pymysql', 'openpyxl'}\n"
        "print(','.join(sorted(heavy & {m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
