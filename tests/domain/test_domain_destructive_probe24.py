"""redapprove24: commands that changed things unasked after "always" (each row ran without a
question before this round). The check is a pure function: every row in one process."""

from __future__ import annotations

from destructive_support import asking as _asking
from destructive_support import missed as _missed

UNSEEN = "writes an archive's members, which the approval check cannot see, into the command's"


def test_an_archive_extracted_unread_into_the_command_directory_asks() -> None:
    """Its members may be .git/hooks/pre-commit or .envrc (git commit, direnv run them)."""
    cases = {
        "tar -xf a.tar": f"tar {UNSEEN}",
        "tar xzf a.tgz": f"tar {UNSEEN}",
        "tar -xf a.tar -C .": f"tar {UNSEEN}",
        "bsdtar -xf a.tar": f"bsdtar {UNSEEN}",
        "unzip -o a.zip": f"unzip {UNSEEN}",
        # cpio -i without --no-absolute-filenames gives redapprove26's reason: its absolute
        # and ../ names land outside any directory
        "cpio -idmv --no-absolute-filenames < a.cpio": f"cpio {UNSEEN}",
        "cpio --extract --no-absolute-filenames < a.cpio": f"cpio {UNSEEN}",
        "cd /tmp; tar -xf a.tar": f"tar {UNSEEN}",  # the cd may fail
        "sudo tar -xf a.tar": f"tar {UNSEEN}",
    }
    assert _missed(cases) == []
    listed = (
        "tar -tf a.tar",
        "unzip -l a.zip",
        "unzip -p a.zip x.txt",
        "cpio -t < a.cpio",
        "bsdtar -xf a.tar -C build",
        "bsdtar -xf a.zip -C out",
        "cd build && bsdtar -xf a.tar",
        "tar -czf out.tgz src",
    )
    assert _asking(listed) == []


def test_a_service_scaled_to_zero_asks() -> None:
    """Scaling to zero stops every instance, as ``docker-compose down`` does."""
    zero = "scales a service to zero (stops every instance)"
    cases = {
        "kubectl scale --replicas=0 deploy/x": f"kubectl --replicas=0: {zero}",
        "kubectl scale deploy/x --replicas 0": f"kubectl --replicas 0: {zero}",
        "oc scale dc/x --replicas=0": zero,
        "docker service scale web=0": f"docker scale web=0: {zero}",
        "docker compose up -d --scale web=0": zero,
        "aws ecs update-service --cluster c --service s --desired-count 0": zero,
        "heroku ps:scale web=0": zero,
        "flyctl scale count 0": zero,
        "gcloud compute instance-groups managed resize g --size=0": zero,
        "az vmss scale -g r -n v --new-capacity 0": zero,
    }
    assert _missed(cases) == []
    assert _asking(("kubectl scale deploy/x --replicas=3", "docker service scale web=2")) == []


def test_a_path_in_git_reached_by_a_cd_asks() -> None:
    """The .git-argument rule read each word as given, not in the directory a cd entered."""
    inside = "may write inside .git (hooks and config run later)"
    cases = {
        "cd .git && touch hooks/x": f"touch hooks/x: {inside}",
        "cd .git/hooks && cp /tmp/x pre-commit": f"cp pre-commit: {inside}",
        "cd .git && ln -s ../evil hooks/pre-commit": f"ln hooks/pre-commit: {inside}",
        "pushd sub/.git; chmod +x hooks/pre-commit": inside,
        "cd .git; cd hooks; install -m755 /tmp/x pre-commit": inside,
    }
    assert _missed(cases) == []
    assert _asking(("cd .git && ls hooks", "cd src && touch a.py", "cd .git && git log")) == []


def test_a_command_run_in_another_directory_is_judged_there() -> None:
    """git -C DIR, nsenter -w DIR and chroot DIR move what they run: their writes ran unasked
    (the destination was read in the call's directory, or git -C's DIR taken for the URL)."""
    cases = {
        "git -C /root clone https://e.com/x .oh-my-zsh": "git writes /root/.oh-my-zsh",
        "git -C /home/u clone https://e.com/.vim.git": "git writes /home/u/.vim",
        "cd /root && git clone https://e.com/.oh-my-zsh.git": "git writes /root/.oh-my-zsh",
        "git -C /etc init": "git writes /etc:",
        "nsenter -t 1 -m --wd=/etc/cron.d cp x job": "cp writes /etc/cron.d/job",
        "nsenter -t 1 -m -w/root sh -c 'echo x > .bashrc'": "> /root/.bashrc",
        "nsenter -t 1 -m -w cp x .bashrc": "nsenter -w runs in the target process's directory",
        "chroot /home/u sh -c 'echo x > /.zshenv'": "> /home/u/.zshenv",
        "chroot /home/u cp x /.profile": "cp writes /home/u/.profile",
        "chroot /etc sh -c 'echo x > a'": "> /etc/a",
    }
    assert _missed(cases) == []
    ordinary = (
        "git clone https://e.com/x",
        "git -C sub init",
        "git clone https://e.com/x src/x",
        "chroot /srv/jail cp x /etc/profile.d/a.sh",  # the jail's /etc
        "nsenter -t 1 -m -wbuild cp x y",
    )
    assert _asking(ordinary) == []


