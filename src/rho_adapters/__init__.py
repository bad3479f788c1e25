"""Adapters: the implementations of rho_domain's ports (model clients, executors, stores,
database drivers, signals) and public fakes for tests (``rho_adapters.fakes``)."""

from rho_adapters import httpx_cli as _httpx_cli

# Before any adapter imports httpx: its CLI (click, pygments) is imported only if called.
_httpx_cli.defer()
