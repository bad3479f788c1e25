"""The restricted shell's programs: which ones exist and which arguments keep them read-only.

``check_argv(argv)`` validates one command (program name plus arguments) and raises
``CommandRefused`` naming the reason; ``harden_argv(argv)`` returns the argv the harness really
runs, rebuilt from the parsed command (``shell.rebuild``): the program, its forced safety flags
(``sed --sandbox``, ``gawk --sandbox``, ``rg --no-config``, git's safe configuration), each
option in one spelling, the harness's own ``--``, the operands; for ``xargs``, its target
rebuilt the same way, so the items it appends land behind that ``--``. The executor applies
both to every pipeline stage it runs, so a handler bug cannot smuggle in another program.

Every program's options are an allowlist (``OptionSpec``); an option it does not name is
refused with the program and the option in the message. ``SPECS`` holds them all, from two
tables: ``text_programs.py`` (what reads and transforms contents) and ``machine_programs.py``
(files' names, metadata and bytes, the machine).

Not here on purpose: interpreters, shells, wrappers (env, nice, timeout, xargs into anything
not listed, command, exec...), network programs, pagers, editors, archivers and anything that
writes (tee, cp, sort -o, uniq's output operand, xxd -r, tree -o, file -C, date -s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from rho_domain.errors import CommandRefused
from rho_domain.shell.awk import AwkFlavor, awk_argv, check_awk
from rho_domain.shell.embedded import check_find
from rho_domain.shell.git import check_git, harden_git
from rho_domain.shell.jq import check_jq
from rho_domain.shell.link_targets import check_link_targets
from rho_domain.shell.machine_programs import MACHINE_PROGRAMS
from rho_domain.shell.options import OptionSpec, Parsed, spec, split_options
from rho_domain.shell.rebuild import rebuild
from rho_domain.shell.sed import check_sed
from rho_domain.shell.text_programs import TEXT_PROGRAMS

SPECS: dict[str, OptionSpec] = {**TEXT_PROGRAMS, **MACHINE_PROGRAMS}


_SPECIAL: dict[str, Callable[[Sequence[str]], None]] = {
    "git": check_git,
    "find": check_find,
    "awk": check_awk,
    "gawk": check_awk,
}
# Programs whose own language could open files: checked after their option table.
_LANGUAGES: dict[str, Callable[[Sequence[str], Parsed], None]] = {
    "jq": lambda args, _: check_jq(args),
    "sed": lambda _, parsed: check_sed(parsed),
}
# Programs xargs may feed; each gets "--" before the appended items so they stay operands.
XARGS_TARGETS = frozenset(
    [
        "grep",
        "rg",
        "wc",
        "cat",
        "head",
        "tail",
        "ls",
        "stat",
        "file",
        "du",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "basename",
        "dirname",
        "realpath",
        "readlink",
    ]
)
# in_order: xargs' options end at the program it runs (getopt's "+" mode).
_XARGS = spec(
    "0rt",
    "nLds",
    "null no-run-if-empty verbose",
    "max-args max-lines delimiter max-chars",
    in_order=True,
)

PROGRAMS = frozenset(SPECS) | frozenset(_SPECIAL) | {"xargs", "cd"}

# Walkers told to follow the symbolic links they meet: (those options, the options that make
# it walk, empty when it always does). A link in the workspace to a directory out of reach
# (``out -> /home/u``) is judged as a word (``ls out`` is refused), but one met while walking
# is no word: ``ls -LR``, ``du -L -a`` and ``tree -l`` listed the names, sizes and times
# inside it. ``-H`` (links on the command line only) stays: those are words. find: check_find.
# ls lists a directory's entries even without -R, and -L stats each link's target: ``ls -lL``
# printed the size, times and owner of a file out of reach that ``stat -L`` is refused; with
# ``-d`` it lists its operands alone, which are words (``_LISTS_OPERANDS``).
_FOLLOWS_LINKS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "ls": (("L", "dereference"), ()),
    "du": (("L", "dereference"), ()),
    "tree": (("l",), ()),
}
_LISTS_OPERANDS: dict[str, tuple[str, ...]] = {"ls": ("d", "directory")}


def _check_name(name: str) -> None:
    if "/" in name:
        raise CommandRefused(
            f"{name!r}: a program path is not allowed; use the bare name of an allowlisted program"
        )
    if name not in PROGRAMS:
        raise CommandRefused(f"{name!r} is not an allowed read-only program")


def check_argv(argv: Sequence[str]) -> None:
    """Validate one command; raise ``CommandRefused`` naming the program and the reason."""
    if not argv:
        raise CommandRefused("empty command")
    if any("\x00" in arg for arg in argv):
        raise CommandRefused("NUL byte in an argument")
    name, args = argv[0], argv[1:]
    _check_name(name)
    if name == "cd":
        if len(args) != 1 or args[0].startswith("-"):
            raise CommandRefused("cd: exactly one directory is required")
        return
    if name in _SPECIAL:
        _SPECIAL[name](args)
        return
    if name == "xargs":
        _check_xargs(args)
        return
    # What runs or writes is absent from the specs (rg --pre/--hostname-bin/-z, sed -i/-f,
    # sort -o...), so split_options refuses it; tests/tools/test_shell_refusals.py pins that.
    parsed = split_options(name, args, SPECS[name])
    _check_link_walk(name, parsed)
    check_link_targets(name, parsed)
    if name == "ls" and parsed.has("f"):
        raise CommandRefused(
            "ls: -f lists '..', whose metadata is the directory above's (out of reach at the "
            "workspace's root); use -AU (every entry but '.' and '..', unsorted)"
        )
    if name in _LANGUAGES:
        _LANGUAGES[name](args, parsed)


def _check_link_walk(name: str, parsed: Parsed) -> None:
    follow, walks = _FOLLOWS_LINKS.get(name, ((), ()))
    option = next((o for o, _ in parsed.options if o in follow), None)
    listed = (not walks or parsed.has(*walks)) and not (
        name in _LISTS_OPERANDS
        and not parsed.has("R", "recursive")
        and parsed.has(*_LISTS_OPERANDS[name])
    )
    if option is not None and listed:
        spelled = f"-{option}" if len(option) == 1 else f"--{option}"
        raise CommandRefused(
            f"{name}: {spelled} follows the symbolic links met while walking, into "
            "directories outside the workspace or secret ones that no word names; "
            f"drop it{' (or add -d to list the operands alone)' if name == 'ls' else ''}, and "
            "name a link's target directly to look inside it"
        )


def xargs_target_index(args: Sequence[str]) -> int:
    """Index of the target program in xargs' (validated) arguments."""
    return len(args) - len(split_options("xargs", args, _XARGS).operands)


