"""Which of MariaDB's and MySQL's built-in functions a server of a given version has.

An unqualified call of a name the server does not build in calls the stored function of
that name in the current database, whoever made it and whatever it does (``SET GLOBAL``
with its definer's rights). So a name built in only from some version (MariaDB's
``sformat``, ``natural_sort_key``, ``json_normalize`` from 10.7) is allowed only on a
server of that version or later: on an older one it is anyone's function. The versions are
the engines' function references' "introduced in".
"""

from __future__ import annotations

import re

from rho_domain.sql.functions import MARIADB_ONLY, MYSQL_FUNCTIONS, MYSQL_ONLY, names

Version = tuple[int, int, int]

_WINDOW = "row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value"
_WINDOW += " last_value nth_value"
_JSON = """
    json_array json_array_append json_array_insert json_contains json_contains_path
    json_depth json_extract json_insert json_keys json_length json_merge json_object
    json_quote json_remove json_replace json_search json_set json_type json_unquote
    json_valid
"""

# The names on the allowlist built in only from the version given (older ones: always),
# from the function references' "introduced in" (MariaDB's knowledge base, MySQL's manual).
MARIADB_SINCE: dict[Version, frozenset[str]] = {
    (10, 2, 0): names(_WINDOW),
    (10, 2, 3): names(_JSON + " json_exists json_query json_value"),
    (10, 2, 4): names("json_compact json_detailed json_loose"),
    (10, 3, 1): names("chr"),
    (10, 3, 3): names("median percentile_cont percentile_disc"),
    (10, 5, 0): names("json_arrayagg json_objectagg"),
    (10, 6, 0): names("json_table"),
    (10, 6, 1): names("to_char sys_guid"),
    (10, 7, 0): names("natural_sort_key sformat json_normalize json_equals"),
    (10, 9, 0): names("json_overlaps"),
    (10, 10, 0): names("random_bytes"),
}
# Names MariaDB added to several series at once, in a patch release of each: built in from
# the version listed for the server's series, in every later series, in no earlier or
# unlisted one (JSON_PRETTY: 10.4.28 has it, 10.4.27 and every 10.3 do not). 10.11's first
# releases were previews, listed from the first stable one.
MARIADB_BACKPORTED: dict[str, tuple[Version, ...]] = {
    "json_merge_patch": ((10, 2, 25), (10, 3, 16), (10, 4, 5)),
    "json_merge_preserve": ((10, 2, 25), (10, 3, 16), (10, 4, 5)),
    "json_pretty": (
        (10, 4, 28), (10, 5, 19), (10, 6, 12), (10, 7, 8), (10, 8, 7), (10, 9, 5), (10, 10, 3),
        (10, 11, 2),
    ),
}  # fmt: skip
MYSQL_SINCE: dict[Version, frozenset[str]] = {
    (5, 7, 5): names("any_value"),
    (5, 7, 8): names(_JSON),
    (5, 7, 22): names(
        "json_arrayagg json_objectagg json_storage_size json_pretty json_merge_patch "
        "json_merge_preserve"
    ),
    (8, 0, 0): names("bin_to_uuid uuid_to_bin is_uuid current_role"),
    (8, 0, 2): names("json_storage_free " + _WINDOW),
    (8, 0, 4): names(
        "regexp_instr regexp_like regexp_replace regexp_substr json_table icu_version"
    ),
    (8, 0, 16): names("format_bytes format_pico_time"),
    (8, 0, 17): names("json_overlaps json_schema_valid"),
    (8, 0, 21): names("json_value"),
}


# MariaDB 10 greets as 5.5.5-10.11.19-MariaDB (for clients that took 10 for older than 5),
# and PyMySQL keeps the prefix: read as 5.5.5, the version ruled out 10.7's names and 11.5's
# max_tmp_session_space_usage alike.
_GREETING = re.compile(r"(?:5\.5\.5-)?(\d+)\.(\d+)\.(\d+)")


def server_version(server_info: str) -> Version:
    """The version a server's greeting (``5.5.5-10.11.19-MariaDB-0+deb12u1``, ``8.0.36``)
    names; ``(0, 0, 0)`` when it names none, so no version-bound name is taken as built in."""
    found = _GREETING.match(server_info)
    return (int(found[1]), int(found[2]), int(found[3])) if found else (0, 0, 0)


def mysql_builtins(*, mariadb: bool, version: Version) -> frozenset[str]:
    """The allowlist's names a MariaDB (``mariadb``) or MySQL server of ``version`` builds
    in: the other flavour's names and those built in only from a later version dropped."""
    since = MARIADB_SINCE if mariadb else MYSQL_SINCE
    later = {name for first, added in since.items() if first > version for name in added}
    if mariadb:
        later |= {
            name for name, firsts in MARIADB_BACKPORTED.items() if not _backported(firsts, version)
        }
    return MYSQL_FUNCTIONS - (MYSQL_ONLY if mariadb else MARIADB_ONLY) - later


def _backported(firsts: tuple[Version, ...], version: Version) -> bool:
    """Whether a server of ``version`` has a name first released in each series' ``firsts``."""
    if version[:2] > max(firsts)[:2]:
        return True
    return any(first[:2] == version[:2] and version >= first for first in firsts)
