"""Whether a call's arguments were cut short or written wrong: ``cut_short``.

A server that stops an answer at its output limit mid-call reports the call's arguments as
far as they got, and some say ``tool_calls`` even then (llama-cpp-python, capture 16), so the
client tells a cut from the arguments themselves. A text that is not JSON but is the start of
a JSON text was cut (``{"path": ".``); one that can never become JSON however it goes on
(``{"path": "."}}``, ``{'path': '.'}``) was written wrong, and the model is told what is
wrong with it instead of to make smaller calls (the domain answers a cut call
``not_run.CUT_AT_LIMIT`` and a wrong one with the registry's JSON error).
"""

from __future__ import annotations

import json

from rho_domain.first_use import FirstUse

# What may end a cut text and what completes it: a literal or number stopped midway, a key
# without its value, a value expected after ``:`` or ``,`` (in an object a key and value).
_LITERAL_ENDINGS = ("e", "ue", "rue", "lse", "se", "alse", "l", "ll", "ull")
_ENDINGS = ("", "null", ":null", '"":null', "0", *_LITERAL_ENDINGS)
_UNFINISHED_ESCAPE = FirstUse(r"\\(u[0-9a-fA-F]{0,3})?")


def cut_short(text: str) -> bool:
    """Whether ``text`` is not a JSON text but the start of one: its open strings, objects
    and arrays closed, after at most one of ``_ENDINGS``, it parses; a bracket closed out of
    turn, a quote JSON does not use or anything after a whole value answers False."""
    closers: list[str] = []
    in_string = escaped = False
    escape_at = 0  # where the string's last escape began
    for at, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped, escape_at = True, at
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
        elif char in "}]" and (not closers or closers.pop() != char):
            return False
    base = text.rstrip()
    if in_string:  # an escape the cut left unfinished (``\\``, ``\\u12``) is dropped whole
        unfinished = _UNFINISHED_ESCAPE().fullmatch(text, escape_at)
        base = (text[:escape_at] if unfinished else text) + '"'
    closing = "".join(reversed(closers))
    for ending in _ENDINGS:
        candidate = base.removesuffix(",") + ending if ending == "" else base + ending
        try:
            # strict=False: a raw line break inside a string is what a cut model wrote
            # (capture 15's path ran on into code), not a sign of arguments written wrong
            json.loads(candidate + closing, strict=False)
        except ValueError:
            continue
        except RecursionError:  # too deep to tell: the tool layer refuses it either way
            return False
        return candidate + closing != text
    return False