def _check_xargs(args: Sequence[str]) -> None:
    target = split_options("xargs", args, _XARGS).operands
    if not target:
        raise CommandRefused("xargs: name the program to run (echo is not implied here)")
    if target[0] not in XARGS_TARGETS:
        raise CommandRefused(f"xargs: {target[0]!r} is not a program xargs may run")
    check_argv(target)


def harden_argv(argv: Sequence[str], *, awk: AwkFlavor = "gawk") -> tuple[str, ...]:
    """The argv to execute for an already validated ``argv``: rebuilt from its parsed form
    (``shell.rebuild``), never the model's words passed on.

    ``awk`` is the implementation the executor found (see ``shell.awk``): gawk gets
    ``--sandbox``, mawk runs on the static check alone, any other awk is refused.
    """
    name, args = argv[0], tuple(argv[1:])
    if name == "git":
        return (name, *harden_git(args))
    if name in ("awk", "gawk"):
        return awk_argv(name, args, awk)
    if name == "find":
        # check_find reads find's own grammar word by word (start paths, then primaries with
        # their values): the words are already find's normal spelling.
        check_find(args)
        return (name, *args)
    if name == "xargs":
        parsed = split_options(name, args, _XARGS)
        own = rebuild(name, attrs.evolve(parsed, operands=()), _XARGS)
        # The target ends with the harness's "--": the items xargs appends are operands.
        return (*own, *harden_argv(parsed.operands))
    if name not in SPECS:
        raise CommandRefused(f"{name}: the harness does not run this as a program")
    return rebuild(name, split_options(name, args, SPECS[name]), SPECS[name])
