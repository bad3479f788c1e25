"""The local machine as an Executor: confined files and sandboxed, process-group-scoped commands."""

from rho_adapters.local.executor import LocalExecutor

__all__ = ["LocalExecutor"]
