"""The price table: the shipped ``data/prices.yaml`` plus the user's ``<config dir>/prices.yaml``.

File format (both files)::

    version: 1
    models:
      my-model: {input: 0.5, output: 1.5, cached_input: 0.05, taken: "2026-01-31"}

Prices are USD per million tokens; ``cached_input`` and ``taken`` are optional. The user's
entries replace the shipped ones of the same name. A bad file is a ``ConfigError`` naming the
file, the key and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from rho_domain.errors import ConfigError
from rho_domain.pricing import ModelPrice, PriceTable
from rho_entry.config.home import config_dir
from rho_entry.config.yaml_text import parse_yaml, read_config_text

PRICES_FILE = "prices.yaml"
FORMAT_VERSION = 1
_FIELDS = {"input": True, "output": True, "cached_input": False, "taken": False}


def load_prices(environ: Mapping[str, str]) -> PriceTable:
    """The shipped table with the user's file (if any) merged over it."""
    table = shipped_prices()
    user = config_dir(environ) / PRICES_FILE
    if user.is_file():
        table = table.merged(read_prices(user))
    return table


@cache
def shipped_prices() -> PriceTable:
    """The table shipped in the package (read once per process: it never changes)."""
    return parse_prices(_yaml(_shipped_text(), "shipped prices.yaml"), "")


def _shipped_text() -> str:
    """The shipped file's text: beside this module when the package is installed as files
    (every wheel and editable install); through ``importlib.resources`` otherwise (a zipped
    package), which costs a one-shot ~3 ms of imports (zipfile, tempfile) it does not need."""
    beside = Path(__file__).with_name("data") / PRICES_FILE
    if beside.is_file():
        return beside.read_text(encoding="utf-8")
    from importlib import resources

    shipped = resources.files("rho_entry.config").joinpath("data", PRICES_FILE)
    return shipped.read_text(encoding="utf-8")


def read_prices(path: Path) -> PriceTable:
    """Read one price file; ``ConfigError`` naming the file when it is unreadable or wrong."""
    text = read_config_text(path, where=str(path), what="the price table")
    return parse_prices(_yaml(text, str(path)), str(path))


def parse_prices(data: Any, source: str) -> PriceTable:
    """A price table from a loaded YAML document (see the module docstring for the shape)."""
    where = f"{source}: " if source else ""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}the price table must be a mapping with 'version' and 'models'")
    if data.get("version") != FORMAT_VERSION:
        raise ConfigError(f"{where}version: expected {FORMAT_VERSION}, got {data.get('version')!r}")
    extra = sorted(set(data) - {"version", "models"})
    if extra:
        raise ConfigError(f"{where}{extra[0]}: unknown key; expected only 'version' and 'models'")
    models = data.get("models") or {}
    if not isinstance(models, Mapping):
        raise ConfigError(f"{where}models: expected a mapping of model id to price")
    return PriceTable(
        {str(name): _price(entry, f"{where}models.{name}") for name, entry in models.items()}
    )


def _price(entry: Any, path: str) -> ModelPrice:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{path}: expected a mapping with input and output (USD per 1M tokens)")
    unknown = sorted(set(entry) - set(_FIELDS))
    if unknown:
        raise ConfigError(f"{path}.{unknown[0]}: unknown key; expected {', '.join(_FIELDS)}")
    values: dict[str, Any] = {}
    for key, required in _FIELDS.items():
        if key not in entry:
            if required:
                raise ConfigError(f"{path}.{key}: missing (USD per 1M tokens)")
            continue
        value = entry[key]
        if key == "taken":
            values[key] = str(value)
        elif isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"{path}.{key}: expected a non-negative number, got {value!r}")
        else:
            values[key] = float(value)
    return ModelPrice(**values)


def _yaml(text: str, source: str) -> Any:
    return parse_yaml(text, invalid=f"{source}: invalid YAML")
