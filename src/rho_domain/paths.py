"""Path rules shared by every file tool and executor: what is a secret, and how a path is
judged before any filesystem access.

Pure functions over path *components*, compared as a case-insensitive disk compares them
(``folded``: ``.GIT/config``, ``.g\u200cit/config`` on HFS+ and ``.git./config`` on NTFS are
``.git/config``). They are applied to the canonical path (after symlinks were resolved by the
executor) as well as to the path the model wrote. Secrets (never read, never written) are the
policy of ``rho_domain.secrets`` and the names ``is_secret_name`` refuses even as a bare word.
What is never written is ``rho_domain.write_rules``; what create-only mode may create,
``rho_domain.create_only``.
"""

from __future__ import annotations

import posixpath
import re

from rho_domain.errors import PathOutsideWorkspace, PermissionDenied, ToolError
from rho_domain.names import folded, is_short_name
from rho_domain.secret_twins import name_stems
from rho_domain.secrets import DEFAULT_POLICY

__all__ = ["folded", "is_short_name"]  # rho_domain.names', named here for the rules

_TEMPLATE_SUFFIXES = (".example", ".sample", ".template", ".dist", ".defaults")
_SECRET_NAMES = frozenset(
    {".env", ".envrc", ".netrc", "_netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc"}
)
_SSH_KEYS = frozenset(
    {"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk"}
)


def components(path: str) -> tuple[str, ...]:
    """The non-empty, non-``.`` components of a POSIX path, in order."""
    return tuple(part for part in path.split("/") if part not in ("", "."))


def is_secret_name(name: str) -> bool:
    """True for the unmistakable secrets file names (``.env`` variants, ``.netrc``, SSH keys)
    and their copies (``secret_twins``: ``id_rsa.bak``, ``.netrc.1``): the names refused even
    as a bare word, before anything looks at the filesystem."""
    for low in name_stems(name.casefold()):  # and their copies: id_rsa.1, .netrc (copy)
        if low.endswith(_TEMPLATE_SUFFIXES):
            return False
        if low in _SECRET_NAMES or low in _SSH_KEYS:
            return True
        if low.startswith(".env.") or low.endswith(".env"):
            return True
    return False


def is_secret(path: str) -> bool:
    """True when ``path`` is a secret under the default ``SecretPolicy`` (rho_domain.secrets):
    a secrets file name, or anything inside a secret location such as ``.ssh`` or ``/proc``."""
    return DEFAULT_POLICY.is_secret(path)


def is_within(parts: tuple[str, ...], base: tuple[str, ...]) -> bool:
    """Component-wise containment (never a string prefix: /proj-evil is not in /proj)."""
    return parts[: len(base)] == base


def normalize(path: str) -> str:
    """Lexically normalised POSIX path (no filesystem access)."""
    return posixpath.normpath(path) if path else path


MAX_PATH = 4096
NAME_MAX = 255  # bytes in one component, on every filesystem a workspace lives on


def temp_name(name: str, token: str) -> str:
    """The hidden temp file beside ``name`` that a write fills and renames over it: unique by
    ``token`` and within ``NAME_MAX`` bytes whatever ``name`` is (a 240-byte name of
    two-byte letters is valid; 200 of its *characters* with the suffix are not)."""
    stem = name.encode()[:200].decode(errors="ignore")  # a letter cut in two is dropped
    return f".{stem}.{token}.rho-tmp"


_TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{12}\.rho-tmp\Z", re.DOTALL)


def is_temp_name(name: str) -> bool:
    """Whether ``name`` has the shape ``temp_name`` gives (``token_hex(6)``): a write's temp
    file, which a listing leaves out (a killed write's leftover is not a workspace file)."""
    return _TEMP_NAME.match(name) is not None


_MAX_NAME = 255  # bytes of one name: every filesystem the executors write (ext4, xfs, tmpfs)


def check_file_path(path: str) -> None:
    """Refuse, for reading or writing a *file*, a path whose text names a directory:
    ``notes/`` (which a naive write turns into a file ``notes``), ``a/.``, ``..``."""
    if path.endswith(("/", "/.", "/..")) or path in (".", ".."):
        raise ToolError(f"{path!r} names a directory; give the path of a file")


def check_path_text(path: str) -> None:
    """Refuse path strings that are ambiguous before any filesystem access, on every backend:
    empty, lone surrogates (U+D800-DFFF, escaped in JSON: no UTF-8 name), too long, control
    characters, ``~`` (never expanded), backslashes, URLs, drive letters."""
    if not path:
        raise ToolError("empty path")
    if not path.isascii() and any(0xD800 <= ord(c) <= 0xDFFF for c in path):
        raise ToolError(f"{path!r} holds a lone surrogate, which is no character of a file name")
    if len(path) > MAX_PATH:
        raise ToolError(
            f"{path[:60]!r}... is too long: {len(path):,} characters; a path is at most "
            f"{MAX_PATH:,}"
        )
    if long := next((p for p in path.split("/") if len(p.encode()) > _MAX_NAME), None):
        raise ToolError(
            f"{long[:60]!r}... is too long: {len(long.encode()):,} bytes of UTF-8; a file or "
            f"directory name is at most {_MAX_NAME} (an accented letter takes 2): give it a "
            "shorter name"
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise PermissionDenied("control characters in a path are not allowed")
    if path.startswith("~"):
        raise PathOutsideWorkspace(f"{path!r}: '~' is not expanded; use a workspace path")
    if "\\" in path or "://" in path or (len(path) > 1 and path[1] == ":" and path[0].isalpha()):
        raise PermissionDenied(f"{path!r}: backslashes, URLs and drive letters are not paths here")
