"""The files a git configuration names as a credential source: secrets by what names them.

``git config credential.helper 'store --file=notes.txt'`` keeps ``https://user:TOKEN@host``
lines in ``notes.txt``, a name no rule of the secrets policy recognises: ``cat notes.txt``
printed the token on every backend (redshell23). A configuration names a file a tool reads
credentials from, or a key, with the values read here (``named_in``), each in any
subsection (``credential.<url>.helper``, ``http.<url>.cookieFile``):

* ``credential.helper``: every word of its command lines that may name a file
  (``credential_helpers``): the ``--file`` of ``store``, the ``--socket`` of ``cache``, a
  shell string's operands (``!f() { cat .tokens/gh; }; f``), a program's arguments;
* ``http.cookieFile``, ``http.sslKey``, ``http.sslCert`` (a PEM that may hold the key too),
  ``http.proxySSLKey``, ``http.proxySSLCert``;
* ``core.sshCommand``'s identity (``-i key``, ``-ikey``, ``-o IdentityFile=key``, and
  ``-o CertificateFile=``: ``ssh_keys``, in ssh's own syntax, ``%h`` a name ssh fills per
  connection) and the ssh configuration it gives (``-F cfg``: ``ssh_configs``, whose
  ``IdentityFile`` is read by ``rho_domain.ssh_named_files``);
* ``user.signingKey`` when it is a path (an SSH signing key; a GPG key id is no path);
* ``credential.plaintextStorePath``: a directory, Git Credential Manager's plaintext store
  (``credential.credentialStore=plaintext``: a file per login below ``NAMESPACE/``, the
  password in clear), every file below it a secret (``directories``).

``include.path`` and ``includeIf.<condition>.path`` name more configuration, read and named
in turn (``includes``), a secret itself: it may hold what ``.git/config`` holds.

The executors find the configurations (a repository's, the users' own) and make every file
named a secret location of their policy (``SecretPolicy.locations``), so every check that
knows a location holds: the argv checks, the file tools, the walkers' exclusions, the
sandbox's masks and the xargs guard. Pure: text in, values out; ``placed`` makes a value a
path as git does (``~/`` is the home, a relative path is below ``base``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from rho_domain.command_words import words_of
from rho_domain.credential_helpers import helper_files, helper_programs
from rho_domain.errors import ExecutorError
from rho_domain.first_use import FirstUse
from rho_domain.git_config_syntax import entries
from rho_domain.paths import components, is_within
from rho_domain.ssh_named_files import ssh_command_files
from rho_domain.value_methods import value_eq, value_hash, value_repr

__all__ = [
    "GCM_NAMESPACE_DEPTH",
    "MAX_CONFIGS",
    "MAX_CONFIG_BYTES",
    "NamedFiles",
    "counted",
    "entry_of",
    "gcm_namespace",
    "named_by",
    "named_in",
    "placed",
    "repository_tops",
    "too_large",
]

MAX_CONFIG_BYTES = 1 << 20  # a configuration past this fails closed (git's are a few KiB)
# GCM's plaintext store keeps a login at STORE/NAMESPACE/SCHEME/HOST[/PATH...]/ACCOUNT.credential:
# a namespace of up to this many components is looked for (``credential.namespace = a/b``)
GCM_NAMESPACE_DEPTH = 2
MAX_CONFIGS = 64  # configurations read per executor, includes followed (git stops at 10 deep)

# (section, key) -> how the value names files; any subsection between them
_PATH_KEYS = frozenset(
    {
        ("http", "cookiefile"),
        ("http", "sslkey"),
        ("http", "sslcert"),
        ("http", "proxysslkey"),
        ("http", "proxysslcert"),
    }
)
_INCLUDES = frozenset({("include", "path"), ("includeif", "path")})


@attrs.frozen(kw_only=True)
class NamedFiles:
    """What one configuration text names, values as written (``placed`` makes them paths)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    secrets: tuple[str, ...] = ()  # files holding credentials or keys
    includes: tuple[str, ...] = ()  # more configuration, a secret too
    directories: tuple[str, ...] = ()  # directories whose every file holds credentials
    ssh_configs: tuple[str, ...] = ()  # ssh configurations (``-F``), which name keys
    ssh_keys: tuple[str, ...] = ()  # an ssh command line's keys (``ssh_named_files.pattern_of``)
    # the programs an ssh command line runs that may be wrapper scripts (``bin/gssh -v``):
    # their command lines name keys too (the executors read them, ``ssh_wrappers``)
    ssh_programs: tuple[str, ...] = ()
    # the scripts a credential helper may run (``!sh bin/cred.sh``): their lines name files
    # as the helper's own do (``credential_helpers.helper_programs``)
    helper_programs: tuple[str, ...] = ()


