"""What the write tools never write, and what create-only mode may create: pure rules over path
components (``paths.components``), compared as a case-insensitive disk compares names
(``paths.folded``), applied by every executor to the path the model wrote and to the
canonical path.

* Secrets (never read, never written): the policy of ``rho_domain.secrets`` (secret names
  such as ``.env`` variants and private keys, secret trees such as ``.ssh``, ``/proc``,
  ``/etc/shadow``); ``write_refusal`` also refuses secret *names* for writes.
* Agent, editor and VCS configuration (never written): any ``.git`` component (``.hg``,
  ``.svn``, ``.bzr``, ``.jj``, ``.sl``, ``_darcs``, ``.pijul``, ``.repo`` alike), any
  component shaped as a Windows short name (``GIT~1`` is ``.git`` on NTFS), ``.vscode``,
  ``.idea``, ``.devcontainer``, ``.zed``, ``.claude``, ``.codex``, ``.cursor``, ``.gemini``,
  ``.kiro``, ``.windsurf``, ``.mcp.json`` and its twins (``opencode.json``, ``crush.json``,
  ``.opencode``, ``.openhands``, ``.roo``, ``.clinerules``...), ``.cursorrules`` and its
  twins (``.windsurfrules``, ``.goosehints``...), Python's start-up code (``sitecustomize``,
  ``usercustomize`` as a module, package, ``.pyc`` or extension; ``*.pth``), installed code
  (``site-packages``, ``dist-packages``, ``node_modules``, ``*.dist-info`` and ``*.egg-info``
  metadata, a venv's ``pyvenv.cfg`` and activation scripts), ``.ssh``, ``.gnupg``, ``.aws``,
  ``.direnv``, mise's project configuration (``mise.toml``...), shell and session start-up
  files (``.bashrc``, ``.profile``, ``.bash_aliases``...), what an editor or a cloud IDE runs
  when the project is opened (``.theia``, ``.vs``, ``.idx``, ``.gitpod.yml``, ``.replit``,
  ``devfile.yaml``, ``*.code-workspace``...), the start-up files of the user's
  other tools that run commands (``.vimrc``, ``.vim/``, ``.emacs.d/``, ``.tmux.conf``,
  ``.psqlrc``, ``.gdbinit``, ``.pdbrc``...), their XDG homes (``.config/git``, ``.config/fish``,
  ``.config/systemd``, ``.config/nvim``, ``.config/direnv``...), the user's PATH directories
  (``.local/bin``, ``.cargo/bin``), and package managers' user settings (``.config/pip``,
  ``.condarc``, ``.m2/settings.xml``...) and gradle's init scripts (``.gradle/init.d``).

``home_entry_refusal`` refuses, in a workspace holding a home directory, its hidden entries
and anything inside them; ``check_write_mode`` the profile's file-write mode; what is never
written for its content (a planted repository's ``HEAD``) is ``rho_domain.written_content``;
what create-only mode may create, ``rho_domain.create_only``.
"""

from __future__ import annotations

import re

from rho_domain.errors import PermissionDenied
from rho_domain.paths import components, folded, is_secret_name, is_short_name, is_within
from rho_domain.permissions import FileWriteMode

