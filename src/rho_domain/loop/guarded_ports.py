"""The executor and the signals as a run reaches them: an unasked ``CancelledError`` is the
port's failure.

An executor that lets out a ``CancelledError`` nothing asked for (it awaited a task or future
that something else cancelled: a probe shared with another session, a pool's connection)
made the tool calling it look cancelled, and the call was answered as the tool's own failure
("the tool 'write' raised CancelledError..."), naming a handler that did nothing wrong. Each
member of ``GuardedExecutor`` awaits the executor's through ``plugged.contained``, so that
error is an ``ExecutorError`` naming the executor (the call's error result, as any failure of
the executor's machinery is), while a cancel of the run (the task is being cancelled) still
cancels: the executor kills the command's process group and the run stops. ``GuardedSignals``
does the same for the signal source (a ``StoreError`` naming it: the signals are a store's):
its ``clear_cancel`` letting one out at the run's start ended the run ``cancelled``, and
``Session.run`` raised it, as if its caller had been cancelled.

The same rule holds for every port: the model's (``model_turn``), the store's (``Journal``),
the tool source's (``tool_refresh``), the approver's (``tool_approval``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from rho_domain.errors import ExecutorError, RhoError, StoreError
from rho_domain.plugged import failure_of, plugged_name
from rho_domain.ports.executor import Executor, FileInfo
from rho_domain.ports.signals import SignalSource

if TYPE_CHECKING:
    from rho_domain.ports.commands import Command, CommandResult, FileUpload
    from rho_domain.ports.directive import Directive
    from rho_domain.ports.executor import Placement, PlacementTold

_T = TypeVar("_T")


async def _through(awaitable: Awaitable[_T], port: object, error: type[RhoError]) -> _T:
    """``plugged.contained``, the port named only when it failed: a guard holds nothing
    more than its port (the runtime's handles are counted by the collector)."""
    try:
        return await awaitable
    except BaseException as exc:
        kind = "executor" if error is ExecutorError else "signal source"
        failure = failure_of(exc, f"the {kind} {plugged_name(port)}", error)
        if failure is exc:
            raise
        raise failure from exc


def _passed_on(member: object, port: object, error: type[RhoError]) -> object:
    """``member``, an adapter's own (beyond the port), as the guard gives it: a coroutine
    function guarded as the port's members are. Passed through bare, an executor's own
    ``async def`` (a snapshot, a sandbox's extra call) that let out an unasked
    ``CancelledError`` was answered as the calling tool's own failure."""
    if not inspect.iscoroutinefunction(member):
        return member
    call: Callable[..., Awaitable[Any]] = member

    @functools.wraps(call)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        return await _through(call(*args, **kwargs), port, error)

    return guarded


class GuardedExecutor(Executor):
    """``executor``, each call's unasked ``CancelledError`` made an ``ExecutorError``."""

    __slots__ = ("executor",)

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def __getattr__(self, name: str) -> object:
        # what an adapter adds beyond the port (a user's tool may read it) is the adapter's
        return _passed_on(getattr(self.executor, name), self.executor, ExecutorError)

    @property
    def working_dir(self) -> str:
        """The executor's workspace root."""
        return self.executor.working_dir

    @property
    def placement(self) -> Placement:
        """The executor's placement."""
        return self.executor.placement

    def on_placed(self, told: PlacementTold | None) -> PlacementTold | None:
        """``Executor.on_placed``."""
        return self.executor.on_placed(told)

    async def run(self, command: Command) -> CommandResult:
        """``Executor.run``."""
        return await _through(self.executor.run(command), self.executor, ExecutorError)

    async def stat(self, path: str) -> FileInfo:
        """``Executor.stat``."""
        return await _through(self.executor.stat(path), self.executor, ExecutorError)

    async def read(self, path: str, *, offset: int = 0, length: int | None = None) -> bytes:
        """``Executor.read``."""
        reading = self.executor.read(path, offset=offset, length=length)
        return await _through(reading, self.executor, ExecutorError)

    async def list_dir(self, path: str) -> tuple[FileInfo, ...]:
        """``Executor.list_dir``."""
        return await _through(self.executor.list_dir(path), self.executor, ExecutorError)

    async def write(self, path: str, data: bytes, *, overwrite: bool) -> bool:
        """``Executor.write``."""
        writing = self.executor.write(path, data, overwrite=overwrite)
        return await _through(writing, self.executor, ExecutorError)

    async def glob(self, pattern: str, *, cwd: str = ".") -> tuple[str, ...]:
        """``Executor.glob``."""
        return await _through(self.executor.glob(pattern, cwd=cwd), self.executor, ExecutorError)

    async def upload(self, files: Sequence[FileUpload]) -> None:
        """``Executor.upload``."""
        await _through(self.executor.upload(files), self.executor, ExecutorError)

    async def which(self, program: str) -> str | None:
        """``Executor.which``."""
        return await _through(self.executor.which(program), self.executor, ExecutorError)

    async def aclose(self) -> None:
        """``Executor.aclose``."""
        await _through(self.executor.aclose(), self.executor, ExecutorError)


class GuardedSignals(SignalSource):
    """``signals``, each call's unasked ``CancelledError`` made a ``StoreError``."""

    __slots__ = ("signals",)

    def __init__(self, signals: SignalSource) -> None:
        self.signals = signals

    def __getattr__(self, name: str) -> object:
        # an adapter's own members (``cancel_requested``)
        return _passed_on(getattr(self.signals, name), self.signals, StoreError)

    async def clear_cancel(self, session_id: str) -> None:
        """``SignalSource.clear_cancel``."""
        await _through(self.signals.clear_cancel(session_id), self.signals, StoreError)

    async def clear_pause(self, session_id: str) -> None:
        """``SignalSource.clear_pause``."""
        await _through(self.signals.clear_pause(session_id), self.signals, StoreError)

    async def wait_for_cancel(self, session_id: str) -> None:
        """``SignalSource.wait_for_cancel``."""
        await _through(self.signals.wait_for_cancel(session_id), self.signals, StoreError)

    async def is_paused(self, session_id: str) -> bool:
        """``SignalSource.is_paused``."""
        return await _through(self.signals.is_paused(session_id), self.signals, StoreError)

    async def directives(self, session_id: str, *, after: int) -> tuple[Directive, ...]:
        """``SignalSource.directives``."""
        listed = self.signals.directives(session_id, after=after)
        return await _through(listed, self.signals, StoreError)

    async def export_requests(self, session_id: str) -> tuple[str, ...]:
        """``SignalSource.export_requests``."""
        return await _through(self.signals.export_requests(session_id), self.signals, StoreError)

    async def answer_export(self, session_id: str, request_id: str, text: str) -> None:
        """``SignalSource.answer_export``."""
        answering = self.signals.answer_export(session_id, request_id, text)
        await _through(answering, self.signals, StoreError)
