"""MCP tool names: the name the model calls a server's tool by, and which spellings a deny
entry holds.

A server chooses its tools' names; the model sees ``mcp__<server>__<tool>`` (``tool_name``),
within the 64 characters model APIs take and ASCII only. A deny entry (``tools.deny``, a
profile's ``denied_tools``) holds every spelling that folds to it (``denies``,
``denied_name``): case, separators, full-width letters, accents, zero-width characters, and a
letter of another script shown as ``_``. ``allow`` and ``read_only_tools`` stay exact
(``mcp_config``): the operator, not the server, vouches for a name.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection

PREFIX = "mcp__"
_UNSAFE = r"[^A-Za-z0-9_-]"
MAX_NAME = 64  # the longest function name OpenAI-compatible servers accept
_HASHED = 8  # hex digits of a hash that end a tool name cut to fit


def tool_name(server: str, tool: str) -> str:
    """The name the model calls ``tool`` of ``server`` by: ``mcp__<server>__<tool>``, with
    full-width letters and ligatures decomposed, accents dropped (``déjà`` → ``deja``), and
    the characters a model API still refuses replaced by ``_``. One longer than 64
    characters is cut to end in ``_`` and 8 hex digits of the SHA-256 of ``tool`` ``folded``:
    two long names alike in their first characters stay two (``mcp_config.MAX_SERVER_NAME`` leaves
    room), and every spelling of one name ends alike, whatever the cut kept of it, so a
    deny entry naming the cut name holds them all (``denies``)."""
    name = PREFIX + server + "__" + re.sub(_UNSAFE, "_", _decomposed(tool))
    if len(name) <= MAX_NAME:
        return name
    return name[: MAX_NAME - _HASHED - 1] + "_" + _digest(tool)


def _digest(tool: str) -> str:
    """The hash a cut model name ends in: of ``tool`` as deny entries compare it."""
    return hashlib.sha256(folded(tool).encode("utf-8", "surrogatepass")).hexdigest()[:_HASHED]


def _cut_hash(name: str) -> str | None:
    """The hash a model name ``name`` ends in when it is cut to fit (64 characters, ``_``
    and 8 hex digits last), else None. A server may choose a name of that shape: that only
    adds an entry that holds it (every other comparison still applies)."""
    if len(name) == MAX_NAME and re.fullmatch(r"[0-9a-f]+", name[-_HASHED:]):
        return name[-_HASHED:] if name[-_HASHED - 1] == "_" else None
    return None


def cut_entry(entry: str, server: str) -> bool:
    """True when the deny entry ``entry`` of ``server``'s tools (``mcp__<server>__<tool>`` or
    the tool alone) is a model name cut to fit: what is left of the name is a hash of it, and
    a hash holds only the spellings that fold alike, not a look-alike letter in the part cut
    off (no entry can see that without a table of look-alikes). ``mcp_config`` refuses such
    entries where a session starts its servers, and a profile file when it is read."""
    own = PREFIX + server + "__"
    return _cut_hash(entry if entry.startswith(own) else own + entry) is not None


def _decomposed(name: str) -> str:
    """``name`` compatibility-decomposed, its combining marks (accents) dropped."""
    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))


def folded(name: str) -> str:
    """``name`` as deny entries compare it: compatibility-decomposed (full-width letters,
    ligatures, accents apart), casefolded, and only its letters and digits kept
    (``Delete_All``, ``delete-all``, ``delete.all ``, ``deleteAll`` → ``deleteall``)."""
    return "".join(c for c in _decomposed(name).casefold() if c.isalnum())


def denies(entries: Collection[str], server: str, tool: str) -> bool:
    """True when one of ``entries`` names ``tool`` of ``server`` in some spelling: the
    server's name for it or its model name (``mcp__<server>__<tool>``, the server named
    exactly), compared ``folded``. A hostile server chooses its tools' names: ``Delete_All``
    or ``delete.all`` (shown as ``mcp__s__delete_all``) must not pass ``deny: [delete_all]``.
    A letter of another script (a Cyrillic ``\u0435`` for ``e``, a Greek ``\u03bf`` for
    ``o``) is ``_`` in the model name, and a ``_`` or ``-`` there may stand for any one
    letter of the entry (``_blanked``): ``d\u0435lete_all`` is ``mcp__s__d_lete_all`` and
    denied, without a table of look-alikes to ship. A new name (``wipe_all``) still passes:
    ``allow``, exact, is the safe form."""
    if not entries:
        return False
    own = PREFIX + server + "__"
    model = tool_name(server, tool)
    shown = model[len(own) :]
    plain = re.sub(_UNSAFE, "_", _decomposed(tool)).casefold()  # shown, uncut
    wanted = {folded(tool), folded(shown)}
    # a cut name keeps only the hash of the rest: compared by it, whatever the cut kept
    identity = _cut_hash(model) or _digest(tool)
    for entry in entries:
        part = entry.removeprefix(own)
        name = folded(part)
        if name in wanted or _blanked(plain, name) or _blanked(shown.casefold(), name):
            return True
        if identity == (_cut_hash(tool_name(server, part)) or _digest(part)):
            return True
    return False


def _blanked(shown: str, name: str) -> bool:
    """True when ``shown`` (a model name's tool part, casefolded) is ``name`` (a folded deny
    entry) with letters blanked: each ``_`` or ``-`` of ``shown`` stands for one character of
    ``name`` or none, every other character for itself. Walked position by position (linear
    in each: a pattern of optional characters would backtrack exponentially on a name a
    server chose)."""
    reached = {0}
    for char in shown:
        if char in "_-":
            reached |= {at + 1 for at in reached if at < len(name)}
        else:
            reached = {at + 1 for at in reached if at < len(name) and name[at] == char}
        if not reached:
            return False
    return len(name) in reached


def denied_name(entries: Collection[str], name: str) -> bool:
    """True when ``entries`` (a profile's ``denied_tools``) name the tool called ``name``:
    exactly, or, for an MCP tool, in a spelling ``denies`` matches (server named exactly)."""
    if name in entries:
        return True
    server = server_of(name)
    if server is None:
        return False
    named = [e for e in entries if server_of(e) == server]
    return denies(named, server, name[len(PREFIX) + len(server) + 2 :])


def server_of(name: str) -> str | None:
    """The server of an MCP tool name (``mcp__tickets__search`` → ``tickets``), else None."""
    if not name.startswith(PREFIX):
        return None
    server, sep, _ = name[len(PREFIX) :].partition("__")
    return server if sep and server else None
