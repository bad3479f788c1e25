"""The files a git configuration names as a credential source: secrets by what names them.

``git config credential.helper 'store --file=notes.txt'`` keeps ``https://user:TOKEN@host``
lines in ``notes.txt``, a name no rule of the secrets policy recognises: ``cat notes.txt``
printed the token on every backend (redshell23). A configuration names a file a tool reads
credentials from, or a key, with the values read here (``named_in``), each in any
subsection (``credential.<url>.helper``, ``http.<url>.cookieFile``):

* ``credential.helper``: the ``--file`` of ``store`` (and of any helper command line that
  passes one: ``!git credential-store --file x``), the ``--socket`` of ``cache``;
* ``http.cookieFile``, ``http.sslKey``, ``http.sslCert`` (a PEM that may hold the key too),
  ``http.proxySSLKey``, ``http.proxySSLCert``;
* ``core.sshCommand``'s identity (``-i key``, ``-ikey``, ``-o IdentityFile=key``);
* ``user.signingKey`` when it is a path (an SSH signing key; a GPG key id is no path).

``include.path`` and ``includeIf.<condition>.path`` name more configuration, read and named
in turn (``includes``), a secret itself: it may hold what ``.git/config`` holds.

The executors find the configurations (a repository's, the users' own) and make every file
named a secret location of their policy (``SecretPolicy.locations``), so every check that
knows a location holds: the argv checks, the file tools, the walkers' exclusions, the
sandbox's masks and the xargs guard. Pure: text in, values out; ``placed`` makes a value a
path as git does (``~/`` is the home, a relative path is below ``base``).
"""

from __future__ import annotations

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

__all__ = ["MAX_CONFIGS", "MAX_CONFIG_BYTES", "NamedFiles", "named_in", "placed"]

MAX_CONFIG_BYTES = 1 << 20  # a configuration past this is not read (git's are a few KiB)
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


def named_in(text: str) -> NamedFiles:
    """The files ``text`` (a git configuration) names as credential sources and includes."""
    secrets: list[str] = []
    includes: list[str] = []
    for section, key, value in _entries(text):
        if (section, key) in _INCLUDES:
            includes.append(value)
        elif (section, key) in _PATH_KEYS:
            secrets.append(value)
        elif (section, key) == ("credential", "helper"):
            secrets.extend(_option_values(_words(value.lstrip("!")), ("--file", "--socket")))
        elif (section, key) == ("core", "sshcommand"):
            secrets.extend(_ssh_identities(_words(value)))
        elif (section, key) == ("user", "signingkey") and _is_path(value):
            secrets.append(value)
    return NamedFiles(
        secrets=tuple(dict.fromkeys(v for v in secrets if v)),
        includes=tuple(dict.fromkeys(v for v in includes if v)),
    )


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


def _is_path(value: str) -> bool:
    return value.startswith(("/", "~", "./", "../"))


_BLANKS = {ord(c): " " for c in "\t\r\n"}  # shlex's whitespace; str.split's others are not


def _words(value: str) -> list[str]:
    """A command line's words as the shell splits them (none when it cannot: a quote left
    open is no command git runs either)."""
    if not any(mark in value for mark in "'\"\\"):
        # no quote and no escape: the shell's words are its blanks' pieces (what
        # shlex.split gives), without importing shlex on every executor's start (a
        # machine's /etc/gitconfig often names a helper: the one-shot pays it otherwise)
        return [word for word in value.translate(_BLANKS).split(" ") if word]
    import shlex

    try:
        return shlex.split(value, comments=False)
    except ValueError:
        return value.split()


def _option_values(words: list[str], options: tuple[str, ...]) -> list[str]:
    """The values of ``options`` in ``words``: ``--file=x`` and ``--file x``."""
    found: list[str] = []
    for at, word in enumerate(words):
        for option in options:
            if word.startswith(option + "="):
                found.append(word[len(option) + 1 :])
            elif word == option and at + 1 < len(words):
                found.append(words[at + 1])
    return found


def _ssh_identities(words: list[str]) -> list[str]:
    """The identity files of an ssh command line: ``-i key``, ``-ikey``, ``-o
    IdentityFile=key`` (``-oIdentityFile key`` too; ssh takes the keyword in any case)."""
    found: list[str] = []
    for at, word in enumerate(words):
        following = words[at + 1] if at + 1 < len(words) else ""
        if word == "-i":
            found.append(following)
        elif word.startswith("-i"):
            found.append(word[2:])
        elif word == "-o" or word.startswith("-o"):
            option = following if word == "-o" else word[2:]
            name, _, rest = option.replace("=", " ", 1).partition(" ")
            if name.lower() == "identityfile":
                found.append(rest.strip())
    return found


def _entries(text: str) -> list[tuple[str, str, str]]:
    r"""Every ``(section, key, value)`` of a git configuration text, the section and key
    lowercase, the subsection dropped, the value unquoted (git's syntax: ``[s "sub"]`` and
    ``[s.sub]``, ``#`` and ``;`` comments, ``"`` quotes, ``\\`` escapes and continued
    lines). A line git would refuse is skipped: only what git could read matters."""
    entries: list[tuple[str, str, str]] = []
    section = ""
    lines = iter(text.splitlines())
    for raw in lines:
        line = raw.strip()
        if line.startswith("["):
            head, _, rest = line[1:].partition("]")
            section = head.strip().split(" ", 1)[0].split(".", 1)[0].lower()
            line = rest.strip()  # a key may follow on the same line: [core] x = y
        if not line or line[0] in "#;":
            continue
        key, equals, value = line.partition("=")
        while equals and _continued(value):
            value = value.rstrip()[:-1] + next(lines, "")
        entries.append((section, key.strip().lower(), _unquoted(value) if equals else "true"))
    return entries


def _continued(value: str) -> bool:
    """Whether ``value`` ends in an odd number of backslashes (git's line continuation)."""
    stripped = value.rstrip()
    return (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 1


_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


def _unquoted(value: str) -> str:
    """A value as git reads it: quotes removed, escapes undone, a comment outside quotes
    dropped, blanks at either end outside quotes dropped."""
    out: list[str] = []
    quoted = False
    chars = iter(value.strip())
    for char in chars:
        if char == '"':
            quoted = not quoted
        elif char == "\\":
            out.append(_ESCAPES.get(next(chars, ""), ""))
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
    return "".join(out).strip()
