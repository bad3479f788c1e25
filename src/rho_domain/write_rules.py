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
  ``.opencode``, ``.openhands``, ``.roo``, ``.clinerules``, ``.amp``, ``.qoder``...,
  Copilot's ``.github/hooks``, ``.github/agents``, instructions, prompts and skills, the
  agents' ``.agents``), git hooks outside
  ``.git`` and tools' local overrides that git ignores (husky's ``.husky/_``,
  ``lefthook-local.yml``, ``*.csproj.user``, ``.envrc.local``...), ``.cursorrules`` and its
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

from rho_domain.errors import PermissionDenied
from rho_domain.paths import components, folded, is_secret_name, is_short_name, is_within
from rho_domain.permissions import FileWriteMode

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


def write_refusal(path: str) -> str | None:
    """Why ``path`` may never be written, or None. Checks every component."""
    from rho_domain import never_written as never  # with the first write judged

    parts = components(path)
    for index, part in enumerate(parts):
        low = folded(part)
        if is_short_name(part):
            return (
                f"{path!r}: {part!r} has the shape of a Windows short (8.3) name, which NTFS "
                "takes for another, longer name (GIT~1 is .git); write it by its long name"
            )
        if low in never.NEVER_WRITTEN_DIRS:
            return f"{path!r} is inside {part}/, which agents never write"
        yarn = low in never.YARN_INSTALLED and index > 0 and folded(parts[index - 1]) == ".yarn"
        if low in never.INSTALLED_DIRS or low.endswith(never.INSTALLED_METADATA) or yarn:
            return (
                f"{path!r} is inside {part}/, installed code that tools run and a review of "
                "the change never shows; change the dependency's version or source instead"
            )
        below = never.NEVER_WRITTEN_BELOW.get(folded(parts[index - 1])) if index else None
        if below is not None and low in below:
            return f"{path!r} is inside {parts[index - 1]}/{part}/, which agents never write"
    name = folded(parts[-1]) if parts else ""
    if name in never.NEVER_WRITTEN_FILES or never.MISE_CONFIG.fullmatch(name):
        return f"{path!r} is agent, editor or shell configuration, which agents never write"
    if never.LOCAL_OVERRIDES.fullmatch(name):
        return (
            f"{path!r} is a tool's local configuration (git hooks, build settings), merged at "
            "its next run and ignored by git, so no review shows it; agents never write it"
        )
    if name in never.INSTALLED_FILES:
        return (
            f"{path!r} is Yarn's Plug'n'Play loader, installed code that node runs first; "
            "run yarn install instead"
        )
    if name in never.OPENED_BY_IDES or name.endswith(never.CODE_WORKSPACE):
        return (
            f"{path!r} is an editor's or a cloud IDE's configuration, whose commands run when "
            "the project is opened there; agents never write it"
        )
    in_bin = len(parts) > 1 and folded(parts[-2]) in ("bin", "scripts")
    if name == "pyvenv.cfg" or (name in never.ACTIVATE and in_bin):
        return (
            f"{path!r} is a virtual environment's setting or activation script, which agents "
            "never write"
        )
    if never.python_startup(parts):
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
