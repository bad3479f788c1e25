"""The tokens the restricted shell's lexer (``shell.lexer``) yields and its parser reads.

A command line comes out of ``tokenize`` as literal words (quotes removed, a glob word's
``pattern`` kept for ``shell.glob``), operators, redirections (a here-document's body on its
operator) and newlines: nothing in a token is left for bash to compute.
"""

from __future__ import annotations

from typing import Literal

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

TokenKind = Literal["word", "op", "redirect", "newline"]


@attrs.frozen(kw_only=True)
class Token:
    """A lexical unit.

    ``word``: ``text`` is the word after quote removal, ``quoted`` says whether any part was
    quoted. ``op``: one of ``| || && ; ( ) & |& ;;``. ``redirect``: ``text`` is the operator
    (``< > >> >| <> <& >& &> &>> << <<- <<<``), ``fd`` the explicit descriptor or None; the
    target follows as the next word token, except here-documents, whose body is ``heredoc``.
    ``pattern`` is set on a word with an unquoted glob character: the word for ``shell.glob``,
    each quoted character escaped with a backslash. ``assigns``: a quoted word bash still reads
    as an assignment, its ``NAME=`` unquoted (``FOO='a b'``; not ``'FOO'=a``).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: TokenKind
    text: str
    quoted: bool = False
    fd: int | None = None
    heredoc: str | None = None
    pattern: str | None = None
    assigns: bool = False
