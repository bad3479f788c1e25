"""The wrapper scripts the sandbox's git runs as ssh (``GIT_SSH``, a ``core.sshCommand``'s
program, what an ssh configuration's ``ProxyCommand`` runs), read in the sandbox by our
scripts as ``rho_domain.ssh_wrappers`` says (``rho_adapters/local/ssh_named.py`` reads this
machine's): a round of reads per level of scripts running scripts, at most
``MAX_WRAPPERS`` files in all.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence

from rho_adapters.daytona import scripts
from rho_adapters.daytona.scripts import Run
from rho_domain.git_named_files import NamedFiles, named_by, placed
from rho_domain.ssh_wrappers import (
    MAX_WRAPPERS,
    WRAPPER_BYTES,
    on_search_path,
    too_many_wrappers,
    wrapper_commands,
    wrapper_script,
)

__all__ = ["placed_all", "wrapped"]

_Bases = tuple[str, ...]


async def wrapped(
    run: Run,
    programs: Sequence[tuple[str, _Bases, str]],
    home: str | None,
    search: str,
    *,
    helper: bool = False,
) -> list[tuple[NamedFiles, _Bases, str]]:
    """What the wrapper scripts each ``core.sshCommand`` runs name (``bin/gssh -v``: its
    command lines read as ``core.sshCommand``, ``ssh_wrappers``), with the bases to place
    it below and the configuration naming it: a path placed as git places a file, a bare
    name looked up in the sandbox's ``PATH``; then the scripts their lines run by path, a
    round of reads each, at most ``MAX_WRAPPERS`` files in all (``ExecutorError`` past).
    With ``helper``: the scripts a credential helper runs, each line read as a helper's."""
    entry, prefix = (("credential", "helper"), "!") if helper else (("core", "sshcommand"), "")
    read: dict[str, bool] = {}  # each path looked at: whether a file was there
    found: list[tuple[NamedFiles, _Bases, str]] = []
    while programs:
        asked: list[tuple[str, _Bases, str]] = []
        for program, bases, by in programs:
            for path in (
                placed_all([program], bases, home)
                if "/" in program
                else on_search_path(program, search, tuple(dict.fromkeys(bases)))
            ):
                if path not in read:
                    read[path] = False
                    asked.append((path, bases, by))
        heads = await _heads(run, [path for path, _, _ in asked])
        programs = []
        for (path, bases, by), head in zip(asked, heads, strict=True):
            read[path] = head is not None
            if head is not None and sum(read.values()) > MAX_WRAPPERS:
                raise too_many_wrappers(path)
            if head is not None and (script := wrapper_script(head, path)) is not None:
                named = named_by((*entry, prefix + s) for s in wrapper_commands(script))
                found.append((named, bases, by))
                runs = named.helper_programs if helper else named.ssh_programs
                programs += [(p, bases, by) for p in runs if "/" in p]
    return found


async def _heads(run: Run, paths: Sequence[str]) -> list[bytes | None]:
    """The first ``WRAPPER_BYTES + 1`` bytes of each regular file at ``paths``, None for
    none, in one script."""
    if not paths:
        return []
    script = "".join(
        f'f={scripts.q(p)}; [ -f "$f" ] && head -c {WRAPPER_BYTES + 1} < "$f" | base64 -w0; echo\n'
        for p in paths
    )
    lines = (await run(script)).split("\n")
    return [base64.b64decode(line) if line else None for line in lines[: len(paths)]]


def placed_all(values: Iterable[str], bases: Iterable[str], home: str | None) -> list[str]:
    """Each of ``values`` placed below each of ``bases`` as git places a file."""
    return [
        p
        for value in values
        for base in dict.fromkeys(bases)
        if (p := placed(value, base=base, home=home)) is not None
    ]
