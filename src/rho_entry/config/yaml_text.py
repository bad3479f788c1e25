"""YAML read the one way the configuration reads it: PyYAML's safe loader, on libyaml's C
parser when PyYAML was built with it. The pure-Python parser cost ~1-3 ms of CPU for each
small file a start reads (the shipped prices, the prompt template's frontmatter). Both build
the same values (the same safe constructor and resolver): only the parser differs, and with
it the wording of a syntax error. ``yaml`` is imported on the first call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rho_domain.errors import ConfigError


def load_yaml(text: str) -> Any:
    """The document in ``text`` (None when empty); raises ``yaml.YAMLError`` when it is not
    valid YAML."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader, in C or in Python


def read_yaml_file(path: str | Path, *, where: str, what: str) -> Any:
    """The document in the file at ``path`` (None when empty). ``ConfigError`` says
    ``"{where}: cannot read {what}: ..."`` when the file cannot be read and
    ``"{where}: invalid YAML: ..."`` when it does not parse."""
    import yaml

    try:
        return load_yaml(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read {what}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: invalid YAML: {exc}") from exc
