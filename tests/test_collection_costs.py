"""What each xdist worker pays to collect the suite, kept from growing back: every worker
collects every test (xdist compares their collections), so a cost at collection is paid four
times a run (``scripts/test.sh``) whatever each worker then runs."""

from __future__ import annotations

from typing import Any

import pytest

# Packages only a few tests use, which those tests import where they use them (in the test,
# a helper or a fixture) rather than at their module's top. CPU of importing each after what
# the suite's collection imports anyway, in one worker: SQLAlchemy 0.2 s (through
# ``rho_adapters.durable.system_db``), openpyxl 0.15 s, dbos 0.65 s, playwright 0.1 s,
# jsonschema 0.06 s, psycopg 0.15 s (eleven db, store and server modules connect with it
# beside their adapters), PyMySQL 0.04 s; Starlette and uvicorn come with the server's app.
LAZY = (
    "sqlalchemy",
    "openpyxl",
    "dbos",
    "playwright",
    "jsonschema",
    "psycopg",
    "pymysql",
    "starlette",
    "uvicorn",
)


def test_collection_imports_none_of_the_packages_few_tests_use(
    pytestconfig: pytest.Config,
) -> None:
    # the plugin as pytest loaded it: imported again by name it would be another module, with
    # another key (and mypy would not find it: tests/ is no package base)
    plugin: Any = pytestconfig.pluginmanager.get_plugin("collection_imports")
    imported = pytestconfig.stash[plugin.COLLECTION_IMPORTS]
    assert not imported & set(LAZY), (
        f"collecting the tests imported {sorted(imported & set(LAZY))}: import them inside "
        "the tests or fixtures that use them (tests/test_collection_costs.py says why)"
    )


def test_the_suite_loads_no_plugin_it_does_not_use(pytestconfig: pytest.Config) -> None:
    # anyio's plugin (installed with anyio) runs no test here (none is marked anyio, and
    # --strict-markers refuses the mark now), yet it looked at every item at collection and
    # wraps every fixture's setup: pyproject's addopts has "-p no:anyio"
    assert not pytestconfig.pluginmanager.has_plugin("anyio")


# The regular expressions one file of tests/ may compile while the suite collects (its top,
# its parametrize lists, its module-level helpers): more belong in the tests that use them,
# compiled at first use. test_properties_secrets.py and test_properties_secret_copies.py
# compiled 815 and 836 at import, 0.4 s of every worker's collection.
COMPILES_AT_COLLECTION = 16


def test_no_test_module_compiles_its_expressions_at_collection(
    pytestconfig: pytest.Config,
) -> None:
    plugin: Any = pytestconfig.pluginmanager.get_plugin("collection_imports")
    counted = pytestconfig.stash[plugin.COLLECTION_COMPILES]
    over = {path: n for path, n in counted.items() if n > COMPILES_AT_COLLECTION}
    assert not over, (
        f"compiled at collection (regular expressions, by file): {over}: compile them where "
        "the tests use them (tests/test_collection_costs.py says why)"
    )


@pytest.mark.slow
async def _probe() -> None:
    pass


def test_a_coroutine_test_keeps_the_item_pytest_built(request: pytest.FixtureRequest) -> None:
    """``tests/asyncio_items.py``: pytest-asyncio's item for a coroutine test is the one
    pytest built, given the plugin's class, equal in all it holds to the item the plugin's
    own ``_from_function`` builds anew (which every worker did for 8,852 tests)."""
    import pytest_asyncio
    from pytest_asyncio import plugin as asyncio_plugin

    ours: Any = request.config.pluginmanager.get_plugin("asyncio_items")
    if pytest_asyncio.__version__ not in ours.VERIFIED:
        pytest.skip(f"pytest-asyncio {pytest_asyncio.__version__}: read its _from_function")

    def collected(kind: type[pytest.Function] = pytest.Function) -> pytest.Function:
        """A coroutine test's item as pytest (or a plugin of ``kind``) builds it."""
        function = kind.from_parent(request.node.parent, name="_probe", callobj=_probe)
        assert asyncio_plugin._resolve_asyncio_marker(function) is not None
        return function

    first = collected()
    kind = asyncio_plugin.PytestAsyncioFunction.item_subclass_for(first)
    assert kind is asyncio_plugin.Coroutine
    item = kind._from_function(first)
    assert item is first  # not built again
    assert type(item) is asyncio_plugin.Coroutine
    own: Any = asyncio_plugin._built_twice  # type: ignore[attr-defined]  # (asyncio_items)
    built = own.__func__(kind, collected())  # the plugin's own build
    assert type(built) is type(item)
    for held in ("nodeid", "name", "originalname", "obj", "fixturenames", "_loop_scope"):
        assert getattr(item, held) == getattr(built, held), held
    assert [(m.name, m.args, m.kwargs) for m in item.iter_markers()] == [
        (m.name, m.args, m.kwargs) for m in built.iter_markers()
    ]
    assert set(item.keywords) == set(built.keywords)
    assert "slow" in item.keywords
    other = collected(type("OtherPluginsItem", (pytest.Function,), {}))
    anew = kind._from_function(other)  # another plugin's item: built anew, as the plugin does
    assert anew is not other
    assert type(anew) is kind