def test_a_variable_that_makes_a_program_run_code_asks() -> None:
    """Set by env, export or make, each of these makes a later program run a command or load
    code (HOME: git's ~/.gitconfig fsmonitor or pager; KUBECONFIG: an exec plugin; CC: make's
    compiler); they ran unasked."""
    sets = "sets what a later command runs"
    cases = {
        "env HOME=. git status": f"HOME=...: {sets}",
        "env XDG_CONFIG_HOME=. git log": f"XDG_CONFIG_HOME=...: {sets}",
        "export KUBECONFIG=./kc; kubectl get pods": f"KUBECONFIG=...: {sets}",
        "env AWS_CONFIG_FILE=./c aws s3 ls": f"AWS_CONFIG_FILE=...: {sets}",
        "export CC=./x; make": f"CC=...: {sets}",
        "make CXX=./x": f"CXX=...: {sets}",
        "env PYTEST_ADDOPTS='-p evil' pytest": f"PYTEST_ADDOPTS=...: {sets}",
        "declare -x LUA_INIT=@x.lua": f"LUA_INIT=...: {sets}",
        "env LUA_INIT_5_4=@x.lua lua": f"LUA_INIT_5_4=...: {sets}",
        "env GOFLAGS=-toolexec=./x go build": f"GOFLAGS=...: {sets}",
        "env DOTNET_STARTUP_HOOKS=./x.dll dotnet run": f"DOTNET_STARTUP_HOOKS=...: {sets}",
        "env CMAKE_C_COMPILER_LAUNCHER=./x cmake --build b": sets,
        "env PS4='$(x)' bash -x a.sh": f"PS4=...: {sets}",
        "sudo PYTHONWARNINGS=ignore::evil.W python3 a.py": f"PYTHONWARNINGS=...: {sets}",
    }
    assert _missed(cases) == []
    printed = ("grep -rn CC= Makefile", "echo HOME=x", "printf 'PATH=%s' x", "cat env.txt")
    assert _asking(printed) == []


def test_pip_install_into_a_directory_that_runs_later_asks_naming_it() -> None:
    """pip install --target=/etc ran unasked, and --target /usr/lib/python3/dist-packages
    asked with a reason about the install program ("install writes x/dist-packages")."""
    cases = {
        "pip install --target /usr/lib/python3/dist-packages x": "pip writes /usr/lib/python3",
        "pip install --target=/etc x": "pip writes /etc:",
        "pip install --prefix /usr x": "pip writes /usr:",
        "pip install --root / x": "pip writes /usr/local:",
        "pip install -t /root/.local/lib x": "pip writes /root/.local/lib:",
        "sudo pip install --prefix=/usr/local x": "pip writes /usr/local:",
        "uv pip install --target /usr/lib/python3 x": "uv writes /usr/lib/python3:",
        "sudo install x /etc/profile.d/a.sh": "install writes /etc/profile.d/a.sh",
    }
    assert _missed(cases) == []
    ordinary = ("pip install -t vendor x", "pip install -r requirements.txt", "pip install .")
    assert _asking(ordinary) == []


def test_a_writer_under_another_name_is_the_writer() -> None:
    """Homebrew's GNU tools (grm, gsed, gshred, gfind) and uutils' (uu-rm) ran unasked."""
    cases = {
        "grm -rf build": "rm -r: removes recursively",
        "uu-rm -rf build": "rm -r: removes recursively",
        "gtimeout 5 grm -rf x": "rm -r",
        "gshred x": "shred destroys data",
        "gsed -i s/a/b/ /etc/hosts": "sed writes /etc/hosts",
        "gfind . -delete": "find -delete",
        "gtar -xf a.tar": f"tar {UNSEEN}",
    }
    assert _missed(cases) == []
    assert _asking(("git status", "gzip -k x.log", "gcc -o x x.c", "grep -rn x .")) == []


def test_a_markdown_file_written_then_run_by_its_runner_asks() -> None:
    """.md counts as plain output, but runme, xc and mdsh run README.md's code blocks and mask
    maskfile.md's: written then run, in one line, they ran unasked."""
    cases = {
        "cat x > README.md; runme run build": "runme runs after this command line writes README",
        "echo x > maskfile.md && mask build": "mask runs after this command line writes maskfile",
        "echo x > README.md && xc build": "xc runs after",
        "echo x > README.md && mdsh": "mdsh runs after",
    }
    assert _missed(cases) == []
    assert _asking(("echo x > notes.md && make", "echo x > notes.md && git add notes.md")) == []


def test_a_tool_named_by_a_bare_name_or_a_home_for_a_reader_stays_ordinary() -> None:
    """CC=clang finds clang on the PATH as any command does; HOME for ls reads nothing."""
    assert _asking(("env CC=clang make", "env -i HOME=/tmp ls", "make CXX=g++-12")) == []
