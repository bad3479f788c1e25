"""Workspace confinement for a remote filesystem: lexical first, then the canonical path.

Step 1 (here, before any request): refuse ambiguous text (control characters, ``~``,
backslashes, URLs), join a relative path to the root, ``normpath`` it, and require its
components to start with a root's components (never a string prefix: ``/ws-evil`` is not in
``/ws``). ``..`` that climbs out and absolute paths elsewhere fail here.

Step 2 (the executor): the sandbox reports the canonical path of the path as given
(``Roots.walked``: ``..`` kept, so ``lnk/../x.txt`` is the parent of ``lnk``'s target, as the
kernel and the local executor read it; ``realpath -m``, every symlink resolved);
``Roots.below`` checks it again against the canonical roots, and the executor operates on
that canonical path only. Secrets and never-written paths (``rho_domain.paths``)
are checked on both the model's path and the canonical one. An upload's path the daemon would
trim (``check_upload_path``) is refused.
"""

from __future__ import annotations

import posixpath

from rho_domain.errors import PathOutsideWorkspace, ToolError
from rho_domain.paths import check_path_text, components, is_within


class Roots:
    """The workspace root (as configured and as canonicalised) plus extra read roots."""

    def __init__(self, root: str, extra: tuple[str, ...] = (), *, anywhere: bool = False) -> None:
        self.given = posixpath.normpath(root)
        self.root = self.given  # replaced by the canonical root once the sandbox exists
        self.extra = tuple(posixpath.normpath(r) for r in extra if r.startswith("/"))
        # read_outside_workspace: allow: an absolute path is read wherever it is (the
        # executor judges the canonical path by ``ReadReach``); writes stay in the workspace.
        self.anywhere = anywhere

    def locate(self, path: str, *, write: bool) -> str:
        """The lexically normalised absolute path of ``path``; raise when outside every root."""
        check_path_text(path)
        if path.startswith("/"):
            absolute = posixpath.normpath(path)
            parts = components(absolute)
            for alias in (self.given, self.root):
                if is_within(parts, components(alias)):
                    # Address the configured root; the sandbox canonicalises it again.
                    rest = parts[len(components(alias)) :]
                    return posixpath.join(self.root, *rest) if rest else self.root
            if not write and (
                self.anywhere or any(is_within(parts, components(r)) for r in self.extra)
            ):
                return absolute
            raise PathOutsideWorkspace(f"{path!r} is outside the workspace {self.given}")
        absolute = posixpath.normpath(posixpath.join(self.root, path))
        if not is_within(components(absolute), components(self.root)):
            raise PathOutsideWorkspace(f"{path!r} leads outside the workspace {self.given}")
        return absolute

    def walked(self, path: str) -> str:
        """``path`` (which ``locate`` accepted) as the kernel walks it, absolute: ``..``
        kept after a symbolic link. Normalised lexically first, ``read lnk/../x.txt`` read the
        workspace's own ``x.txt`` where the local executor (and ``cat``) reads the one beside
        ``lnk``'s target, or refuses it out of reach."""
        return path if path.startswith("/") else posixpath.join(self.root, path)

    def below(self, canonical: str, shown: str, *, write: bool) -> tuple[str, tuple[str, ...]]:
        """(root, components below it) of a canonical path; raise when outside every root."""
        parts = components(canonical)
        roots = (self.root,) if write else (self.root, *self.extra)
        for root in roots:
            base = components(root)
            if is_within(parts, base):
                return root, parts[len(base) :]
        if self.anywhere and not write:
            return "/", parts
        raise PathOutsideWorkspace(
            f"{shown!r} resolves (through a symbolic link) outside the workspace {self.given}"
        )

    def display(self, root: str, parts: tuple[str, ...]) -> str:
        """How a path is shown: relative inside the workspace, absolute in an extra root."""
        if root == self.root:
            return "/".join(parts) or "."
        return posixpath.join(root, *parts)


# Go's unicode.IsSpace: what the daemon's strings.TrimSpace cuts from an upload's path.
GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def check_upload_path(path: str) -> None:
    """Refuse a path the daemon would change: since May 2026 (daytonaio/daytona #4665) it
    trims white space around each ``.path``, so ``notes.txt `` would be written as
    ``notes.txt``, another file."""
    if path.strip(GO_SPACE) != path:
        raise ToolError(
            f"{path!r} ends in white space, which the Daytona daemon removes from an upload's "
            "path (another file would be written); rename it"
        )
