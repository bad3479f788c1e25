"""``{{ name }}`` substitution in prompt templates, by string searches: it must replace and
refuse exactly what the expression it replaced did (``re.sub`` of the pattern below), for any
text: braces that open and never close, nested or tripled braces, blanks and newlines inside,
names that are not identifiers. Jinja applied to a variable (``{{ who|upper }}``, ``{{ who.x
}}``, ``{% if who %}``: the reference implementation's templates) is refused first (``JINJA``)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rho_domain.errors import ConfigError
from rho_entry.config.templates import substitute

REFERENCE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# every "{{" (overlapping) with the first "}}" after it; inside, a name then | . or [
JINJA = re.compile(r"(?=\{\{(.*?)\}\})", re.S)
ON_A_NAME = re.compile(r"[ \t\n+-]*([A-Za-z_][A-Za-z0-9_]*)\s*[|.\[]")
VALUES = {"who": "W", "a": "{{ who }}", "_x9": ""}


def jinja(text: str) -> bool:
    """Whether an expression applies Jinja to a variable (what is refused first)."""
    found = (ON_A_NAME.match(m.group(1)) for m in JINJA.finditer(text))
    return any(m is not None and m.group(1) in VALUES for m in found)


def reference(text: str) -> str | None:
    """What the expression gave: the text, or None where a name had no value."""
    try:
        return REFERENCE.sub(lambda m: VALUES[m.group(1)], text)
    except KeyError:
        return None


PIECES = st.sampled_from(
    [
        "{{", "}}", "{", "}", " ", "\n", "\t", "\u2003", "who", "a", "_x9", "9a", "nope", "é",
        "İ", "a b", "x", ".", "|", "[", "-", "{{ who }}", "{{who}}", "{{ nope }}", "}}}", "{{{",
    ]
)  # fmt: skip
TEXTS = st.lists(PIECES, max_size=10).map("".join) | st.text(alphabet="{} aw\n_9", max_size=20)


@given(text=TEXTS)
def test_substitution_is_the_expression_s(text: str) -> None:
    expected = reference(text)
    if jinja(text):
        with pytest.raises(ConfigError, match="is Jinja, which rho-agent templates do not run"):
            substitute(text, VALUES, source="t.md")
    elif expected is None:
        with pytest.raises(ConfigError, match="no value was given"):
            substitute(text, VALUES, source="t.md")
    else:
        assert substitute(text, VALUES, source="t.md") == expected


def test_examples() -> None:
    text = "{{who}} {{ a }} {{{ who }}} {{ 9a }} {{ é }} {{ who } }} {{\n_x9\u2003}}{{"
    assert substitute(text, VALUES) == "W {{ who }} {W} {{ 9a }} {{ é }} {{ who } }} {{"
    with pytest.raises(ConfigError, match=r"t\.md: the template uses \{\{ nope \}\}"):
        substitute("ok {{ who }} then {{ nope }}", VALUES, source="t.md")


def test_jinja_on_a_variable_is_refused_naming_it() -> None:
    """Before, a template written for the reference implementation (Jinja) was sent to the
    model with its tags and filters as written: ``Hello al{% if n %} x2{% endif %} {{ who|upper
    }}``, the value of ``n`` and the upper-cased name never shown, and nothing said."""
    values = {"who": "al", "n": "2"}
    for construct in ("{% if n %}", "{{ who|upper }}", "{{- who.title() }}", "{{ who [0] }}"):
        with pytest.raises(ConfigError) as refused:
            substitute(f"Hello {{{{ who }}}} {construct} x", values, source="j.md")
        assert str(refused.value).startswith(f"j.md: {construct!r} is Jinja")
    kept = "{% raw %} ${{ secrets.TOKEN }} {{ other|upper }} {{ {{ who }} {%"
    assert substitute(kept, values) == "{% raw %} ${{ secrets.TOKEN }} {{ other|upper }} {{ al {%"
