"""GNU parallel's own options, as the destructive-command check reads them (``shell.destructive``).

parallel evaluates Perl code besides running its command: ``{= perl =}``, ``--rpl 'TAG
perl'``, and three ways that look like none: ``--parens ,,,,`` makes any pair of strings a
Perl expression's brackets (``,, system("rm -rf y") ,,``); under ``--plus`` a replacement
string with an argument (``{/regexp/replacement}``, ``{%suffix}``, ``{:-default}``...) is
pasted into Perl code and evaluated, so its text is code, and as ``--plus`` and ``--rpl`` may
be set in ``~/.parallel/config``, ``/etc/parallel/config`` or ``$PARALLEL`` (out of the
check's sight), such a string asks with or without ``--plus`` on the line; ``-J NAME``
(``--profile``) reads more options, ``--rpl`` ones too, from ``~/.parallel/NAME``, out of
the check's sight. Each asks. The replacement strings that take no argument (``{}``,
``{.}``, ``{/}``, ``{//}``, ``{/.}``, ``{#}``, ``{%}``, numbered ``{2.}``, and ``--plus``'
``{+/}``, ``{..}``, ``{##}``...) are only filled in.

Where its command starts depends on which options take a value given apart
(``--tagstring '{}' echo``: ``{}`` is the tag, echo the program): ``SEPARATE_VALUES``.

Contract: ``perl_reason(argv) -> str``, the reason to ask or ""; ``SEPARATE_VALUES``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rho_domain.shell.destructive_words import Arg

_BRACED = re.compile(r"\{([^{}]*)\}")
_PLAIN = re.compile(r"(\d*)(|\.|/|//|/\.|#|%|\+/|\+\.|\+\.\.|\+\.\.\.|\.\.|\.\.\.|/\.\.|/\.\.\.)")
_PLAIN_WORDS = frozenset(["##", "0%", "0#", "uniq", "hgrp", "sgrp", "agrp", "len", "choose_k"])
_PROFILES = ("-J", "--profile")


def perl_reason(argv: Sequence[Arg]) -> str:
    """Why a parallel command line asks for Perl code it runs on each item, or ""."""
    # --plus (and --rpl) may be set where the check cannot look: ~/.parallel/config,
    # /etc/parallel/config, $PARALLEL_HOME, $PARALLEL; so every line is read as under --plus
    for word in argv[1:]:
        if word is None:
            continue
        if "{=" in word or word.startswith(("--rpl", "--parens")):
            return f"parallel {word}: runs Perl code on each input item"
        if word in _PROFILES or word.startswith(("--profile=", "-J")):
            return f"parallel {word}: reads options (Perl replacement strings too) from a file"
        if hit := _argued(word):
            return (
                f"parallel {{{hit}}}: a replacement string with an argument (--plus, or --rpl, "
                "set on the line or in ~/.parallel/config or $PARALLEL) is pasted into Perl code"
            )
    return ""


def _argued(word: str) -> str:
    """The first replacement string in ``word`` that takes an argument, or ""."""
    for inside in _BRACED.findall(word):
        if not (_PLAIN.fullmatch(inside) or inside in _PLAIN_WORDS):
            return inside or "?"
    return ""


# the options of xargs and parallel whose value may be the next word (xargs' --replace takes
# its value only after "="); parallel's from its manual
SEPARATE_VALUES = frozenset(
    ["-I", "-J", "-a", "-d", "-E", "-L", "-n", "-N", "-P", "-s", "-j", "-S", "-C",
     "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--jobs",
     "--arg-file-sep", "--arg-sep", "--basefile", "--bf", "--block", "--block-size",
     "--colsep", "--compress-program", "--decompress-program", "--ctagstring", "--ctag",
     "--delay", "--env", "--eof", "--filter", "--group-by", "--halt", "--halt-on-error",
     "--header", "--joblog", "--limit", "--load", "--match", "--max-chars",
     "--max-line-length-allowed", "--memfree", "--memsuspend", "--nice", "--parens",
     "--profile", "--recend", "--recstart",
     "--res", "--results", "--retries", "--return", "--rpl", "--shard", "--sql", "--sqlmaster",
     "--sqlworker", "--ssh", "--sshdelay", "--sshlogin", "--sshloginfile", "--slf",
     "--tagstring", "--tmpdir", "--tempdir", "--timeout", "--tmpl", "--template",
     "--termseq", "--transferfile", "--tf", "--trc", "--workdir", "--wd", "--id",
     "--semaphoretimeout", "--st", "--cr", "--delimiter", "--trim", "--shebang-wrap"]
)  # fmt: skip
