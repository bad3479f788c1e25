"""The Executor port's command values and uploaded files: ``Stage``, ``Command``,
``CommandResult``, ``FileUpload``.

A run whose tools read files in-process (list, read, grep's walk) and that uploads nothing
never builds them (about 0.7 ms of CPU a class): ``rho_domain.ports.executor`` names them
lazily (PEP 562), and the tools and executors import them where a command is built or a file
uploaded. Import them from ``rho_domain.ports.executor``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from rho_domain.errors import ToolError
from rho_domain.limits import LimitKind
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class Stage:
    """One program of a pipeline: an argv run without any shell.

    ``stdin_path`` feeds a workspace file (``< file``); ``stdin_data`` feeds literal text (a
    here-document); at most one of them is set. ``stderr`` is captured into the output,
    discarded (``2>/dev/null``) or merged into stdout (``2>&1``); ``stdout_null`` discards stdout.
    Pipeline stages are restricted commands: the executor validates each argv with
    ``rho_domain.shell.programs.check_argv`` and runs it hardened and sandboxed.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    argv: tuple[str, ...]
    stdin_path: str | None = None
    stdin_data: str | None = None
    stderr: Literal["capture", "null", "stdout"] = "capture"
    stdout_null: bool = False


def _seconds(_: object, attribute: attrs.Attribute[float], value: object) -> None:
    """A positive, finite number of seconds. Before, the executors disagreed on the rest:
    the local one ran a command of NaN or infinite seconds without a deadline and ended one
    of 0 or less at once, the Daytona one raised Python's ValueError or OverflowError for
    the first and gave the second a second."""
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is None or not 0 < number < float("inf"):
        raise ToolError(
            f"a command's {attribute.name} must be a number of seconds, more than 0 and "
            f"finite; got {value!r}"
        )


def _no_nul(_: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    """No NUL in a shell string or an environment: no shell or ``execve`` can hold one. Before,
    Daytona's sandbox dropped it silently (``r<NUL>m -rf x``, shown so to the approver, ran
    as ``rm -rf x``), and the local executor raised Python's ValueError."""
    texts = value.items() if isinstance(value, Mapping) else ((value or "",),)
    for text in (t for pair in texts for t in pair):
        if isinstance(text, str) and "\0" in text:
            where = "command line" if attribute.name == "shell" else "environment"
            raise ToolError(
                f"the {where} holds a NUL character (at character {text.index(chr(0)) + 1} of "
                f"{text[:60]!r}): no shell can run it as written; remove it"
            )


@attrs.frozen(kw_only=True)
class Command:
    r"""A command to run: either a pipeline of validated argvs, or (unrestricted) a shell string.

    Exactly one of ``pipeline`` and ``shell`` is set. stdin is always /dev/null unless a stage
    reads a file. ``max_output_bytes`` caps what is kept while the output streams; the rest is
    counted, not stored. ``keep_undecodable``: output bytes that are not UTF-8 come back as
    lone surrogates (``surrogateescape``, as Python lists a file name) instead of U+FFFD, for
    output that names files (``rg --files``): shown as ``\xe9``, as ``list`` shows the name,
    where U+FFFD said nothing of the byte. Honoured where the executor has the bytes (the
    local one); elsewhere the output is as without it.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    pipeline: tuple[Stage, ...] = ()
    shell: str | None = attrs.field(default=None, validator=_no_nul)
    cwd: str = "."
    timeout: float = attrs.field(default=120.0, validator=_seconds)
    max_output_bytes: int = 256 * 1024
    env: Mapping[str, str] = attrs.field(factory=dict, validator=_no_nul)
    keep_undecodable: bool = False


@attrs.frozen(kw_only=True)
class CommandResult:
    """The outcome of a command. ``exit_code`` is None when it was killed (timeout).

    ``limit`` names the resource limit of the profile that ended the command (``"output"``:
    it printed more than the output limit and was killed; ``"memory"``, ``"cpu"``,
    ``"file size"``: the kernel's rlimit, as far as the exit shows it), else None.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    exit_code: int | None
    output: str
    duration: float
    timed_out: bool = False
    omitted_bytes: int = 0
    limit: LimitKind | None = None


@attrs.frozen(kw_only=True)
class FileUpload:
    """One file of the operator's to put into an executor's filesystem (``--upload``).
    ``path``: where, relative to the working directory or absolute; ``data``: its bytes."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    path: str
    data: bytes = attrs.field(repr=lambda data: f"<{len(data)} bytes>")
