"""The secrets policy's data: the patterns ``secrets.SecretPolicy.refusal`` and
``secret_guard.guard_script`` interpret (see ``secrets`` for the rules and their order), and the
lists the sandbox hides and recursive readers skip. Patterns are lowercase globs on an
absolute path, a name rule as ``*/name``; the one shape no such glob says without compiling an
expression (a store's loose objects) is a predicate, ``in_loose_fanout``.
"""

from __future__ import annotations

from rho_domain.glob_set import GlobSet
from rho_domain.names import components_of, folded
from rho_domain.service_secrets import SERVICE_SECRET_GLOBS, SERVICE_SECRETS
from rho_domain.tool_secrets import TOOL_SECRET_LOCATIONS, TOOL_SECRET_NAMES


def _tree(*patterns: str) -> tuple[str, ...]:
    """A location and everything below it."""
    return tuple(p for pattern in patterns for p in (pattern, pattern + "/*"))


ALLOWED: tuple[str, ...] = (
    "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
    "/proc/cpuinfo", "/proc/meminfo", "/proc/loadavg", "/proc/uptime", "/proc/version",
    "/proc/filesystems", "/proc/partitions", "/proc/swaps", "/proc/vmstat", "/proc/diskstats",
)  # fmt: skip
# A repository's own config: remote URLs with user:token@, CI checkouts' extraheader. A
# secret to every tool; the sandbox shows it (git cannot start without reading it), so the
# sandbox alone does not keep it (``rho_adapters/local/sandbox.scan``).
GIT_CONFIGS: tuple[str, ...] = (
    "*/.git/config",
    # a bare repository's, named as git clone --bare and --mirror name it (x.git): a mirror
    # keeps the URL it was cloned from, user:token@ included (a bare repository by any other
    # name is the known edge of docs/security.md: no name says where its config is)
    "*.git/config",
    "*/.git/config.worktree",
    "*/.git/modules/*/config",
    # a linked worktree's own, in the git directory of any repository, bare ones by any name
    "*/worktrees/*/config.worktree",
)
# A repository's index: every tracked path, those inside a committed secret directory too
# (``strings .git/index`` printed ``.config/gh/hosts.yml``, which ``git ls-files`` leaves
# out). Its names are secrets to every tool; git reads it for status and diffs, so the
# sandbox shows it as it shows the config.
GIT_INDEXES: tuple[str, ...] = (
    "*/.git/index",
    "*/.git/sharedindex.*",
    "*/.git/modules/*/index",
    # a linked worktree's index, in any repository's git directory: a bare one's by any name
    # (git clone --bare url proj.git, git -C proj.git worktree add ../main: strings
    # proj.git/worktrees/main/index printed .config/gh's names, redshell22)
    "*/worktrees/*/index",
)
# What git leaves in its directory from a command that showed a diff or a conflict for the
# user to edit: a commit's message file keeps the comment listing every staged name and, after
# ``git commit -v``, the whole diff (``cat .git/COMMIT_EDITMSG`` printed a committed ``.env``),
# ``git add -e``/``-p``'s patch, an interrupted rebase's or am's patches, rerere's images of
# a conflicted file, ``git fsck --lost-found``'s dangling blobs (a ``.env`` staged, then
# staged again, kept as it was). Copies of a secret's content or of a secret directory's
# names, under names no rule recognises; git's read-only commands never read them. (am's
# whole ``rebase-apply`` is named, not its ``patch`` and ``0001``...: a character class would
# make the policy compile an expression at its first judgement, tests/domain's compile test.)
GIT_SCRATCH: tuple[str, ...] = tuple(
    f"*/{where}{name}".lower()
    for where in (".git/", "worktrees/*/", ".git/modules/*/")
    for name in (
        "COMMIT_EDITMSG", "MERGE_MSG", "SQUASH_MSG", "TAG_EDITMSG", "NOTES_EDITMSG",
        "ADD_EDIT.patch", "addp-hunk-edit.diff", "rebase-merge/patch", "rebase-apply",
        "rr-cache", "lost-found",
    )
)  # fmt: skip
# A repository's object store: every committed file's content, zlib-deflated (a committed
# ``.env``'s lines, a secret directory's files and, in its tree objects, their names). Any tool
# that reads bytes reads them: a gzip header put before a loose object (``printf
# '\x1f\x8b\x08\0\0\0\0\0' | cat - .git/objects/2a/16a5... | zcat``) printed
# the ``.env``; git LFS keeps its files' content as they are. git reads them itself, so the
# sandbox shows them as it shows the config; the listing walks may list their names (ids).
GIT_OBJECTS: tuple[str, ...] = (
    "*/.git/objects",
    "*.git/objects",  # a bare repository's, named as git clone --bare names it (x.git)
    "*/.git/modules/*/objects",
    "*/.git/lfs/objects",
    # any store's packs, whatever holds it (a bare repository not named x.git: git init
    # --bare store). Its loose objects are judged by their shape (``LOOSE_FANOUT``): a
    # pattern with [0-9a-f] would compile an expression at every process's first judgement
    "*/objects/pack",
)
# Any store's loose objects, whatever holds it (a bare repository not named x.git, ``git
# init --separate-git-dir gd``, ``GIT_DIR=x``, ``GIT_OBJECT_DIRECTORY``): git fans them out
# into directories named by two hex digits of their id, below its ``objects``. A directory
# named ``objects/<two hex digits>`` is a secret location (``in_loose_fanout`` below judges
# the shape by string methods; the xargs guard and the Daytona scan write it as a class).
LOOSE_FANOUT = "objects"

_HEX = frozenset("0123456789abcdef")


