"""HTTP header names in configuration: checked once, merged without duplicates.

HTTP header names are case-insensitive (RFC 9110, 5.1), but a Python mapping's keys are not:
a configured ``authorization`` beside the ``Authorization`` the adapter sets was sent as two
headers, two credentials in one request, which servers resolve as they please (the first, the
last, or a 400). So configured names are checked where the configuration is read
(``check_header_names``: a token, and no two spellings of one name), and every adapter merges
its own headers with configured ones through ``headers_over``, where a configured header
replaces the adapter's of the same name in any case.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from rho_domain.errors import ConfigError

# RFC 9110 5.6.2: token = 1*tchar
_HEADER_NAME = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"


def check_header_names(names: Iterable[str], where: str) -> None:
    """Raise ConfigError naming ``where`` for a name that is not an HTTP token (a space, a
    colon, a line break: h11 refused it at the first request) or for two names that differ
    only in case (both were sent)."""
    seen: dict[str, str] = {}
    for name in names:
        if not re.fullmatch(_HEADER_NAME, name):
            raise ConfigError(
                f"{where}: {name!r} is not an HTTP header name (letters, digits and "
                "!#$%&'*+-.^_`|~ only; no space or colon)"
            )
        folded = name.lower()
        if folded in seen:
            raise ConfigError(
                f"{where}: {seen[folded]!r} and {name!r} are one header (names ignore case); "
                "keep one"
            )
        seen[folded] = name


def headers_over(own: Mapping[str, str], configured: Mapping[str, str]) -> dict[str, str]:
    """``own`` (the adapter's headers) with each of ``configured`` in place of the one of
    the same name in any case: one header per name, the configured value winning."""
    replaced = {name.lower() for name in configured}
    merged = {name: value for name, value in own.items() if name.lower() not in replaced}
    merged.update(configured)
    return merged
