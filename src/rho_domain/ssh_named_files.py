r"""The files an ssh client configuration names as keys: secrets by what names them.

``core.sshCommand = ssh -F deploy/ssh.cfg`` (or ``~/.ssh/config`` itself) with
``IdentityFile deploy/id_deploy`` gives ssh a private key under a name no rule of the
secrets policy recognises: before redshell24 ``cat deploy/id_deploy`` printed it on every
backend. ``~/.ssh`` is a secret location, but the file a configuration there names may be
anywhere. An ssh configuration names, in any ``Host`` or ``Match`` block (every block is
read: which host git reaches is not known here):

* ``IdentityFile`` (a private key; ``none`` names none) and ``CertificateFile`` (its
  certificate, kept beside the key and often the key's own PEM): secrets;
* the ``-i`` and ``-o IdentityFile=`` keys of an ssh run by ``ProxyCommand``,
  ``LocalCommand`` or ``KnownHostsCommand`` (``ProxyCommand ssh -i jump.key -W %h:%p
  jump``): secrets;
* ``Include``: more configuration, read in turn; glob patterns, a relative one below
  ``~/.ssh`` from a user's configuration (``-F`` given or ``~/.ssh/config``) and below
  ``/etc/ssh`` from the system's.

``UserKnownHostsFile`` and ``GlobalKnownHostsFile`` name public data and stay readable. Each
value is given back as a glob pattern the executors expand (``patterns_of``): ``~`` and ``%d``
are the home, ``%%`` a ``%``, ``${HOME}`` the home, and every other token (``%h``, ``%r``,
``%u``...: the host, the remote user, the local one), unknown here, matches any name
(``keys/%h.key`` makes every ``keys/*.key`` a secret); what the value says literally is
escaped, so ``[`` in a key's name is no pattern. Pure: text in, values out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping

import attrs

from rho_domain.first_use import FirstUse
from rho_domain.value_methods import value_eq, value_hash, value_repr

__all__ = [
    "SshNamed",
    "anywhere_name",
    "fill_needs",
    "filled",
    "literal_of",
    "pattern_of",
    "ssh_command_files",
    "ssh_named_in",
]

_SECRET_KEYS = frozenset({"identityfile", "certificatefile"})
_BLANKS = " \t\r\n"
_COMMANDS = frozenset(
    {"proxycommand", "localcommand", "knownhostscommand"}
)  # readconf.c's WHITESPACE, around a keyword
_ESCAPE = FirstUse(r"\[([*?[])\]")  # a wildcard escaped as itself: "[*]"
_SSH_WORD = FirstUse(r"(?:^|[\s/'\"])ssh(?:[\s'\"]|$)")  # ssh run: ``exec /usr/bin/ssh -i k``
_TOKEN = re.compile(r"%(.)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}", re.DOTALL)
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@attrs.frozen(kw_only=True)
class SshNamed:
    """What one ssh configuration names, values as written (``pattern_of`` reads them)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    secrets: tuple[str, ...] = ()  # identity and certificate files
    includes: tuple[str, ...] = ()  # more configuration (glob patterns)
    # the command lines ssh runs (ProxyCommand...): a wrapper script they run gives keys
    commands: tuple[str, ...] = ()


def ssh_named_in(text: str) -> SshNamed:
    """The files ``text`` (an ssh client configuration, read as ssh's ``readconf.c`` reads
    it: lines split at a newline alone and cut at a NUL, a keyword, then one ``=`` or
    blanks, then arguments in double or single quotes or bare, ``#`` starting a comment
    where a word starts) names as keys and includes."""
    secrets: list[str] = []
    includes: list[str] = []
    commands: list[str] = []
    for line in text.split("\n"):
        if line.lstrip(" \t").startswith("#") or not line.strip():
            continue  # most of a system's configuration: parsed no further
        split = _keyword_of(line.partition("\0")[0].rstrip(_BLANKS + "\f"))
        if split is None:
            continue
        keyword, rest = split
        arguments = _arguments(rest)
        if keyword in _SECRET_KEYS and arguments and arguments[0].lower() != "none":
            secrets.append(arguments[0])
        elif keyword == "include":
            includes.extend(arguments)
        elif keyword in _COMMANDS:  # a shell command line, often ssh's own: its -i keys
            secrets += _command_keys(rest)
            commands.append(rest)
    return SshNamed(
        secrets=tuple(dict.fromkeys(secrets)),
        includes=tuple(dict.fromkeys(includes)),
        commands=tuple(dict.fromkeys(commands)),
    )


