"""Files the user names are replaced whole: ``save_agent_config``, ``--output`` and
``--download`` (``rho_adapters.unnamed.write_whole``).

Before, each wrote with ``write_text``/``write_bytes``, which cut the old file to nothing
before writing: a write that failed midway (here a file-size limit, as a full disk would)
left a config, an answer or a download cut short, the old one lost. Now a failed write
leaves the old file as it was, with no temp file beside it, and a replaced 0600 file stays
0600.
"""

from __future__ import annotations

import contextlib
import io
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

from rho_adapters.fakes import MemoryExecutor
from rho_adapters.unnamed import write_whole
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_entry.cli import transfers
from rho_entry.cli.json_render import JsonRenderer
from rho_entry.cli.run_end import write_output
from rho_entry.config.config_files import save_agent_config

OLD = b"old: kept\n"


@contextlib.contextmanager
def file_size_limit(size: int) -> Iterator[None]:
    """Files of this process cut at ``size`` bytes (Python ignores SIGXFSZ: a write past it
    fails with EFBIG, as on a full disk); the limit is lifted after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def _old_file(path: Path) -> Path:
    path.write_bytes(OLD)
    path.chmod(0o600)
    return path


async def test_a_failed_write_leaves_the_old_file_and_a_replaced_one_keeps_its_mode(
    tmp_path: Path,
) -> None:
    config = _old_file(tmp_path / "agent.yaml")
    answer = _old_file(tmp_path / "answer.md")
    download = _old_file(tmp_path / "report.md")
    big = "x" * 4096
    executor = MemoryExecutor({"report.md": big})
    plan = transfers.Transfers(downloads=(("report.md", download),), force=True)
    renderer = JsonRenderer(io.StringIO())
    notices: list[str] = []

    with file_size_limit(1024):
        with pytest.raises(ConfigError, match="cannot write the agent config"):
            save_agent_config(AgentConfig(model="m", system_prompt=big), config)
        assert write_output(answer, big, renderer) != 0
        assert await transfers.download(executor, plan, notices.append) == 1

    assert "File too large" in notices[-1]
    for path in (config, answer, download):
        assert path.read_bytes() == OLD, path  # before: cut at 1,024 bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.yaml", "answer.md", "report.md"]

    save_agent_config(AgentConfig(model="m", system_prompt=big), config)
    assert write_output(answer, big, renderer) == 0
    assert await transfers.download(executor, plan, notices.append) == 0
    for path in (config, answer, download):
        assert big in path.read_text()
        assert path.stat().st_mode & 0o777 == 0o600, path


def test_a_link_is_followed_and_what_is_no_file_is_written_in_place(tmp_path: Path) -> None:
    real = _old_file(tmp_path / "real.yaml")
    (tmp_path / "link.yaml").symlink_to("real.yaml")
    write_whole(tmp_path / "link.yaml", b"new\n")
    assert (tmp_path / "link.yaml").is_symlink()
    assert real.read_bytes() == b"new\n"
    assert real.stat().st_mode & 0o777 == 0o600

    write_whole("/dev/null", b"into the device, as open() writes it\n")  # no rename over it
    assert Path("/dev/null").is_char_device()
