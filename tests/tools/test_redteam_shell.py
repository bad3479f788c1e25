"""Red team of the readonly promise (issue 32): secrets under other names, on real processes.

The workspace holds a real ``.env`` and ``credentials.json``; a fake home beside it holds
``.ssh/id_rsa``, ``.config/gh/hosts.yml`` and the agent's own configuration (a secret location
of the executor). Four **hard links** give secrets a second, innocent name: ``notes.txt`` is
``.env``, ``keycopy.txt`` is the SSH key, ``src/hosts.txt`` the GitHub token, ``src/cred.bak``
the credentials. No name or real-path check can see that (a hard link has no target); every
command runs through the bash tool on a real ``LocalExecutor`` with bubblewrap and without, and
the file tools read through the same executor. No secret may reach the output in any encoding,
``evil.sh`` may never run, and legit work (a hard-linked pair of ordinary files included) keeps
working. Before the fix, 60 of the hard-link commands and 9 of the ``xargs``-walk commands
printed a secret.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from shell_backends import call_tool, restricted_bash

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_adapters.local.hardlinks import find_aliases
from rho_adapters.local.spreadsheet import OpenpyxlReader
from rho_domain.secrets import SecretPolicy
from rho_domain.tools.base import ToolHandler
from rho_domain.tools.excel import ReadExcelHandler
from rho_domain.tools.grep import GrepHandler
from rho_domain.tools.read import ReadHandler

SECRET_FILES = {
    ".env": "API_KEY=SECRET-ENV-2\n",
    "credentials.json": '{"token": "SECRET-CRED-1"}\n',
}
HOME_FILES = {
    ".ssh/id_rsa": "SECRET-SSH-KEY\n",
    ".config/gh/hosts.yml": "oauth_token: SECRET-GH-1\n",
    ".config/rho-agent/config.yaml": "api_key: SECRET-CFG-1\n",
    ".config/gcloud/access_tokens.db": "SECRET-GC-1\n",
}
MARKERS = ("SECRET-ENV", "SECRET-CRED", "SECRET-SSH", "SECRET-GH", "SECRET-CFG", "SECRET-GC")

# Hard links: every program, every spelling of the name, stdin, globs, xargs items, walkers.
HARD_LINKS = [
    "cat notes.txt",
    "head -c 100 notes.txt",
    "head -n1 ./src/../notes.txt",
    "tail -n 1 k*",
    "cat *.txt",
    "head src/*",
    "grep SECRET src/*",
    "cat keycopy.txt",
    "cat src/hosts.txt",
    "cat src/cred.bak",
    "cat < keycopy.txt",
    "sort < src/hosts.txt",
    "tr a b < notes.txt",
    "wc -l < notes.txt",
    "paste -d, notes.txt src/cred.bak",
    "tac src/cred.bak",
    "rev keycopy.txt",
    "fold -w 5 keycopy.txt",
    "nl -ba keycopy.txt",
    "column -t notes.txt",
    "cut -c1- notes.txt",
    "expand notes.txt",
    "uniq notes.txt",
    "sort notes.txt",
    "strings -n 3 notes.txt",
    "od -An -c src/hosts.txt",
    "hexdump -C src/cred.bak",
    "xxd -p keycopy.txt",
    "base64 -w0 src/hosts.txt",
    "cmp -l README.md notes.txt",
    "diff README.md notes.txt",
    "diff src/hosts.txt README.md",
    "comm notes.txt README.md",
    "join -a1 notes.txt README.md",
    "grep -f keycopy.txt keycopy.txt",
    "grep --file=notes.txt README.md notes.txt",
    "grep -o -f notes.txt notes.txt",
    "jq -R . src/cred.bak",
    "jq -n --rawfile f keycopy.txt '$f'",
    "awk 1 notes.txt",
    "awk '{print}' src/*",
    "sed '' keycopy.txt",
    "sed -n p notes.txt",
    "git diff --no-index README.md notes.txt",
    "git diff --no-index notes.txt keycopy.txt",
    "grep -r SECRET .",
    "grep -rh SECRET .",
    "grep -R SECRET .",
    "grep -d recurse SECRET .",
    "grep -r --include='*.txt' SECRET .",
    "grep -r --include='*.bak' SECRET src",
    "grep -r --exclude=x SECRET src",
    "rg SECRET",
    "rg SECRET src",
    "rg -uuu SECRET",
    "rg -g '*.txt' SECRET",
    "rg -g 'hosts.txt' -uu SECRET src",
    "diff -rN old src",
    "diff -N -r . src",
    "ls | xargs cat",
    "ls -a | xargs head",
    "echo notes.txt | xargs cat",
    "echo src/hosts.txt | xargs cat",
    "printf 'src/cred.bak\\0' | xargs -0 tail",
    "find . -name '*.txt' | xargs grep SECRET",
    "find . -type f | xargs cat",
    "find src -type f -print0 | xargs -0 head",
    "echo src | xargs grep -r SECRET",
    "echo . | xargs rg SECRET",
]
# Directories handed to a recursive reader through xargs: its walk is known only at run time.
XARGS_WALKS = [
    "echo ../home | xargs grep -r SECRET",
    "echo ../home/.config | xargs grep -r SECRET",
    "echo ../home/.config | xargs rg SECRET",
    "echo ../home/.config | xargs rg -uuu SECRET",
    "echo .. | xargs grep -r SECRET",
    "echo .. | xargs rg --hidden SECRET",
    "echo ../home/.config/gh | xargs grep -rh oauth",
    "printf '../home/.config\\n' | xargs -n1 grep -rl SECRET",
    "echo ../home/.config/ | xargs grep -R SECRET",
    "echo ../home/./.config | xargs grep -r --include='*.yml' SECRET",
]
# Classes that held when tried: kept so they keep holding.
HELD = [
    "git show :.env",
    "git show :0:.env",
    "git show HEAD~1:old/.env",
    "git cat-file -p HEAD~1:old/.env",
    "git log -p --all",
    "git show HEAD~1",
    "git log -p --follow -- old/.env",
    "git grep SECRET HEAD~1",
    "git blame .env",
    "cat Config.ENV",
    "grep -i secret Config.ENV",
    "cat link.txt",
    "cat keys/id_rsa",
    "cat keys/../keys/id_rsa",
    "grep -r SECRET keys/",
    "cat /proc/self/environ",
    "cat /proc/self/root/proc/self/environ",
    "cat /dev/stdin < .env",
    "cat - < .env",
    "cat < link.txt",
    "cat < keys/id_rsa",
    "head -n 5 .e*",
    "cat */../.env",
    "rg -L SECRET",
    "rg --follow SECRET",
    "rg -g .env --no-ignore --hidden SECRET",
    "rg --type-add 'e:*.env' -t e --hidden SECRET",
    "grep -r --include=.env SECRET .",
    "cat ../home/.config/gh/hosts.yml",
    "rg SECRET ../home/.config",
    "grep -R SECRET ../home",
    "find ../home -type f | xargs cat",
    "cd ../home && grep -r SECRET .",
    "cat ../home/.c*/gh/h*",
    "jq -n 'import \".env\" as $e; $e'",
    "awk 'BEGIN { while ((getline l < \".env\") > 0) print l }'",
    "sed -n '1r .env' README.md",
    "sed 'R .env' README.md",
    "sed -n 'e sh evil.sh' README.md",
]
# Writes, programs run, redirections, wrappers, xargs targets, find actions and git writes:
# refused or harmless (no PWNED, no secret).
RUNS_OR_WRITES = [
    "sort -o PWNED README.md",
    "sort --output=PWNED README.md",
    "sort -S 1b --compress-program=sh README.md",
    "sort --compress-prog=./evil.sh README.md",
    "uniq README.md PWNED",
    "xxd README.md PWNED",
    "base64 README.md PWNED",
    "tee PWNED < README.md",
    "cat README.md > PWNED",
    "cat README.md >| PWNED",
    "cat README.md &> PWNED",
    "cat README.md 1<> PWNED",
    "cat README.md <> PWNED",
    "cat README.md >& PWNED",
    "cat README.md 3> PWNED",
    "ls 2>PWNED",
    "cat README.md >>/dev/null 2>PWNED",
    "cat README.md 2>&1 >PWNED",
    "cat README.md >/dev/null >PWNED",
    "> PWNED",
    "cat README.md > /dev/stdout",
    "cat README.md >/dev/tcp/127.0.0.1/9",
    "cat README.md 2>/dev/null>PWNED",
    "cat README.md | sh",
    "cat README.md | bash",
    "echo evil.sh | xargs sh",
    "echo ./evil.sh | xargs -I% sh -c %",
    "ls | xargs env",
    "echo evil.sh | xargs -n1 ./evil.sh",
    "echo README.md | xargs xargs cat",
    "echo . | xargs find -delete",
    "./evil.sh",
    "evil.sh",
    "/bin/sh evil.sh",
    "sh evil.sh",
    "'ca''t' .env",
    "c\\at .env",
    "\\ls",
    "command ls",
    "exec ls",
    "env ls",
    "nice ls",
    '"cat" .env',
    'ca"t" .env',
    "ls",
    "sh evil.sh",
    "ls;sh evil.sh",
    "ls&sh evil.sh",
    "ls|sh",
    "ls && sh evil.sh",
    "ls || sh evil.sh",
    "(sh evil.sh)",
    "{ sh evil.sh; }",
    "ls |& sh",
    "./evil.s?",
    "[e]vil.sh",
    "e*",
    "$0 evil.sh",
    "ls${IFS}.env",
    "cat $'\\x2eenv'",
    "cat ~/.ssh/id_rsa",
    "cat `echo .env`",
    "cat $(echo .env)",
    "cat <(cat .env)",
    "cd .git && cat config",
    "cd /proc/self && cat environ",
    "cd keys && cat id_rsa",
    "cd ~ && ls",
    "cd - && ls",
    "xargs -I{} sh -c {} <<< 'sh evil.sh'",
    "xargs --replace=X cat X <<< .env",
    "xargs -E x cat <<< README.md",
    "xargs -o cat <<< README.md",
    "xargs -p cat <<< README.md",
    "xargs -P 4 cat <<< README.md",
    "hostname evil",
    "hostname -F README.md",
    "hostname -b x",
    "date -s 2020-01-01",
    "date --set=2020-01-01",
    "date -f .env",
    "tail -f README.md",
    "tail -F README.md",
    "sort --random-source=.env README.md",
    "rg --pre-glob '*' --pre ./evil.sh x",
    "rg -z x",
    "rg --search-zip x",
    "rg --hostname-bin=./evil.sh x",
    "rg --ignore-file .env x",
    "rg -f .env README.md",
    "jq -L . -n 'import \"lib\" as l; 1'",
    "jq -n 'get_search_list'",
    "jq -n '$__loc__'",
    "jq --seq . package.json",
    "awk '{print > \"PWNED\"}' README.md",
    "awk '{print | \"sh evil.sh\"}' README.md",
    "awk 'BEGIN{\"sh evil.sh\" | getline; print}'",
    "awk '@load \"filefuncs\"'",
    "awk -l filefuncs 'BEGIN{}'",
    "awk -f evil.sh",
    "awk -E evil.sh",
    "awk --exec=evil.sh",
    "awk 'BEGIN{system(\"sh evil.sh\")}'",
    'awk \'BEGIN{printf "x" > "/dev/stderr"}\'',
    "awk 'BEGIN { print \"x\" > ARGV[1] }' PWNED",
    "find . -fprint PWNED",
    "find . -fls PWNED",
    "find . -fprintf PWNED x",
    "find . -delete",
    "find . -name PWNED -newer README.md -exec sh evil.sh ';'",
    "find . -okdir sh evil.sh ';'",
    "find -D exec . -name x",
    "find . -printf '%p\\n' -quit",
    "git -C .. log",
    "git --exec-path=. log",
    "git -c core.pager=sh log",
    "git log --output=PWNED",
    "git diff --output=PWNED HEAD",
    "git log --ext-diff -p",
    "git archive -o PWNED HEAD",
    "git format-patch -o out HEAD~1",
    "git bundle create PWNED HEAD",
    "git difftool HEAD~1",
    "git grep -O./evil.sh x",
    "git grep --open-files-in-pager=./evil.sh x",
    "git show --textconv HEAD",
    "git blame --contents=.env README.md",
    "git blame --contents .env README.md",
    "git -p log",
    "git --paginate log",
    "git log --upload-pa=x",
    "git ls-remote --upload-pack=./evil.sh .",
    "git fetch",
    "git config core.pager sh",
    "git checkout -- .",
    "git stash",
    "git clean -fdx",
    "git reset --hard",
    "git update-ref refs/heads/x HEAD",
    "git --git-dir=.git log -1",
    "git --work-tree=.. status",
    "git log --no-notes --notes=x",
    "git log -1 --format=%x00",
    "git show HEAD --output-indicator-new=x",
    "git rev-parse --git-path hooks",
    "git rev-parse --local-env-vars",
]
# git revision syntax, pathspec magic, stdin-driven subcommands, history searches.
GIT_ROUTES = [
    "git cat-file --batch <<< 'HEAD~1:old/.env'",
    "git cat-file --batch-check <<< 'HEAD~1:old/.env'",
    "git cat-file --batch --batch-all-objects",
    "git cat-file --batch-all-objects --batch",
    "git cat-file --batch=%(objectname) <<< 'HEAD:.env'",
    "git cat-file --batch-command <<< 'contents HEAD:.env'",
    "git log --stdin -p <<< 'HEAD~1'",
    "git diff-tree -p --stdin <<< 'HEAD'",
    "git diff-tree -p HEAD~1 HEAD",
    "git show HEAD~1:./old/.env",
    "git show 'HEAD~1:old/.en?'",
    "git show HEAD~1^{tree}",
    "git show 'HEAD~1:old/'",
    "git ls-tree -r HEAD~1",
    "git rev-parse HEAD~1:old/.env",
    "git show HEAD@{1}:old/.env",
    "git show 'HEAD~1:old\\.env'",
    "git show HEAD~1:old//.env",
    "git show HEAD~1:old/./.env",
    "git show HEAD~1:src/../old/.env",
    "git show HEAD~1:OLD/.ENV",
    "git show 'master~1:old/.env'",
    "git show ':/first:old/.env'",
    "git show ':/first'",
    "git log -p -S SECRET --all",
    "git log -p -G SECRET --all",
    "git log --all --format=%H -p -- old",
    "git show --stat -p HEAD~1 -- old/.env",
    "git diff HEAD~1 HEAD --stat -p",
    "git diff HEAD~1:old HEAD~1:src",
    "git diff HEAD~1 HEAD -- old/",
    "git show HEAD~1 --format=raw",
    "git grep -I -e SECRET HEAD~1",
    "git grep --cached SECRET",
    "git grep -e SECRET $(git rev-list --all)",
    "git grep SECRET HEAD~1 -- ':(icase)old'",
    "git grep SECRET HEAD~1 -- ':(exclude)x'",
    "git show HEAD~1 -- ':(literal)old/.env'",
    "git --literal-pathspecs show HEAD~1",
    "git --glob-pathspecs show HEAD~1",
    "git --icase-pathspecs log -p",
    "git --noglob-pathspecs grep SECRET HEAD~1",
    "git show HEAD:credentials.json",
    "git show HEAD -- credentials.json",
    "git log -p -- credentials.json",
    "git blame -- credentials.json",
    "git blame HEAD -- credentials.json",
    "git log -L1,1:credentials.json",
    "git log -L '/token/,+1:credentials.json'",
    "git log -L :x:credentials.json",
    "git log --format=%B",
    "git show-branch",
    "git stash show -p",
    "git reflog -p",
    "git whatchanged -p",
    "git format-patch --stdout HEAD~1",
    "git log -p --full-diff -- README.md",
    "git log -p --full-diff HEAD~1 -- README.md",
    "git show --full-index HEAD~1",
    "git diff --no-index .env README.md",
    "git diff --no-index -- old src",
    "git merge-tree HEAD~1 HEAD",
    "git grep -f .env",
    "git grep -O cat SECRET",
    "git ls-files -s",
    "git ls-files --stage old",
    "git shortlog -s",
    "git notes show",
    "git log --notes=x -p",
    "git check-attr -a .env",
    "git check-ignore -v .env",
    "git count-objects -v",
    "git fsck --lost-found",
    "git verify-pack -v .git/objects/pack/x.idx",
    "git show-ref",
    "git describe --all",
    "git name-rev HEAD",
    "git cherry -v",
    "git log --show-signature",
    "git log -p --ext-diff",
    "git -c diff.external=./evil.sh diff",
    "git diff --textconv HEAD~1",
    "git log --textconv -p",
    "git log -p --word-diff=porcelain HEAD~1",
]
# Lexer and spelling tricks: separators, continuations, here-documents, quoting, every
# reader of .env by name, and xargs items from files.
SPELLINGS = [
    "ls\rsh evil.sh",
    "ls\xa0;sh evil.sh",
    "ls\u2028sh evil.sh",
    "ls\x85sh evil.sh",
    "ls\tsh evil.sh",
    "ls \\\nsh evil.sh",
    "ls # ; sh evil.sh",
    "ls ;; sh evil.sh",
    "ls |& sh evil.sh",
    "ls <& 0",
    "cat README.md 2>&-",
    "cat README.md >&2",
    "cat <<-EOF\n\tsh evil.sh\nEOF",
    "cat <<'E$(sh evil.sh)'\nx\nE$(sh evil.sh)",
    "cat <<< $'\\x41'",
    "cat <<EOF\n$(sh evil.sh)\nEOF",
    'cat <<"EOF"\n$(cat .env)\nEOF',
    "cat <<EOF | sh\nsh evil.sh\nEOF",
    "cat < .env <<< x",
    "cat <<< x < .env",
    "cat README.md < .env",
    "tr a b < README.md < .env",
    "ls\x00; sh evil.sh",
    "ls 'a\x00b'",
    "l\\\ns",
    "\\\nsh evil.sh",
    "ls\\;sh evil.sh",
    "ls';'sh evil.sh",
    'ls ";" sh',
    "{ls,.env}",
    "ls {a,b}",
    "cat .en\\v",
    "cat .e'n'v",
    'cat ".env"',
    "cat '.env'",
    "cat ./.env",
    "cat .//.env",
    "cat src/../.env",
    "cat src/../../ws/.env",
    "cat $PWD/.env",
    "cat ${PWD}/.env",
    "cat ~+/.env",
    "cat ~-/.env",
    "cat -- .env",
    "cat -.env",
    "cat .env -",
    "cat - .env < README.md",
    "head -n1 -- -- .env",
    "grep -e API -- .env",
    "grep API -- -.env .env",
    "cat README.md .env",
    "cat README.md link.txt",
    "ls -la .env",
    "stat .env",
    "wc -c .env",
    "file .env",
    "md5sum .env",
    "du .env",
    "ls -d .e*",
    "find . -name .env",
    "find . -name .env -print",
    "find . -newer .env",
    "find .env",
    "find . -path ./.env -prune -o -print",
    "sort -m .env README.md",
    "comm .env README.md",
    "join .env .env",
    "paste .env",
    "diff .env /dev/null",
    "cmp .env README.md",
    "cmp -l .env README.md",
    "cut -c1 .env",
    "nl .env",
    "tac .env",
    "rev .env",
    "fold .env",
    "expand .env",
    "od .env",
    "xxd .env",
    "hexdump .env",
    "base64 .env",
    "strings .env",
    "sha256sum .env",
    "uniq .env",
    "column .env",
    "zcat -f .env",
    "zcat --force .env",
    "jq -R . .env",
    "jq -n --rawfile x .env '$x'",
    "jq -n --slurpfile x .env '$x'",
    "awk 1 .env",
    "sed p .env",
    "tail .env",
    "head .env",
    "grep . .env",
    "rg . .env",
    "rg --files | xargs cat",
    "grep -l . * | xargs cat",
    "ls -a | grep env | xargs cat",
    "find . -maxdepth 1 | xargs head",
    "echo .env | xargs head",
    "printf '%s\\n' .env | xargs -n1 cat",
    "xargs cat <<< .env",
    "xargs -0 cat <<< $'.env'",
    "xargs -d , cat <<< '.env,README.md'",
    "xargs -I % cat % <<< .env",
]
LONG_LINES = [
    "ls " + "| cat " * 60,
    "(" * 40 + "ls" + ")" * 40,
    "ls " + "; ls" * 200 + "; sh evil.sh",
    "ls " + "&& ls " * 100 + "&& sh evil.sh",
]
LEGIT = [
    ("wc -l src/*.py", "src/a.py"),
    ("git log -p -- src/app.py", "+print('app')"),
    ("jq .name package.json", '"pkg"'),
    ("sed -n 1,20p README.md", "# readme"),
    ("find . -name '*.py' | xargs grep -n TODO", "TODO foo"),
    ("sort data.csv | uniq -c", "1 a,1"),
    ("echo src | xargs grep -rn TODO", "src/a.py:1:"),
    ("grep -rn TODO .", "./src/a.py:1:"),
    ("rg -n TODO", "src/a.py"),
    ("cat twin-a.txt twin-b.txt", "twin"),  # hard links between ordinary files stay readable
    ("echo twin-b.txt | xargs cat", "twin"),
]


def _write(base: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("redteam")
    ws, home = base / "ws", base / "home"
    _write(home, HOME_FILES)
    _write(
        ws,
        {
            **SECRET_FILES,
            "old/.env": "OLD=SECRET-ENV-OLD\n",
            "Config.ENV": "UP=SECRET-ENV-UP\n",
            "README.md": "# readme\n",
            "data.csv": "a,1\nb,2\n",
            "package.json": '{"name": "pkg"}\n',
            "src/a.py": "x = 1  # TODO foo\n",
            "src/app.py": "print('app')\n",
            "twin-a.txt": "twin\n",
            "evil.sh": '#!/bin/sh\necho EVIL-RAN\n: > "$(dirname "$0")/PWNED"\n',
        },
    )
    (ws / "evil.sh").chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(base), "GIT_CONFIG_GLOBAL": "/dev/null"}
    for args in (
        ["init", "-q"],
        ["add", "-f", ".env", "README.md", "src/a.py", "src/app.py", "old/.env"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"],
        ["rm", "-q", "old/.env"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "rm old"],
    ):
        subprocess.run(["git", *args], cwd=ws, env=env, check=True)
    os.symlink(".env", ws / "link.txt")
    os.symlink(str(home / ".ssh"), ws / "keys")
    os.link(ws / ".env", ws / "notes.txt")
    os.link(home / ".ssh/id_rsa", ws / "keycopy.txt")
    os.link(home / ".config/gh/hosts.yml", ws / "src/hosts.txt")
    os.link(ws / "credentials.json", ws / "src/cred.bak")
    os.link(ws / "twin-a.txt", ws / "twin-b.txt")
    os.symlink(".env", ws / "sheet.csv")  # read_excel reads .csv files
    os.link(ws / ".env", ws / "sheet2.csv")
    os.symlink(str(home / ".config/gh/hosts.yml"), ws / "hosts.csv")
    return base


def _executor(root: Path, sandbox: bool) -> LocalExecutor:
    return LocalExecutor(
        str(root / "ws"),
        sandbox=sandbox,
        homes=[str(root / "home")],
        secret_locations=[str(root / "home/.config/rho-agent")],
    )


# The async tests share one event loop per module (`loop_scope="module"`): a loop per test,
# with the new thread its executor starts for the command's checks, cost about 1 ms of CPU per
# case. Each test still runs its own command in a new executor and waits for it to end.
MODES = [
    pytest.param(
        True, id="bwrap", marks=pytest.mark.skipif(not sandbox_available(), reason="no bwrap")
    ),
    pytest.param(False, id="no-bwrap"),
]


def _leaked(root: Path, output: str) -> list[str]:
    """Every secret the output shows: as text, reversed, hex, base64 or spread out (od -c)."""
    flat = "".join(output.split())
    hexed = flat.lower().replace(":", "")
    found = [m for m in MARKERS if m in output or m in flat or m[::-1] in output]
    contents = [*SECRET_FILES.values(), *HOME_FILES.values()]
    for text in contents:
        raw = text.encode()
        if raw[:12].hex() in hexed or base64.b64encode(raw)[:16].decode() in flat:
            found.append(text.strip())
    return found


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.parametrize(
    "command",
    [*HARD_LINKS, *XARGS_WALKS, *HELD, *RUNS_OR_WRITES, *GIT_ROUTES, *SPELLINGS, *LONG_LINES],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_no_secret_under_any_name(root: Path, sandbox: bool, command: str) -> None:
    ws = root / "ws"
    (ws / "PWNED").unlink(missing_ok=True)
    output = await call_tool(*restricted_bash(command), _executor(root, sandbox))
    assert _leaked(root, output) == [], output
    assert not (ws / "PWNED").exists(), output


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.parametrize(
    "command",
    ["cat notes.txt", "head src/hosts.txt", "xxd keycopy.txt", "diff README.md src/cred.bak"],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_a_hard_link_named_is_refused_by_name(
    root: Path, sandbox: bool, command: str
) -> None:
    output = await call_tool(*restricted_bash(command), _executor(root, sandbox))
    assert "is another name (a hard link) of a secrets file" in output, output


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.asyncio(loop_scope="module")
async def test_xargs_skips_a_hard_link_it_is_handed(root: Path, sandbox: bool) -> None:
    output = await call_tool(
        *restricted_bash("echo notes.txt README.md | xargs cat"), _executor(root, sandbox)
    )
    assert "rho: skipped notes.txt: a secret file is never read" in output, output
    assert "# readme" in output, output


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.parametrize(("command", "expected"), LEGIT, ids=[c for c, _ in LEGIT])
@pytest.mark.asyncio(loop_scope="module")
async def test_legit_work_still_runs(
    root: Path, sandbox: bool, command: str, expected: str
) -> None:
    output = await call_tool(*restricted_bash(command), _executor(root, sandbox))
    assert "[exit code 0" in output, output
    assert expected in output, output
    assert _leaked(root, output) == [], output


FILE_TOOL_ATTACKS: list[tuple[str, dict[str, Any]]] = [
    *[
        ("read", {"path": p})
        for p in (
            "notes.txt",
            "./notes.txt",
            "src/../notes.txt",
            "keycopy.txt",
            "src/hosts.txt",
            "src/cred.bak",
            "Config.ENV",
            "link.txt",
            "keys/id_rsa",
            "../ws/.env",
            ".//.env",
            "/proc/self/cwd/.env",
            "/proc/self/environ",
            "/dev/stdin",
        )
    ],
    ("grep", {"pattern": "SECRET", "path": "."}),
    ("grep", {"pattern": "SECRET", "path": "src"}),
    ("grep", {"pattern": "SECRET", "path": "notes.txt"}),
    ("grep", {"pattern": "SECRET", "path": "keycopy.txt"}),
    ("grep", {"pattern": "SECRET", "path": ".", "glob": "*.txt"}),
    ("grep", {"pattern": "SECRET", "path": ".", "glob": "**/*"}),
    ("read_excel", {"path": "notes.txt"}),
    ("read_excel", {"path": "sheet.csv"}),
    ("read_excel", {"path": "sheet2.csv"}),
    ("read_excel", {"path": "hosts.csv"}),
    ("read_excel", {"path": "./sub/../sheet2.csv"}),
]


# jq's module system reads files the harness never sees as words: ``import "NAME" as $x;``
# loads NAME.json from the program's directory (the working directory) or from any
# ``{search: ...}`` directory. jq's program is read as jq reads it (``shell/jq.py``), and the
# directive is refused wherever it is code; with bubblewrap, credentials.json is masked too.
JQ_IMPORTS = [
    "jq -n 'import \"credentials\" as $c; $c'",
    "jq -n 'import \"./credentials\" as $c; $c'",
    "jq -n 'import \"../ws/credentials\" as $c; $c'",
    'jq -n \'import "credentials" as $c {search: "."}; $c\'',
    'jq -n \'import "credentials" as $c {search: "{ws}"}; $c\'',
    'jq -n \'import "credentials" as $c {search: "../ws"}; $c[0].token\'',
]


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.parametrize("template", JQ_IMPORTS)
@pytest.mark.asyncio(loop_scope="module")
async def test_jq_imports_read_no_secret(root: Path, sandbox: bool, template: str) -> None:
    command = template.replace("{ws}", str(root / "ws"))
    output = await call_tool(*restricted_bash(command), _executor(root, sandbox))
    assert _leaked(root, output) == [], output
    assert "jq: " in output, output  # refused by name, before jq runs
    assert "import" in output, output


def _file_tool(name: str) -> ToolHandler:
    handlers: dict[str, ToolHandler] = {
        "read": ReadHandler(),
        "grep": GrepHandler(),
        "read_excel": ReadExcelHandler(OpenpyxlReader()),
    }
    return handlers[name]


@pytest.mark.parametrize(("tool", "arguments"), FILE_TOOL_ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_file_tools_never_read_a_secret_under_another_name(
    root: Path, tool: str, arguments: dict[str, Any]
) -> None:
    output = await call_tool(_file_tool(tool), arguments, _executor(root, False))
    assert _leaked(root, output) == [], output


@pytest.mark.asyncio(loop_scope="module")
async def test_the_read_tool_refuses_a_hard_link_and_reads_an_ordinary_twin(root: Path) -> None:
    executor = _executor(root, False)
    refused = await call_tool(ReadHandler(), {"path": "notes.txt"}, executor)
    assert "'notes.txt' is another name (a hard link) of a secrets file" in refused
    assert "twin" in await call_tool(ReadHandler(), {"path": "twin-b.txt"}, executor)


def test_aliases_are_found_by_identity_and_bounded(root: Path) -> None:
    policy = SecretPolicy(homes=(str(root / "home"),))
    ws = str(root / "ws")
    found = find_aliases([ws], policy)
    assert found.complete
    assert set(found.paths) == {
        f"{ws}/notes.txt",
        f"{ws}/keycopy.txt",
        f"{ws}/src/hosts.txt",
        f"{ws}/src/cred.bak",
        f"{ws}/sheet2.csv",
    }
    assert not find_aliases([ws], policy, limit=3).complete
