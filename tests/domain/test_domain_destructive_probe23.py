"""Round 23's probe of the approval rules redapprove23 built (shell.destructive*): what still
ran unasked after "always" for bash, by class, each held now; and the ordinary work next to
each class that must still run unasked. One test per class, every variant in one process (the
check is a pure function)."""

from __future__ import annotations

from rho_domain.shell.destructive import destructive_reason


def _missed(cases: dict[str, str]) -> list[tuple[str, str]]:
    """The cases whose reason is missing or lacks its fragment (expected: none)."""
    return [(c, r) for c, f in cases.items() if f not in (r := destructive_reason(c)) or not r]


def _asking(commands: tuple[str, ...]) -> list[tuple[str, str]]:
    """The ordinary commands that ask (expected: none)."""
    return [(c, r) for c in commands if (r := destructive_reason(c))]


def test_an_assignment_split_by_a_line_continuation_asks_again() -> None:
    """bash removes a backslash-newline before it reads words, so ``LD_PRE\\<newline>LOAD='x'
    ls`` is the assignment LD_PRELOAD='x'; the lexer took the continuation for quoting and
    looked for NAME= in the raw text, so the word was a program named "LD_PRELOAD=x"."""
    hidden = {
        "LD_PRE\\\nLOAD='./x.so' ls": "variable assignment LD_PRELOAD",
        "PATH\\\n='/tmp/evil:/usr/bin' make": "variable assignment PATH",
        "GIT_SSH_COM\\\nMAND='rm -rf src' git fetch": "variable assignment GIT_SSH_COMMAND",
        "BASH_\\\nENV=./x bash s.sh": "variable assignment BASH_ENV",
    }
    assert _missed(hidden) == []
    assert _asking(("ls -la \\\n  src", "git log \\\n  --oneline", "echo 'A\\\nB=c'")) == []


def test_git_options_that_run_a_command_ask_even_in_a_subcommand_that_only_reads() -> None:
    """grep, fetch, pull, ls-remote, clone, archive and init were harmless whatever their
    options, and git's words are text to the shell-escape rule: a pager or the other side's
    program (run through a shell, a local repository too), a hooks template or the new
    repository's configuration ran unasked."""
    hidden = {
        "git grep --open-files-in-pager='rm -rf ~' x": "git grep: --open-files-in-pager",
        "git grep -O'make' x": "git grep: -O runs a command",
        "git ls-remote --upload-pack='rm -rf ~' .": "git ls-remote: --upload-pack",
        "git fetch --upload-pack=./x origin": "git fetch: --upload-pack",
        "git pull --upload='rm -rf ~' .": "git pull: --upload",
        "git clone -u 'rm -rf ~' . y": "git clone: -u",
        "git clone --template=t . y": "git clone: --template",
        "git clone --config core.hooksPath=h . y": "git clone: --config",
        "git init --template=t": "git init: --template",
        "git archive --remote=. --exec='rm -rf ~' HEAD": "git archive: --exec",
    }
    assert _missed(hidden) == []
    ordinary = (
        "git grep -n -o foo",
        "git fetch origin",
        "git clone https://example.com/r.git",
        "git init",
        "git archive -o a.tar HEAD",
        "git ls-remote origin",
    )
    assert _asking(ordinary) == []


def test_options_that_make_a_data_program_run_a_command_and_package_settings_ask() -> None:
    """rg, sort, split and wget only read or fetch data, so nothing judged them: rg --pre rm
    deleted every file it searched; npm, pnpm, yarn and pip config set wrote what their later
    runs obey (npm's script-shell runs every script), unasked."""
    hidden = {
        "rg --pre rm x .": "rg --pre: runs a command on every file",
        "rg --pre=./x.sh x": "rg --pre=./x.sh",
        "sort --compress-prog=./x big": "sort --compress-prog=./x",
        "split --filter='rm -rf ~' a": "split --filter=rm -rf ~",
        "wget -e use_askpass=./x https://example.com/": "wget -e use_askpass=./x",
        "wget --use-askpass=./x https://example.com/": "wget --use-askpass=./x",
        "npm config set script-shell ./x && npm test": "npm config set",
        "npm set script-shell ./x": "npm set script-shell",
        "npm run t --script-shell=./x": "npm --script-shell=./x",
        "pnpm config set script-shell ./x": "pnpm config set",
        "yarn config set yarnPath ./x.js": "yarn config set",
        "pip config set global.index-url https://example.com/": "pip config set",
    }
    assert _missed(hidden) == []
    ordinary = (
        "rg -n x src",
        "sort -u a",
        "split -l 10 a",
        "wget -e robots=off https://example.com/",
        "npm config get registry",
        "npm install",
        "pip install -r requirements.txt",
    )
    assert _asking(ordinary) == []