# Other version controls' directories are .git's twins (mercurial runs .hg/hgrc's hooks at
# its next command); a devcontainer's and Zed's configuration run commands when the folder is
# opened, as .vscode's tasks do; Kiro's, Windsurf's and opencode's are agents' configuration,
# as are the other agents' project directories: their rules, MCP servers (commands the agent
# starts) and, for OpenHands, .openhands/setup.sh, run at the start of every session; .pip is
# pip's legacy user configuration (its index-url: what pip installs, whose build code runs).
# The other version controls too: Sapling's .sl (its config's hooks, as .hg/hgrc's), darcs'
# _darcs (prefs/defaults sets any command's posthook), pijul's .pijul (its config's hooks), and
# Google's repo tool, whose launcher runs the Python of .repo/repo/ at every repo command; and
# mise's project directory (.mise/config.toml, below). And .vscode's twins in other editors
# (Theia's .theia, Visual Studio's .vs, Fleet's .fleet, Nova's .nova: tasks, run and debug
# configurations) and in the cloud IDEs, whose configuration runs commands when the project is
# opened there, as a devcontainer's does (Project IDX's .idx/dev.nix onCreate and onStart,
# CodeSandbox's .codesandbox/tasks.json setupTasks; the files follow, _OPENED_BY_IDES), and
# Helix's .helix/languages.toml, whose language servers are commands it starts, as Zed's;
# Factory's Droid agent, whose .factory holds its MCP servers, hooks and skills' scripts,
# as CodeBuddy Code's .codebuddy (.claude's twin) and iFlow CLI's .iflow (.gemini's) do.
_NEVER_WRITTEN_DIRS = frozenset(
    {".git", ".vscode", ".idea", ".claude", ".codex", ".cursor", ".gemini", ".ssh", ".gnupg",
     ".aws", ".direnv", ".kube", ".docker", ".hg", ".svn", ".bzr", ".jj", ".sl", "_darcs",
     ".pijul", ".repo", ".mise", ".devcontainer", ".theia", ".vs", ".fleet", ".nova", ".idx",
     ".codesandbox", ".helix",
     ".zed", ".kiro", ".windsurf", ".pip", ".opencode", ".openhands", ".roo", ".clinerules",
     ".kilocode", ".continue", ".junie", ".amazonq", ".qwen", ".trae", ".augment", ".vim",
     ".emacs.d", ".factory", ".codebuddy", ".iflow"}
)  # fmt: skip
# Code the interpreter runs at every start, before any program of the project: Python's site
# imports sitecustomize and usercustomize from its path, and runs the import lines of every
# .pth file in a site-packages (a virtual environment's in the workspace among them). No
# project's work is written there; it is the environment's.
# Each module is imported in any form the import system takes: a package directory (with or
# without __init__.py), a source file, a sourceless .pyc, a compiled extension module.
_PYTHON_STARTUP = frozenset({"sitecustomize", "usercustomize"})
_MODULE_SUFFIXES = (".py", ".pyc", ".pyw", ".so", ".pyd")
_PYTHON_STARTUP_SUFFIX = ".pth"


def _python_startup(parts: tuple[str, ...]) -> bool:
    """Whether ``parts`` is, or is inside, a module Python's site imports at every start."""
    for index, part in enumerate(parts):
        low = folded(part)
        if index < len(parts) - 1 and low in _PYTHON_STARTUP:
            return True  # the package sitecustomize/
        if low.split(".", 1)[0] in _PYTHON_STARTUP and low.endswith(_MODULE_SUFFIXES):
            return True  # sitecustomize.py, .pyc, .cpython-312-x86_64-linux-gnu.so
    return bool(parts) and folded(parts[-1]).endswith(_PYTHON_STARTUP_SUFFIX)


# An environment's installed code, which the project's tests and tools import or run and
# which the user's review of a change never shows (a virtual environment and node_modules are
# ignored by git): installed packages, a venv's interpreter setting and activation scripts.
# PEP 582's __pypackages__ (pdm's installed packages) and Yarn's Plug'n'Play install (the
# .pnp.cjs loader node requires first, .yarn's unplugged packages, zip cache, the committed
# yarn release and plugins every yarn command runs, the editor SDKs) are node_modules' twins.
_INSTALLED_DIRS = frozenset(
    {"site-packages", "dist-packages", "node_modules", "__pypackages__", ".tox", ".nox"}
)
_INSTALLED_FILES = frozenset({".pnp.cjs", ".pnp.js", ".pnp.loader.mjs", ".pnp.data.json"})
_YARN_INSTALLED = frozenset({"unplugged", "cache", "releases", "plugins", "sdks"})
# A Python virtual environment (a directory holding pyvenv.cfg: .venv, .tox/py312, .nox/x) or
# a conda one (conda-meta/: .pixi/envs/default) is installed code from top to bottom: its
# bin/ holds the console scripts (pytest) and, for whoever activates it, the first git or
# python on the PATH. The executors look for these markers in the directories a write
# passes through (below the workspace root: a workspace that is an environment is the
# user's choice of work) and refuse with ``environment_refusal``.
# An environment made without pyvenv.cfg (virtualenv before 20, pipx's and tox's over it, a
# conda base) is known by its activation script, which every one of them has; and tox's and
# nox's directories hold only the environments they build.
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta", "bin/activate")


