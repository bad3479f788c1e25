"""The keys the sandbox's ssh configurations name (``rho_domain.ssh_named_files``), found
with what its git configurations name (``git_named.py``) when the sandbox is made, as the
local executor finds this machine's (``rho_adapters/local/ssh_named.py`` says which
configurations and how names are placed): one round of reads in the sandbox per level of
``Include``, each pattern expanded by the sandbox's shell, at most ``MAX_CONFIGS`` read from
one configuration (more fail closed).
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable, Sequence

from rho_adapters.daytona import scripts
from rho_adapters.daytona.scripts import Run
from rho_domain.git_named_files import MAX_CONFIGS, counted
from rho_domain.ssh_named_files import (
    anywhere_name,
    fill_needs,
    filled,
    literal_of,
    pattern_of,
    ssh_named_in,
)

__all__ = ["fills", "named_keys"]

Texts = Callable[[Sequence[str]], Awaitable[list[str | None]]]  # each regular file's text
_Config = tuple[int, str, str | None, str]  # (its start's index, path, its home, include base)


async def named_keys(
    run: Run,
    texts: Texts,
    given: Sequence[str],
    homes: Sequence[str],
    tops: Sequence[str],
    *,
    keys: Sequence[tuple[str, str]] = (),
    commands: list[tuple[str, str]] | None = None,
) -> list[tuple[str, str]]:
    """The paths of the keys the sandbox's ssh configurations name (literal ones whether
    they exist or not), each with the configuration naming it; ``given``: the ``-F``
    configurations (absolute), ``homes``: the sandbox's (the first is the user's),
    ``tops``: where git runs ssh, ``keys``: an ssh command line's own (``-o
    IdentityFile=``, ``-i``), as ssh's values with what named them; ``commands``, when
    given, gets the command lines the configurations run (``ProxyCommand``), each with the
    configuration naming it (the caller reads the wrapper scripts those run)."""
    home = homes[0] if homes else None
    starts = [(config, home, f"{home}/.ssh" if home else "/") for config in given]
    starts += [(f"{h.rstrip('/')}/.ssh/config", h, f"{h.rstrip('/')}/.ssh") for h in homes]
    starts.append(("/etc/ssh/ssh_config", home, "/etc/ssh"))
    level: list[_Config] = [(at, *start) for at, start in enumerate(dict.fromkeys(starts))]
    seen: list[dict[str, None]] = [{} for _ in level]
    found: list[tuple[str, str]] = []
    patterns: list[tuple[str, str]] = []  # keys named by a pattern (a %h), expanded last
    values = [(value, home, by) for value, by in keys]  # placed once the sandbox filled them
    while level:
        batch = counted(level, seen, _too_many)
        includes: list[tuple[int, str | None, str, str]] = []
        for (at, config, its_home, base), text in zip(
            batch, await texts([c[1] for c in batch]), strict=True
        ):
            named = ssh_named_in(text or "")
            for value in named.includes:
                if (pattern := pattern_of(value, home=its_home, glob=True)) is not None:
                    absolute = pattern if pattern.startswith("/") else f"{base}/{pattern}"
                    includes.append((at, its_home, base, absolute))
            values += [(value, its_home, config) for value in named.secrets]
            if commands is not None:
                commands += [(command, config) for command in named.commands]
        expanded = await _globbed(run, [p for *_, p in includes])
        level = [(at, path, h, b) for (at, h, b, _), paths in zip(includes, expanded, strict=True)
                 for path in paths]  # fmt: skip
    env, homes_of = await fills(run, [value for value, _, _ in values])
    for value, its_home, by in values:
        _place(filled(value, env, homes_of.get), its_home, tops, by, found, patterns)
    expanded = await _globbed(run, [pattern for pattern, _ in patterns])
    pairs = zip(patterns, expanded, strict=True)
    return [*found, *((p, by) for (_, by), paths in pairs for p in paths)]


def _place(
    value: str,
    home: str | None,
    tops: Sequence[str],
    by: str,
    found: list[tuple[str, str]],
    patterns: list[tuple[str, str]],
) -> None:
    """An ``IdentityFile`` value placed below each of ``tops`` (ssh's working directory)
    when relative: into ``found`` when literal, else into ``patterns`` (each with ``by``)."""
    if (pattern := pattern_of(value, home=home)) is None:
        return
    for top in tops if not pattern.startswith("/") else ("",):
        absolute = pattern if not top else f"{top.rstrip('/')}/{pattern}"
        literal = literal_of(absolute)
        found += [(literal, by)] if literal is not None else []
        patterns += [(absolute, by)] if literal is None else []
    if name := anywhere_name(pattern):  # ssh reads it from wherever it runs
        found.append((f"*/{name}", by))


async def fills(run: Run, values: Sequence[str]) -> tuple[dict[str, str], dict[str, str]]:
    """What ssh would fill ``values`` with in the sandbox (``fill_needs``): the variables
    its environment sets (the daemon's, which a user's git and ssh run in), and each
    ``~user``'s home from its user database (``getent``, else ``/etc/passwd``)."""
    needs = [fill_needs(value) for value in values]
    names = list(dict.fromkeys(n for wanted, _ in needs for n in wanted))
    users = list(dict.fromkeys(user for _, user in needs if user))
    if not names and not users:
        return {}, {}
    script = "".join(
        f'{{ [ "${{{n}+set}}" ] && printf +%s "${n}"; }} | base64 -w0; echo\n' for n in names
    ) + "".join(
        f'u={scripts.q(u)}; {{ getent passwd -- "$u" 2>/dev/null || while IFS= read -r l;'
        ' do [ "${l%%:*}" = "$u" ] && printf "%s\\n" "$l" && break; done < /etc/passwd; }'
        " | head -n 1 | cut -d: -f6 | tr -d '\\n' | sed 's/^/+/' | base64 -w0; echo\n"
        for u in users
    )
    answers = [base64.b64decode(line).decode("utf-8", "surrogateescape")
               for line in (await run(script)).splitlines()]  # fmt: skip
    env = {n: v[1:] for n, v in zip(names, answers, strict=False) if v.startswith("+")}
    homes = zip(users, answers[len(names) :], strict=False)
    return env, {u: v[1:] for u, v in homes if v.startswith("+/")}


def _too_many(first: str, path: str) -> str:
    return (
        f"the sandbox's ssh configuration {first} includes more than {MAX_CONFIGS} "
        f"configurations (Include), {path} the first left unread: rho-agent cannot tell "
        "which keys those name, so it refuses to run; remove the Include lines that repeat "
        "or name missing files"
    )


async def _globbed(run: Run, patterns: Sequence[str]) -> list[list[str]]:
    """What each glob pattern matches in the sandbox now, in the shell's order."""
    if not patterns:
        return []
    # IFS empty: the unquoted $p is expanded as a pattern and never split
    script = "".join(
        f'p={scripts.q(p)}; for f in $p; do [ -e "$f" ] && printf \'%s\\0\' "$f"; done'
        " | base64 -w0; echo\n"
        for p in patterns
    )
    answer = (await run("IFS=\n" + script)).splitlines()
    return [
        [p for p in base64.b64decode(line).decode("utf-8", "surrogateescape").split("\0") if p]
        for line in answer
    ]
