"""The YAML documents rho-agent ships, as ``yaml_text`` reads them without yaml: the price
table (``data/prices.yaml``) and the default prompt's frontmatter (``prompts/default.md``),
each with its exact text and the value PyYAML's safe loader reads from it, in
``data/shipped_yaml.json``.

After editing either file, ``python -m rho_entry.config.shipped`` writes the JSON again;
tests/entry/test_shipped_yaml.py fails while it is stale (a stale entry is never used: its
text no longer matches, so the file is parsed, only slower).
"""

from __future__ import annotations

import json

from rho_entry.config.prices import PRICES_FILE
from rho_entry.config.templates import BUILTIN_DIR, frontmatter_of
from rho_entry.config.yaml_text import SHIPPED_FILE


def shipped_texts() -> dict[str, str]:
    """Each shipped document's text, by where it comes from."""
    prompt = BUILTIN_DIR / "default.md"
    parts = frontmatter_of(prompt.read_text(encoding="utf-8"), str(prompt))
    if parts is None:
        raise ValueError(f"{prompt} has no frontmatter to keep parsed")
    return {
        f"data/{PRICES_FILE}": (SHIPPED_FILE.with_name(PRICES_FILE)).read_text(encoding="utf-8"),
        "prompts/default.md (frontmatter)": parts[0],
    }


def snapshot() -> str:
    """``data/shipped_yaml.json``'s text for the documents as they are now."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    documents = [
        {"source": source, "text": text, "value": yaml.load(text, Loader=loader)}  # noqa: S506
        for source, text in shipped_texts().items()
    ]
    return json.dumps({"documents": documents}, indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    """Write ``data/shipped_yaml.json`` for the documents as they are now."""
    SHIPPED_FILE.write_text(snapshot(), encoding="utf-8")


if __name__ == "__main__":
    main()
