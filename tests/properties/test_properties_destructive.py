"""The destructive-command check for any line a model can write: it never fails, and a
destructive command keeps asking wherever it is put and however its words are quoted."""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from rho_domain.shell.destructive import destructive_reason

PIECES = st.sampled_from(
    [
        "rm", "-rf", "ls", "git", "push", "-f", "find", ".", "-delete", "-exec", "{}", "';'",
        "bash", "-c", "'", '"', "\\", "|", "||", "&&", ";", "(", ")", "<", ">", "<<'E'\nx\nE\n",
        "$", "$(", "`", "*", "x", "xargs", "sudo", "env", "A=1", "\n", " ", "\t", "--", "=",
        "\x1b", "\u202e", "python", "-c", "sh", "curl", "eval", "timeout", "5", "/dev/sda",
    ]
)  # fmt: skip
LINES = st.lists(PIECES, max_size=14).map(" ".join)
BENIGN = st.sampled_from(["ls -la", "git status", "pytest -q", "echo hi", "cat a | wc -l"])
DANGEROUS = st.sampled_from(
    ["rm -rf build", "rm -fr build", "git push --force", "find . -delete", "dd of=/dev/sda"]
)


def _quoted(word: str, style: int) -> str:
    """``word`` spelled another way bash reads as the same word."""
    if style == 0:
        return word
    if style == 1:
        return f"'{word}'"  # none of the words holds a single quote
    if style == 2:
        return f'"{word}"' if not any(c in word for c in '"$`\\') else word
    return "".join("\\" + c if c.isalnum() else c for c in word)


@given(LINES)
def test_the_check_never_fails_and_always_answers_text(line: str) -> None:
    assert isinstance(destructive_reason(line), str)


@given(
    st.lists(BENIGN, max_size=3),
    DANGEROUS,
    st.lists(BENIGN, max_size=3),
    st.sampled_from([";", "&&", "||", "\n", "|"]),
    st.integers(min_value=0, max_value=3),
)
def test_a_destructive_command_asks_wherever_it_is_and_however_quoted(
    before: list[str], danger: str, after: list[str], joiner: str, style: int
) -> None:
    spelled = " ".join(_quoted(word, style) for word in danger.split())
    line = f" {joiner} ".join([*before, spelled, *after])
    assert destructive_reason(line), line
    assert destructive_reason(f"bash -c {shlex.quote(line)}"), line