def named_in(text: str, *, env: Mapping[str, str] | None = None) -> NamedFiles:
    """The files ``text`` (a git configuration, read as git reads it:
    ``git_config_syntax``) names as credential sources and includes; ``env`` expands the
    variables of the command lines git gives the shell (``--file=$HOME/x``)."""
    return named_by(entries(text), env=env)


def entry_of(name: str, value: str | None) -> tuple[str, str, str | None]:
    """A ``section[.subsection].key`` name and its value as ``named_by`` takes them (the
    form of ``GIT_CONFIG_KEY_<n>`` and ``git -c``)."""
    section, _, rest = name.partition(".")
    return section.lower(), rest.rpartition(".")[2].lower(), value


def named_by(
    found: Iterable[tuple[str, str, str | None]], *, env: Mapping[str, str] | None = None
) -> NamedFiles:
    """The files the ``(section, key, value)`` entries name (a value None is git's true)."""
    secrets: list[str] = []
    includes: list[str] = []
    directories: list[str] = []
    ssh_configs: list[str] = []
    ssh_keys: list[str] = []
    ssh_programs: list[str] = []
    helpers: list[str] = []
    for section, key, given in found:
        value = "true" if given is None else given
        if (section, key) == ("credential", "plaintextstorepath"):
            directories.append(value)
        elif (section, key) in _INCLUDES:
            includes.append(value)
        elif (section, key) in _PATH_KEYS:
            secrets.append(value)
        elif (section, key) == ("credential", "helper"):
            secrets.extend(helper_files(value, env or {}))
            helpers.extend(helper_programs(value, env or {}))
        elif (section, key) == ("core", "sshcommand"):
            for words in _command_lines(value, env or {}):
                identities, keys, configs = ssh_command_files(words)
                data = {*identities, *keys, *configs}  # ssh's (-F big.cfg): no script
                ssh_programs.extend(p for p in _programs(words) if p not in data)
                secrets.extend(identities)
                ssh_keys.extend(keys)
                ssh_configs.extend(configs)
        elif (section, key) == ("user", "signingkey") and not value.startswith(_LITERAL_KEYS):
            secrets.append(value)  # gpg.format=ssh takes any path, ./ or not
    return NamedFiles(
        secrets=tuple(dict.fromkeys(v for v in secrets if v)),
        includes=tuple(dict.fromkeys(v for v in includes if v)),
        directories=tuple(dict.fromkeys(v for v in directories if v)),
        ssh_configs=tuple(dict.fromkeys(v for v in ssh_configs if v)),
        ssh_keys=tuple(dict.fromkeys(v for v in ssh_keys if v)),
        ssh_programs=tuple(dict.fromkeys(v for v in ssh_programs if v)),
        helper_programs=tuple(dict.fromkeys(helpers)),
    )


def _command_lines(value: str, env: Mapping[str, str]) -> list[list[str]]:
    """The words of the command line ``value`` and of each command string a word of it
    holds, a shell's (``sh -c 'exec ssh -i deploy/key "$@"'``) or an ssh option's (``-o
    'ProxyCommand=bin/jump %h %p'``, its keyword taken off): ssh and the shell run those
    too, so their keys and wrapper scripts count (probeshell25b: they were one word)."""
    words = words_of(value, env)
    inner = [_OPTION_KEYWORD().sub("", w, count=1) for w in words if _BLANK().search(w)]
    return [words, *(words_of(command, env) for command in inner)]


