"""The option tables of the restricted shell's text programs: those that read, search, compare
and transform the contents of files (cat, grep, rg, sort, diff, jq, sed, ...).

``TEXT_PROGRAMS`` maps each program to its ``OptionSpec``, an allowlist: an option it does not
name is refused by ``split_options``. What runs or writes is absent on purpose (rg ``--pre``
and ``-z``, sed ``-i``/``-f``, ``sort -o``); ``programs.py`` joins this table with
``machine_programs.py``'s into ``SPECS`` and checks every command against it.
"""

from __future__ import annotations

from rho_domain.shell.options import OptionSpec, Spelling, spec

_HEAD = ("qvz", "nc", "quiet silent verbose zero-terminated", "lines bytes")
_GREP_FLAGS = "EFGPiyvwxclLoqsnhHbrRaIzZUT"
_GREP_LONG = (
    "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case "
    "invert-match word-regexp line-regexp count files-with-matches files-without-match "
    "only-matching quiet silent no-messages line-number with-filename no-filename "
    "byte-offset recursive dereference-recursive text null null-data initial-tab"
    " line-buffered"
)
_GREP_VALUED = (
    "regexp file max-count after-context before-context context include exclude "
    "exclude-dir label binary-files directories devices exclude-from"
)
# Absent on purpose: -z (--search-zip runs decompressors) and --pre (runs any program); the
# tests' NEVER_ALLOWED table pins both.
_RG_FLAGS = "iSsnNlcvwxFoHIqLUPu0.abp"
_RG_LONG = (
    "ignore-case smart-case case-sensitive line-number no-line-number files-with-matches "
    "files-without-match count count-matches invert-match word-regexp line-regexp "
    "fixed-strings only-matching with-filename no-filename no-heading heading hidden "
    "no-ignore no-ignore-vcs no-ignore-parent no-ignore-dot no-ignore-global files json "
    "column no-column vimgrep trim stats multiline multiline-dotall pcre2 null null-data "
    "follow no-messages quiet type-list glob-case-insensitive text binary no-config "
    "unrestricted passthru byte-offset line-buffered block-buffered crlf no-unicode "
    "invert-match include-zero sort-files no-require-git one-file-system mmap"
)
_RG_VALUED = (
    "regexp file glob iglob type type-not after-context before-context context max-count "
    "max-depth max-columns max-filesize sort sortr encoding threads context-separator "
    "field-match-separator field-context-separator path-separator replace engine regex-size-limit"
    " dfa-size-limit type-add type-clear"
)

# rg's parser reads "-e=x" as the value "x": each valued letter is rebuilt by its long name.
_RG_LONG_FOR = {
    "e": "regexp",
    "f": "file",
    "g": "glob",
    "t": "type",
    "T": "type-not",
    "A": "after-context",
    "B": "before-context",
    "C": "context",
    "m": "max-count",
    "d": "max-depth",
    "M": "max-columns",
    "E": "encoding",
    "j": "threads",
    "r": "replace",
}


TEXT_PROGRAMS: dict[str, OptionSpec] = {
    "cat": spec(
        "AbeEnstTuv",
        "",
        "show-all number-nonblank number squeeze-blank show-ends show-tabs show-nonprinting",
    ),
    # -20 is read as a count only as the first word: rebuilt as --lines=20
    "head": spec(*_HEAD, numeric=True, spelling=Spelling(numeric_as="lines")),
    "tail": spec(*_HEAD, numeric=True, spelling=Spelling(numeric_as="lines")),
    "wc": spec("cmlLw", "", "bytes chars lines words max-line-length", "total"),
    "grep": spec(_GREP_FLAGS, "efmABCdD", _GREP_LONG, _GREP_VALUED, "color colour", numeric=True),
    "rg": spec(
        _RG_FLAGS,
        "efgtTABCmdMEjr",
        _RG_LONG,
        _RG_VALUED,
        "color colors",
        forced=("--no-config",),
        spelling=Spelling(long_for=_RG_LONG_FOR),
    ),
    "sort": spec(
        "bdfgiMhnRrVcCmsuz",
        "ktS",
        "ignore-leading-blanks dictionary-order "
        "ignore-case general-numeric-sort ignore-nonprinting month-sort "
        "human-numeric-sort numeric-sort random-sort reverse version-sort check "
        "merge stable unique zero-terminated",
        "key field-separator buffer-size parallel sort",
        "check",
    ),
    "uniq": spec(
        "cdDuiz",
        "fsw",
        "count repeated unique ignore-case zero-terminated",
        "skip-fields skip-chars check-chars",
        "all-repeated group",
        max_operands=1,
    ),
    "cut": spec(
        "nsz",
        "bcfd",
        "complement only-delimited zero-terminated",
        "bytes characters fields delimiter output-delimiter",
    ),
    "tr": spec("cCdst", "", "complement delete squeeze-repeats truncate-set1", max_operands=2),
    "nl": spec(
        "p",
        "bdfhilnsvw",
        "no-renumber",
        "body-numbering section-delimiter "
        "footer-numbering header-numbering line-increment join-blank-lines "
        "number-format number-separator starting-line-number number-width",
    ),
    "paste": spec("sz", "d", "serial zero-terminated", "delimiters"),
    # util-linux 2.38: -n (table name) and -R take a value, -d is a flag
    "column": spec(
        "tdexJL",
        "nsoNcEHOlWrR",
        "table json keep-empty-lines fillrows",
        "separator output-separator table-columns output-width table-name",
    ),
    "diff": spec(
        "uqrNiwbByaTtsEZp",
        "UCxXW",
        "brief recursive new-file ignore-case "
        "ignore-all-space ignore-space-change ignore-blank-lines side-by-side text "
        "strip-trailing-cr report-identical-files expand-tabs initial-tab minimal "
        "suppress-common-lines show-c-function ignore-tab-expansion "
        "ignore-trailing-space speed-large-files no-dereference",
        "unified context exclude exclude-from label width ignore-matching-lines starting-file",
        "color",
        max_operands=2,
    ),
    "cmp": spec(
        "blsz", "in", "print-bytes verbose quiet silent", "ignore-initial bytes", max_operands=4
    ),
    "comm": spec(
        "123z",
        "",
        "check-order nocheck-order total zero-terminated",
        "output-delimiter",
        max_operands=2,
    ),
    "rev": spec(),
    "tac": spec("br", "s", "before regex", "separator"),
    # jq's own parser (and check_jq: no -f/-L, no import/include in the program): --args and
    # --jsonargs are flags, --arg NAME VALUE takes two words, no --name=value, and "--" is
    # taken only after the filter (jq 1.6).
    "jq": spec(
        "rcSesnjaMCR",
        "",
        "raw-output compact-output sort-keys exit-status slurp "
        "null-input join-output ascii-output monochrome-output color-output tab "
        "raw-input seq stream raw-output0 args jsonargs",
        "indent",
        long_pairs="arg argjson slurpfile rawfile",
        spelling=Spelling(dashdash="after-first", glue=False, long_eq=False),
    ),
    "sed": spec(
        "nErsuz",
        "el",
        "quiet silent regexp-extended separate unbuffered null-data posix debug sandbox",
        "expression line-length",
        forced=("--sandbox",),
    ),
    "fold": spec("bs", "w", "bytes spaces", "width"),
    "expand": spec("i", "t", "initial", "tabs"),
    # rotated logs; no -r (it would walk directories and find secrets by itself)
    "zcat": spec("flqtv", "", "force list quiet test verbose"),
    "join": spec(
        "iz",
        "aejotv12",
        "ignore-case check-order nocheck-order header zero-terminated",
        max_operands=2,
    ),
}
