"""The environment a restricted command starts in, whatever runs it (local or Daytona).

Built from nothing: a fixed PATH, a UTF-8 locale, no home, pagers off, and git's system and
global configuration and system attributes out of reach. One rule for both backends, so a
variable one adds (a new way for a program to load code or config) is not missed by the other.
"""

from __future__ import annotations


def restricted_env(path: str, tmpdir: str) -> dict[str, str]:
    """A new environment for a restricted command: ``PATH`` is ``path`` (``:``-joined
    directories), ``TMPDIR`` the backend's temporary directory; the caller may extend it."""
    return {
        "PATH": path,
        "LC_ALL": "C.UTF-8",
        "LANG": "C.UTF-8",
        # Not a directory, so nothing is ever found below it: jq loads ~/.jq into every
        # program (it may import files), and without the sandbox /tmp is the host's.
        "HOME": "/dev/null",
        "TMPDIR": tmpdir,
        "PAGER": "cat",
        "GIT_PAGER": "cat",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_ATTR_NOSYSTEM": "1",
    }
