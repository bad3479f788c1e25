"""The scripts that resolve paths in the Daytona sandbox, and their answers' parsers.

``resolve_script`` canonicalises one path (every symlink resolved, missing components
allowed), describes it and, for a read, returns its bytes; ``realpaths_script`` canonicalises
every path word of a pipeline in one request; ``finalize_script`` moves a written file into
place. Every path is quoted (``scripts.q``); an answer
that does not parse raises ``ExecutorError``. GNU coreutils' ``realpath -m``, ``stat -c`` and
``base64 -w0`` must be in the sandbox (see scripts.py).
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from collections.abc import Sequence

import attrs

from rho_adapters.daytona.scripts import q
from rho_domain.errors import ExecutorError
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_domain.write_rules import ENVIRONMENT_MARKERS


def git_place_script(path: str) -> str:
    """Shell lines setting ``g`` to the nearest directory above ``$path`` (a variable name,
    canonical) with a git directory's shape (``git_dir_shape``: a ``HEAD`` beside ``refs``
    or beside a ``commondir``) or an object store's (an ``info`` beside a
    ``pack``), that shape's letter first (``g/w/store``, ``s/w/od``); empty when none: a bare
    ``store``'s config is its ``.git/config`` whatever its name."""
    return (
        f'g=; d=${{{path}%/*}}; while [ -n "$d" ]; do '
        'if { [ -e "$d/HEAD" ] || [ -L "$d/HEAD" ]; } && '
        '{ [ -e "$d/refs" ] || [ -e "$d/commondir" ]; }; '
        "then g=g$d; break; fi; "
        'if [ -e "$d/pack" ] && [ -e "$d/info" ]; then g=s$d; break; fi; d=${d%/*}; done\n'
    )


def resolve_script(
    path: str, read_range: tuple[int, int | None] | None, roots: Sequence[str]
) -> str:
    """Canonicalise ``path`` (all symlinks, missing components allowed) and describe it.

    Answer: ``<L|-> <mode hex> <size> <mtime> <links> <git dir>`` (``L``: ``path`` itself is a
    symlink; mode ``-`` when missing; ``links``: how many names the file has; the base64 of
    the git directory or store it is in by its shape, ``git_place_script``, or ``-``), then with
    ``read_range`` a base64 line of those bytes (read only from a regular file below one of
    ``roots``: FIFOs never block), then the canonical path.
    """
    lines = [
        f"p=$(realpath -m -- {q(path)}) || exit 3",
        f"if [ -L {q(path)} ]; then l=L; else l=-; fi",
        'if [ -e "$p" ]; then s=$(stat -c \'%f %s %Y %h\' -- "$p") || exit 4; '
        "else s='- 0 0 1'; fi",
        git_place_script("p").rstrip("\n"),
        'if [ -n "$g" ]; then g=$(printf \'%s\' "$g" | base64 -w0); else g=-; fi',
        'printf \'%s %s %s\\n\' "$l" "$s" "$g"',
    ]
    if read_range is not None:
        offset, length = read_range
        take = f" | head -c {int(length)}" if length is not None else ""
        inside = "|".join("/*" if r == "/" else f"{q(r)}|{q(r)}/*" for r in roots)
        lines.append(
            f'case "$p" in {inside}) if [ -f "$p" ]; then '
            f'tail -c +{int(offset) + 1} -- "$p"{take} | base64 -w0; fi;; esac; echo'
        )
    lines.append("printf '%s' \"$p\"")
    return "\n".join(lines) + "\n"


def realpaths_script(cwd: str, words: Sequence[str]) -> str:
    """One line for all ``words``, in ``cwd``: the base64 of three NUL-ended fields a word,
    ``-`` and two empty ones when it names nothing, else its kind (``d`` a directory, ``l`` a
    regular file with several names: hard links, ``f`` anything else, ``?`` when the file at
    the canonical path is not the one the word names), its canonical path (every symlink
    resolved) and the git place it is in by its shape (``git_place_script``; empty when
    none). One ``base64`` for the whole answer: one for each path and each place cost two
    programs a word (1.1-1.3 ms of the sandbox's CPU each). ``realpath -m`` resolves by
    strings and takes a component whose path grew past 4,096 characters for no link (a link
    to a deep directory, then ``up -> /``): it judged ``L/<17th>/up/../(x18)/etc/hostname``
    inside the workspace while ``cat`` printed ``/etc/hostname``; hence the identity check."""
    body = "".join(
        f"w={q(word)}\n"
        'if [ -e "$w" ] || [ -L "$w" ]; then\n'
        '  if [ -d "$w" ]; then k=d; elif [ -f "$w" ] && [ "$(stat -L -c %h -- "$w")" != 1 ]; '
        "then k=l; else k=f; fi\n"
        '  r=$(realpath -m -- "$w"; echo x); r=${r%x}; r=${r%?}\n'
        '  if [ -e "$w" ] && ! [ "$w" -ef "$r" ]; then k=\'?\'; fi\n'
        f"  {git_place_script('r')}"
        '  printf \'%s\\0%s\\0%s\\0\' "$k" "$r" "$g"\n'
        "else printf '%s\\0\\0\\0' -; fi\n"
        for word in words
    )
    return f"cd -- {q(cwd)} || exit 3\n{{\n{body or ':'}\n}} | base64 -w0; echo\n"


