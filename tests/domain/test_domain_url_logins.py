"""The one rule of what a URL's login is (``rho_domain.url_logins``), which every place that
shows or keeps a URL applies: the model clients' proxies, MCP over HTTP, the PostgreSQL store,
the durable runs' database, stored configs, driver errors and the developer shell's scrubbed
environment."""

from __future__ import annotations

import pytest

from rho_adapters.model.tls import transport_for
from rho_adapters.pgstore.connection import shown_url
from rho_domain.errors import ConfigError
from rho_domain.url_logins import drop_url_logins, has_url_login, hide_url_logins

CASES = [
    ("http://me:s3cret@proxy:3128", "http://me:***@proxy:3128", "http://me@proxy:3128"),
    # a password holding an '@': the authority's last '@' ends the login, as a parser reads it
    ("http://me:p@ss@proxy:3128/x", "http://me:***@proxy:3128/x", "http://me@proxy:3128/x"),
    ("postgresql://:pw@db/rho", "postgresql://:***@db/rho", "postgresql://@db/rho"),
    ("postgresql://rho@db/rho", "postgresql://rho@db/rho", "postgresql://rho@db/rho"),
    ("https://host/a:b@c", "https://host/a:b@c", "https://host/a:b@c"),  # a path, not a login
    (
        "could not connect to postgresql://u:pw@[::1 (bad) and mail@example.org",
        "could not connect to postgresql://u:***@[::1 (bad) and mail@example.org",
        "could not connect to postgresql://u@[::1 (bad) and mail@example.org",
    ),
]


@pytest.mark.parametrize(("text", "hidden", "dropped"), CASES)
def test_a_login_is_hidden_or_dropped(text: str, hidden: str, dropped: str) -> None:
    assert hide_url_logins(text) == hidden
    assert drop_url_logins(text) == dropped
    assert has_url_login(text) is (hidden != text)  # the shell's scrub drops such a value


@pytest.mark.parametrize(("text", "hidden", "dropped"), CASES)
def test_the_stores_show_urls_by_the_same_rule(text: str, hidden: str, dropped: str) -> None:
    # here, not at import: system_db imports SQLAlchemy, 0.2 s of every worker's collection
    from rho_adapters.durable.system_db import shown

    assert shown_url(text) == hidden
    assert shown(text) == hidden


def test_a_refused_proxy_is_named_by_the_same_rule() -> None:
    with pytest.raises(ConfigError) as refused:
        transport_for("http://model/v1", proxy="ftp://me:p@ss@proxy:21")
    assert "ftp://me:***@proxy:21" in str(refused.value)
    assert "ss@" not in str(refused.value)
