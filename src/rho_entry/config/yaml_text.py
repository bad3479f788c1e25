"""YAML read the one way the configuration reads it: PyYAML's safe loader, on libyaml's C
parser when PyYAML was built with it. The pure-Python parser cost ~1-3 ms of CPU for each
small file a start reads (the shipped prices, the prompt template's frontmatter). Both build
the same values (the same safe constructor and resolver): only the parser differs, and with
it the wording of a syntax error. ``yaml`` is imported on the first call.

The documents rho-agent ships (the price table, the default prompt's frontmatter) are read
every start and never change: their values are kept parsed in ``data/shipped_yaml.json``
(written by ``python -m rho_entry.config.shipped``, checked against PyYAML's reading by
tests/entry/test_shipped_yaml.py), so a start that reads no other YAML never imports yaml
(~17 ms of a one-shot, issue 33). A text that differs in any byte (an edited file) is parsed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import stat
import time
from pathlib import Path
from typing import Any

from rho_domain.errors import ConfigError

SHIPPED_FILE = Path(__file__).with_name("data") / "shipped_yaml.json"
_NOT_SHIPPED = object()


def load_yaml(text: str) -> Any:
    """The document in ``text`` (None when empty); raises ``yaml.YAMLError`` when it is not
    valid YAML."""
    shipped = _shipped(text)
    return _parse(text) if shipped is _NOT_SHIPPED else shipped


MAX_INPUT_BYTES = 16 * 1024 * 1024
"""The most a file the user names (or a task on standard input) may hold: more than any
config, template or model's context window needs. Read whole, ``--config /dev/zero`` (or
``yes | rho-agent``) took memory until the process died ("internal error: MemoryError")."""


PIPE_IDLE_SECONDS = 30.0
"""How long a pipe the user names may send nothing, open, before the read gives up: its
writer is stuck or never closes (a FIFO held open by ``sleep 1000 > fifo``), which held the
run before it began, without a word, until it was killed."""


PIPE_WITHIN_SECONDS = 120.0
"""How long a pipe the user names may take in all, however it sends: a writer that sends a
byte every 29 s and never closes passed the idle bound each time, and held the run before it
began for as long as it liked (16 MiB at that pace: 15 years)."""


def read_config_text(
    path: str | Path,
    *,
    where: str,
    what: str,
    idle: float = PIPE_IDLE_SECONDS,
    within: float = PIPE_WITHIN_SECONDS,
) -> str:
    """The text of a file the user gives rho-agent (a config, a profile, a template, a
    databases or price file, an answer schema): UTF-8, without the byte order mark some
    editors put first (it would hide a template's frontmatter, whose ``---`` must begin the
    text). ``ConfigError`` says ``"{where}: cannot read {what}: ..."`` when the file cannot be
    read (missing, a directory, no permission), holds more than ``MAX_INPUT_BYTES`` (a device
    or a stream that never ends), is a pipe whose writer sends nothing for ``idle`` seconds
    without closing it or has not closed it after ``within`` seconds, or is not UTF-8
    text, naming the first byte that is not and where it is."""
    try:
        data, fifo = _read_bounded(Path(path), idle, within)
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read {what}: {_unread(Path(path), exc)}") from exc
    except _PipeSlow:
        raise ConfigError(
            f"{where}: cannot read {what}: it is a pipe whose writer has not closed it after "
            f"{within:g} s; close the writer when it is done (or give a file)"
        ) from None
    except _PipeIdle:
        raise ConfigError(
            f"{where}: cannot read {what}: it is a pipe whose writer sent nothing for "
            f"{idle:g} s and has not closed it; close the writer when it is done (or give "
            "a file)"
        ) from None
    if fifo and not data:
        raise ConfigError(
            f"{where}: cannot read {what}: it is a named pipe (FIFO) that nothing writes to; "
            "give a file (or write to the pipe before rho-agent reads it)"
        )
    if len(data) > MAX_INPUT_BYTES:
        raise ConfigError(
            f"{where}: cannot read {what}: it holds more than {MAX_INPUT_BYTES // 2**20} MiB "
            "(a device or a stream that never ends?); give a file"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        byte = exc.object[exc.start]
        raise ConfigError(
            f"{where}: cannot read {what}: it is not UTF-8 text (byte 0x{byte:02x} at offset "
            f"{exc.start}); save the file as UTF-8"
        ) from exc


def _unread(path: Path, exc: OSError) -> str:
    """Why ``path`` could not be opened, in words that name it: a socket was "No such device
    or address" (``ENXIO``), and ``-`` (standard input to many tools) "No such file"."""
    said = exc.strerror or str(exc)
    if str(path) == "-":
        return f"{said} (- is not standard input here; give a file, or /dev/stdin)"
    with contextlib.suppress(OSError):
        if stat.S_ISSOCK(path.stat().st_mode):
            return "it is a socket, not a file; give a file"
    return said


class _PipeIdle(Exception):
    """A pipe's writer sent nothing for ``idle`` seconds and did not close it."""


