"""The restricted shell's syntax tree: the frozen values ``parser.parse`` returns.

A ``CommandList`` holds pipelines joined by ``;``, ``&&`` or ``||``; a ``Pipeline`` holds
``SimpleCommand``s (literal argv words, their glob patterns, their ``Redirection``s) and
``Subshell``s (a parenthesised ``CommandList``). Every word is literal text: the lexer has
already refused what the restricted shell would have to expand. The planner
(``plan.py``) and the destructive-command classifier (``destructive.py``) read these values;
nothing here parses or refuses.
"""

from __future__ import annotations

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class Redirection:
    """``op`` as written (``>``, ``2>``'s ``>`` with ``fd=2``, ``<<``...), ``target`` a literal
    word, ``heredoc`` the literal body of a here-document or here-string."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    op: str
    fd: int | None = None
    target: str | None = None
    heredoc: str | None = None


@attrs.frozen(kw_only=True)
class SimpleCommand:
    """``patterns[i]`` is the glob pattern of ``argv[i]`` (``tokens.Token.pattern``) or None;
    empty when no word has one."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    argv: tuple[str, ...]
    redirections: tuple[Redirection, ...] = ()
    patterns: tuple[str | None, ...] = ()


@attrs.frozen(kw_only=True)
class Subshell:
    """A parenthesised command list."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    body: CommandList


@attrs.frozen(kw_only=True)
class Pipeline:
    """Commands joined by pipes; ``merge_stderr[i]`` is True when command i was joined by ``|&``."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    commands: tuple[SimpleCommand | Subshell, ...]
    merge_stderr: tuple[bool, ...] = ()


@attrs.frozen(kw_only=True)
class CommandList:
    """Pipelines with the operator that precedes each (``""`` for the first, ``;``, ``&&``,
    ``||``)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    items: tuple[tuple[str, Pipeline], ...]
