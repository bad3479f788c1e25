"""How the user's code plugged into the loop (an ``on_event`` listener, a hook) is named in
events, logs and thread names."""

from __future__ import annotations


def plugged_name(plugged: object) -> str:
    """The name of a listener or hook in events and logs: ``module.qualname`` of a function,
    method or callable object, else its ``repr``."""
    target = getattr(plugged, "__func__", plugged)
    qualname = getattr(target, "__qualname__", None) or getattr(type(target), "__qualname__", None)
    module = getattr(target, "__module__", None)
    if qualname is None:
        return repr(plugged)
    return f"{module}.{qualname}" if module else str(qualname)
