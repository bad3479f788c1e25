"""A path setting that starts with an unknown ``~user``, and a relative ``RHO_AGENT_HOME``.

Before: ``Path.expanduser`` raised a bare ``RuntimeError("Could not determine home
directory.")`` for ``~nouser/x`` given to ``--config``, ``--output``, ``--output-schema``,
``--mcp-config``, ``--resume``, ``RHO_AGENT_STORE``, ``RHO_AGENT_DB_CONFIG``,
``RHO_AGENT_CONFIG`` or ``RHO_AGENT_WORKING_DIR``: the CLI ended "internal error", naming no
setting. ``RHO_AGENT_HOME=~nouser/x`` or ``=rel`` was taken relative to the current
directory (the workspace): every session's trace was kept in the repository investigated.
"""

from __future__ import annotations

from pathlib import Path

from cli_support import rho

from rho_entry.cli import exit_codes

_NO_USER = "~nouser_rho/x: ~nouser_rho names no user's home directory on this host"


def test_an_unknown_user_s_home_or_a_relative_config_dir_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for args, env, said in (
        (("--config", "~nouser_rho/x"), {}, f"--config {_NO_USER}"),
        (("--output", "~nouser_rho/x"), {}, f"--output {_NO_USER}"),
        (("--output-schema", "~nouser_rho/x"), {}, f"--output-schema {_NO_USER}"),
        (("--mcp-config", "~nouser_rho/x"), {}, f"--mcp-config {_NO_USER}"),
        (("--resume", "~nouser_rho/x"), {}, "~nouser_rho/x is not a session directory"),
        ((), {"RHO_AGENT_CONFIG": "~nouser_rho/x"}, f"RHO_AGENT_CONFIG: {_NO_USER}"),
        ((), {"RHO_AGENT_WORKING_DIR": "~nouser_rho/x"}, f"RHO_AGENT_WORKING_DIR: {_NO_USER}"),
        ((), {"RHO_AGENT_STORE": "~nouser_rho/x"}, "~nouser_rho/x (set by $RHO_AGENT_STORE): "),
        ((), {"RHO_AGENT_DB_CONFIG": "~nouser_rho/x"}, "~nouser_rho/x (set by RHO_AGENT_DB_"),
        ((), {"RHO_AGENT_HOME": "~nouser_rho/x"}, "RHO_AGENT_HOME='~nouser_rho/x': ~nouser_rho"),
        ((), {"RHO_AGENT_HOME": "rel"}, "RHO_AGENT_HOME='rel': it is relative (to whichever"),
    ):
        done = rho("-m", "demo", *args, "hi", cwd=work, home=tmp_path / "home", **env)
        assert done.returncode == exit_codes.USAGE, (args, env, done.stderr)
        assert done.stderr.startswith(f"rho-agent: {said}"), done.stderr
    assert list(work.iterdir()) == []  # no ~nouser_rho/ nor rel/ made in the workspace
    # a system prompt's text that starts with "~word" is text, not a path (it raised too)
    done = rho("-m", "demo", "--system-prompt", "~nouser_rho: be brief", "hi", cwd=work, home=work)
    assert done.returncode == 0, done.stderr