def _command_keys(command: str) -> list[str]:
    """The keys of the ssh command lines in ``command`` (``ProxyCommand ssh -i jump.key -W
    %h:%p jump``, when a word names ssh): its words as the shell gives them (not a shell:
    a key a script computes is not seen), read as ``ssh_command_files`` reads them."""
    if not _SSH_WORD().search(command):
        return []
    import shlex  # only where a configuration's command runs ssh

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    _, keys, _ = ssh_command_files(words)
    return keys


def pattern_of(value: str, *, home: str | None, glob: bool = False) -> str | None:
    """``value`` as a glob pattern of the files it names (see the module docstring): None
    when it needs a home and there is none; ``glob``: the value is a pattern already
    (``Include``), its literal text kept as it is."""
    if value.startswith("~"):
        if home is None or not (value == "~" or value.startswith("~/")):
            return None  # ~user names another's home
        value = "%d" + value[1:]
    out: list[str] = []
    at = 0
    for token in _TOKEN.finditer(value):
        literal = value[at : token.start()]
        out.append(literal if glob else _escaped(literal))
        at = token.end()
        if token[1] == "%":
            out.append("%" if glob else _escaped("%"))
        elif token[1] == "d" or token[2] == "HOME":
            if home is None:
                return None
            out.append(home.rstrip("/") if glob else _escaped(home.rstrip("/")))
        else:
            out.append("*")  # the host, a user, a hash: unknown here, any name
    rest = value[at:]
    out.append(rest if glob else _escaped(rest))
    return "".join(out)


def fill_needs(value: str) -> tuple[tuple[str, ...], str | None]:
    """What ``filled`` needs to know for ``value``: the variables it names (``${NAME}``;
    ``HOME`` is ``pattern_of``'s) and the user whose home a ``~user/`` starts it with."""
    names = tuple(dict.fromkeys(n for n in _VARIABLE.findall(value) if n != "HOME"))
    user = None
    if value.startswith("~") and not value.startswith("~/") and value != "~":
        user = value[1:].partition("/")[0]
    return names, user


def filled(value: str, env: Mapping[str, str], home_of: Callable[[str], str | None]) -> str:
    """``value`` with what ssh fills from its machine before its tokens, as ssh's
    ``tilde_expand`` and ``dollar_expand`` do when it loads a key: ``~user/`` as that user's
    home (``home_of``; ``pattern_of`` knows only ``~/``) and ``${NAME}`` as ``env`` sets it
    (a value may hold a ``/``: ``${KEYDIR}/k`` is ``deep/er/k``; one unset stays a wildcard
    of one name)."""
    names, user = fill_needs(value)
    if user is not None and (home := home_of(user)) is not None:
        value = f"{home.rstrip('/')}/{value[1:].partition('/')[2]}"
    if not names:
        return value
    return _VARIABLE.sub(lambda m: env.get(m[1], m[0]) if m[1] != "HOME" else m[0], value)


def literal_of(pattern: str) -> str | None:
    """The one path ``pattern`` (from ``pattern_of``) names when it holds no wildcard but
    escaped ones, else None."""
    if re.search(r"[*?[]", _ESCAPE().sub("", pattern)):
        return None
    return _ESCAPE().sub(r"\1", pattern)


def anywhere_name(pattern: str) -> str | None:
    """The name a relative literal ``pattern`` (from ``pattern_of``) is below whatever
    directory ssh runs in: ssh opens ``IdentityFile keys/deploy`` from its working directory
    (checked with strace: ``openat(AT_FDCWD, "keys/deploy")``), not the repository's top
    alone; ``../x`` is some directory's ``x``. None for an absolute or wildcard pattern."""
    literal = literal_of(pattern)
    if literal is None or literal.startswith("/"):
        return None
    parts = [p for p in posixpath.normpath(literal).split("/") if p not in ("", ".", "..")]
    return "/".join(parts) or None


def _escaped(text: str) -> str:
    """``text`` as a glob pattern matching itself only (``glob.escape``'s rule)."""
    return re.sub(r"([*?[])", r"[\1]", text)


