"""Adapters: the implementations of rho_domain's ports (model clients, executors, stores,
database drivers, signals) and public fakes for tests (``rho_adapters.fakes``)."""
