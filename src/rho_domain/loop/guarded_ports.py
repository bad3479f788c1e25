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

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rho_domain.errors import ExecutorError, StoreError
from rho_domain.plugged import contained, plugged_name
from rho_domain.ports.executor import Executor, FileInfo
from rho_domain.ports.signals import SignalSource

if TYPE_CHECKING:
    from rho_domain.ports.commands import Command, CommandResult, FileUpload
    from rho_domain.ports.directive import Directive


class GuardedExecutor(Executor):
    """``executor``, each call's unasked ``CancelledError`` made an ``ExecutorError``."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self._by = f"the executor {plugged_name(executor)}"

    def __getattr__(self, name: str) -> object:
        # what an adapter adds beyond the port (a user's tool may read it) is the adapter's
        return getattr(self.executor, name)

    @property
    def working_dir(self) -> str:
        """The executor's workspace root."""
        return self.executor.working_dir

    async def run(self, command: Command) -> CommandResult:
        """``Executor.run``."""
        return await contained(self.executor.run(command), self._by, ExecutorError)

    async def stat(self, path: str) -> FileInfo:
        """``Executor.stat``."""
        return await contained(self.executor.stat(path), self._by, ExecutorError)

    async def read(self, path: str, *, offset: int = 0, length: int | None = None) -> bytes:
        """``Executor.read``."""
        reading = self.executor.read(path, offset=offset, length=length)
        return await contained(reading, self._by, ExecutorError)

    async def list_dir(self, path: str) -> tuple[FileInfo, ...]:
        """``Executor.list_dir``."""
        return await contained(self.executor.list_dir(path), self._by, ExecutorError)

    async def write(self, path: str, data: bytes, *, overwrite: bool) -> bool:
        """``Executor.write``."""
        writing = self.executor.write(path, data, overwrite=overwrite)
        return await contained(writing, self._by, ExecutorError)

    async def glob(self, pattern: str, *, cwd: str = ".") -> tuple[str, ...]:
        """``Executor.glob``."""
        return await contained(self.executor.glob(pattern, cwd=cwd), self._by, ExecutorError)

    async def upload(self, files: Sequence[FileUpload]) -> None:
        """``Executor.upload``."""
        await contained(self.executor.upload(files), self._by, ExecutorError)

    async def which(self, program: str) -> str | None:
        """``Executor.which``."""
        return await contained(self.executor.which(program), self._by, ExecutorError)

    async def aclose(self) -> None:
        """``Executor.aclose``."""
        await contained(self.executor.aclose(), self._by, ExecutorError)


class GuardedSignals(SignalSource):
    """``signals``, each call's unasked ``CancelledError`` made a ``StoreError``."""

    def __init__(self, signals: SignalSource) -> None:
        self.signals = signals
        self._by = f"the signal source {plugged_name(signals)}"

    def __getattr__(self, name: str) -> object:
        return getattr(self.signals, name)  # an adapter's own members (``cancel_requested``)

    async def clear_cancel(self, session_id: str) -> None:
        """``SignalSource.clear_cancel``."""
        await contained(self.signals.clear_cancel(session_id), self._by, StoreError)

    async def clear_pause(self, session_id: str) -> None:
        """``SignalSource.clear_pause``."""
        await contained(self.signals.clear_pause(session_id), self._by, StoreError)

    async def wait_for_cancel(self, session_id: str) -> None:
        """``SignalSource.wait_for_cancel``."""
        await contained(self.signals.wait_for_cancel(session_id), self._by, StoreError)

    async def is_paused(self, session_id: str) -> bool:
        """``SignalSource.is_paused``."""
        return await contained(self.signals.is_paused(session_id), self._by, StoreError)

    async def directives(self, session_id: str, *, after: int) -> tuple[Directive, ...]:
        """``SignalSource.directives``."""
        listed = self.signals.directives(session_id, after=after)
        return await contained(listed, self._by, StoreError)

    async def export_requests(self, session_id: str) -> tuple[str, ...]:
        """``SignalSource.export_requests``."""
        return await contained(self.signals.export_requests(session_id), self._by, StoreError)

    async def answer_export(self, session_id: str, request_id: str, text: str) -> None:
        """``SignalSource.answer_export``."""
        answering = self.signals.answer_export(session_id, request_id, text)
        await contained(answering, self._by, StoreError)
