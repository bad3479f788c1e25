"""What writing a session's config.yaml costs: ``yaml_emit.emit`` against
``yaml.dump(..., Dumper=CSafeDumper, sort_keys=False)`` (what the file store used before),
and what importing each costs a fresh process.

Per config: ``--configs`` distinct stored configs (each built-in profile, with its own vars, so
that nothing is the last one written again), each written by both in alternating rounds; the
CPU time of the thread (``time.thread_time``) per config, median and spread over the rounds.
Imports: alternating fresh processes that import the store's ``meta`` module (which the file
store imports either way), then ``yaml`` (PyYAML with libyaml's bindings) or ``yaml_emit``;
the CPU time of that import, timed in the process (``time.process_time``). The load average
is printed.

Usage: python bench/bench_config_yaml.py [--configs 200] [--rounds 15] [--imports 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import yaml

from rho_adapters.codec import config_to_dict
from rho_adapters.store.meta import stored_config
from rho_adapters.store.yaml_emit import emit
from rho_domain.config import AgentConfig
from rho_domain.permissions import BUILTIN_PROFILES


def _configs(count: int) -> list[dict[str, Any]]:
    builds = list(BUILTIN_PROFILES.values())
    return [
        stored_config(
            config_to_dict(
                AgentConfig(
                    profile=builds[i % len(builds)](),
                    vars={"n": str(i), "team": "sre"},
                    system_prompt="You review {{ repo }} for the {{ team }} team. " * (i % 3),
                )
            )
        )
        for i in range(count)
    ]


def _dump(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=yaml.CSafeDumper, sort_keys=False)


def _per_config(write: Callable[[dict[str, Any]], str], configs: list[dict[str, Any]]) -> float:
    """CPU µs per config for writing every config once."""
    started = time.thread_time()
    for data in configs:
        write(data)
    return (time.thread_time() - started) / len(configs) * 1e6


def _import_cpu(module: str) -> float:
    """CPU ms a fresh interpreter spends importing ``module`` after the store's ``meta``
    module (which the file store imports either way), timed inside the process."""
    code = (
        "import time, rho_adapters.store.meta\n"
        "started = time.process_time()\n"
        f"import {module}\n"
        "print((time.process_time() - started) * 1000)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=os.environ
    )
    return float(done.stdout)


def _line(name: str, values: list[float], unit: str) -> str:
    spread = f"({min(values):.1f}-{max(values):.1f})"
    return f"{name:<34} {statistics.median(values):8.1f} {unit}  {spread}"


def main(argv: Sequence[str] | None = None) -> None:
    """Time both writers and both imports, and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--imports", type=int, default=15)
    args = parser.parse_args(argv)
    configs = _configs(args.configs)
    assert all(emit(data) == _dump(data) for data in configs)  # the same bytes, or no figure
    load = os.getloadavg()[0]
    timings: dict[str, list[float]] = {"emit": [], "dump": []}
    for _ in range(args.rounds):
        timings["emit"].append(_per_config(emit, configs))
        timings["dump"].append(_per_config(_dump, configs))
    imports: dict[str, list[float]] = {"yaml": [], "rho_adapters.store.yaml_emit": []}
    for _ in range(args.imports):
        for module, values in imports.items():
            values.append(_import_cpu(module))
    print(f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}; {len(configs)} configs")
    print(_line("config.yaml by yaml_emit.emit", timings["emit"], "µs CPU"))
    print(_line("config.yaml by CSafeDumper", timings["dump"], "µs CPU"))
    for module, values in imports.items():
        print(_line(f"import {module}", values, "ms CPU"))


if __name__ == "__main__":
    main()
