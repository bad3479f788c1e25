"""YAML aliases in a file a user gives rho-agent are read with a bound. A ``*name`` stands for
its anchor's whole value: nine lines of nine aliases (the "billion laughs") in a 1 KB
databases.yaml spelled 387 million strings, which the start-up's ``${VAR}`` walk and the
session's config.yaml wrote out (rho-agent grew past 14 GB, still cancelling after SIGTERM);
an alias inside its own anchor's value ended in "internal error: RecursionError". Both are
refused by the one bounded loader (``rho_adapters.yaml_aliases``), naming the file and the line,
in a user's config files and in a stored session's config.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_support import rho

from rho_adapters import yaml_aliases
from rho_adapters.yaml_aliases import MOST_VALUES
from rho_entry.config.yaml_text import load_yaml


def laughs(levels: int, indent: str = "") -> str:
    """Anchors a0..a{levels-1}, each nine aliases of the one before: 9**levels strings."""
    lines = [f'{indent}a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"{indent}a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_a_document_its_aliases_grow_past_the_bound_is_refused_naming_the_line() -> None:
    with pytest.raises(yaml.YAMLError) as refused:
        load_yaml(laughs(6))  # 531,441 strings
    assert f"more than {MOST_VALUES:,} values" in str(refused.value)
    assert "line 6" in str(refused.value)  # a5's value, the first past the bound


def test_a_long_document_without_aliases_is_not_blamed_on_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It was refused as "the aliases make this document hold more than 100,000 values ...
    write the values out instead", which it had done: its size is its text's. The bound is
    lowered to 1,000 (the same check, read when a document is composed): 100,010 keys cost
    4 s of CPU to compose and showed nothing more."""
    monkeypatch.setattr(yaml_aliases, "MOST_VALUES", 1_000)
    text = "".join(f"k{i}: {i}\n" for i in range(1_000 + 10))
    assert len(load_yaml(text)) == 1_000 + 10
    with pytest.raises(yaml.YAMLError, match="more than 1,000 values"):
        load_yaml(text + laughs(4))  # its aliases still count: 6,561 strings


def test_an_alias_inside_its_own_value_is_refused() -> None:
    with pytest.raises(yaml.YAMLError, match="an alias refers to the value that contains it"):
        load_yaml("options: &o {loop: *o}\n")


def test_aliases_that_stay_small_still_load() -> None:
    text = "base: &b {timeout: 5, tags: [a, b]}\nprod:\n  <<: *b\n  host: db\ncopy: *b\n"
    assert load_yaml(text) == yaml.safe_load(text)
    assert load_yaml(laughs(5))["a4"][0][0][0][0] == ["lol"] * 9  # 59,049 strings


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("databases.yaml", "\n" + laughs(6, indent="      ")),
        ("databases.yaml", " &o {loop: *o}\n"),
    ],
    ids=["laughs", "loop"],
)
def test_the_cli_refuses_them_in_a_config_file_naming_it(
    tmp_path: Path, name: str, options: str
) -> None:
    home = tmp_path / "rho"
    home.mkdir()
    (home / name).write_text(
        f"databases:\n  shop:\n    engine: sqlite\n    path: shop.db\n    options:{options}"
    )
    done = rho("-m", "demo", "-q", "hi", cwd=tmp_path, home=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"rho-agent: {home / name}: "), done.stderr
    assert "internal error" not in done.stderr
    assert "alias" in done.stderr
    assert not (home / "sessions").exists() or not any((home / "sessions").iterdir())


def test_a_stored_sessions_config_is_read_with_the_same_bound(tmp_path: Path) -> None:
    """A session directory is data: its config.yaml is read by the store, not by the config
    loader, and ``rho-agent export`` wrote every string of the aliases out."""
    assert rho("-m", "demo", "-q", "hi", cwd=tmp_path, home=tmp_path).returncode == 0
    (config,) = (tmp_path / "rho" / "sessions").glob("*/config.yaml")
    bomb = "databases:\n  shop:\n    engine: sqlite\n    path: shop.db\n    options:\n"
    config.write_text(
        config.read_text().replace("databases: {}\n", bomb + laughs(6, indent="      "))
    )
    done = rho("export", config.parent.name, cwd=tmp_path, home=tmp_path)
    # the config is refused (named on stderr); the events are exported without it
    assert done.returncode == 0, done.stderr
    assert f"{config}: invalid YAML: the aliases make this document hold more" in done.stderr
    exported = json.loads(done.stdout)
    assert exported["config"] is None
    assert exported["events"]
    assert "lol" not in done.stdout
