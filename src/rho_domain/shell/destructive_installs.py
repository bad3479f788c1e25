"""The destructive-program table's rows for installs outside the workspace: a package manager
asked to put a program in the user's or the system's scope, whose commands land on the PATH
every later shell and tool searches (``~/.local/bin``, ``~/.cargo/bin``, ``~/go/bin``, npm's
global prefix), outside anything a review of the workspace shows. The write tool never
writes those directories (``write_rules``: the user's PATH directories); a package manager
is the other way there, so each asks again after "always". An install into the project (``npm
install``, ``pip install x`` in its environment, ``cargo build``) is the project's work and
runs unasked.

* npm, pnpm, yarn, bun: ``-g``, ``--global`` or ``--location=global`` (``--location
  global`` too) with a verb that puts a package in place, its aliases included (``npm
  install -g``, ``npm i``, ``npm it``, ``npm cit``, ``npm link -g``; not ``npm ls -g``),
  ``yarn global ...``, and ``pnpm setup`` (its PATH line in the shell's start-up file);
* pip, pip3 (``pip3.12``: ``program_name``), uv (``uv pip``): ``install`` with ``--user``
  (``~/.local``), uv's with ``--system`` too;
* cargo, go, gem, pipx, deno: ``install`` (``~/.cargo/bin``, ``$GOPATH/bin``, the gem
  directory's ``bin``, ``~/.local/bin``, ``~/.deno/bin``), ``cargo binstall``, gem's
  ``i``, ``update`` and their prefixes (``gem inst``), pipx's every verb that installs or
  upgrades (``inject``, ``upgrade``, ``reinstall``, ``runpip``) and ``ensurepath``; uv:
  ``tool install``, ``tool upgrade`` and ``tool update-shell``;
* dotnet ``tool install -g``, ``tool update -g`` and ``--tool-path DIR``: as npm;
  composer: ``global ...``.

Contract: ``INSTALL_JUDGES`` maps each program to ``rule(name, args) -> str``, the reason to
ask again, or "".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rho_domain.shell.destructive_words import Arg, long_hits, split_options

_WHY = "installs a program outside the workspace, on the PATH later commands search"


def _global_option(name: str, args: Sequence[Arg]) -> str:
    options, operands = split_options(_glued(args))
    if operands[:1] == ["global"] and name in ("yarn", "composer"):
        return f"{name} global: {_WHY}"
    if operands[:1] == ["setup"] and name == "pnpm":  # its PATH line in the shell's rc file
        return f"pnpm setup: {_WHY}, and writes the shell's start-up file"
    verb = operands[1:2] if name == "dotnet" and operands[:1] == ["tool"] else operands[:1]
    if not verb or verb[0] not in _INSTALLS:  # npm ls -g, npm root -g: they only read
        return ""
    hit = next((o for o in options if _global(o)), None)
    return f"{name} {verb[0]} {hit}: {_WHY}" if hit else ""


def _glued(args: Sequence[Arg]) -> list[Arg]:
    """``args`` with ``--location``'s value glued to it, as npm reads it (``--location
    global`` is ``--location=global``; a ``global`` read as an operand hid the verb)."""
    glued: list[Arg] = []
    for arg in args:
        if glued and glued[-1] == "--location" and arg is not None:
            glued[-1] = f"--location={arg}"
        else:
            glued.append(arg)
    return glued


def _global(option: str) -> bool:
    """``-g``, ``--global`` (or an abbreviation, ``--glob``; not ``--global-style``, which
    installs into the project), ``--location=global`` or ``--location=user``."""
    given, _, value = option.partition("=")
    if given == "--location":
        return value in ("global", "user")
    if given == "--tool-path":  # dotnet: a directory of the caller's choice, on the PATH
        return True
    return option == "-g" or (len(given) > 2 and "--global".startswith(given))


def _user_install(name: str, args: Sequence[Arg]) -> str:
    options, operands = split_options(args)
    verb = operands[:2] if name == "uv" and operands[:1] == ["pip"] else operands[:1]
    # uv pip's --system: the interpreter found on the PATH, outside any environment
    scopes = _USER | {"system"} if name == "uv" else _USER
    hit = next((o for o in options if long_hits(o, scopes)), None)
    if verb[-1:] == ["install"] and hit is not None:
        return f"{name} {' '.join(str(v) for v in verb)} {hit}: {_WHY} (~/.local)"
    if name == "uv" and operands[:1] == ["tool"] and operands[1:2] in _UV_TOOL:
        return f"uv tool {operands[1]}: {_WHY} (~/.local/bin, the shell's start-up file)"
    return ""


def _installer(name: str, args: Sequence[Arg]) -> str:
    _, operands = split_options(args)
    verb = next((w for w in operands[:1] if w is not None), "")
    if verb in _INSTALLER_VERBS.get(name, ("install",)) or (name == "gem" and _gem_install(verb)):
        return f"{name} {verb}: {_WHY}"
    return ""


def _gem_install(verb: str) -> bool:
    """True for what gem reads as install or update: ``i``, and an unambiguous prefix of
    either (``gem inst``, ``gem up``; ``gem in`` is ambiguous, and gem refuses it)."""
    return (
        verb == "i"
        or (len(verb) > 2 and "install".startswith(verb))
        or (len(verb) > 1 and "update".startswith(verb))
    )


_USER = frozenset(["user"])
_UV_TOOL = (["install"], ["upgrade"], ["update-shell"])
# the verbs of the installers whose every install is outside that put or change a program
# on the PATH (pipx ensurepath and uv tool update-shell write the shell's start-up file)
_INSTALLER_VERBS = {
    "cargo": ("install", "binstall"),
    "pipx": (
        "install", "install-all", "inject", "upgrade", "upgrade-all", "upgrade-shared",
        "reinstall", "reinstall-all", "runpip", "ensurepath",
    ),
}  # fmt: skip
# the verbs that put a package in place (npm's aliases and its misspellings too: isntall)
_INSTALLS = frozenset(
    [
        "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal",
        "isntall", "add", "link", "ln", "update", "up", "upgrade", "udpate", "ci", "rebuild",
        "it", "install-test", "cit", "install-ci-test", "sit", "clean-install-test",
        "clean-install", "ic", "install-clean", "isntall-clean",
    ]
)  # fmt: skip

# every verb the rows above compare, for a glob that may expand to one
INSTALL_VERBS = frozenset(
    [*_INSTALLS, *(verb for verbs in _INSTALLER_VERBS.values() for verb in verbs),
     *(verb for verbs in _UV_TOOL for verb in verbs), "global", "setup", "tool", "pip"]
)  # fmt: skip

INSTALL_JUDGES: dict[str, Callable[[str, Sequence[Arg]], str]] = {
    **dict.fromkeys(["npm", "pnpm", "yarn", "bun", "dotnet", "composer"], _global_option),
    **dict.fromkeys(["pip", "pip3", "uv"], _user_install),
    **dict.fromkeys(["cargo", "go", "gem", "pipx", "deno"], _installer),
}
