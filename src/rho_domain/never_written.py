"""The names the write tools never write, as tables, each with why it is there (see
``write_rules``, whose module docstring lists them and whose ``write_refusal`` applies them;
names are compared folded, as a case-insensitive disk compares them): directories never
written (``NEVER_WRITTEN_DIRS``, and below a parent: ``NEVER_WRITTEN_BELOW``), files never
written (``NEVER_WRITTEN_FILES``, ``OPENED_BY_IDES``, mise's configuration), Python's start-up
code (``python_startup``), installed code (``INSTALLED_*``). Imported with the first path
judged for a write (``write_rules.write_refusal``), not by a run that writes nothing.
"""

from __future__ import annotations

import re

from rho_domain.paths import folded

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
# CodeSandbox's .codesandbox/tasks.json setupTasks; the files follow, OPENED_BY_IDES), and
# Helix's .helix/languages.toml, whose language servers are commands it starts, as Zed's;
# Factory's Droid agent, whose .factory holds its MCP servers, hooks and skills' scripts,
# as CodeBuddy Code's .codebuddy (.claude's twin) and iFlow CLI's .iflow (.gemini's) do;
# and the agents whose project settings hold MCP servers (commands they start) and hooks:
# Amp's .amp/settings.json, Tabnine's .tabnine/agent/settings.json, Qoder's .qoder/settings.json.
NEVER_WRITTEN_DIRS = frozenset(
    {".git", ".vscode", ".idea", ".claude", ".codex", ".cursor", ".gemini", ".ssh", ".gnupg",
     ".aws", ".direnv", ".kube", ".docker", ".hg", ".svn", ".bzr", ".jj", ".sl", "_darcs",
     ".pijul", ".repo", ".mise", ".devcontainer", ".theia", ".vs", ".fleet", ".nova", ".idx",
     ".codesandbox", ".helix", ".lefthook-local",
     ".zed", ".kiro", ".windsurf", ".pip", ".opencode", ".openhands", ".roo", ".clinerules",
     ".kilocode", ".continue", ".junie", ".amazonq", ".qwen", ".trae", ".augment", ".vim",
     ".emacs.d", ".factory", ".codebuddy", ".iflow", ".amp", ".tabnine", ".qoder",
     # the agents' shared directory (probemcp21b): Codex, GitHub Copilot and VS Code load
     # the skills of .agents/skills (.claude/skills' twin) by themselves, a skill's
     # instructions and the scripts they run, when a task matches its description, and
     # Antigravity its rules, workflows (a "// turbo" step runs without asking), MCP
     # servers (mcp_config.json) and hooks (hooks.json); Antigravity's first .agent
     # (rules, workflows) and JetBrains AI Assistant's .aiassistant (rules always applied)
     ".agents", ".agent", ".aiassistant"}
)  # fmt: skip
# Code the interpreter runs at every start, before any program of the project: Python's site
# imports sitecustomize and usercustomize from its path, and runs the import lines of every
# .pth file in a site-packages (a virtual environment's in the workspace among them). No
# project's work is written there; it is the environment's.
# Each module is imported in any form the import system takes: a package directory (with or
# without __init__.py), a source file, a sourceless .pyc, a compiled extension module.
PYTHON_STARTUP = frozenset({"sitecustomize", "usercustomize"})
MODULE_SUFFIXES = (".py", ".pyc", ".pyw", ".so", ".pyd")
PYTHON_STARTUP_SUFFIX = ".pth"


def python_startup(parts: tuple[str, ...]) -> bool:
    """Whether ``parts`` is, or is inside, a module Python's site imports at every start."""
    for index, part in enumerate(parts):
        low = folded(part)
        if index < len(parts) - 1 and low in PYTHON_STARTUP:
            return True  # the package sitecustomize/
        if low.split(".", 1)[0] in PYTHON_STARTUP and low.endswith(MODULE_SUFFIXES):
            return True  # sitecustomize.py, .pyc, .cpython-312-x86_64-linux-gnu.so
    return bool(parts) and folded(parts[-1]).endswith(PYTHON_STARTUP_SUFFIX)


# An environment's installed code, which the project's tests and tools import or run and
# which the user's review of a change never shows (a virtual environment and node_modules are
# ignored by git): installed packages, a venv's interpreter setting and activation scripts.
# PEP 582's __pypackages__ (pdm's installed packages) and Yarn's Plug'n'Play install (the
# .pnp.cjs loader node requires first, .yarn's unplugged packages, zip cache, the committed
# yarn release and plugins every yarn command runs, the editor SDKs) are node_modules' twins.
INSTALLED_DIRS = frozenset(
    {"site-packages", "dist-packages", "node_modules", "__pypackages__", ".tox", ".nox"}
)
INSTALLED_FILES = frozenset({".pnp.cjs", ".pnp.js", ".pnp.loader.mjs", ".pnp.data.json"})
YARN_INSTALLED = frozenset({"unplugged", "cache", "releases", "plugins", "sdks"})


