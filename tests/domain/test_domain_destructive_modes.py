"""A file's mode or owner changed is the file changed: ``chmod``, ``chown`` and ``chgrp``
judge the files they name as the destinations ``touch`` and ``cp`` name (the twenty-seventh
round: ``chmod 777 /etc/passwd``, ``chown u /etc/sudoers`` and ``chmod u+s
/usr/local/bin/x`` ran unasked; only their options were judged, never their operands).

The mode or the owner is their first operand, never a file; with ``--reference=FILE`` every
operand is. What xargs fills in is unknown, as for every writer."""

from __future__ import annotations

from destructive_support import asking, missed

_SYSTEM = "is the system's configuration or installed programs"


def test_a_mode_or_owner_changed_outside_asks_by_the_file() -> None:
    rows = {
        "chmod 777 /etc/passwd": f"chmod writes /etc/passwd: /etc/passwd {_SYSTEM}",
        "chown u /etc/sudoers": f"chown writes /etc/sudoers: /etc/sudoers {_SYSTEM}",
        "chgrp g /etc/shadow": f"chgrp writes /etc/shadow: /etc/shadow {_SYSTEM}",
        "chmod u+s /usr/local/bin/x": "chmod writes /usr/local/bin/x",
        "sudo chmod 4755 /usr/bin/python3": "chmod writes /usr/bin/python3",
        "chmod 644 notes.txt /etc/cron.d/job": "chmod writes /etc/cron.d/job",
        "chmod --reference=a /etc/passwd": "chmod writes /etc/passwd",
        "chown --from=root u -- /etc/x": "chown writes /etc/x",
        "chmod 700 /home/u/.ssh": "chmod writes /home/u/.ssh",
        "chmod 640 /root/.bashrc": "chmod writes /root/.bashrc",
        "chmod 755 .vscode/tasks.json": "chmod writes .vscode/tasks.json",
        "ls | xargs chmod 644": "chmod writes where a generated word says",
        "timeout 5 chown u /etc/x": "chown writes /etc/x",
    }
    assert missed(rows) == []


def test_a_mode_or_owner_changed_in_the_workspace_runs_unasked() -> None:
    rows = [
        "chmod +x build.sh",
        "chmod 644 src/a.py src/b.py",
        "chmod +x ./*.sh",
        "chown -h u:g link",
        "chmod 644 /tmp/x",  # /tmp: nothing runs from it by itself
        "chmod --reference=src/a.py src/b.py",
        "chgrp staff docs",
    ]
    assert asking(rows) == []
