"""How a run is shown where the CLI runs: colour, the spinner, and the lines of each tool's
output previewed, from the environment and whether stderr is a terminal.

Colour and the spinner are separate: ``NO_COLOR`` turns colour off and leaves the spinner
(it draws no colour), ``TERM=dumb`` turns both off (such a terminal shows cursor movements
as text), and neither is drawn when stderr is not a terminal (a pipe, a log file).
"""

from __future__ import annotations

from collections.abc import Mapping

from rho_domain.errors import ConfigError
from rho_domain.permissions import PermissionProfile, builtin_as_made


def color(env: Mapping[str, str], *, stderr_tty: bool) -> bool:
    """Colour on stderr: a terminal that can show it, and NO_COLOR unset."""
    return "NO_COLOR" not in env and animated(env, stderr_tty=stderr_tty)


def animated(env: Mapping[str, str], *, stderr_tty: bool) -> bool:
    """A spinner on stderr: a terminal that moves its cursor. ``TERM=dumb`` (Emacs' shell
    and compile buffers, some CI consoles) cannot: it turned colour off, but the spinner
    still drew a carriage return and an erase-line escape ten times a second, shown there
    as "^M^[[2K" garbage."""
    return stderr_tty and env.get("TERM") != "dumb"


def preview_lines(flag: int | None, env: Mapping[str, str]) -> int:
    """Lines of tool output shown: 0 or more (``-v`` shows them all)."""
    if flag is not None:
        value, origin = flag, f"--preview-lines {flag}"
    else:
        raw = env.get("RHO_AGENT_PREVIEW_LINES")
        if not raw:
            return 6
        origin = f"RHO_AGENT_PREVIEW_LINES={raw!r}"
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{origin}: expected an integer") from None
    if value < 0:
        raise ConfigError(f"{origin}: expected 0 or more lines (--verbose shows every line)")
    return value


def profile_label(profile: PermissionProfile) -> str:
    """The header's ``profile_grants.label``: a built-in profile as made is its name, and its
    grants are compared (their module imported) only for any other profile."""
    if builtin_as_made(profile):
        return profile.name
    from rho_domain.profile_grants import label

    return label(profile)
