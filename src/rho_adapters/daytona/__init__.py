"""Daytona backend: the Executor port inside a Daytona sandbox, over its REST API (httpx only).

``DaytonaExecutor(settings, file_write=..., allow_shell=...)`` with a ``DaytonaSettings`` built
by the wiring (the adapter never reads the environment).
"""

from rho_adapters.daytona.executor import DaytonaExecutor
from rho_adapters.daytona.settings import DaytonaSettings

__all__ = ["DaytonaExecutor", "DaytonaSettings"]
