"""Where a command line's commands run, for ``shell.destructive_targets``'s destination rule:
the directories ``cd``, ``pushd`` and ``popd`` may have moved the line to, as far as its words
show them, so that a relative destination is judged where it lands (``cd /root/.ssh && cp k
authorized_keys`` writes ``/root/.ssh/authorized_keys``).

A line is in one of several places (``Directories.places``): a ``cd`` may fail (``cd
/missing; cp x .curlrc`` stays where it was), so each move keeps the place it left. A place
is the call's own directory (``""``), a path below it, an absolute path, or unknown, with
the reason why: ``cd`` to a pattern, ``cd`` alone (``$HOME``), ``cd -`` before any move,
``cd ..`` above the call's directory, a relative ``cd`` once the line names ``CDPATH``,
``pushd``/``popd`` with ``+N``/``-N``, more places than ``MAX_PLACES``. A relative
destination in an unknown place may be anywhere (a home's start-up files, ``/etc``), so it
asks; an absolute one is judged as it is. A subshell's moves end with it (the caller restores
its ``Directories``); a nested line's (``bash -c``, ``eval``) are kept, which is safe either
way since every move keeps the place it left; ``&&`` after a move drops the place it left.
A wrapper moves the command it runs (``env -C DIR``, ``sudo -D DIR``, ``nsenter -w DIR``;
``chroot DIR``, which also puts every absolute path its command names under DIR) or leaves it
unknown (``sudo -i``, ``find -execdir``, ``nsenter -w`` alone).

Contract: ``HERE`` is the call's own directory; ``Directories.after(argv, piped=)`` the
places after one simple command, ``following(operator)`` those of the next pipeline,
``wrapped(prefix)`` those of the command wrapper words run; ``judge(path, judge, who)``
the first reason ``judge`` gives for ``path`` as seen from any place, or a reason for an
unknown place, or "".
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

import attrs

from rho_domain.shell.destructive_words import Arg
from rho_domain.value_methods import value_eq, value_hash, value_repr

MAX_PLACES = 16
_MOVERS = frozenset(["cd", "pushd", "popd"])
_CD_OPTIONS = frozenset(["-L", "-P", "-e", "-@", "-Pe", "-eP", "-LP", "-PL"])


@attrs.frozen
class Place:
    """One directory the line may be in: ``path`` ("" is the call's own directory), or
    ``unknown`` (why it cannot be known; ``path`` is then ""); ``previous`` is where ``cd
    -`` goes, ``stack`` what ``pushd`` saved (top first)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    path: str = ""
    unknown: str = ""
    previous: Place | None = None
    stack: tuple[Place, ...] = ()


@attrs.frozen
class Directories:
    """The places a line's next command may run in; ``cdpath`` once a word names
    ``CDPATH`` (``export CDPATH=/root``), which makes a relative ``cd`` search it."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    places: tuple[Place, ...] = (Place(),)
    cdpath: bool = False
    # the places kept only in case the last command, a move, failed: ``&&`` drops them
    failed: tuple[Place, ...] = ()
    # the directory a ``chroot`` made ``/`` for the command it runs ("" for the real root)
    root: str = ""

    def after(self, argv: Sequence[Arg], *, piped: bool) -> Directories:
        """The places after running ``argv`` (only ``cd``, ``pushd``, ``popd``, also after
        ``builtin`` or ``command``, move; any command naming ``CDPATH`` sets ``cdpath``).
        ``piped``: not first in a pipeline, whose status is not the move's own."""
        cdpath = self.cdpath or any(_names_cdpath(w) for w in argv)
        words = list(argv)
        while words[:1] in (["builtin"], ["command"]):
            words = words[1:]
        if not words or words[0] not in _MOVERS:
            return attrs.evolve(self, cdpath=cdpath, failed=())
        moved = [_moved(p, str(words[0]), words[1:], cdpath=cdpath) for p in self.places]
        places = tuple(dict.fromkeys([*moved, *self.places]))  # a failed move stays
        if len(places) > MAX_PLACES:
            places = (*places[:MAX_PLACES], Place(unknown="more moves than the check follows"))
        failed = () if piped else tuple(p for p in self.places if p not in moved)
        return attrs.evolve(self, places=places, cdpath=cdpath, failed=failed)

    def following(self, operator: str) -> Directories:
        """The places of the pipeline that follows ``operator`` (``&&`` runs it only when
        the move before it succeeded)."""
        places = self.places
        if operator == "&&" and self.failed:
            places = tuple(p for p in places if p not in self.failed)
        return attrs.evolve(self, places=places, failed=())

    def wrapped(self, prefix: Sequence[Arg]) -> Directories:
        """The places the command after the wrapper words ``prefix`` runs in: ``env -C
        DIR`` and ``sudo -D DIR`` (``--chdir``) enter DIR; after ``sudo -i``, ``su -``,
        ``runuser -l``, ``ssh`` (a home) and ``find -execdir`` (each found file's
        directory) it is unknown."""
        places, program = self, ""
        for index, word in enumerate(prefix):
            name = posixpath.basename(word or "")
            if name == "chroot" and program != "chroot":
                program = name
                places = _chrooted(places, prefix[index + 1 :])
            elif name in ("env", "sudo", "find", "su", "runuser", "nsenter"):
                program = name
            elif name == "ssh":  # its command runs in the remote user's home
                return _unknown(self, "ssh runs its command in the remote home")
            elif word is None or not word.startswith("-"):
                continue
            elif program == "find" and word in ("-execdir", "-okdir"):
                return _unknown(self, f"find {word} runs in each found file's directory")
            elif program == "sudo" and (word == "--login" or _short(word, "i")):
                return _unknown(self, "sudo -i runs in its user's home")
            elif program in ("su", "runuser") and (word in ("-", "--login") or _short(word, "l")):
                return _unknown(self, f"{program} {word} runs in its user's home")
            elif program == "nsenter" and word in ("-w", "--wd"):  # no value: the target's
                return _unknown(self, f"nsenter {word} runs in the target process's directory")
            elif program in _CHDIRS:
                following = prefix[index + 1] if index + 1 < len(prefix) else None
                if target := _option_value(word, following, *_CHDIRS[program]):
                    places = places.after(("cd", "--", target), piped=True)
        return places

    def judge(self, path: str, judge: Callable[[str], str], who: str) -> str:
        """Why writing ``path`` asks from any of the places (``judge`` reads the path as
        seen from the call's directory: absolute, or relative to it), or "". ``who`` (``cp
        writes``, ``>``) starts the reason for an unknown place."""
        if path.startswith("/"):  # under a chroot, inside its new root
            return judge(posixpath.join(self.root, path.lstrip("/")) if self.root else path)
        for place in self.places:
            if place.unknown:
                return (
                    f"{who} {path}: in a directory the check cannot know ({place.unknown}), "
                    "which may be a home's start-up files or /etc"
                )
            joined = posixpath.normpath(posixpath.join(place.path, path))
            if why := judge(joined if place.path else path):
                return why
        return ""


HERE = Directories()
_CHDIRS = {"env": ("-C", "--chdir"), "sudo": ("-D", "--chdir"), "nsenter": ("-w", "--wd")}


def _chrooted(places: Directories, words: Sequence[Arg]) -> Directories:
    """Where ``chroot words`` runs its command: in its new root, which is also where every
    absolute path the command names lands (``chroot /home/u sh -c 'echo > /.bashrc'``)."""
    operands = [w for w in words if w is None or not w.startswith("-")]
    if not operands or operands[0] is None:
        return _unknown(places, "chroot to a pattern")
    entered = places.after(("cd", "--", operands[0]), piped=True)
    root = posixpath.normpath(operands[0])
    unknown = next((p.unknown for p in entered.places if p.unknown), "")
    if not root.startswith("/") and (unknown or any(p.path for p in places.places)):
        return _unknown(places, "chroot to a directory the check cannot place")
    return attrs.evolve(entered, places=entered.places[:1], root=root)


def _unknown(directories: Directories, why: str) -> Directories:
    return attrs.evolve(directories, places=(Place(unknown=why),), failed=())


def _short(word: str, letter: str) -> bool:
    """True when ``word`` is a short option cluster holding ``letter`` (-i, -iu)."""
    return word.startswith("-") and not word.startswith("--") and letter in word[1:]


def _option_value(word: str, following: Arg, short: str, long: str) -> Arg:
    """The value ``word`` (and the word after it) give ``short``/``long``, or None."""
    if word.startswith(long + "="):
        return word[len(long) + 1 :]
    if word in (short, long):
        return following
    return word[len(short) :] if word.startswith(short) and not word.startswith("--") else None


def _names_cdpath(word: Arg) -> bool:
    return word is not None and (word == "CDPATH" or word.startswith(("CDPATH=", "CDPATH+=")))


def _moved(place: Place, mover: str, words: Sequence[Arg], *, cdpath: bool) -> Place:
    """Where ``mover words`` run in ``place`` goes when it succeeds."""
    options = [w for w in words if w is not None and w.startswith(("-", "+")) and w != "-"]
    operands = [w for w in words if w not in options and w != "--"]
    if mover == "cd":
        if not operands:
            return Place(unknown="cd without a directory goes to $HOME")
        if operands[0] == "-":
            back = place.previous or Place(unknown="cd - before any cd")
            return attrs.evolve(back, previous=place, stack=place.stack)
        entered = _entered(place, operands[0], cdpath=cdpath)
        return attrs.evolve(entered, previous=place, stack=place.stack)
    if any(o not in _CD_OPTIONS for o in options):  # pushd +N, popd -N rotate the stack
        return Place(unknown=f"{mover} {' '.join(options)}")
    if mover == "popd":
        if not place.stack:  # popd fails on an empty stack
            return place
        return attrs.evolve(place.stack[0], previous=place, stack=place.stack[1:])
    if not operands:  # pushd swaps the two top directories
        if not place.stack:
            return place
        return attrs.evolve(place.stack[0], previous=place, stack=(place, *place.stack[1:]))
    entered = _entered(place, operands[0], cdpath=cdpath)
    return attrs.evolve(entered, previous=place, stack=(place, *place.stack))


def _entered(place: Place, word: Arg, *, cdpath: bool) -> Place:
    """The place ``cd word`` enters from ``place``."""
    if word is None:
        return Place(unknown="cd to a pattern")
    if word.startswith("/"):
        return Place(path=posixpath.normpath(word))
    if cdpath and not word.startswith(("./", "../")) and word not in (".", ".."):
        return Place(unknown=f"cd {word} searches CDPATH")
    if place.unknown:
        return Place(unknown=place.unknown)
    joined = posixpath.normpath(posixpath.join(place.path, word))
    if joined == ".":
        return Place()
    if joined == ".." or joined.startswith("../"):
        return Place(unknown=f"cd {word} leaves the call's directory")
    return Place(path=joined)
