"""--upload / --download / --dockerfile / --snapshot (issue 29, item 13).

The operator's files go in through ``Executor.upload`` (Daytona: anywhere in the sandbox; the
local backend: inside the workspace), whatever the profile's write mode, and never a secret;
results come back through ``Executor.read``. Run against FakeDaytona (the real toolbox
protocol on this machine's filesystem) and, through the CLI, the local backend.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
from cli_support import Terminal, rho

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.daytona.creation import create_body
from rho_adapters.daytona.uploads import UPLOAD_BATCH
from rho_adapters.fakes import FakeClock, FakeDaytona, MemoryExecutor
from rho_adapters.local import LocalExecutor
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError, ExecutorError, PathOutsideWorkspace, SensitivePath
from rho_domain.permissions import FileWriteMode, builtin_profile
from rho_domain.ports.executor import FileUpload
from rho_domain.secrets import SecretPolicy
from rho_entry.cli import transfers
from rho_entry.wiring import build_daytona_executor


def project(root: Path) -> Path:
    """A project to upload: files, a nested one, a secret and directories never uploaded."""
    src = root / "project"
    (src / "sub").mkdir(parents=True)
    (src / ".git").mkdir()
    (src / "node_modules").mkdir()
    (src / "a.txt").write_text("alpha\n")
    (src / "sub" / "b.txt").write_text("beta\n")
    (src / ".env").write_text("API_KEY=MARK-NEVER-UPLOADED\n")
    (src / ".git" / "config").write_text("[core]\n")
    (src / "node_modules" / "x.js").write_text("x\n")
    return src


def sandbox(tmp_path: Path, **settings: object) -> tuple[FakeDaytona, DaytonaExecutor, Path]:
    ws = tmp_path / "sandbox-ws"
    ws.mkdir()
    fake = FakeDaytona(polls_until_started=1)
    executor = DaytonaExecutor(
        fake.settings(working_dir=str(ws), **settings),
        file_write=FileWriteMode.OFF,  # readonly: the agent writes nothing; the operator may
        transport=fake.transport,
        clock=FakeClock(),
    )
    return fake, executor, ws


async def test_uploads_land_in_the_sandbox_and_results_come_back(tmp_path: Path) -> None:
    fake, executor, ws = sandbox(tmp_path)
    elsewhere = tmp_path / "sandbox-data"  # an absolute path in the sandbox, outside its ws
    notices: list[str] = []
    plan = transfers.parse_transfers(
        [f"{project(tmp_path)}:seed", f"{tmp_path / 'project' / 'a.txt'}:{elsewhere}/a.txt"],
        [f"seed/sub/b.txt:{tmp_path / 'out' / 'b.txt'}"],
        dockerfile=None,
        snapshot=None,
    )
    files = transfers.read_uploads(plan, SecretPolicy(), notices.append)
    assert sorted(f.path for f in files) == [f"{elsewhere}/a.txt", "seed/a.txt", "seed/sub/b.txt"]
    assert any("skipped" in n and ".env" in n and "never uploaded" in n for n in notices)
    try:
        await transfers.upload(executor, files, notices.append)
        assert (ws / "seed" / "a.txt").read_text() == "alpha\n"
        assert (ws / "seed" / "sub" / "b.txt").read_text() == "beta\n"
        assert (elsewhere / "a.txt").read_text() == "alpha\n"
        assert not (ws / "seed" / ".env").exists()
        assert not (ws / "seed" / ".git").exists()
        assert not (ws / "seed" / "node_modules").exists()
        assert await executor.read("seed/a.txt") == b"alpha\n"  # the agent reads them
        (ws / "report.md").write_text("# done\n")  # what the agent would leave
        assert await transfers.download(executor, plan, notices.append) == 0
        assert (tmp_path / "out" / "b.txt").read_text() == "beta\n"
    finally:
        await executor.aclose()
    assert notices[-1].startswith("downloaded seed/sub/b.txt")
    assert fake.live == []  # the sandbox went with the executor


async def test_many_files_go_in_batches(tmp_path: Path) -> None:
    fake, executor, ws = sandbox(tmp_path)
    files = [FileUpload(path=f"many/f{i}.txt", data=str(i).encode()) for i in range(150)]
    try:
        await executor.upload(files)
    finally:
        await executor.aclose()
    assert len(list((ws / "many").iterdir())) == 150
    assert (ws / "many" / "f149.txt").read_text() == "149"
    uploads = [p for m, p in fake.requests if p.endswith("/files/bulk-upload")]
    assert len(uploads) == -(-150 // UPLOAD_BATCH) == 2


async def test_a_batch_that_fails_after_others_were_written_says_which_were(
    tmp_path: Path,
) -> None:
    # Before, a 5xx on the second bulk-upload request raised the daemon's error alone: the
    # first batch's files stayed in the sandbox, unsaid, and the operator could not tell a
    # partial upload from none.
    fake, _, ws = sandbox(tmp_path)
    sent: list[int] = []

    async def second_fails(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/files/bulk-upload"):
            sent.append(1)
            if len(sent) == 2:
                return httpx.Response(502, json={"statusCode": 502, "message": "bad gateway"})
        return await fake.handler(request)

    executor = DaytonaExecutor(
        fake.settings(working_dir=str(ws)), transport=httpx.MockTransport(second_fails)
    )
    count = 2 * UPLOAD_BATCH + 1  # three batches: the third is never sent
    files = [FileUpload(path=f"many/f{i:03}.txt", data=b"x") for i in range(count)]
    try:
        with pytest.raises(ExecutorError) as caught:
            await executor.upload(files)
    finally:
        await executor.aclose()
    written, last = UPLOAD_BATCH, f"{UPLOAD_BATCH - 1:03}"
    assert len(list((ws / "many").iterdir())) == written
    assert "(502)" in str(caught.value)
    assert str(caught.value).endswith(
        f"; {written} of the {count} files were written before it ({ws}/many/f000.txt to "
        f"{ws}/many/f{last}.txt, in the order given) and stay in the sandbox; the other "
        f"{count - written}, from {ws}/many/f{written:03}.txt, were not: upload them again"
    )
    assert len(sent) == 2  # the third batch was not sent


@pytest.mark.parametrize("target", [".env", "config/.env.local", "keys/id_rsa", ".git/hooks/x"])
async def test_a_secret_or_agent_config_destination_is_refused(tmp_path: Path, target: str) -> None:
    _, executor, ws = sandbox(tmp_path)
    try:
        with pytest.raises(SensitivePath):
            await executor.upload([FileUpload(path=target, data=b"x")])
    finally:
        await executor.aclose()
    assert not (ws / target).exists()
    memory = MemoryExecutor(file_write=FileWriteMode.OFF)
    with pytest.raises(SensitivePath):
        await memory.upload([FileUpload(path=target, data=b"x")])


async def test_local_uploads_stay_in_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    local = LocalExecutor(str(ws))  # readonly: file_write off
    await local.upload([FileUpload(path="in/a.txt", data=b"a")])
    assert (ws / "in" / "a.txt").read_bytes() == b"a"
    with pytest.raises(PathOutsideWorkspace):
        await local.upload([FileUpload(path=str(tmp_path / "elsewhere.txt"), data=b"x")])
    with pytest.raises(PathOutsideWorkspace):
        await local.upload([FileUpload(path="../escape.txt", data=b"x")])
    assert not (tmp_path / "elsewhere.txt").exists()
    assert not (tmp_path / "escape.txt").exists()


def test_a_snapshot_or_a_dockerfile_chooses_how_the_sandbox_is_built(tmp_path: Path) -> None:
    env = {"DAYTONA_API_KEY": "k", "RHO_AGENT_DAYTONA_IMAGE": "python:3.12"}
    config = AgentConfig(backend="daytona")
    readonly = builtin_profile("readonly")
    snap = build_daytona_executor(config, readonly, env, snapshot="team-snap")
    assert isinstance(snap, DaytonaExecutor)
    assert create_body(snap.settings)["snapshot"] == "team-snap"
    assert "buildInfo" not in create_body(snap.settings)
    text = "FROM python:3.12-slim\nRUN pip install pandas\nCOPY --from=python:3 /x /y\n"
    built = build_daytona_executor(config, readonly, env, dockerfile=text)
    assert isinstance(built, DaytonaExecutor)
    assert create_body(built.settings)["buildInfo"] == {"dockerfileContent": text}
    for line in ("COPY . /app", "ADD requirements.txt /tmp/", "copy --chown=1 src /src"):
        with pytest.raises(ConfigError, match="has no build context"):
            build_daytona_executor(config, readonly, env, dockerfile=f"FROM x\n{line}\n")
    remote_add = "FROM x\nADD https://example.com/a.tgz /a.tgz\n"
    assert isinstance(
        build_daytona_executor(config, readonly, env, dockerfile=remote_add), DaytonaExecutor
    )


async def test_the_fake_receives_the_dockerfile(tmp_path: Path) -> None:
    text = "FROM ubuntu:24.04\nRUN apt-get update\n"
    fake, executor, _ = sandbox(tmp_path, dockerfile=text)
    try:
        await executor.upload([FileUpload(path="a.txt", data=b"a")])
    finally:
        await executor.aclose()
    assert fake.created[0]["buildInfo"] == {"dockerfileContent": text}


# The CLI, local backend (--model demo runs offline and lists the workspace).


def test_cli_uploads_and_downloads_around_a_readonly_run(tmp_path: Path) -> None:
    ws = tmp_path / "work"
    ws.mkdir()
    src = project(tmp_path)
    out = tmp_path / "results" / "copy.txt"
    result = rho(
        "-m", "demo", "-w", str(ws),
        "--upload", f"{src}:seed",
        "--download", f"seed/sub/b.txt:{out}",
        "what is here?",
        cwd=tmp_path, home=tmp_path / "home",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (ws / "seed" / "a.txt").read_text() == "alpha\n"
    assert not (ws / "seed" / ".env").exists()
    assert "a secret is never uploaded" in result.stderr
    assert "uploaded 2 file(s)" in result.stderr
    assert "seed" in result.stdout  # the agent saw the upload
    assert out.read_text() == "beta\n"
    again = rho(
        "-m", "demo", "-w", str(ws), "--download", f"seed/a.txt:{out}", "x",
        cwd=tmp_path, home=tmp_path / "home",
    )  # fmt: skip
    assert again.returncode == 1
    assert "exists (--force replaces it)" in again.stderr
    assert out.read_text() == "beta\n"


@pytest.mark.parametrize("secret", [".env", "home/.aws/credentials", "keys/deploy.pem"])
def test_cli_refuses_to_upload_a_secret(tmp_path: Path, secret: str) -> None:
    ws = tmp_path / "work"
    ws.mkdir()
    path = tmp_path / secret
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("MARK-SECRET\n")
    result = rho(
        "-m", "demo", "-w", str(ws), "--upload", f"{path}:x", "hi",
        cwd=tmp_path, home=tmp_path / "home",
    )  # fmt: skip
    assert result.returncode == 1
    assert f"--upload {path}: refused, a secret is never uploaded" in result.stderr
    assert not (ws / "x").exists()


def test_cli_flag_errors_say_what_to_fix(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM x\n")
    cases = [
        (("--dockerfile", "Dockerfile", "--snapshot", "s", "x"), "exclude each other"),
        (("--upload", "nocolon", "x"), "expected LOCAL:REMOTE"),
        (("--upload", "missing.txt:x", "x"), "missing.txt does not exist"),
        (("--download", "a", "x"), "expected REMOTE:LOCAL"),
        (("--snapshot", "s", "--backend", "local", "x"), "not with --backend local"),
    ]
    for args, message in cases:
        result = rho("-m", "demo", *args, cwd=tmp_path, home=tmp_path / "home")
        assert result.returncode == 1, args
        assert message in result.stderr, (args, result.stderr)


def test_the_repl_uploads_once_into_a_local_workspace(tmp_path: Path) -> None:
    """A new session of the same REPL (/clear) keeps what the agent changed since."""
    ws = tmp_path / "work"
    ws.mkdir()
    (tmp_path / "a.txt").write_text("original\n")
    term = Terminal(
        "-m", "demo", "-w", str(ws), "--upload", f"{tmp_path / 'a.txt'}:seed/a.txt",
        cwd=tmp_path, home=tmp_path / "home",
    )  # fmt: skip
    try:
        term.expect(r"uploaded 1 file\(s\)")
        term.expect(r"/help for commands")
        (ws / "seed" / "a.txt").write_text("changed by the agent\n")
        term.send("/clear\r")
        term.expect(r"\n> ")
        term.send("/exit\r")
        assert term.wait() == 0
    finally:
        term.close()
    assert (ws / "seed" / "a.txt").read_text() == "changed by the agent\n"
    assert term.output.count("uploaded 1 file(s)") == 1


def test_an_upload_is_a_regular_file_read_within_its_bound(tmp_path: Path) -> None:
    # Before, each file was read whole before the total was checked: --upload /dev/zero:z
    # read until memory ran out (a MemoryError, "internal error"), a FIFO blocked the launch
    # for ever, and a file of any size was read before it was refused.
    fifo, big = tmp_path / "fifo", tmp_path / "big.bin"
    os.mkfifo(fifo)
    big.write_bytes(b"x" * 16)
    cases = [
        (str(fifo), "not a regular file"),
        ("/dev/zero", "not a regular file"),
        (str(big), "more than 1024 MiB in all with"),
    ]
    for source, said in cases:
        plan = transfers.parse_transfers([f"{source}:z"], [], dockerfile=None, snapshot=None)
        with pytest.raises(ConfigError, match=f"--upload.*{said}"):
            transfers.read_uploads(plan, SecretPolicy(), print, limit=8)
    plan = transfers.parse_transfers([f"{big}:z"], [], dockerfile=None, snapshot=None)
    assert transfers.read_uploads(plan, SecretPolicy(), print, limit=16)[0].data == b"x" * 16


def test_a_link_in_an_uploaded_directory_to_a_file_outside_it_is_skipped(tmp_path: Path) -> None:
    # Before, --upload ./repo:repo sent what any link in it reached: a cloned repository's
    # docs/notes -> ../../private/diary.txt (no secret by name) went to the sandbox, where
    # the model and every command read it.
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "diary.txt").write_text("mine\n")
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "a.txt").write_text("alpha\n")
    (repo / "docs" / "notes").symlink_to("../../private/diary.txt")
    (repo / "docs" / "same").symlink_to("../a.txt")  # inside: sent, as its content
    notices: list[str] = []
    plan = transfers.parse_transfers([f"{repo}:repo"], [], dockerfile=None, snapshot=None)
    files = transfers.read_uploads(plan, SecretPolicy(), notices.append)
    assert sorted((f.path, f.data) for f in files) == [
        ("repo/a.txt", b"alpha\n"),
        ("repo/docs/same", b"alpha\n"),
    ]
    real = os.path.realpath(tmp_path)
    assert notices == [
        f"--upload: skipped {repo}/docs/notes: a link to {real}/private/diary.txt, outside "
        f"{repo} (name that file in an --upload of its own to send it)"
    ]