def _programs(words: list[str]) -> list[str]:
    """The words of an ssh command line that may name a wrapper script: the program git
    runs (``bin/gssh -v``) and every later path that is no option (``sh $HOME/wrap``, ``env
    X=1 ./wrap``). One named ``ssh`` too (``bin/ssh -v``, or ``ssh`` found in a relative
    ``PATH`` entry, can be a script: probeshell25b); the real one, a program, reads as none,
    as does a word that names no script."""
    paths = [w for w in words[1:] if "/" in w and not w.startswith("-")]
    return words[:1] + paths


def gcm_namespace(store: str, scheme: str, held: Iterable[tuple[str, ...]]) -> str:
    """The directory to hide for the logins below ``scheme``, a ``http*`` directory of GCM's
    plaintext store ``store`` holding some (``HOST/.../ACCOUNT.credential``): its namespace,
    the directory above it, or ``scheme`` itself when that is the store (an empty
    namespace) or holds a component of ``held`` (the workspace: never hidden whole)."""
    namespace = posixpath.dirname(scheme.rstrip("/"))
    if namespace == store.rstrip("/") or any(is_within(p, components(namespace)) for p in held):
        return scheme
    return namespace


def too_large(path: str) -> ExecutorError:
    """The refusal of a git or ssh configuration past ``MAX_CONFIG_BYTES``: git and ssh read
    it whole, so what it names past the bound is unknown here (fails closed, as the count of
    configurations does)."""
    return ExecutorError(
        f"the configuration {path} is larger than {MAX_CONFIG_BYTES} bytes: rho-agent "
        "cannot tell which credential files or keys it names, so it refuses to run; "
        "shorten it (move its hosts or sections into smaller included files)"
    )


_Config = TypeVar("_Config", bound=tuple[Any, ...])


def counted(
    configs: Iterable[_Config],
    seen: Sequence[dict[str, None]],
    too_many: Callable[[str, str], str],
) -> list[_Config]:
    """The configurations of ``configs`` to read now, each a tuple whose first two fields
    are its group's index in ``seen`` and its path: those its group read already left out,
    the rest counted in it. ``ExecutorError(too_many(first, path))`` when a group would read
    more than ``MAX_CONFIGS`` (``first``: the configuration the group started from, ``path``:
    the first left unread): what it leaves unread may name a credential file (fails closed)."""
    batch: list[_Config] = []
    for config in configs:
        at, path = config[0], config[1]
        if path in seen[at]:
            continue
        if len(seen[at]) >= MAX_CONFIGS:
            raise ExecutorError(too_many(next(iter(seen[at])), path))
        seen[at][path] = None
        batch.append(config)
    return batch


def placed(value: str, *, base: str, home: str | None) -> str | None:
    """``value`` as the path git makes of it: ``~/x`` below ``home`` (None when there is no
    home, or ``~user``, which names another's), an absolute path as it is, else below
    ``base``."""
    if value.startswith("~"):
        if home is None or not (value == "~" or value.startswith("~/")):
            return None
        return home.rstrip("/") + value[1:]
    if value.startswith("/"):
        return value
    return f"{base.rstrip('/')}/{value}"


def repository_tops(paths: Iterable[str]) -> tuple[str, ...]:
    """The work trees of the repositories whose ``.git`` (``X/.git``, ``X/.git/config``) or
    submodule configuration (``X/.git/modules/P/config``: the submodule checked out at
    ``X/P``, as ``git submodule add`` names it) is among ``paths``, in order."""
    tops: list[str] = []
    for path in paths:
        head, dot_git, rest = path.rpartition("/.git/modules/")
        if dot_git and rest.endswith("/config"):
            tops.append(f"{head}/{rest.removesuffix('/config')}")
        elif path.endswith(("/.git", "/.git/config")):
            tops.append(path.rpartition("/.git")[0])
    return tuple(dict.fromkeys(tops))


# a signing key given as the key itself (``key::ssh-ed25519 AAAA...``, the older bare
# ``ssh-ed25519 AAAA...``), not as a file; an OpenPGP key id or e-mail is placed as a path
# too, a file that most likely does not exist
_LITERAL_KEYS = ("key::", "ssh-", "ecdsa-", "sk-")
_BLANK = FirstUse(r"[ \t\r\n]")
_OPTION_KEYWORD = FirstUse(r"^\s*[A-Za-z]+\s*=\s*")  # ``ProxyCommand=`` before a command