def parse_realpaths(answer: str, count: int) -> list[tuple[str, str, str] | None]:
    """``realpaths_script``'s line for ``count`` words: for each, (canonical path, kind:
    ``d``, ``l``, ``f`` or ``?``, the git place it is in, ``git_place_script``, or "") or
    None when it names nothing."""
    try:
        fields = _decoded(answer.strip()).split("\0")
    except (ValueError, binascii.Error) as exc:
        raise ExecutorError(f"unreadable path answer from the sandbox: {answer[:80]!r}") from exc
    if len(fields) != 3 * count + 1 or fields[-1]:
        raise ExecutorError(f"unreadable path answer from the sandbox: {answer[:80]!r}")
    out: list[tuple[str, str, str] | None] = []
    for at in range(0, 3 * count, 3):
        kind, real, place = fields[at : at + 3]
        if kind == "-":
            out.append(None)
        elif kind in ("d", "f", "l", "?"):
            out.append((real, kind, place))
        else:
            raise ExecutorError(f"unreadable path answer from the sandbox: {kind!r}")
    return out


def _decoded(encoded: str) -> str:
    return base64.b64decode(encoded, validate=True).decode("utf-8", "surrogateescape")


@attrs.frozen
class Resolved:
    """What ``resolve_script`` reported. ``mode`` is the st_mode, or None when missing;
    ``links`` the file's number of names (hard links); ``git_place`` the git directory or store
    it is in by its shape (``git_place_script``), or ""."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    canonical: str
    is_link: bool
    mode: int | None
    size: int
    mtime: float
    data: bytes | None
    links: int = 1
    git_place: str = ""


def parse_resolved(answer: str, *, with_data: bool) -> Resolved:
    """Parse the resolve script's answer for one path (and its bytes, ``with_data``)."""
    head, _, rest = answer.partition("\n")
    data: bytes | None = None
    if with_data:
        encoded, _, rest = rest.partition("\n")
        data = base64.b64decode(encoded) if encoded else None
    try:
        link, mode, size, mtime, links, place = head.split(" ")
        return Resolved(
            canonical=rest,
            is_link=link == "L",
            mode=None if mode == "-" else int(mode, 16),
            size=int(size),
            mtime=float(mtime),
            data=data,
            links=int(links),
            git_place="" if place == "-" else _decoded(place),
        )
    except (ValueError, binascii.Error) as exc:
        raise ExecutorError(f"unreadable path description from the sandbox: {head!r}") from exc


EXISTS = 17  # the finalize script's exit code when create-only met an existing name
ENVIRONMENT = 18  # ... when the target is inside a Python or conda environment
MOVED = 19  # ... when the target's directory is not, now, the directory that was judged


def finalize_script(temp: str, target: str, dirs: Sequence[str], *, overwrite: bool) -> str:
    """Move the uploaded temp file into place: ``ln`` (create-only, atomic) or ``mv -T``;
    first, when one of ``dirs`` (the directories below the root the target is in) holds an
    environment's marker (``write_rules.ENVIRONMENT_MARKERS``), print it, remove the temp
    file and exit ``ENVIRONMENT``.

    The move is made inside the target's directory, entered first (``cd -P``) and found to
    be, physically, the directory the write was judged for (``target``'s, canonical): a
    directory replaced by a link (to ``.git/hooks``) after the check made the upload and a
    move by path land there. Otherwise the temp file is removed where it went and the script
    exits ``MOVED``; names relative to the directory entered stay in it whatever is renamed
    meanwhile."""
    parent, name = posixpath.split(target)
    t, d = q("./" + posixpath.basename(temp)), q("./" + name)
    if posixpath.dirname(temp) != parent:
        raise ExecutorError(f"the temp file {temp} is not beside {target}")
    enter = (
        f'cd -P -- {q(parent)} 2>/dev/null && [ "$(pwd -P)" = {q(parent)} ] || '
        f"{{ rm -f -- {q(temp)}; cd -P -- {q(parent)} 2>/dev/null && rm -f -- {t}; "
        f"exit {MOVED}; }}\n"
    )
    probe = ""
    if dirs:
        tests = " || ".join(f'[ -e "$e"/{q(m)} ]' for m in ENVIRONMENT_MARKERS)
        probe = (
            f"for e in {' '.join(q(x) for x in dirs)}; do if {tests}; then rm -f -- {q(temp)}; "
            f"printf '%s' \"$e\"; exit {ENVIRONMENT}; fi; done\n"
        )
    probe += enter
    if not overwrite:
        return probe + (
            f"if ln -- {t} {d} 2>/dev/null; then rc=0; "
            f"elif [ -e {d} ] || [ -L {d} ]; then rc={EXISTS}; else rc=1; fi\n"
            f"rm -f -- {t}\nexit $rc\n"
        )
    return probe + (
        # the owner and mode kept as the local executor keeps them (files.KEPT, as far as the
        # sandbox's user may chown): never setuid, setgid, sticky
        f"if [ -f {d} ]; then chown --reference={d} -- {t} 2>/dev/null; "
        f"chmod --reference={d} -- {t} 2>/dev/null; "
        f"chmod u-s,g-s,o-t -- {t}; w=replaced; "
        f"else w=created; fi\n"
        f"mv -fT -- {t} {d} || {{ rm -f -- {t}; exit 1; }}\necho $w\n"
    )
