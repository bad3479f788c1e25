"""The secrets policy's second interpreter: a POSIX ``sh`` guard for what exists only at run
time (the items ``xargs`` appends), judging each real path by the same patterns as
``SecretPolicy.refusal`` (``secrets.py``), letters written as ``[eE]``; tests compare the two
path by path (``tests/tools/test_secrets_policy.py``).
"""

from __future__ import annotations

from rho_domain.secret_twins import COPY_OF, GLUED, TWIN_SUFFIXES
from rho_domain.secrets import (
    ALLOWED,
    LOCATIONS,
    LOOSE_FANOUT,
    NAMES,
    SSH_KEY,
    SSH_KEY_NOT,
    TEMPLATES,
    SecretPolicy,
    case_insensitive,
)

_HEX_DIGIT = "[0-9a-fA-F]"  # secrets.in_loose_fanout's two digits, as a case class


def _case_word(pattern: str) -> str:
    """A policy pattern as one word of a ``case`` pattern: any letter case, a blank quoted
    (Chromium's ``login data``: a bare blank ended the word, and the guard's sh refused it)."""
    return case_insensitive(pattern).replace(" ", '" "')


def guard_script(policy: SecretPolicy, reach_case: str = "") -> str:
    """POSIX sh run by ``xargs`` in front of its target: every argument that names an existing
    path is resolved (``realpath -m``) and judged by ``policy``'s rules (the same patterns as
    ``SecretPolicy.refusal``) and by ``reach_case`` (``ReadReach.guard_case``: where reads may
    go); a secret or an argument out of reach is dropped from the arguments (with a note on
    stderr, as ``grep --exclude`` would skip it) and the target runs with the rest. Usage:
    ``sh -c SCRIPT rho-guard /abs/program args...``."""
    import shlex  # with the first guarded xargs, not with every policy

    allowed = "|".join(ALLOWED)
    own = "|".join(
        (
            *(f"{shlex.quote(loc)}|{shlex.quote(loc)}/*" for loc in policy.locations),
            *(f"*/{shlex.quote(n)}|*/{shlex.quote(n)}/*" for n in policy.anywhere),
        )
    )
    # rule 2b: a hidden entry of a home, unless inside an open tree (checked after the names)
    opened = "".join(f"{shlex.quote(t)}|{shlex.quote(t)}/*) ;; " for t in policy.open_trees)
    hidden = "|".join(f"{shlex.quote(h.rstrip('/') or '/')}/.*" for h in policy.homes)
    home_rule = f'      [ -n "$s" ] || case $p in {opened}{hidden}) s=1;; esac\n' if hidden else ""
    fanout = f"*/{case_insensitive(LOOSE_FANOUT)}/{_HEX_DIGIT}{_HEX_DIGIT}"
    trees = "|".join((*map(_case_word, LOCATIONS), fanout, f"{fanout}/*"))
    templates = "|".join(_case_word(p) for p in TEMPLATES)
    names = "|".join(_case_word(p) for p in NAMES)
    key, not_key = case_insensitive(SSH_KEY), case_insensitive(SSH_KEY_NOT)
    dotted = "|".join("*" + case_insensitive(t) for t in TWIN_SUFFIXES if t.startswith("."))
    glued = "".join(f" *[-_]{case_insensitive(w)}) q=${{q%{'?' * (len(w) + 1)}}};;" for w in GLUED)
    copy = case_insensitive("copy")
    copy_of = case_insensitive(COPY_OF).replace(" ", '" "')
    another = case_insensitive("another") + '" "' + copy
    # every rule on the path, then on it without each twin suffix of its name in turn
    # (SecretPolicy.judge): emacs' #name#, a rotation's .N or -N, a copy's mark at the end
    # (" (copy)", " copy", " - copy"), "Copy of name", a numbered backup's ".~1~", an RCS
    # file's ",v". A directory's copy (.ssh.bak/) is not reduced here, nor a mark with a
    # number or before the extension ("credentials (2).json", "id_rsa.bak2", "Copy (2) of"):
    # the scan before a guarded xargs finds them, and they come in as the policy's locations.
    refused = f"{own}|{trees}" if own else trees
    judge = (
        "      q=$p; d=; while :; do\n"
        f"        case $q in {allowed}) break;; {refused}) s=1; break;; esac\n"
        f'        case "/${{q##*/}}" in {templates}) break;; {names}) s=1; break;; {not_key}) ;;'
        f" {key}) s=1; break;; esac\n"
        '        if [ -n "$d" ]; then d=; q="${q%/*}/${q##*/.}"; else\n'
        "        case $q in */.?*.[sS][wW][pPoOnN] | */.?*.[kK][aA][tT][eE]-[sS][wW][pP])"
        " q=${q%.*}; d=1;; *.~[0-9]*~) q=${q%.~*};;"
        f' {dotted}) q=${{q%.*}};; *"~") q=${{q%?}};; *-[zZ]) q=${{q%??}};; *,[vV]) q=${{q%??}};;'
        f"{glued}"
        ' */"#"?*"#") t=${q##*/#}; q="${q%/*}/${t%?}";;'
        f' *" ("{copy}")" | *" ("{another}")") q=${{q% (*}};;'
        f' *" - "{copy}) q=${{q% - *}};; *" "{copy}) q=${{q% *}};;\n'
        '        *) t=${q##*/}; r=${t##*[.-]}; case $r in "" | *[!0-9]*) r=;; esac\n'
        '          if [ -n "$r" ] && [ "$r" != "$t" ] && [ -n "${t%[.-]*}" ]; then q=${q%[.-]*}\n'
        f"          else case $t in {copy_of}?*) q=${{q%/*}}/${{t#{copy_of}}};;"
        " *) break;; esac; fi;;\n"
        '        esac; fi\n        case $q in */ | "") break;; esac\n      done\n'
        f"{home_rule}"
    )
    # One realpath for every argument, read line by line in step with them (fast path); a
    # name with a newline, or an empty one, takes the slow path: one realpath each. A missing
    # answer line stops everything (exit 126). Secrets are rare: with none, the arguments are
    # exec'd as they are; else the kept ones are picked by index in ONE eval (rebuilding "$@"
    # item by item is quadratic in sh).
    return (
        "nl='\n'\nfast=1\n"
        'for a do case $a in "" | *"$nl"*) fast= ;; esac; done\n'
        "run() {\n  i=0; skips=\n  for a do\n    i=$((i + 1)); s=; o=\n"
        '    if [ -n "$fast" ]; then IFS= read -r p || exit 126; fi\n'
        '    if [ -e "$a" ] || [ -L "$a" ]; then\n'
        '      if [ -z "$fast" ]; then\n'
        '        p=$(realpath -m -- "$a"; echo x) || exit 126; p=${p%x}; p=${p%?}\n      fi\n'
        '      if [ -e "$a" ] && ! [ "$a" -ef "$p" ]; then o=1; fi\n'  # lexical past 4,096 chars
        f"{judge}{reach_case}    fi\n"
        '    if [ -n "$s" ]; then\n'
        "      printf 'rho: skipped %s: a secret file is never read\\n' \"$a\" >&2\n"
        '      skips="$skips $i "\n'
        '    elif [ -n "$o" ]; then\n'
        "      printf 'rho: skipped %s: outside what this profile reads\\n' \"$a\" >&2\n"
        '      skips="$skips $i "\n    fi\n  done\n'
        '  if [ -z "$skips" ]; then exec "$@" </dev/null; fi\n'
        "  keep=; i=0\n  for a do\n    i=$((i + 1))\n"
        '    case $skips in *" $i "*) ;; *) keep="$keep \\"\\${$i}\\"" ;; esac\n  done\n'
        '  eval "exec $keep </dev/null"\n}\n'
        'if [ -n "$fast" ]; then realpath -m -- "$@" | run "$@"; else run "$@"; fi\n'
    )
