"""What a model server said, less the secrets it may quote: the API key sent, in every form a
server echoes it, and a URL's password.

``hide_secrets`` serves whatever keeps or shows a server's words: an error's message
(``_errors.explain``), a skipped stream event's trace (``skipped_events``), a Daytona API
error (``daytona._errors``). Loaded with the first text it hides: a run whose server answers
in chunks never needs it.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, quote_plus

from rho_domain.url_logins import hide_url_logins

_SECRET_KEY_LENGTH = 12  # shorter keys are placeholders, not hidden
_URL_SAFE = str.maketrans("+/", "-_")


def hide_secrets(text: str, key: str | None) -> str:
    """``text`` without ``key`` (the API key sent) and without a URL's password: for what a
    server said that is kept or shown (an error's message, a skipped event's trace)."""
    text = hide_url_logins(text)
    # a placeholder key ("EMPTY", "x": local servers) is no secret, and hiding it would
    # mangle the server's words wherever those letters appear
    if key is not None and len(key) >= _SECRET_KEY_LENGTH:
        for form in _key_forms(key):
            text = text.replace(form, "***")
    return text


def _key_forms(key: str) -> list[str]:
    """``key`` as a server may echo it: whole, URL-encoded, JSON-escaped, and base64'd (a
    header echoed in a body), longest first. Inside a longer base64 text the key starts at
    one of three alignments: each is the run of characters that depend on its bytes only."""
    raw, forms = key.encode(), {key, quote(key, safe=""), quote_plus(key), json.dumps(key)[1:-1]}
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode()
        core = encoded[4 if shift else 0 : (shift + len(raw)) // 3 * 4]
        if len(core) >= _SECRET_KEY_LENGTH:
            forms.update((core, core.translate(_URL_SAFE)))
    return sorted(forms, key=len, reverse=True)
