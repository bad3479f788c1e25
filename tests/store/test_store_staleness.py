"""``$RHO_AGENT_STORE_STALE_AFTER``: how soon a dead host's PostgreSQL sessions show ``stale``
and may be taken over (``rho_entry.config.stores.staleness``). Nothing here connects: the
store is built lazily, so the bounds it was given are read off its backend. The two servers of
``tests/server/test_server_shared_store.py`` use a short window end to end."""

from __future__ import annotations

import secrets

import pytest

from rho_adapters.pgstore import PgSessionStore
from rho_adapters.pgstore.backend import HEARTBEAT_SECONDS, STALE_AFTER_SECONDS
from rho_domain.errors import ConfigError
from rho_entry.config.stores import STALE_VAR, choose_store, staleness


def fresh_url() -> str:
    # the process shares one backend per URL, built with the first caller's bounds
    return f"postgresql://nobody@127.0.0.1:1/db_{secrets.token_hex(6)}"


def bounds(env: dict[str, str]) -> tuple[float, float]:
    store = choose_store(fresh_url(), env).store
    assert isinstance(store, PgSessionStore)
    return store.backend.stale_after, store.backend.heartbeat


def test_unset_or_empty_keeps_the_adapter_defaults() -> None:
    assert bounds({}) == (STALE_AFTER_SECONDS, HEARTBEAT_SECONDS) == (8.0, 2.0)
    assert bounds({STALE_VAR: " "}) == (8.0, 2.0)


def test_a_window_sets_the_staleness_and_a_beat_of_a_quarter_at_most_two_seconds() -> None:
    assert bounds({STALE_VAR: "3"}) == (3.0, 0.75)
    assert bounds({STALE_VAR: "60"}) == (60.0, HEARTBEAT_SECONDS)


@pytest.mark.parametrize("value", ["0", "0.5", "-3", "abc", "nan", "inf", "3601"])
def test_a_value_that_is_not_seconds_from_1_to_3600_is_one_error_naming_the_variable(
    value: str,
) -> None:
    with pytest.raises(ConfigError, match=r"\$RHO_AGENT_STORE_STALE_AFTER=.* from 1 to 3600"):
        staleness({STALE_VAR: value})
    with pytest.raises(ConfigError, match="RHO_AGENT_STORE_STALE_AFTER"):
        choose_store(fresh_url(), {STALE_VAR: value})


def test_a_file_store_ignores_the_setting(tmp_path: object) -> None:
    chosen = choose_store(str(tmp_path), {STALE_VAR: "abc"})
    assert chosen.root is not None
