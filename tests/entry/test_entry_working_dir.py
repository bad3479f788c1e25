"""``wiring.working_dir_of``: the workspace every Session confines its tools to, absolute and
real (the executor compares real paths: a symlinked or ``~`` workspace must be the same
directory, never a second name for it)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_entry.config.home import config_dir, config_dir_name
from rho_entry.config.settings import resolve_settings
from rho_entry.server.app import default_config
from rho_entry.server.settings import ServerSettings
from rho_entry.wiring import working_dir_of


def test_the_working_dir_is_absolute_and_real(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real" / "work"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    expected = os.path.realpath(real)
    assert working_dir_of(AgentConfig(working_dir=str(tmp_path / "link" / "work"))) == expected
    assert working_dir_of(AgentConfig(working_dir=str(real) + "/../work/")) == expected
    monkeypatch.setenv("HOME", str(tmp_path / "link"))
    assert working_dir_of(AgentConfig(working_dir="~/work")) == expected
    monkeypatch.chdir(tmp_path / "link")
    assert working_dir_of(AgentConfig(working_dir="work")) == expected
    monkeypatch.chdir(real)
    assert working_dir_of(AgentConfig()) == expected


def test_a_current_directory_that_was_removed_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A shell still in a removed directory: `rho-agent "task"` said "internal error:
    # FileNotFoundError: [Errno 2] No such file or directory", Agent(AgentConfig(...)) and
    # `rho-agent serve` raised it bare; an absolute working directory still works.
    (tmp_path / "gone").mkdir()
    monkeypatch.chdir(tmp_path / "gone")
    (tmp_path / "gone").rmdir()
    removed = "the current directory no longer exists (it was removed while this shell was in it)"
    from rho_entry import Agent

    defaults = (
        lambda: resolve_settings({}, {}),  # the CLI's --working-dir unset
        lambda: resolve_settings({"working_dir": "sub"}, {}),
        lambda: Agent(AgentConfig(model="m")),  # the library's
        lambda: ServerSettings.from_environ({}, sessions_root=tmp_path),  # serve's roots
    )
    for default in defaults:
        with pytest.raises(ConfigError) as refused:
            default()
        assert removed in str(refused.value)
    with pytest.raises(ConfigError, match="--working-dir"):
        resolve_settings({}, {})
    with pytest.raises(ConfigError, match="RHO_AGENT_SERVER_ROOTS"):
        ServerSettings.from_environ({}, sessions_root=tmp_path)
    # roots named absolute (--root, the variable) need no current directory: serve --root
    # /abs was refused as if none were named; a relative one names its origin (it raised a
    # bare FileNotFoundError from Path.resolve)
    named = ServerSettings.from_environ({}, sessions_root=tmp_path, roots=(str(tmp_path),))
    assert named.roots == (tmp_path.resolve(),)
    env = {"RHO_AGENT_SERVER_ROOTS": str(tmp_path)}
    assert ServerSettings.from_environ(env, sessions_root=tmp_path).roots == named.roots
    assert default_config({}).working_dir is None  # serve's base config: each session names one
    for env, roots, origin in (
        ({}, ("rel",), "--root"),
        ({"RHO_AGENT_SERVER_ROOTS": "rel"}, (), "RHO_AGENT_SERVER_ROOTS"),
    ):
        with pytest.raises(ConfigError, match=f"{re.escape(removed)}.*give {origin} absolute"):
            ServerSettings.from_environ(env, sessions_root=tmp_path, roots=roots)
    assert working_dir_of(AgentConfig(working_dir=str(tmp_path))) == os.path.realpath(tmp_path)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"RHO_AGENT_HOME": "~/agent-home/", "XDG_CONFIG_HOME": "/elsewhere"}, "HOME/agent-home"),
        ({"RHO_AGENT_HOME": "/abs//agent"}, "/abs/agent"),
        ({"XDG_CONFIG_HOME": "/xdg/config/"}, "/xdg/config/rho-agent"),
        # ignored, as the XDG specification says: taken from the current directory (the
        # workspace, usually), it kept every session's trace in the repository investigated
        ({"XDG_CONFIG_HOME": "relative/config"}, "HOME/.config/rho-agent"),
        ({}, "HOME/.config/rho-agent"),
    ],
)
def test_the_config_directory_as_a_string_is_the_same_directory(
    env: dict[str, str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # build_executor hides this directory from tools by its real path: the string the
    # wiring resolves must name the directory config_dir names, under every rule
    home = os.path.realpath(tmp_path)
    monkeypatch.setenv("HOME", home)
    monkeypatch.chdir(home)  # where a relative XDG_CONFIG_HOME would lead
    expected = expected.replace("HOME", home)
    assert os.path.realpath(config_dir_name(env)) == expected
    assert os.path.realpath(config_dir(env)) == expected


def test_a_config_directory_of_only_spaces_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, RHO_AGENT_HOME="  " was a relative path: a directory named two spaces was
    made in the current directory (the workspace, usually) and every session kept there."""
    monkeypatch.chdir(tmp_path)
    for blank in ("  ", "\t", " \n"):
        with pytest.raises(ConfigError) as refused:
            config_dir({"RHO_AGENT_HOME": blank})
        assert str(refused.value) == (
            f"RHO_AGENT_HOME={blank!r} holds only spaces: unset it (the default, "
            "$XDG_CONFIG_HOME/rho-agent or ~/.config/rho-agent, is then used) or give the "
            "config directory's path"
        )
    assert list(tmp_path.iterdir()) == []


