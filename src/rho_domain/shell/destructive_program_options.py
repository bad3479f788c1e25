"""The destructive-program table's rows for options whose value is a program to run.

Settings that choose a program beside the work the command is asked for (git's ``-c``,
cargo's ``--config``, npm's ``--script-shell`` and make's ``SHELL=`` are other modules'
rows):

* go ``-exec PROG`` (runs each test or ``go run`` binary through PROG, a command line go
  splits itself), ``-toolexec PROG`` (every compiler and linker call), ``-vettool PROG``;
* bazel and bazelisk ``--run_under=PROG`` (runs the target through PROG), ``--bazelrc``
  (a file of options, any of them);
* meson ``test --wrapper``/``--wrap`` (runs every test through it);
* gcc, g++, cc, c++, clang, clang++ ``-wrapper prog,args`` (runs every subprocess through
  it, its words joined by commas, which no parser reads as a command), ``-fplugin=``
  (loads code into the compiler), ``-B DIR`` (takes cc1, as and ld from DIR), ``-specs=``
  (a spec file may run programs);
* rustc ``-C linker=PROG`` (``-Clinker=``, ``--codegen linker=``);
* cmake ``-D`` setting a compiler, launcher or linker (``-DCMAKE_C_COMPILER_LAUNCHER=PROG``);
* pip ``--config-settings``/``-C`` (settings for the package's build backend, which may
  name the programs it runs).

Such a value runs whatever it names at every call, out of the check's sight (``-wrapper
rm,-rf,x``), while the command looks like ordinary work: it asks, naming the option.

Contract: ``PROGRAM_OPTION_JUDGES`` maps each program to ``rule(name, args) -> str``, the
reason to ask again, or "".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rho_domain.shell.destructive_words import Arg

_WHY = "its value is a program it runs, out of the approval check's sight"


def _flags(*names: str, prefixes: tuple[str, ...] = ()) -> Callable[[str, Sequence[Arg]], str]:
    """Asks for an option named ``names`` with one or two dashes, alone or ``=value``
    (go's and bazel's flags take either), or a word starting with one of ``prefixes``."""
    wanted = frozenset(names)

    def rule(name: str, args: Sequence[Arg]) -> str:
        for word in args:
            if word is None or not word.startswith("-"):
                continue
            given = word.lstrip("-").split("=", 1)[0].replace("-", "_")
            if given in wanted or word.startswith(prefixes):
                return f"{name} {word}: {_WHY}"
        return ""

    return rule


def _rustc(name: str, args: Sequence[Arg]) -> str:
    for index, word in enumerate(args):
        if word is None:
            continue
        value = word[2:] if word.startswith("-C") else ""
        if word in ("-C", "--codegen") and index + 1 < len(args):
            value = args[index + 1] or ""
        elif word.startswith("--codegen="):
            value = word.split("=", 1)[1]
        if value.startswith("linker"):
            return f"{name} -C {value}: {_WHY}"
    return ""


def _cmake(name: str, args: Sequence[Arg]) -> str:
    for index, word in enumerate(args):
        if word is None or not word.startswith("-D"):
            continue
        setting = word[2:] or (args[index + 1] if index + 1 < len(args) else None) or ""
        key = setting.split("=", 1)[0].split(":", 1)[0].upper()
        if key.endswith(_CMAKE_PROGRAMS):
            return f"{name} -D{setting}: {_WHY}"
    return ""


def _pip(name: str, args: Sequence[Arg]) -> str:
    for word in args:
        if word is not None and word.startswith(("--config-setting", "-C")):
            return f"{name} {word}: {_BACKEND}"
    return ""


_BACKEND = "passes settings to the package's build backend, which may name programs it runs"
_CMAKE_PROGRAMS = ("LAUNCHER", "COMPILER", "LINKER", "_AR", "_RANLIB", "EMULATOR")
_COMPILER = _flags("wrapper", "specs", "B", prefixes=("-fplugin", "-B", "-specs"))

PROGRAM_OPTION_JUDGES: dict[str, Callable[[str, Sequence[Arg]], str]] = {
    "go": _flags("exec", "toolexec", "vettool"),
    **dict.fromkeys(["bazel", "bazelisk"], _flags("run_under", "bazelrc")),
    "meson": _flags("wrapper", "wrap"),
    **dict.fromkeys(["gcc", "g++", "cc", "c++", "clang", "clang++"], _COMPILER),
    "rustc": _rustc,
    "cmake": _cmake,
    **dict.fromkeys(["pip", "pip3"], _pip),
}
