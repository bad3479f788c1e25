"""The destructive-program table's rows for installs outside the workspace: a package manager
asked to put a program in the user's or the system's scope, whose commands land on the PATH
every later shell and tool searches (``~/.local/bin``, ``~/.cargo/bin``, ``~/go/bin``, npm's
global prefix), outside anything a review of the workspace shows. The write tool never
writes those directories (``write_rules``: the user's PATH directories); a package manager
is the other way there, so each asks again after "always". An install into the project (``npm
install``, ``pip install x`` in its environment, ``cargo build``) is the project's work and
runs unasked.

* npm, pnpm, yarn, bun: ``-g``, ``--global`` or ``--location=global`` with a verb that puts
  a package in place (``npm install -g``, ``npm link -g``; not ``npm ls -g``), and ``yarn
  global ...``;
* pip, pip3, uv (``uv pip``): ``install`` with ``--user`` (``~/.local``);
* cargo, go, gem, pipx, deno: ``install`` (``~/.cargo/bin``, ``$GOPATH/bin``, the gem
  directory's ``bin``, ``~/.local/bin``, ``~/.deno/bin``); uv: ``tool install``;
* dotnet ``tool install -g`` and ``tool update -g``: as npm; composer: ``global ...``.

Contract: ``INSTALL_JUDGES`` maps each program to ``rule(name, args) -> str``, the reason to
ask again, or "".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rho_domain.shell.destructive_words import Arg, long_hits, split_options

_WHY = "installs a program outside the workspace, on the PATH later commands search"


def _global_option(name: str, args: Sequence[Arg]) -> str:
    options, operands = split_options(args)
    if operands[:1] == ["global"] and name in ("yarn", "composer"):
        return f"{name} global: {_WHY}"
    verb = operands[1:2] if name == "dotnet" and operands[:1] == ["tool"] else operands[:1]
    if not verb or verb[0] not in _INSTALLS:  # npm ls -g, npm root -g: they only read
        return ""
    hit = next((o for o in options if _global(o)), None)
    return f"{name} {verb[0]} {hit}: {_WHY}" if hit else ""


def _global(option: str) -> bool:
    """``-g``, ``--global`` (or an abbreviation, ``--glob``; not ``--global-style``, which
    installs into the project), ``--location=global`` or ``--location=user``."""
    given, _, value = option.partition("=")
    if given == "--location":
        return value in ("global", "user")
    return option == "-g" or (len(given) > 2 and "--global".startswith(given))


def _user_install(name: str, args: Sequence[Arg]) -> str:
    options, operands = split_options(args)
    verb = operands[:2] if name == "uv" and operands[:1] == ["pip"] else operands[:1]
    hit = next((o for o in options if long_hits(o, _USER)), None)
    if verb[-1:] == ["install"] and hit is not None:
        return f"{name} {' '.join(str(v) for v in verb)} {hit}: {_WHY} (~/.local)"
    if name == "uv" and operands[:2] == ["tool", "install"]:
        return f"uv tool install: {_WHY} (~/.local/bin)"
    return ""


def _installer(name: str, args: Sequence[Arg]) -> str:
    _, operands = split_options(args)
    return f"{name} install: {_WHY}" if operands[:1] == ["install"] else ""


_USER = frozenset(["user"])
# the verbs that put a package in place (npm's aliases and its misspellings too: isntall)
_INSTALLS = frozenset(
    [
        "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal",
        "isntall", "add", "link", "ln", "update", "up", "upgrade", "udpate", "ci", "rebuild",
    ]
)  # fmt: skip

INSTALL_JUDGES: dict[str, Callable[[str, Sequence[Arg]], str]] = {
    **dict.fromkeys(["npm", "pnpm", "yarn", "bun", "dotnet", "composer"], _global_option),
    **dict.fromkeys(["pip", "pip3", "uv"], _user_install),
    **dict.fromkeys(["cargo", "go", "gem", "pipx", "deno"], _installer),
}
