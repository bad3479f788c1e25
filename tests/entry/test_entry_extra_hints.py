"""A missing extra is named with the command that installs it into this copy: a clone installed
with ``pip install -e .`` (the README's first command) was told ``pip install
'rho-agent[server]'``, which asks the package index for a distribution of that name instead
of adding the extra to the clone. Each case is a real ``*.dist-info`` directory on
``sys.path``, read by ``importlib.metadata`` as pip's own record (PEP 610)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rho_adapters.extras import install_command, missing_extra
from rho_domain.errors import ConfigError, MissingExtra


def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, origin: object | None) -> None:
    """A rho-agent distribution whose ``direct_url.json`` is ``origin`` (none when None),
    first on ``sys.path``."""
    info = tmp_path / "site" / "rho_agent-9.9.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rho-agent\nVersion: 9.9.9\n")
    if origin is not None:
        (info / "direct_url.json").write_text(json.dumps(origin))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))


def test_an_editable_clone_is_named_with_e(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone = tmp_path / "my clone"  # a space: the path is quoted for the shell
    installed(tmp_path, monkeypatch, {"url": clone.as_uri(), "dir_info": {"editable": True}})
    assert install_command("server") == f"pip install -e '{clone}[server]'"
    error = missing_extra("starlette", "server", "rho-agent serve")
    assert isinstance(error, MissingExtra)
    assert isinstance(error, ConfigError)
    assert (error.package, error.extra) == ("starlette", "server")
    assert str(error) == (
        f"starlette is not installed for rho-agent serve: install it with "
        f"`pip install -e '{clone}[server]'`"
    )


def test_a_directory_installed_without_e_is_named_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone = tmp_path / "src"
    installed(tmp_path, monkeypatch, {"url": clone.as_uri(), "dir_info": {}})
    assert install_command("postgres") == f"pip install '{clone}[postgres]'"


@pytest.mark.parametrize(
    "origin",
    [
        None,  # from the index: pip writes no direct_url.json
        {"url": "https://example.org/rho_agent-9.9.9.tar.gz", "archive_info": {}},
        {"url": "https://github.com/x/rho-agent", "vcs_info": {"vcs": "git"}},
        {"url": "file:///tmp/rho_agent-9.9.9-py3-none-any.whl", "archive_info": {}},
        "not an object",
    ],
)
def test_any_other_installation_is_named_by_its_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, origin: object | None
) -> None:
    installed(tmp_path, monkeypatch, origin)
    assert install_command("mysql") == "pip install 'rho-agent[mysql]'"


def test_an_unreadable_record_falls_back_to_the_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed(tmp_path, monkeypatch, None)
    (tmp_path / "site" / "rho_agent-9.9.9.dist-info" / "direct_url.json").write_text("{")
    assert install_command("otel") == "pip install 'rho-agent[otel]'"


def test_a_clones_own_egg_info_first_on_the_path_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``src`` on PYTHONPATH puts the clone's ``src/rho_agent.egg-info`` (written there by
    ``pip install -e .``) before pip's record: the fresh clone's CI said the index form."""
    clone = tmp_path / "clone"
    installed(tmp_path, monkeypatch, {"url": clone.as_uri(), "dir_info": {"editable": True}})
    egg = tmp_path / "src" / "rho_agent.egg-info"
    egg.mkdir(parents=True)
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: rho-agent\nVersion: 9.9.9\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    assert install_command("server") == f"pip install -e '{clone}[server]'"
