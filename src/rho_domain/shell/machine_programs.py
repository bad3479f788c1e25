"""The option tables of the restricted shell's programs that look at files' names, metadata and
bytes, and at the machine (ls, stat, du, od, sha256sum, ps, date, uname, free, ...).

``MACHINE_PROGRAMS`` maps each program to its ``OptionSpec``, an allowlist: an option it does
not name is refused by ``split_options``, and an operand check (``checks={"operand": ...}``)
refuses what would change or leak state (``date`` settings and zone files, ps's BSD ``e``,
binutils' ``@file``).
What writes is absent on purpose (``tree -o``, ``file -C``, ``date -s``, ``xxd -r``);
``programs.py`` joins this table with ``text_programs.py``'s into ``SPECS``.
"""

from __future__ import annotations

import re

from rho_domain.shell.options import OptionSpec, Spelling, spec


def _date_operand(value: str) -> str | None:
    return None if value.startswith("+") else "only a +FORMAT operand is allowed (no setting)"


# date -d 'TZ="ZONE" ...': the date string sets its own zone, and glibc opens ZONE as a file
# (absolute, ":"-prefixed, or relative to /usr/share/zoneinfo, ".." included): a path no word
# names, to a secret, out of reach or a FIFO. A zone name (Europe/Paris, UTC) stays in the
# zone directory. Every program that parses a date string with gnulib's parse_datetime reads
# it: date -d, and find -newerXt (embedded.check_find). A backslash is refused: inside the
# quotes \" and \\ are escapes, so the zone glibc gets is not the text between two quotes.
_DATE_ZONE = re.compile(r'tz="([^"]*)', re.IGNORECASE)


def date_string_refusal(value: str) -> str | None:
    """Why a date string (parse_datetime's: ``date -d``, ``find -newermt``) may not be
    parsed, or None: its ``TZ="..."`` zone names a file (or hides one behind an escape)."""
    for zone in _DATE_ZONE.findall(value):
        name = zone.lstrip(":")
        if name.startswith("/") or ".." in name or "\\" in zone:
            return (
                f"the date string's zone {zone!r} names a file, which would be opened; "
                'name a zone (TZ="Europe/Paris") or use UTC'
            )
    return None


def _no_response_file(value: str) -> str | None:
    if value.startswith("@"):
        return (
            f"operand {value!r}: binutils reads '@file' as more arguments (even after --); "
            f"name the file ./{value}"
        )
    return None


# BSD-style ps words (no dash), letter by letter: never 'e' (other processes' environments,
# credentials), nor the letters that take a value (o, O, p, t, U, k...).
_PS_BSD = frozenset("auxfwjlvrScnhmTHL")


def _ps_operand(value: str) -> str | None:
    if value and set(value) <= _PS_BSD:
        return None
    if "e" in value:
        return "the BSD 'e' modifier shows other processes' environments (credentials)"
    return f"unexpected argument {value!r} (BSD letters allowed: {''.join(sorted(_PS_BSD))})"