def environment_refusal(path: str, environment: str) -> str:
    """The refusal of a write of ``path`` inside the environment directory ``environment``."""
    return (
        f"{path!r} is inside {environment}/, a Python or conda environment (installed code "
        "that tools run and a review of the change never shows); change the dependency or "
        "rebuild the environment instead"
    )


# An installed distribution's metadata, wherever it lies on sys.path (the workspace is, for
# python -m pytest): importlib.metadata finds any <name>.dist-info or <name>.egg-info
# directory there, and tools load the entry points its entry_points.txt declares (pytest
# imports every pytest11 module at its start). setuptools writes them; no project does.
_INSTALLED_METADATA = (".dist-info", ".egg-info")
_ACTIVATE = frozenset(
    {"activate", "activate.bat", "activate.csh", "activate.fish", "activate.nu", "activate.ps1",
     "activate_this.py"}
)  # fmt: skip
_NEVER_WRITTEN_FILES = frozenset(
    {".mcp.json", ".devcontainer.json",
     # .mcp.json's twins: the project configuration of other coding agents, whose MCP servers
     # (and crush's language servers) are commands the agent starts when it opens the
     # project, and whose permissions the next agent obeys
     "opencode.json", "opencode.jsonc", "crush.json", ".crush.json",
     ".bashrc", ".bash_profile", ".bash_login",
     ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
     ".inputrc", ".cursorrules",
     # .cursorrules' twins, other agents' rules files, and aider's configuration (its
     # lint-cmd and test-cmd run after each of its edits)
     ".windsurfrules", ".roorules", ".roomodes", ".goosehints", ".augment-guidelines",
     ".aider.conf.yml",
     ".gitconfig", ".bash_aliases", ".cshrc", ".tcshrc", ".login", ".kshrc", ".xprofile",
     ".xsessionrc", ".pam_environment",
     # the user's tools that run commands from their start-up files (vim's and neovim's
     # exrc and plugins, emacs, tmux's run-shell, psql's and sqlite3's shell escapes, gdb's
     # and lldb's commands, R, irb, X sessions, mercurial's hooks)
     ".vimrc", ".gvimrc", ".exrc", ".nvimrc", ".nvim.lua", ".emacs", ".tmux.conf",
     ".screenrc", ".psqlrc", ".sqliterc", ".gdbinit", ".lldbinit", ".rprofile", ".irbrc",
     ".pryrc", ".xinitrc", ".xsession", ".hgrc",
     # their twins: xonsh's rc (as .bashrc), gdb's early init, and the REPLs that read one
     # from the current directory too: GHCi's .ghci (:! runs a command), Octave's .octaverc,
     # R's .Renviron (R_PROFILE_USER names the R code run at start)
     ".xonshrc", ".gdbearlyinit", ".ghci", ".octaverc", ".renviron",
     # and more read from the current directory: pdb's .pdbrc (its lines are debugger
     # commands, ! a Python statement; pytest --pdb, breakpoint()), the perl debugger's
     # .perldb, IEx's .iex.exs and OCaml's .ocamlinit (code run at start); RVM sources a
     # project's .rvmrc (shell) at cd, lazy.nvim a project's .lazy.lua (.nvim.lua's twin);
     # Zed's agent follows a project's .rules (.cursorrules' twin)
     ".pdbrc", ".perldb", ".iex.exs", ".ocamlinit", ".rvmrc", ".lazy.lua", ".rules",
     # package managers' user settings (the index, channel or source they install from);
     # Yarn 2+'s .yarnrc.yml is .yarnrc's twin, its yarnPath and plugins JavaScript that
     # every yarn command runs (what .yarn/releases holds, from any file)
     ".condarc", ".gemrc", ".yarnrc", ".yarnrc.yml", ".bunfig.toml"}
)  # fmt: skip
# Files a cloud IDE or an editor obeys when the project is opened in it: Gitpod's tasks
# (.gitpod.yml's before, init, command; the image of .gitpod.Dockerfile), Replit's onBoot and
# run (.replit, replit.nix), a devfile's postStart commands (Eclipse Che, Dev Spaces),
# StackBlitz's startCommand (.stackblitzrc), and a VS Code workspace file (*.code-workspace:
# the tasks, launch and settings of .vscode in one file; a folderOpen task runs on opening).
_OPENED_BY_IDES = frozenset(
    {".gitpod.yml", ".gitpod.yaml", ".gitpod.dockerfile", ".replit", "replit.nix",
     "devfile.yaml", "devfile.yml", ".devfile.yaml", ".devfile.yml", ".stackblitzrc"}
)  # fmt: skip
_CODE_WORKSPACE = ".code-workspace"
# The same configuration under XDG names (``.config/<name>``): git's own config (its
# core.fsmonitor runs a command at the next ``git status``), fish's, nushell's, xonsh's and
# PowerShell's start-up files, user services, the desktop's autostart, the session's
# environment, window managers' exec lines, editors' (neovim, vim, emacs, VS Code, Zed),
# direnv's direnvrc, mise's hooks, tmux's, starship's prompt commands, pip's and uv's
# index; and the directories
# of commands on the user's PATH (``.local/bin``, ``.cargo/bin``): a program put there
# replaces ``git`` or ``python`` at the next call.
_NEVER_WRITTEN_BELOW = {
    ".config": frozenset(
        {"git", "fish", "systemd", "autostart", "environment.d", "nushell", "xonsh",
         "powershell", "i3", "sway", "hypr", "nvim", "vim", "emacs", "code", "zed", "direnv",
         "mise", "mise.toml", "tmux", "starship.toml", "pip", "uv", "gdb"}
    ),
    "mise": frozenset({"config.toml"}),
    ".local": frozenset({"bin"}),
    ".cargo": frozenset({"bin"}),
    # package managers' user settings: an index, channel or mirror they install from (the
    # installed package's build code runs), and gradle's init scripts, run at every build
    ".gradle": frozenset({"init.d", "init.gradle", "init.gradle.kts"}),
    ".m2": frozenset({"settings.xml"}),
    # Composer's installed programs (vendor/bin/phpunit, what the project's scripts run) and
    # Bundler's installed gems (bundle config path vendor/bundle), node_modules' twins
    "vendor": frozenset({"bin", "bundle"}),
}  # fmt: skip