def in_loose_fanout(path: str) -> bool:
    """Whether ``path`` is, or is inside, a directory named by two hex digits right below a
    directory named ``objects`` (``LOOSE_FANOUT``): where git keeps a store's loose objects,
    whatever the store's own name (a bare ``store``, a ``--separate-git-dir``). String
    methods, no expression: judged for every path a tool touches."""
    parts = components_of(path)
    return any(
        len(part) == 2 and _HEX.issuperset(part.lower()) and folded(parts[at - 1]) == LOOSE_FANOUT
        for at, part in enumerate(parts)
        if at
    )


_GIT_READS = GlobSet((*GIT_CONFIGS, *GIT_INDEXES, *GIT_OBJECTS, *(f"{p}/*" for p in GIT_OBJECTS)))


def git_reads(path: str) -> bool:
    """Whether git reads ``path`` itself (a config, an index, a store or inside one, a store's
    loose objects): what the sandbox shows although the policy refuses it to other tools."""
    return _GIT_READS.matches(path.casefold()) or in_loose_fanout(path)


# The secrets in git's directory whose names a listing walk may show (not inside a directory).
GIT_FILES: tuple[str, ...] = (*GIT_CONFIGS, *GIT_INDEXES, *GIT_SCRATCH)
LOCATIONS: tuple[str, ...] = _tree(
    "*/.ssh", "*/.aws", "*/.gnupg", "*/.kube", "*/.azure", "*/.password-store",
    "*/.config/gcloud", "*/.config/gh", "*/.config/rho-agent", "*/.docker/config.json",
    "*/.cargo/credentials", "*/.cargo/credentials.toml", "*/.local/share/keyrings",
    "*/.terraform.d/credentials.tfrc.json",
    *GIT_FILES, *GIT_OBJECTS,
    "/proc", "/dev", "/sys/firmware",
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
    "/etc/sudoers.d", "/etc/security/opasswd", "/etc/ssl/private", "/etc/ssh/ssh_host_*_key",
    "/run/secrets", "/var/run/secrets",
    *(p.casefold() for p in SERVICE_SECRETS), *SERVICE_SECRET_GLOBS, *TOOL_SECRET_LOCATIONS,
)  # fmt: skip
TEMPLATES: tuple[str, ...] = (
    "*.example", "*.sample", "*.template", "*.dist", "*.defaults", "*/id_*.pub",
)  # fmt: skip
NAMES: tuple[str, ...] = (
    "*/.env", "*/.env.*", "*.env", "*/.envrc", "*/.netrc", "*/_netrc", "*/.pgpass",
    "*/.git-credentials", "*/.npmrc", "*/.pypirc", "*/.my.cnf", "*/.vault-token", "*/.boto",
    "*/.s3cfg", "*/.htpasswd", "*/credentials", "*/credentials.json", "*/.bash_history",
    "*/.zsh_history", "*/.python_history", "*/.psql_history", "*/.mysql_history",
    "*/.sqlite_history", "*/.node_repl_history", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks",
    "*.keystore", "*.keytab", "*.kdbx", "*.gpg", "*.asc",
    # wherever they are (varshell16b): Kerberos ticket caches (/tmp/krb5cc_0 is a login),
    # ceph's keyrings, a GitHub/Azure runner's token and key, htpasswd files without the dot,
    # ACME accounts' keys (certbot's private_key.json; Traefik's acme.json holds them all)
    "*/krb5cc", "*/krb5cc_*", "*.keyring", "*/.credentials", "*/.credentials_rsaparams",
    "*/htpasswd", "*.htpasswd", "*/private_key.json", "*/acme.json",
    # the credential files of developer tools, read from a project directory too or kept in a
    # home that may be the workspace (tool_secrets.py)
    *TOOL_SECRET_NAMES,
)  # fmt: skip
# ``id_rsa``, ``id_ed25519``, ``id_github``...: an ``id_`` name without any dot.
SSH_KEY = "*/id_*"
SSH_KEY_NOT = "*/id_*.*"

# Where the sandbox hides secrets outright, below every home directory it knows of.
HOME_SECRETS: tuple[str, ...] = (
    ".ssh", ".aws", ".gnupg", ".kube", ".azure", ".password-store", ".config/gcloud",
    ".config/gh", ".config/rho-agent", ".docker", ".netrc", ".pgpass", ".git-credentials",
    ".npmrc", ".pypirc", ".my.cnf", ".vault-token", ".boto", ".s3cfg", ".bash_history",
    ".zsh_history", ".python_history", ".psql_history", ".mysql_history", ".cargo/credentials",
    ".cargo/credentials.toml", ".local/share/keyrings", ".terraform.d",
)  # fmt: skip
SYSTEM_SECRETS: tuple[str, ...] = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
    "/etc/sudoers.d", "/etc/security/opasswd", "/etc/ssl/private", "/run/secrets",
    "/var/run/secrets", "/sys/firmware", *SERVICE_SECRETS,
)  # fmt: skip

# Basenames recursive readers skip wherever they walk (grep --exclude, rg --iglob !..., diff
# --exclude, git pathspecs): the name rules, well-known SSH key names and secret dot-directories.
# (Globs cannot say "id_* without a dot"; other key names are caught by the real-path checks and
# by the sandbox hiding ~/.ssh.)
EXCLUDED_NAMES: tuple[str, ...] = (
    *(p.removeprefix("*/") for p in NAMES),
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
    ".ssh", ".aws", ".gnupg", ".kube", ".azure", ".password-store", ".docker",
    "ssh_host_*_key",
    ".git",  # its config is a secret, and nothing else there is text worth a walk
)  # fmt: skip
