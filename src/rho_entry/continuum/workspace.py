"""What the continuum loop does in the workspace, all through the ``Executor`` port, so the
same code runs locally or in a Daytona sandbox: git, the checks, the handoff files.

Checks are argv, never a shell line: ``check_command`` splits a flag's text as a POSIX shell
would split words and refuses shell operators (``&&``, ``|``, ``;``, ``>``...), since nothing
would run them; put such a line in a script and name the script.
"""

from __future__ import annotations

import shlex

import attrs

from rho_domain.continuum.handoffs import HANDOFFS_DIR
from rho_domain.errors import ConfigError, ToolError, WorkspaceGitError
from rho_domain.ports.commands import Command, CommandResult
from rho_domain.ports.executor import Executor
from rho_domain.secrets import DEFAULT_POLICY
from rho_domain.value_methods import value_eq, value_hash, value_repr

CHECK_TIMEOUT = 1800.0
"""Seconds one check may run (a test suite)."""
REPORT_TAIL = 4000
"""Characters of a failing check's output the agent is shown (its end, where errors are)."""
_OPERATORS = frozenset("();<>|&")
IGNORED = ".rho-agent/"
_ADD_BATCH = 200
STATUS_CAP = 64 * 1024 * 1024
"""Bytes of ``git status`` a commit reads (a million changed paths)."""
"""Paths per ``git add`` (the command line stays far below the system's limit)."""


@attrs.frozen(kw_only=True)
class CheckCommand:
    """A check: the flag that gave it, its text as given, and its argv."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    flag: str
    text: str
    argv: tuple[str, ...]


def check_command(flag: str, text: str) -> CheckCommand:
    """``text`` (of ``flag``) as argv; raises ``ConfigError`` for an empty or unbalanced text
    or one holding a shell operator."""
    words = shlex.shlex(text, posix=True, punctuation_chars=True)
    words.whitespace_split = True
    try:
        argv = tuple(words)
    except ValueError as exc:
        raise ConfigError(f"{flag} {text!r}: {exc} (quote it as a shell would)") from exc
    operator = next((word for word in argv if word and set(word) <= _OPERATORS), None)
    if operator is not None:
        raise ConfigError(
            f"{flag} {text!r}: {operator!r} is a shell operator, and checks run as one "
            "command without a shell; put the line in a script and give the script"
        )
    if not argv:
        raise ConfigError(f"{flag}: give a command, not an empty text")
    return CheckCommand(flag=flag, text=text, argv=argv)


async def run_argv(
    executor: Executor, argv: tuple[str, ...], timeout: float, cap: int = 256 * 1024
) -> CommandResult:
    """``argv`` run in the workspace's root. Given to the shell quoted word by word
    (``shlex.join``), so it runs as that one argv: a ``pipeline`` would be judged as a
    read-only command (and ``git add`` refused), and the developer profile's shell runs any
    command, as the agent's own ``bash`` calls do."""
    command = Command(shell=shlex.join(argv), timeout=timeout, max_output_bytes=cap)
    return await executor.run(command)


async def git(executor: Executor, *args: str) -> str:
    """``git ARGS`` in the workspace; its output. Raises ``WorkspaceGitError`` naming the command
    and git's own words when it fails."""
    result = await run_argv(executor, ("git", *args), 120.0)
    if result.exit_code != 0:
        said = result.output.strip() or f"exit code {result.exit_code}"
        raise WorkspaceGitError(f"`git {' '.join(args)}` failed in {executor.working_dir}: {said}")
    return result.output


async def require_repository(executor: Executor) -> None:
    """Raise ``WorkspaceGitError`` unless the workspace is inside a git work tree whose git
    knows a committer. Asked before anything runs: a directory without one ran a whole
    session (the model paid for), wrote a ``.gitignore`` and a state file that ``--resume``
    then took as the latest run, and only the first commit failed, with advice about
    ``.gitignore``; without a committer (no ``user.email``) the first commit failed so too."""
    argv = ("git", "rev-parse", "--is-inside-work-tree")
    result = await run_argv(executor, argv, 60.0)
    if result.exit_code != 0 or result.output.strip() != "true":
        said = result.output.strip()[-300:] or f"exit code {result.exit_code}"
        raise WorkspaceGitError(
            f"{executor.working_dir} is not in a git work tree (`git rev-parse "
            f"--is-inside-work-tree`: {said}); run `git init` there, or give the repository "
            "with -d/--working-dir"
        )
    # the committer git would use: without one, the first commit failed after a session
    identity = await run_argv(executor, ("git", "var", "GIT_COMMITTER_IDENT"), 60.0)
    if identity.exit_code != 0:
        said = identity.output.strip()[-300:] or f"exit code {identity.exit_code}"
        raise WorkspaceGitError(
            f"git cannot commit in {executor.working_dir}: it knows no committer ({said}); "
            "set one with `git config user.name NAME` and `git config user.email EMAIL` there "
            "(or --global)"
        )


