"""The variables that make a program run code, for the destructive-command check
(``shell.destructive_targets``' word rule): set by ``env``, ``export``, ``sudo``, ``make``...
for or before any command, each asks again after "always".

* the variables that choose what runs (``PATH``, ``LD_PRELOAD``, ``GIT_SSH_COMMAND``,
  ``PAGER``, ``CC``, ``GOFLAGS``, ``PYTEST_ADDOPTS``, ``LUA_INIT``...) and their families
  (``npm_config_*``, ``CARGO_TARGET_*_RUNNER``, ``CMAKE_*_COMPILER_LAUNCHER``);
* where a program finds configuration that runs commands (``HOME``, ``XDG_CONFIG_HOME``:
  git's fsmonitor and pager; ``KUBECONFIG``, ``AWS_CONFIG_FILE``, ``DOCKER_CONFIG``...), but
  not for a program that only reads or prints data (``env -i HOME=/tmp ls``);
* a tool named by a bare name (``CC=clang``) is looked up on the PATH like any command;
* the ``NAME=value`` words of a program that runs nothing and sets no variable (``grep CC=
  Makefile``, ``echo``) are text.

Contract: ``ASSIGNMENT``, the shape of a ``NAME=value`` word; ``variable_reason(word, first,
rest) -> str``, the reason ``word`` (an argument of ``first``, followed by ``rest``) asks, or
"".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rho_domain.shell.destructive_words import Arg

ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)$", re.DOTALL)


def variable_reason(word: Arg, first: str | None, rest: Sequence[Arg]) -> str:
    """Why the argument ``word`` of ``first`` (``rest``: the words after it) sets a variable
    that makes a program run code, or ""."""
    match = ASSIGNMENT.match(word or "") if first not in _SETS_NOTHING else None
    if match is None:
        return ""
    name, value = match.group(1), match.group(2)
    if name in _CONFIG_HOMES and _reads_data(rest):
        return ""  # env -i HOME=/tmp ls: a program that reads no configuration
    if name in _TOOL_NAMES and _BARE.match(value):
        return ""  # CC=clang: a program found on the PATH, as any command name is
    return f"{name}=...: sets what a later command runs" if _chooses_program(name) else ""


def _reads_data(rest: Sequence[Arg]) -> bool:
    """True when the program ``rest`` runs (after more assignments and options) only reads
    or prints data: ``ls``, ``cat``... (not git, whose configuration runs commands)."""
    program = next((w for w in rest if w is None or not (w[:1] == "-" or ASSIGNMENT.match(w))), "")
    return program is not None and program in _DATA_READERS


def _chooses_program(variable: str) -> bool:
    upper = variable.upper()
    runner = upper.startswith("CARGO_TARGET_") and upper.endswith(("_RUNNER", "_LINKER"))
    runner = runner or (upper.startswith("CMAKE_") and upper.endswith("_COMPILER_LAUNCHER"))
    return variable in _PROGRAM_VARIABLES or runner or upper.startswith(_PROGRAM_VARIABLE_PREFIXES)


_PROGRAM_VARIABLES = frozenset(
    [
        "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "IFS",
        "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "GCONV_PATH", "PYTHONSTARTUP",
        "PYTHONPATH", "NODE_OPTIONS", "PERL5OPT", "PERL5LIB", "RUBYOPT", "GIT_EXEC_PATH",
        "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR",
        "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
        "PAGER", "EDITOR", "VISUAL", "SHELL", "GIT_DIR", "GIT_COMMON_DIR", "GIT_TEMPLATE_DIR",
        "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND", "GIT_SEQUENCE_EDITOR", "BROWSER",
        "MANPAGER", "LESSOPEN", "LESSCLOSE", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTC",
        "MAKEFLAGS", "GNUMAKEFLAGS", "MAKEFILES", "TAR_OPTIONS", "ZIPOPT", "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "DYLD_INSERT_LIBRARIES", "PYTHONHOME", "RUBYLIB",
        "PERLLIB", "NODE_PATH", "GIT_CONFIG_SYSTEM", "PIP_CONFIG_FILE", "NPM_CONFIG_USERCONFIG",
        "LESSKEY", "LESSKEYIN", "LESSKEY_CONTENT", "LESSKEY_SYSTEM", "LESSKEYIN_SYSTEM",
        # where a program finds configuration that runs commands: git's ~/.gitconfig (an
        # fsmonitor, a pager), a kubeconfig's exec plugin, AWS's credential_process,
        # docker's credential helper, Mercurial's hooks, cargo's runners, gradle's init.d
        "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "ZDOTDIR", "KUBECONFIG",
        "AWS_CONFIG_FILE", "DOCKER_CONFIG", "HGRCPATH", "CARGO_HOME", "GRADLE_USER_HOME",
        "PYTHONUSERBASE", "GEMRC", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE", "IPYTHONDIR",
        "JUPYTER_CONFIG_DIR", "VIMINIT", "EXINIT", "MYVIMRC", "R_PROFILE_USER", "R_PROFILE",
        "R_ENVIRON_USER", "CLOUDSDK_CONFIG", "YARN_RC_FILENAME", "COMPOSER_HOME",
        # a compiler, a launcher, a plugin or code a tool runs: make's $(CC), go's
        # -toolexec, pytest's -p, Lua's LUA_INIT, .NET's startup hooks, a JVM agent
        "CC", "CXX", "CPP", "LD", "AR", "AS", "FC", "NM", "RANLIB", "STRIP", "OBJCOPY",
        "PKG_CONFIG", "CONFIG_SHELL", "CMAKE_TOOLCHAIN_FILE", "GOFLAGS", "RUSTFLAGS",
        "RUSTDOCFLAGS", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONWARNINGS",
        "PYTHONBREAKPOINT", "PERL5DB", "PERLDB_OPTS", "DOTNET_STARTUP_HOOKS", "GRADLE_OPTS",
        "MAVEN_OPTS", "SBT_OPTS", "ANT_OPTS", "PS4", "GLIBC_TUNABLES", "SUDO_ASKPASS",
        "SUDO_EDITOR", "FCEDIT", "SYSTEMD_PAGER", "SYSTEMD_EDITOR", "MANOPT", "PYTHON", "NODE",
        # GNU parallel's options for every run (--rpl Perl, --ssh), its config and profiles'
        # directory, the shell and ssh it runs
        "PARALLEL", "PARALLEL_HOME", "PARALLEL_SHELL", "PARALLEL_SSH",
    ]
)  # fmt: skip
# families of such variables: npm's settings (npm_config_script_shell, any case), cargo's
# (CARGO_BUILD_RUSTC_WRAPPER, CARGO_TARGET_<triple>_RUNNER), git's GIT_CONFIG_KEY_<n>
_PROGRAM_VARIABLE_PREFIXES = (
    "NPM_CONFIG_", "CARGO_BUILD_RUSTC", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "LUA_INIT",
    "CORECLR_PROFILER", "CMAKE_TOOLCHAIN_FILE",
)  # fmt: skip
# programs that run nothing and whose NAME=value words set no variable (text they print,
# search or edit: ``grep CC= Makefile``); a wrapper (env, sudo), export and make set one
_SETS_NOTHING = frozenset(
    ["echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "cat", "head", "tail",
     "sed", "awk", "jq", "wc"]
)  # fmt: skip
# where a program finds its configuration: set for a program that reads or prints data
# only, it runs nothing (env -i HOME=/tmp ls); for git, make, a shell, it may
_CONFIG_HOMES = frozenset(["HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "ZDOTDIR"])
_DATA_READERS = frozenset(
    ["ls", "cat", "head", "tail", "wc", "grep", "rg", "echo", "printf", "pwd", "id",
     "whoami", "date", "true", "stat", "du", "df", "sort", "uniq", "cut", "tr"]
)  # fmt: skip
# variables naming one tool (make's $(CC), node-gyp's $PYTHON): a bare name is looked up on
# the PATH like any command; a path (./evil) or a command line (CC='rm -rf ~') asks
_TOOL_NAMES = frozenset(
    ["CC", "CXX", "CPP", "LD", "AR", "AS", "FC", "NM", "RANLIB", "STRIP", "OBJCOPY",
     "PKG_CONFIG", "PYTHON", "NODE", "CONFIG_SHELL"]
)  # fmt: skip
_BARE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
