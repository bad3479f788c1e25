"""git's scratch files are secret locations by the policy alone: an interrupted ``git am``'s
patches (``rebase-apply/0001``... hold commits' whole diffs), a commit's message file, rerere's
images, ``fsck --lost-found``'s blobs; git's own state beside them is not."""

from __future__ import annotations

import pytest

from rho_domain.secrets import DEFAULT_POLICY

SCRATCH = (
    "/w/.git/rebase-apply/0001",
    "/w/.git/rebase-apply/patch",
    "/w/.git/worktrees/wt/rebase-apply/0012",
    "/w/.git/modules/sub/rebase-apply/0003",
    "/w/.git/rebase-merge/patch",
    "/w/.git/COMMIT_EDITMSG",
    "/w/.git/rr-cache/ab12/preimage",
    "/w/.git/lost-found/other/2a16a5",
)


@pytest.mark.parametrize("path", SCRATCH)
def test_gits_scratch_is_refused(path: str) -> None:
    assert DEFAULT_POLICY.refusal(path) is not None


@pytest.mark.parametrize("path", ["/w/.git/HEAD", "/w/.git/refs/heads/main", "/w/notes/0001"])
def test_gits_state_is_not(path: str) -> None:
    assert DEFAULT_POLICY.refusal(path) is None