async def switch_branch(executor: Executor, branch: str) -> None:
    """Work on ``branch``: switched to when it exists, created from HEAD when not. A failure
    stops the run (the reference went on silently on the branch it was on)."""
    present = await run_argv(executor, ("git", "rev-parse", "--verify", "--quiet", branch), 60.0)
    await git(executor, "switch", *(() if present.exit_code == 0 else ("-c",)), branch)


async def commit_all(executor: Executor, message: str) -> tuple[bool, tuple[str, ...]]:
    """Stage every change but secrets and commit ``message`` when anything is staged; whether
    it committed, and the changed paths left unstaged because the secrets policy names them
    (``.env``, ``id_rsa``, ``config/.aws/credentials``...), for the run to say.

    Staged by listing and filtering, never ``git add -A`` (which put an unignored ``.env`` in
    history): ``git status`` lists the changes (untracked files one by one, ``.gitignore``
    honoured), the policy judges each path, and the rest are added as literal pathspecs, so a
    name such as ``*`` is that file and not a glob."""
    paths = await _changed_paths(executor)
    secret = tuple(path for path in paths if DEFAULT_POLICY.refusal(path) is not None)
    staged = [path for path in paths if path not in secret]
    for start in range(0, len(staged), _ADD_BATCH):
        batch = staged[start : start + _ADD_BATCH]
        await git(executor, "--literal-pathspecs", "add", "-A", "--", *batch)
    if not staged or not (await git(executor, "diff", "--cached", "--name-only")).strip():
        return False, secret
    await git(executor, "commit", "--quiet", "-m", message)
    return True, secret


async def _changed_paths(executor: Executor) -> list[str]:
    """Every changed path ``git status`` lists, whole: its output's middle is never elided
    (an elided listing of an unignored ``node_modules`` mangled a path, and the middle's files
    went unjudged), and a listing past ``STATUS_CAP`` stops the run, saying so."""
    argv = ("git", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
    result = await run_argv(executor, argv, 120.0, STATUS_CAP)
    if result.omitted_bytes or result.exit_code != 0:
        said = (
            result.output.strip()[-500:]
            if result.exit_code
            else f"more than {STATUS_CAP:,} bytes of paths"
        )
        raise WorkspaceGitError(
            f"`{shlex.join(argv[1:])}` in {executor.working_dir}: {said}; add what should "
            "not be committed (node_modules, build output) to .gitignore"
        )
    return sorted({entry[3:] for entry in result.output.split("\0") if len(entry) > 3})


async def run_checks(executor: Executor, checks: tuple[CheckCommand, ...]) -> str | None:
    """Every check in order; None when all pass, else the report of those that failed (each
    one's command, exit code and the end of its output)."""
    failed = []
    for check in checks:
        result = await run_argv(executor, check.argv, CHECK_TIMEOUT)
        if result.exit_code == 0 and not result.timed_out:
            continue
        how = "timed out" if result.timed_out else f"exit code {result.exit_code}"
        output = result.output[-REPORT_TAIL:]
        failed.append(f"`{check.text}` ({check.flag}) failed, {how}:\n```\n{output}\n```")
    return "\n\n".join(failed) if failed else None


async def ignore_own_files(executor: Executor) -> None:
    """``.rho-agent/`` (handoffs, the workspace's own files) listed in ``.gitignore``."""
    try:
        text = (await executor.read(".gitignore")).decode("utf-8", "replace")
    except ToolError:
        text = ""
    if any(line.strip() in (IGNORED, IGNORED.rstrip("/")) for line in text.splitlines()):
        return
    joined = text if not text or text.endswith("\n") else text + "\n"
    await executor.write(".gitignore", f"{joined}{IGNORED}\n".encode(), overwrite=True)


async def handoff_names(executor: Executor) -> tuple[str, ...]:
    """The names in the handoffs directory (none when it does not exist yet)."""
    try:
        return tuple(entry.name for entry in await executor.list_dir(HANDOFFS_DIR))
    except ToolError:
        return ()


async def read_handoff(executor: Executor, name: str) -> str:
    """The text of handoff ``name``."""
    return (await executor.read(f"{HANDOFFS_DIR}/{name}")).decode("utf-8", "replace")


async def write_handoff(executor: Executor, name: str, document: str) -> str:
    """Write handoff ``name`` (a ``handoffs.handoff_name``); its path in the workspace."""
    path = f"{HANDOFFS_DIR}/{name}"
    await executor.write(path, document.encode(), overwrite=False)
    return path