# mise's project configuration, direnv's twin (.envrc is never written either): with mise
# activated in the shell, the env of mise.toml (its exec templates, _.source) is evaluated and
# its enter hooks run at the user's next prompt in the directory, a file mise trusts by its
# path, not its content (the content-bound trust is paranoid mode's): mise.toml, .mise.toml,
# mise.local.toml, mise.<env>.toml and their dotted and local twins.
_MISE_CONFIG = re.compile(r"\.?mise(\.[^./]+)*\.toml")


def write_refusal(path: str) -> str | None:
    """Why ``path`` may never be written, or None. Checks every component."""
    parts = components(path)
    for index, part in enumerate(parts):
        low = folded(part)
        if is_short_name(part):
            return (
                f"{path!r}: {part!r} has the shape of a Windows short (8.3) name, which NTFS "
                "takes for another, longer name (GIT~1 is .git); write it by its long name"
            )
        if low in _NEVER_WRITTEN_DIRS:
            return f"{path!r} is inside {part}/, which agents never write"
        yarn = low in _YARN_INSTALLED and index > 0 and folded(parts[index - 1]) == ".yarn"
        if low in _INSTALLED_DIRS or low.endswith(_INSTALLED_METADATA) or yarn:
            return (
                f"{path!r} is inside {part}/, installed code that tools run and a review of "
                "the change never shows; change the dependency's version or source instead"
            )
        below = _NEVER_WRITTEN_BELOW.get(folded(parts[index - 1])) if index else None
        if below is not None and low in below:
            return f"{path!r} is inside {parts[index - 1]}/{part}/, which agents never write"
    name = folded(parts[-1]) if parts else ""
    if name in _NEVER_WRITTEN_FILES or _MISE_CONFIG.fullmatch(name):
        return f"{path!r} is agent, editor or shell configuration, which agents never write"
    if name in _INSTALLED_FILES:
        return (
            f"{path!r} is Yarn's Plug'n'Play loader, installed code that node runs first; "
            "run yarn install instead"
        )
    if name in _OPENED_BY_IDES or name.endswith(_CODE_WORKSPACE):
        return (
            f"{path!r} is an editor's or a cloud IDE's configuration, whose commands run when "
            "the project is opened there; agents never write it"
        )
    in_bin = len(parts) > 1 and folded(parts[-2]) in ("bin", "scripts")
    if name == "pyvenv.cfg" or (name in _ACTIVATE and in_bin):
        return (
            f"{path!r} is a virtual environment's setting or activation script, which agents "
            "never write"
        )
    if _python_startup(parts):
        return (
            f"{path!r} is code Python runs at every start (sitecustomize, usercustomize, "
            ".pth files), which agents never write"
        )
    if name and is_secret_name(name):
        return f"{path!r} is a secrets file; only templates such as .env.example may be written"
    return None