MACHINE_PROGRAMS: dict[str, OptionSpec] = {
    "ls": spec(
        "aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        "IwT",
        "all almost-all escape directory classify human-readable si inode numeric-uid-gid "
        "literal reverse recursive size dereference group-directories-first full-time "
        "no-group author ignore-backups dereference-command-line hide-control-chars",
        "ignore hide sort time time-style width block-size indicator-style quoting-style",
        "color classify hyperlink",
        # -a lists "..": the workspace root's is the directory above, out of reach (stat ..
        # is refused); -A lists the same entries but "." and ".." (-f: programs._check_ls_all)
        spelling=Spelling(short_for={"a": "A", "all": "A"}),
    ),
    "stat": spec("LftZ", "c", "dereference file-system terse", "format printf"),
    "file": spec(
        "bihLNkrs0",
        "eF",
        "brief mime mime-type mime-encoding dereference "
        "no-dereference no-pad keep-going raw special-files",
        "exclude separator",
    ),
    "du": spec(
        "abchklLmsxHPS0",
        "dBt",
        "all apparent-size bytes total human-readable si "
        "dereference summarize one-file-system count-links separate-dirs",
        "max-depth exclude block-size threshold",
        "time",
    ),
    "df": spec(
        "ahHiklPT",
        "tBx",
        "all human-readable si inodes local portability print-type total",
        "type exclude-type block-size",
    ),
    # procps: UNIX options (-ef), GNU long ones, BSD words checked letter by letter; no "--"
    "ps": spec(
        "AadeFfHjLlMNTwyZc",
        "pCuUgGtqsoO",
        "forest no-headers headers deselect cumulative",
        "sort pid ppid user group sid tty format cols columns width",
        checks={"operand": _ps_operand},
        spelling=Spelling(dashdash="none"),
    ),
    "date": spec(
        "uRI",
        "d",
        "utc universal rfc-email",
        "date reference",
        "iso-8601 rfc-3339",
        checks={"operand": _date_operand, "d": date_string_refusal, "date": date_string_refusal},
        max_operands=1,
    ),
    "echo": spec("neE", spelling=Spelling(dashdash="none")),  # it would print a "--"
    "printf": spec(),
    "pwd": spec("LP", max_operands=0),
    "whoami": spec(max_operands=0),
    "id": spec("gGnruz", "", "group groups name real user zero"),
    "uname": spec(
        "asnrvmpio",
        "",
        "all kernel-name nodename kernel-release kernel-version "
        "machine processor hardware-platform operating-system",
        max_operands=0,
    ),
    "hostname": spec(
        "fsidIA", "", "fqdn short ip-address domain all-ip-addresses all-fqdns", max_operands=0
    ),
    "true": spec(),
    "false": spec(),
    "basename": spec("az", "s", "multiple zero", "suffix"),
    "dirname": spec("z", "", "zero"),
    "realpath": spec(
        "emLPqsz",
        "",
        "canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks zero",
        "relative-to relative-base",
    ),
    "readlink": spec(
        "femnqsvz",
        "",
        "canonicalize canonicalize-existing canonicalize-missing "
        "no-newline quiet silent verbose zero",
    ),
    "which": spec("a"),
    "md5sum": spec("bctwz", "", "binary check text tag quiet status strict warn zero"),
    "sha1sum": spec("bctwz", "", "binary check text tag quiet status strict warn zero"),
    "sha256sum": spec("bctwz", "", "binary check text tag quiet status strict warn zero"),
    "sha512sum": spec("bctwz", "", "binary check text tag quiet status strict warn zero"),
    "seq": spec("w", "fs", "equal-width", "format separator"),
    # binutils: -o is --radix=o (a flag); an operand "@file" would be read as more arguments
    "strings": spec(
        "afwo",
        "ntTe",
        "all print-file-name include-all-whitespace",
        "bytes radix encoding target",
        checks={"operand": _no_response_file},
    ),
    "od": spec(
        "bcdfilosvxa",
        "AjNtwS",
        "output-duplicates",
        "address-radix skip-bytes read-bytes format width strings",
        "traditional",
    ),
    "hexdump": spec("bcCdoxv", "nsef", "canonical", "length skip format format-file"),
    # xxd's own parser reads "-len", "-cols", "-seek" as long spellings: a glued value "en"
    # would take the next word; each value is its own word.
    "xxd": spec("aCEiupdb", "lscgon", max_operands=1, spelling=Spelling(glue=False)),
    "base64": spec("di", "w", "decode ignore-garbage", "wrap", max_operands=1),
    # tree's own parser: a short option's value is always the next word
    "tree": spec(
        "adfilpsughDFqNQrtvUCAJXn",
        "LIPH",
        "noreport dirsfirst inodes device du si prune matchdirs ignore-case",
        "filelimit timefmt sort charset",
        # its report counts a link to a directory as a directory (link_targets.py)
        forced=("--noreport",),
        spelling=Spelling(glue=False),
    ),
    # the machine's state; free's -s/-c (repeat) are left out: the command would not end
    "uptime": spec("ps", "", "pretty since", max_operands=0),
    "free": spec(
        "bkmghltvw",
        "",
        "bytes kilo mega giga tera peta kibi mebi gibi tebi pebi human si lohi total "
        "committed wide",
        max_operands=0,
    ),
}
