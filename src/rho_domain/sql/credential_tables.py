"""SQLite files that are credential stores, known by their tables whatever the file's name.

The secrets policy knows gcloud's ``credentials.db``, Firefox's ``cookies.sqlite`` and
Chromium's ``Login Data`` by name and location. The same content under another name is not
known there: a hard link (``app.db``, a second name of ``~/.config/gcloud/credentials.db``),
a copy, a mount of the directory elsewhere, or an Electron application's cookie jar
(``~/.config/Slack/Cookies``, Chromium's format, a session cookie that logs in as the user).
A SQLite alias opens one file, so it can afford to look at what the file holds: a file with
one of these tables, each with the columns that make it the tool's store, is refused as the
file by its name is.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class CredentialTable:
    """A table that makes a SQLite file a credential store: its ``name`` (compared without
    case, as SQLite does), the ``columns`` it must have (lower case), and ``what`` the file
    is, in words for the refusal."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    name: str
    columns: frozenset[str]
    what: str


CREDENTIAL_TABLES = (
    CredentialTable(
        name="credentials",
        columns=frozenset({"account_id", "value"}),
        what="gcloud's credentials.db (refresh tokens, service-account keys)",
    ),
    CredentialTable(
        name="access_tokens",
        columns=frozenset({"account_id", "access_token"}),
        what="gcloud's access_tokens.db",
    ),
    CredentialTable(
        name="cookies",
        columns=frozenset({"host_key", "encrypted_value"}),
        what="a Chromium or Electron cookie store (Cookies: signed-in sessions)",
    ),
    CredentialTable(
        name="logins",
        columns=frozenset({"origin_url", "password_value"}),
        what="Chromium's Login Data (saved passwords)",
    ),
    CredentialTable(
        name="token_service",
        columns=frozenset({"encrypted_token"}),
        what="Chromium's Web Data (its sign-in tokens)",
    ),
    CredentialTable(
        name="moz_cookies",
        columns=frozenset({"host", "value"}),
        what="a Firefox or Thunderbird cookies.sqlite (its cookies in clear)",
    ),
    CredentialTable(
        name="nssprivate",
        columns=frozenset(),
        what="an NSS key database, key4.db (private keys, the key of saved passwords)",
    ),
)
CANDIDATE_NAMES = frozenset(table.name for table in CREDENTIAL_TABLES)


def credential_store(tables: Mapping[str, frozenset[str]]) -> str | None:
    """What credential store a SQLite file is, given its tables among ``CANDIDATE_NAMES``
    (lower case) with their columns (lower case), as "<what> (table <name>)"; None when it
    is none."""
    for table in CREDENTIAL_TABLES:
        columns = tables.get(table.name)
        if columns is not None and table.columns <= columns:
            return f"{table.what} (table {table.name})"
    return None