async def test_each_session_resolves_its_workspace_and_config_directory_again(
    tmp_path: Path,
) -> None:
    """The executor trusts the real paths its wiring looked up for it (``resolved=True``: no
    second lookup), so those lookups must be each Session's own: a workspace link pointed
    elsewhere between two Sessions confines the second one to the new directory, and a
    config directory reached through a link is secret by its real path."""
    from rho_adapters.local import LocalExecutor
    from rho_domain.permissions import builtin_profile
    from rho_entry.wiring import build_executor

    first, second = tmp_path / "first", tmp_path / "second"
    for directory in (first, second):
        directory.mkdir()
        (directory / "which.txt").write_text(directory.name)
    link = tmp_path / "work"
    conf_real = tmp_path / "conf-real"
    conf_real.mkdir()
    (tmp_path / "conf").symlink_to(conf_real)
    env = {"RHO_AGENT_HOME": str(tmp_path / "conf")}
    config = AgentConfig(working_dir=str(link))
    profile = builtin_profile("readonly")
    for target in (first, second, first):
        if link.is_symlink():
            link.unlink()
        link.symlink_to(target)
        executor = build_executor(config, profile, None, environ=env)
        try:
            assert isinstance(executor, LocalExecutor)
            assert executor.working_dir == os.path.realpath(target)
            assert await executor.read("which.txt") == target.name.encode()
            assert os.path.realpath(conf_real) in executor.policy.locations
            assert executor.policy.refusal(os.path.realpath(conf_real / "x.yaml")) is not None
        finally:
            await executor.aclose()


async def test_a_pathlib_working_dir_is_kept_as_its_text_and_stored(tmp_path: Path) -> None:
    """Before: ``AgentConfig(working_dir=Path(...))`` was accepted (typed ``str``) and kept as
    the Path: unequal to the same config given as a text, and every run of a session kept in
    files ended ``error`` on "StoreError: config.yaml cannot hold a PosixPath value". A
    profile file given as a Path was refused ("not PosixPath"), though a path is taken, and
    ``Session.resume(id, store=Path(...))`` failed on "ValueError: invalid mode: '<id>'"
    (the Path was used as a store object: ``Path.open(id)``)."""
    from rho_adapters.fakes import ScriptedModel, text
    from rho_adapters.store import FileSessionStore
    from rho_domain.run import RunStatus
    from rho_entry import Agent, Session
    from rho_entry.seed_api.tools import ToolRegistry

    assert ToolRegistry(working_dir=tmp_path).working_dir == str(tmp_path)  # typed so too
    (tmp_path / "ops.yaml").write_text("name: ops\nshell: restricted\n")
    config = AgentConfig(working_dir=tmp_path, profile=tmp_path / "ops.yaml")
    as_text = AgentConfig(working_dir=str(tmp_path), profile=str(tmp_path / "ops.yaml"))
    assert (config.working_dir, config) == (str(tmp_path), as_text)  # the profile was refused
    with pytest.raises(ConfigError, match=r"^working_dir must be .* not bytes b'/srv'"):
        AgentConfig(working_dir=b"/srv")  # type: ignore[arg-type]
    store = FileSessionStore(tmp_path / "sessions")
    session = Session(Agent(config), model=ScriptedModel([text("hi")]), store=store)
    result = await session.run("go")
    await session.close()
    assert (result.status, result.error) == (RunStatus.COMPLETED, None)
    assert session.agent.profile.name == "ops"
    assert [i.working_dir for i in await store.list()] == [str(tmp_path)]
    # a store given as a Path was taken for a store object: 'ValueError: invalid mode: ...'
    resumed = await Session.resume(session.id, store=tmp_path / "sessions", model=ScriptedModel([]))
    assert resumed.id == session.id
    await resumed.close()


def test_paths_in_nested_settings_are_kept_as_texts(tmp_path: Path) -> None:
    """Before: a ``pathlib.Path`` as a SQLite database's path, an MCP server's command item or
    ``cwd``, or a profile's extra read root was kept as the Path, and every run of a session
    kept in files ended ``error`` on "StoreError: config.yaml cannot hold a PosixPath value
    (...) at databases.app.path" (or ``mcp_servers.x.cwd``, ``command[0]``)."""
    from rho_adapters.codec import config_to_dict
    from rho_adapters.store.yaml_emit import emit
    from rho_domain.config import DatabaseConfig
    from rho_domain.mcp_config import McpServerConfig
    from rho_domain.permissions import PermissionProfile

    config = AgentConfig(
        databases={"app": DatabaseConfig(engine="sqlite", path=tmp_path / "app.db")},
        mcp_servers={"x": McpServerConfig(command=[tmp_path / "server", "--v"], cwd=tmp_path)},
        profile=PermissionProfile(name="p", extra_read_roots=[tmp_path / "logs"]),
    )
    server = config.mcp_servers["x"]
    assert config.databases["app"].path == str(tmp_path / "app.db")
    assert (server.command, server.cwd) == ((str(tmp_path / "server"), "--v"), str(tmp_path))
    assert isinstance(config.profile, PermissionProfile)
    assert config.profile.extra_read_roots == (str(tmp_path / "logs"),)
    assert str(tmp_path / "app.db") in emit(config_to_dict(config))  # config.yaml's writer
    with pytest.raises(ConfigError, match=r"^command: expected a list of strings, got the str"):
        McpServerConfig(command="python server.py")