def home_entry_refusal(
    path: str, real: str, root: str, homes: tuple[str, ...] | list[str]
) -> str | None:
    """Why the canonical absolute ``real`` may not be written, or None: it is, or is inside, a
    hidden entry of one of ``homes`` (``~/.bun``, ``~/.fzf.zsh``, ``~/.ipython``...) and the
    workspace ``root`` holds that entry (the workspace is the home or holds it). A home's
    hidden entries are where the user's start-up files, PATH directories, shell plugins and
    tools' configuration live, which the shell and every tool load by themselves; no list of
    them is complete (``write_refusal``'s are the known ones, for any workspace). A workspace
    inside such an entry (``~/.config/nvim``) is the user's choice of work and stays
    writable."""
    parts, root_parts = components(real), components(root)
    for home in homes:
        base = components(home)
        if len(parts) <= len(base) or not is_within(parts, base):
            continue
        entry = parts[: len(base) + 1]
        if entry[-1].startswith(".") and not is_within(root_parts, entry):
            return (
                f"{path!r} is {'/' + '/'.join(entry)} or inside it, a hidden entry of the home "
                f"directory {home}: its start-up files, PATH directories and tools' "
                "configuration run by themselves, and agents never write there"
            )
    return None


def check_write_mode(path: str, mode: FileWriteMode, *, overwrite: bool) -> None:
    """Refuse a write the profile's file-write mode forbids (every executor, before any I/O):
    OFF refuses every write, CREATE_ONLY refuses a write that may replace a file."""
    if mode is FileWriteMode.OFF:
        raise PermissionDenied(f"writing {path!r} is not allowed: this profile is read-only")
    if overwrite and mode is FileWriteMode.CREATE_ONLY:
        raise PermissionDenied(
            f"overwriting {path!r} is not allowed: this profile may only create new files"
        )
