"""Round 23's probe of the approval rules redapprove23 built (shell.destructive*): what still
ran unasked after "always" for bash, by class, each held now; and the ordinary work next to
each class that must still run unasked. One test per class, every variant in one process (the
check is a pure function)."""

from __future__ import annotations

from rho_domain.shell.destructive import destructive_reason


def _missed(cases: dict[str, str]) -> list[tuple[str, str]]:
    """The cases whose reason is missing or lacks its fragment (expected: none)."""
    return [(c, r) for c, f in cases.items() if f not in (r := destructive_reason(c)) or not r]


def _asking(commands: tuple[str, ...]) -> list[tuple[str, str]]:
    """The ordinary commands that ask (expected: none)."""
    return [(c, r) for c in commands if (r := destructive_reason(c))]


def test_an_assignment_split_by_a_line_continuation_asks_again() -> None:
    """bash removes a backslash-newline before it reads words, so ``LD_PRE\\<newline>LOAD='x'
    ls`` is the assignment LD_PRELOAD='x'; the lexer took the continuation for quoting and
    looked for NAME= in the raw text, so the word was a program named "LD_PRELOAD=x"."""
    hidden = {
        "LD_PRE\\\nLOAD='./x.so' ls": "variable assignment LD_PRELOAD",
        "PATH\\\n='/tmp/evil:/usr/bin' make": "variable assignment PATH",
        "GIT_SSH_COM\\\nMAND='rm -rf src' git fetch": "variable assignment GIT_SSH_COMMAND",
        "BASH_\\\nENV=./x bash s.sh": "variable assignment BASH_ENV",
    }
    assert _missed(hidden) == []
    assert _asking(("ls -la \\\n  src", "git log \\\n  --oneline", "echo 'A\\\nB=c'")) == []
