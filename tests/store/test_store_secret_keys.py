"""Which config keys a session's snapshot drops as secret: a key whose last word is a secret's
(``auth_token``, ``api_key``, ``password``; not ``max_tokens`` nor ``password_env``). Decided
by string tests; they must drop exactly the keys the expression they replaced dropped."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from rho_adapters.store.meta import without_secrets

# The rule as it was written before (re.search on the lowercased key).
REFERENCE = re.compile(
    r"(^|_)(password|passwd|pwd|secret|token|api_?key|credentials?|private_key|access_key)$"
)
WORDS = st.sampled_from(
    [
        "", "_", "password", "passwd", "pwd", "secret", "secrets", "token", "tokens", "api",
        "key", "apikey", "api_key", "api__key", "credential", "credentials", "private",
        "private_key", "access", "access_key", "env", "max", "auth", "db", "\n", " ", "-",
        "PASSWORD", "Token", "İ",
    ]
)  # fmt: skip
KEYS = st.lists(WORDS, max_size=4).map("".join) | st.text(max_size=12)


@given(key=KEYS)
def test_a_key_is_dropped_exactly_when_the_expression_matched(key: str) -> None:
    dropped = REFERENCE.search(key.lower()) is not None
    assert (key not in without_secrets({key: "value"})) == dropped
    nested = without_secrets({"databases": [{key: "value"}]})["databases"][0]
    assert (key not in nested) == dropped


def test_the_last_word_decides() -> None:
    keys = [
        "password", "db_password", "auth_token", "API_KEY", "openai_apikey", "credentials",
        "aws_access_key", "token\n", "password_env", "max_tokens", "tokens", "mytoken",
        "secret_name", "token\n\n",
    ]  # fmt: skip
    kept = without_secrets(dict.fromkeys(keys, "v"))
    assert sorted(kept) == sorted(
        ["password_env", "max_tokens", "tokens", "mytoken", "secret_name", "token\n\n"]
    )