def _keyword_of(line: str) -> tuple[str, str] | None:
    """A line's keyword (lower case) and the text of its arguments, as ``readconf.c``'s
    ``strdelim`` splits them: the keyword ends at a blank, a ``"`` (a quoted keyword) or
    an ``=``; one ``=`` between blanks is skipped, a second is the argument's own
    (``IdentityFile==k`` names ``=k``); None for no keyword."""
    keyword, rest = _delimited(line)
    if not keyword:
        keyword, rest = _delimited(rest)
    if not keyword or keyword.startswith("#"):
        return None
    return keyword.lower(), rest.lstrip(_BLANKS)


def _delimited(text: str) -> tuple[str, str]:
    """``strdelim``: the first token of ``text`` and what follows it."""
    at = next((i for i, char in enumerate(text) if char in _BLANKS + '"='), len(text))
    if at == len(text):
        return text, ""
    if text[at] == '"':
        close = text.find('"', at + 1)
        if close < 0:
            return "", ""  # no closing quote: ssh refuses the line
        return text[:at] + text[at + 1 : close], text[close + 1 :].lstrip(_BLANKS)
    rest = text[at + 1 :].lstrip(_BLANKS)
    if text[at] != "=" and rest.startswith("="):
        rest = rest[1:].lstrip(_BLANKS)
    return text[:at], rest


def _arguments(text: str) -> list[str]:
    """The arguments' words as ssh's ``argv_split`` gives them: a blank or a tab splits, a
    double or single quote groups, a backslash escapes a quote or a backslash (or, bare, a
    blank), and a ``#`` where a word starts ends the line."""
    words: list[str] = []
    word: list[str] = []
    quote = ""
    started = False
    at = 0
    while at < len(text):
        char = text[at]
        if char == "\\" and text[at + 1 : at + 2] in ('"', "'", "\\", *(() if quote else (" ",))):
            word.append(text[at + 1])
            started = True
            at += 2
            continue
        if quote:
            if char == quote:
                quote = ""
            else:
                word.append(char)
        elif char in " \t":
            if started:
                words.append("".join(word))
                word, started = [], False
        elif char == "#" and not started:
            break
        elif char in "\"'":
            quote, started = char, True
        else:
            word.append(char)
            started = True
        at += 1
    if started:
        words.append("".join(word))
    return words


# ssh's one-letter options taking an argument (its getopt string); the others take none
_SSH_WITH_ARGUMENT = frozenset("BbcDEeFIiJLlmOoPpQRSWw")


def ssh_command_files(words: list[str]) -> tuple[list[str], list[str], list[str]]:
    """The identity files and the configurations of an ssh command line: ``-i key``,
    ``-ikey``, ``-vi key`` (flags run together as getopt reads them), ``-o
    IdentityFile=key``, ``-oIdentityFile key``, ``-o CertificateFile=c`` (ssh takes the
    keyword in any case, after ``=`` or blanks); ``-F cfg``. Each key comes as a path (git's
    ``placed``: ``-i``'s is opened as written) and as ssh's value, which ssh fills in
    (``%h``, ``~user``, ``${VAR}``) when it loads it: ``-o IdentityFile=keys/%h.key``
    names ``keys/github.com.key``."""
    found: list[str] = []
    keys: list[str] = []
    configs: list[str] = []
    for at, word in enumerate(words):
        if not word.startswith("-") or word.startswith("--"):
            continue
        for pos, flag in enumerate(word[1:], start=2):
            if flag not in _SSH_WITH_ARGUMENT:
                continue
            argument = word[pos:] or (words[at + 1] if at + 1 < len(words) else "")
            if flag == "i":
                found.append(_home_token(argument))
                keys.append(argument)
            elif flag == "F":
                configs.append(_home_token(argument))
            elif flag == "o":  # read as a configuration's line: ssh_config(5)'s quotes
                named = ssh_named_in(argument).secrets
                found += [_home_token(value) for value in named]
                keys += named
            break
    return found, keys, configs


def _home_token(path: str) -> str:
    """An identity file as ssh reads it: ``%d`` at its start is the home (``-i %d/key``)."""
    return "~" + path[2:] if path.startswith("%d/") else path
