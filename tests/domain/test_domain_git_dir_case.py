"""Git directories and object stores by their shape, on a case-insensitive disk (redshell23).

A vfat, exFAT, NTFS or APFS disk (or ext4's casefold) keeps a name's case as written and finds
it in any case: git there opens ``.GIT/CONFIG`` for ``.git/config`` and takes ``Head`` beside
``REFS`` for a git directory. This machine mounts none (no vfat in /proc/filesystems, no
mkfs.vfat; ext4 casefold and tmpfs casefold need CONFIG_UNICODE, which this kernel lacks), so
the model of such a disk is its listing: names in any case, each path spelled in any case.
Every spelling must be judged as the lowercase one is, by the shape rule and the policy.
"""

from __future__ import annotations

from rho_domain.git_dir_shape import GIT_DIR, STORE, shape_of, shaped_refusal
from rho_domain.secrets import DEFAULT_POLICY

# what a case-insensitive disk may list for a git directory and an object store
GIT_DIRS = (("Head", "REFS", "Objects"), ("head", "refs"), ("HEAD", "CommonDir"))
STORES = (("Info", "PACK"), ("INFO", "pack", "0A"))
SECRET_SPELLINGS = (
    "/w/.GIT/CONFIG", "/w/.Git/Index", "/w/.git/OBJECTS/ab/cd", "/w/X.GIT/CONFIG",
    "/w/store/OBJECTS/AB/cdef", "/w/store/Objects/Pack/p.pack", "/w/.GIT/commit_editmsg",
    "/w/.git/WORKTREES/a/INDEX", "/w/.git/Modules/m/Config", "/w/.GIT/LFS/OBJECTS/x",
)  # fmt: skip


def test_every_case_of_a_shape_is_the_shape() -> None:
    assert {shape_of(names) for names in GIT_DIRS} == {GIT_DIR}
    assert {shape_of(names) for names in STORES} == {STORE}


def test_every_case_of_a_secret_is_refused() -> None:
    refused = [p for p in SECRET_SPELLINGS if DEFAULT_POLICY.refusal(p) is None]
    assert refused == []
    shaped = (
        ("/w/store/CONFIG", "/w/store", GIT_DIR),
        ("/w/store/Index", "/w/store", GIT_DIR),
        ("/w/store/Commit_EditMsg", "/w/store", GIT_DIR),
        ("/w/od/AB/cdef", "/w/od", STORE),
        ("/w/od/Pack/x.pack", "/w/od", STORE),
    )
    assert [
        p for p, place, kind in shaped if not shaped_refusal(DEFAULT_POLICY, p, place, kind)
    ] == []