# An installed distribution's metadata, wherever it lies on sys.path (the workspace is, for
# python -m pytest): importlib.metadata finds any <name>.dist-info or <name>.egg-info
# directory there, and tools load the entry points its entry_points.txt declares (pytest
# imports every pytest11 module at its start). setuptools writes them; no project does.
INSTALLED_METADATA = (".dist-info", ".egg-info")
ACTIVATE = frozenset(
    {"activate", "activate.bat", "activate.csh", "activate.fish", "activate.nu", "activate.ps1",
     "activate_this.py"}
)  # fmt: skip
NEVER_WRITTEN_FILES = frozenset(
    {".mcp.json", ".devcontainer.json",
     # .mcp.json's twins: the project configuration of other coding agents, whose MCP servers
     # (and crush's language servers) are commands the agent starts when it opens the
     # project, and whose permissions the next agent obeys
     "opencode.json", "opencode.jsonc", "crush.json", ".crush.json",
     # and the undotted mcp.json some agents discover at a project's root when no directory
     # of theirs holds one (oh-my-pi's coding agent, MCPX): its mcpServers are commands
     "mcp.json",
     ".bashrc", ".bash_profile", ".bash_login",
     ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
     ".inputrc", ".cursorrules",
     # .cursorrules' twins, other agents' rules files, and aider's configuration (its
     # lint-cmd and test-cmd run after each of its edits)
     ".windsurfrules", ".roorules", ".roomodes", ".goosehints", ".augment-guidelines",
     ".aider.conf.yml",
     # Kilo Code's project modes, .roomodes' twin (a mode grants the command tool group)
     ".kilocodemodes",
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
     # lua-language-server's project configuration: its runtime.plugin is Lua code the
     # server runs when an editor opens the project (.helix's language servers' twin)
     ".luarc.json", ".luarc.jsonc",
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
OPENED_BY_IDES = frozenset(
    {".gitpod.yml", ".gitpod.yaml", ".gitpod.dockerfile", ".replit", "replit.nix",
     "devfile.yaml", "devfile.yml", ".devfile.yaml", ".devfile.yml", ".stackblitzrc"}
)  # fmt: skip
CODE_WORKSPACE = ".code-workspace"
# The same configuration under XDG names (``.config/<name>``): git's own config (its
# core.fsmonitor runs a command at the next ``git status``), fish's, nushell's, xonsh's and
# PowerShell's start-up files, user services, the desktop's autostart, the session's
# environment, window managers' exec lines, editors' (neovim, vim, emacs, VS Code, Zed),
# direnv's direnvrc, mise's hooks, tmux's, starship's prompt commands, pip's and uv's
# index; and the directories
# of commands on the user's PATH (``.local/bin``, ``.cargo/bin``): a program put there
# replaces ``git`` or ``python`` at the next call.
NEVER_WRITTEN_BELOW = {
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
    # GitHub Copilot CLI's hooks (.github/hooks/*.json): shell commands it runs at a session's
    # start and around each tool, loaded from the directory it runs in (.claude's hooks'
    # twin); .github's workflows are the project's declared CI and stay writable. Copilot's
    # custom agents (.github/agents/*.agent.md: their mcp-servers are commands it starts) and
    # its instructions (copilot-instructions.md, instructions/: .cursorrules' twins) too, and
    # Copilot's skills (.github/skills: .agents/skills' twin, scripts included), its prompt
    # files (.github/prompts: slash commands whose tools: the agent runs with) and the
    # custom agents' older form (.github/chatmodes) too (probemcp21b)
    ".github": frozenset(
        {"hooks", "agents", "instructions", "copilot-instructions.md", "skills", "prompts",
         "chatmodes"}
    ),
    # husky's generated hooks (core.hooksPath is .husky/_, each hook sourcing .husky/_/h):
    # git hooks run at every commit, in a directory husky makes git ignore, so no review
    # shows a change; the project's own .husky/pre-commit stays writable
    ".husky": frozenset({"_"}),
}  # fmt: skip
# A tool's local configuration, which it merges over the project's by itself at its next run
# and which git ignores by convention, so no review shows it: lefthook-local's commands (run
# at every commit by the hook lefthook installed; lefthook's docs say to ignore it), MSBuild's
# <project>.csproj.user (imported by every build of the project: its targets' Exec tasks
# run; VisualStudio.gitignore leaves out *.user), CMake's CMakeUserPresets.json (cmake
# --preset: a compiler launcher is any command; CMake's docs say not to commit it) and
# Android's local.properties (sdk.dir: the SDK whose build tools gradle runs; Android
# Studio's .gitignore leaves it out), and direnv's local twin of .envrc (.envrc.local,
# .envrc.private: shell code an .envrc sources with source_env_if_exists, at every cd, which
# direnv's allow does not cover and git ignores by convention; a template stays writable).
# The project's own lefthook.yml, .csproj and
# CMakePresets.json stay writable, and so does Compose's override file, which projects
# commit as often as not (a review shows it).
LOCAL_OVERRIDES = re.compile(
    r"\.?lefthook-local\.(yml|yaml|json|jsonc|toml)|.+proj\.user|cmakeuserpresets\.json"
    r"|local\.properties|\.envrc\.(?!(example|sample|template|dist|defaults)\Z).+"
)


# mise's project configuration, direnv's twin (.envrc is never written either): with mise
# activated in the shell, the env of mise.toml (its exec templates, _.source) is evaluated and
# its enter hooks run at the user's next prompt in the directory, a file mise trusts by its
# path, not its content (the content-bound trust is paranoid mode's): mise.toml, .mise.toml,
# mise.local.toml, mise.<env>.toml and their dotted and local twins.
MISE_CONFIG = re.compile(r"\.?mise(\.[^./]+)*\.toml")
