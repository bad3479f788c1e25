"""What a local write may not touch, judged before and after ``Workspace.put`` walks its path.

``WriteChecks`` holds the secrets policy and the session directory's components (never
written); its methods raise and return nothing:

- ``file``: a path never written (``write_rules.write_refusal``), a secret by the model's text
  or by its canonical path, a hidden entry of a home the workspace holds, a file inside the
  session directory, and under create-only a file the write would not create (``PermissionDenied``);
- ``content``: data never written to that path in any mode (``written_content.content_refusal``);
- ``environment``: a write through a directory holding an environment's marker;
- ``directory``: a directory about to be made on the way (the three above, and create-only's
  directory rule).

Every refusal is ``SensitivePath`` but create-only's. The write mode is the caller's to check.
"""

from __future__ import annotations

import os

import attrs

from rho_adapters.local.confine import Tree
from rho_domain.create_only import (
    create_only_directory_refusal,
    create_only_refusal,
    created_content_refusal,
)
from rho_domain.errors import PermissionDenied, SensitivePath
from rho_domain.paths import is_within
from rho_domain.secrets import SecretPolicy
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_domain.write_rules import (
    ENVIRONMENT_MARKERS,
    environment_refusal,
    home_entry_refusal,
    write_refusal,
)
from rho_domain.written_content import content_refusal


@attrs.frozen(kw_only=True)
class WriteChecks:
    """The judges of one workspace's writes: ``policy`` (secrets, homes) and ``protected``
    (the components of directories never written)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    policy: SecretPolicy
    protected: tuple[tuple[str, ...], ...]

    def file(
        self, path: str, tree: Tree, parts: tuple[str, ...], *, create_only: bool = False
    ) -> None:
        """Refuse writing ``path``, whose components below ``tree`` are ``parts`` (judged on
        the path as given and on ``parts``)."""
        for candidate in (path, "/".join(parts)):
            if reason := write_refusal(candidate):
                raise SensitivePath(reason)
        absolute = tree.root_parts + parts
        real = "/" + "/".join(absolute)
        for candidate in (path, real):
            if reason := self.policy.refusal(candidate):
                raise SensitivePath(f"{reason}; secrets are never written")
        if reason := home_entry_refusal(path, real, tree.root, self.policy.homes):
            raise SensitivePath(reason)
        if create_only and (reason := create_only_refusal("/".join(parts))):
            raise PermissionDenied(reason)
        if any(is_within(absolute, protected) for protected in self.protected):
            raise SensitivePath(f"{path!r} is inside the session directory; it is never written")

    def content(self, path: str, data: bytes, *, create_only: bool = False) -> None:
        """Refuse ``data`` that may never be written to ``path`` (``content_refusal``), and
        under create-only what it may not create (``created_content_refusal``)."""
        if reason := content_refusal(path, data):
            raise SensitivePath(reason)
        if create_only and (reason := created_content_refusal(path, data)):
            raise PermissionDenied(reason)

    def environment(self, path: str, tree: Tree, dirs: tuple[str, ...]) -> None:
        """Refuse a write through a directory below the root that holds an environment's
        marker (``write_rules.ENVIRONMENT_MARKERS``); ``dirs``: canonical components."""
        for depth in range(1, len(dirs) + 1):
            where = os.path.join(tree.root, *dirs[:depth])
            if any(os.path.lexists(os.path.join(where, m)) for m in ENVIRONMENT_MARKERS):
                raise SensitivePath(environment_refusal(path, "/".join(dirs[:depth])))

    def directory(
        self, path: str, tree: Tree, dirs: tuple[str, ...], name: str, *, create_only: bool
    ) -> None:
        """Refuse making the directory ``dirs`` on the way to ``path`` (whose last component
        is ``name``): judged as the file's directory, then create-only's directory rule."""
        self.file(path, tree, (*dirs, name))
        self.environment(path, tree, dirs[:-1])
        if create_only and (reason := create_only_directory_refusal(path, dirs)):
            raise PermissionDenied(reason)
