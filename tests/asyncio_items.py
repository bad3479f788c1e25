"""pytest-asyncio's items for coroutine tests, made without building each test twice: loaded
by ``tests/conftest.py`` (``pytest_plugins``).

pytest-asyncio turns each coroutine test pytest collected into an item of its own class
(``Coroutine``, ``AsyncHypothesisTest``, ...) by building a second item from the first
(``PytestAsyncioFunction._from_function``: ``from_parent`` with the first's parent, name,
callspec, function, fixture closure, keywords and markers) and dropping the first. 8,852 of
the suite's 14,163 tests are coroutines, so every xdist worker built 8,852 items twice: about
1.1 s of a warm collection's 6-7 s of CPU (16 %, ``-p no:asyncio`` against the plugin, five
runs each, load 12-18). Here the first item is given the plugin's class instead: the same
node, holding everything the plugin passes on, so nothing else differs.

Only for the versions of pytest-asyncio whose ``_from_function`` was read and is pinned by
``tests/test_collection_costs.py`` (``VERIFIED``); any other builds its items as it does.
"""

from __future__ import annotations

from typing import Any

import pytest

VERIFIED = ("1.5.0",)


def pytest_configure(config: pytest.Config) -> None:
    del config
    plugin = _plugin()
    if plugin is not None and "_built_twice" not in vars(plugin):
        base = plugin.PytestAsyncioFunction
        plugin._built_twice = base._from_function  # the plugin's own, kept for the test
        base._from_function = classmethod(_retyped)


def _plugin() -> Any:
    """``pytest_asyncio.plugin`` when it is a verified version; None otherwise."""
    try:
        import pytest_asyncio
        from pytest_asyncio import plugin
    except ImportError:
        return None
    return plugin if pytest_asyncio.__version__ in VERIFIED else None


def _retyped(cls: type[pytest.Function], function: pytest.Function, /) -> pytest.Function:
    """``function``, now of ``cls`` (a ``PytestAsyncioFunction``): what the plugin's own
    ``_from_function`` builds anew from it, without the build. An item of another class
    (another plugin's) is built anew, as the plugin does."""
    if type(function) is not pytest.Function:
        return _plugin()._built_twice.__func__(cls, function)  # type: ignore[no-any-return]
    assert function.get_closest_marker("asyncio")  # as the plugin's own asserts
    function.__class__ = cls
    return function