class _PipeSlow(Exception):
    """A pipe's writer had not closed it ``within`` seconds of the read's start."""


def _read_bounded(
    path: Path, idle: float = PIPE_IDLE_SECONDS, within: float = PIPE_WITHIN_SECONDS
) -> tuple[bytes, bool]:
    """At most ``MAX_INPUT_BYTES + 1`` bytes of ``path``, and whether it is a FIFO. Opened
    without waiting: opening a named pipe that nothing writes to waits for a writer for
    good, so ``--config``, ``--vars-file`` or ``--output-schema`` naming one held the run
    before it began until it was killed. A pipe with a writer (``--config <(...)``) is then
    read as ``cat`` reads it, to its end, but ``_PipeIdle`` once its writer sends nothing
    for ``idle`` seconds, ``_PipeSlow`` once it has not closed ``within`` seconds; one
    without reads nothing."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            return _read_pipe(fd, idle, time.monotonic() + within), True
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as file:
            return file.read(MAX_INPUT_BYTES + 1), False
    finally:
        os.close(fd)


def _read_pipe(fd: int, idle: float, deadline: float) -> bytes:
    """A non-blocking pipe ``fd`` read to its end (nothing when no writer ever opened it),
    at most ``MAX_INPUT_BYTES + 1`` bytes; ``_PipeIdle`` after ``idle`` seconds without
    a byte or the end, ``_PipeSlow`` at ``deadline`` (``time.monotonic``) without the end."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_INPUT_BYTES:
        try:
            chunk = os.read(fd, min(1 << 16, MAX_INPUT_BYTES + 1 - size))
        except BlockingIOError:  # a writer holds it open and has sent nothing yet
            left = deadline - time.monotonic()
            if left <= 0:
                raise _PipeSlow from None
            if not poller.poll(min(idle, left) * 1000):
                raise (_PipeIdle if left > idle else _PipeSlow) from None
            continue
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_yaml_file(path: str | Path, *, where: str, what: str) -> Any:
    """The document in the file at ``path`` (None when empty). ``ConfigError`` says
    ``"{where}: cannot read {what}: ..."`` when the file cannot be read (``read_config_text``)
    and ``"{where}: invalid YAML: ..."`` when it does not parse."""
    import yaml

    text = read_config_text(path, where=where, what=what)
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: invalid YAML: {_problem(exc, text)}") from exc


def parse_yaml(text: str, *, invalid: str) -> Any:
    """``load_yaml``, with a document that does not parse a ``ConfigError`` saying
    ``"{invalid}: ..."`` (yaml's own words follow)."""
    shipped = _shipped(text)
    if shipped is not _NOT_SHIPPED:
        return shipped
    import yaml

    try:
        return _parse(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{invalid}: {_problem(exc, text)}") from exc


def _problem(exc: BaseException, text: str) -> str:
    from rho_adapters.yaml_aliases import yaml_problem

    return yaml_problem(exc, text)


def _parse(text: str) -> Any:
    import yaml

    return yaml.load(text, Loader=_loader())  # noqa: S506 - a safe loader, in C or in Python


@functools.cache
def _loader() -> Any:
    """The safe loader (libyaml's parser when present) with its aliases bounded
    (``rho_adapters.yaml_aliases``: a "billion laughs" or a value containing itself is
    refused) and refusing a key given twice in one mapping. YAML forbids it, and PyYAML keeps
    the last value without a word: a ``max_turns: 3`` near the top of a config silently lost
    to a ``max_turns: 100`` further down. A ``ConstructorError`` (a ``YAMLError``) names the
    key and both lines."""
    import yaml

    from rho_adapters.yaml_aliases import bounded_loader

    class UniqueKeyLoader(bounded_loader()):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                _refuse_duplicate_keys(self, node)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


def _refuse_duplicate_keys(loader: Any, node: Any) -> None:
    import yaml

    seen: dict[Any, Any] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            continue  # a merge key (<<) may repeat; complex keys are left to PyYAML
        key = loader.construct_object(key_node)
        first = seen.setdefault(key, key_node)
        if first is not key_node:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"found the key {key!r} again (first on line {first.start_mark.line + 1}); "
                "a key may appear once in a mapping: remove one of them",
                key_node.start_mark,
            )


def _shipped(text: str) -> Any:
    """The value of a shipped document whose text is exactly ``text``, parsed afresh from
    its JSON (callers own what they get); ``_NOT_SHIPPED`` for any other text."""
    value = _shipped_documents().get(text)
    return _NOT_SHIPPED if value is None else json.loads(value)


@functools.cache
def _shipped_documents() -> dict[str, str]:
    """Each shipped document's text -> its value's JSON; none when the file is not beside
    this module (a zipped package: every document is then parsed)."""
    try:
        documents = json.loads(SHIPPED_FILE.read_bytes())["documents"]
    except OSError:
        return {}
    return {doc["text"]: json.dumps(doc["value"]) for doc in documents}
