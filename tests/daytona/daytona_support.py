"""Shared set-up for the Daytona tests: a FakeDaytona and an executor on a temp workspace."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol

import attrs
import httpx

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeClock
from rho_adapters.fakes.daytona import FakeDaytona
from rho_domain.permissions import FileWriteMode


@attrs.define
class Rig:
    fake: FakeDaytona
    executor: DaytonaExecutor
    ws: Path
    clock: FakeClock  # the executor's: its waits (polls, a Retry-After) are counted, not slept

    def toolbox_calls(self, suffix: str) -> int:
        return sum(1 for _, path in self.fake.requests if path.endswith(suffix))


class Door(Protocol):
    """What ``serve_http`` notes of a listening socket: the request lines, the connections."""

    lines: list[str]
    connections: int


async def serve_http(
    fake: FakeDaytona, door: Door, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """HTTP/1.1 with keep-alive: each request, direct (origin-form, the Host header names
    the origin) or through the proxy (absolute-form), answered by the fake's handler."""
    door.connections += 1
    try:
        while head := await reader.readuntil(b"\r\n\r\n"):
            line, *fields = head.decode().split("\r\n")
            door.lines.append(line)
            method, target, _ = line.split(" ")
            headers = [(k, v) for k, _, v in (f.partition(": ") for f in fields if f)]
            named = {k.lower(): v for k, v in headers}
            body = await reader.readexactly(int(named.get("content-length", "0")))
            if not target.startswith("http://"):
                target = f"http://{named['host']}{target}"
            request = httpx.Request(method, target, headers=headers, content=body)
            response = await fake.handler(request)
            content = await response.aread()
            writer.write(
                f"HTTP/1.1 {response.status_code} X\r\ncontent-type: application/json\r\n"
                f"content-length: {len(content)}\r\n\r\n".encode()
                + content
            )
            await writer.drain()
    except asyncio.IncompleteReadError:
        pass  # the client closed its connection
    finally:
        writer.close()


def make_rig(
    tmp_path: Path,
    *,
    file_write: FileWriteMode = FileWriteMode.FULL,
    allow_shell: bool = False,
    executor_class: type[DaytonaExecutor] = DaytonaExecutor,
    **settings: Any,
) -> Rig:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "src").mkdir(exist_ok=True)
    (ws / "src" / "a.txt").write_bytes(b"hello\nworld\n")
    fake, clock = FakeDaytona(polls_until_started=2), FakeClock()
    executor = executor_class(
        fake.settings(working_dir=str(ws), **settings),
        file_write=file_write,
        allow_shell=allow_shell,
        transport=fake.transport,
        clock=clock,  # the sandbox "starts" on fake time: no real polling waits
    )
    return Rig(fake=fake, executor=executor, ws=ws, clock=clock)


async def closing(rig: Rig) -> AsyncIterator[Rig]:
    try:
        yield rig
    finally:
        await rig.executor.aclose()


def reused(rig: Rig, **executor: Any) -> Rig:
    """``rig`` (a module's, its sandbox made once) for one more test that does not prove a
    creation: its workspace back to ``make_rig``'s (``src/a.txt`` alone), the fake's
    records (``requests``, ``commands``) emptied and its daemon killing at a timeout, the
    executor's attributes set to ``executor`` (its ``limits``: what a test changed)."""
    for entry in (*rig.ws.iterdir(), *(rig.ws / "src").iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            if entry != rig.ws / "src":
                shutil.rmtree(entry)
        elif entry != rig.ws / "src" / "a.txt":
            entry.unlink()
    (rig.ws / "src" / "a.txt").write_bytes(b"hello\nworld\n")
    (rig.ws / "src" / "a.txt").chmod(0o644)
    rig.fake.requests.clear()
    rig.fake.commands.clear()
    rig.fake.on_timeout = "kill"
    rig.fake.transport.handler = rig.fake.handler  # a test's wrapper (a race) removed
    for name, value in executor.items():
        setattr(rig.executor, name, value)
    return rig
