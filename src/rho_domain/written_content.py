"""What the write tools never write for its content, whatever the mode: a file whose name
alone is ordinary but whose bytes make a tool run code later (``write_rules`` judges names).
Applied by every executor to the bytes of each write, an edit's whole new file included.

* ``HEAD`` holding a ref or an object id: a bare repository planted in the workspace, whose
  ``config`` git obeys (``git_head_refusal``).
* ``.tool-versions`` (or ``.nvmrc``, ``.python-version``...) naming a ``path:`` version:
  asdf's and mise's shims run that directory's ``bin/`` programs (``tool_versions_refusal``).
"""

from __future__ import annotations

from rho_domain.paths import components, folded

_HEX = frozenset(b"0123456789abcdefABCDEF")


def content_refusal(path: str, data: bytes) -> str | None:
    """Why ``data`` may never be written to ``path``, in any mode, or None."""
    return git_head_refusal(path, data) or tool_versions_refusal(path, data)


def git_head_refusal(path: str, data: bytes) -> str | None:
    """Why ``data`` may not be written to ``path``, or None: a file named ``HEAD`` that holds
    a ref (``ref: refs/...``) or an object id is what makes git take its directory for a
    repository, with or without ``objects/`` and ``refs/`` beside it: a bare repository
    planted anywhere in the workspace, whose ``config`` (``core.pager``, ``core.fsmonitor``,
    ``core.sshCommand``) git obeys when the user runs git there. Git's own test
    (``validate_headref``) is the rule: the bytes start with ``ref:`` or with a hex id."""
    parts = components(path)
    if not parts or folded(parts[-1]) != "head":
        return None
    if data.startswith(b"ref:") or (len(data) >= 40 and _HEX.issuperset(data[:40])):
        return (
            f"{path!r} would be a git HEAD, which makes its directory a repository whose "
            "config git obeys (a bare repository planted in the workspace); agents never "
            "write one"
        )
    return None


# The files a version manager reads the tool's version from: asdf's and mise's .tool-versions,
# and the one-tool files mise (its idiomatic version files) and asdf (legacy_version_file)
# read through the same version parser, where path:<dir> is a version too.
_VERSION_FILES = frozenset(
    {".tool-versions", ".node-version", ".nvmrc", ".python-version", ".ruby-version",
     ".go-version", ".java-version", ".terraform-version"}
)  # fmt: skip


def tool_versions_refusal(path: str, data: bytes) -> str | None:
    """Why ``data`` may not be written to ``path``, or None: a ``.tool-versions`` (or a
    one-tool version file, ``.nvmrc``, ``.python-version``...) whose versions name a
    ``path:`` directory. asdf's shims and mise's activated PATH run that directory's
    ``bin/node``, ``bin/python``... whenever the user runs the tool below the file's
    directory, by hand, not as the project's build: a program of the workspace put first on
    the PATH, the file itself a one-line change no reviewer reads as code. A version number
    (``nodejs 20.11.1``), ``system`` and ``ref:`` (a build of the tool's own sources) stay
    writable. Any ``path:`` in the file is refused, a comment's too: a rule as simple as the
    word, rather than a second parser of asdf's format."""
    parts = components(path)
    if not parts or folded(parts[-1]) not in _VERSION_FILES or b"path:" not in data.lower():
        return None
    return (
        f"{path!r} names a path: version, a directory whose programs asdf and mise run for "
        "the tool whenever it is called here; agents never write one (name a released "
        "version, or ref:)"
    )
