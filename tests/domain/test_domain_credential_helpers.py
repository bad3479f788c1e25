"""What a credential helper's command line and a relative ssh key name (redshell26): the
words each rule takes, as a table (the walls they feed are tested on every backend in
tests/tools/test_redteam_credential_walls26.py)."""

from __future__ import annotations

import pytest

from rho_domain.credential_helpers import helper_files, helper_programs
from rho_domain.ssh_named_files import anywhere_name

HELPERS = [  # (credential.helper, files it may read: each must be among helper_files)
    ("store --file=notes.txt", ["notes.txt"]),
    ("cache --timeout 3600 --socket s.sock", ["s.sock"]),
    ("!f() { cat .tokens/gh; }; f", [".tokens/gh"]),
    ("!echo password=$(cat deploy/token)", ["deploy/token"]),
    ("!echo password=`cat deploy/bq`", ["deploy/bq"]),
    ("!sh -c 'cat deploy/t2; true'", ["deploy/t2"]),
    ('!echo "password=$(cat deploy/q)"', ["deploy/q"]),
    ("store <deploy/redirected", ["deploy/redirected"]),
    ("!cat deploy/a 2>deploy/err", ["deploy/a", "deploy/err"]),
    ("/opt/vault-helper deploy/role.json", ["deploy/role.json"]),
    ("aws-helper --profile-file=deploy/p.ini", ["deploy/p.ini"]),
    ("netrc -f deploy/n -v", ["deploy/n"]),
    ("!f() { test $1 = get && cat $HOME/tok; }; f", ["/h/tok"]),
]


@pytest.mark.parametrize(("helper", "files"), HELPERS)
def test_a_helper_names_every_file_it_may_read(helper: str, files: list[str]) -> None:
    found = helper_files(helper, {"HOME": "/h"})
    assert set(files) <= set(found), found


@pytest.mark.parametrize(
    "helper", ["store", "manager", "cache --timeout 3600", "/usr/bin/gh auth git-credential"]
)
def test_a_helper_program_and_numbers_are_no_files(helper: str) -> None:
    found = helper_files(helper, {})
    assert not {"store", "manager", "3600", "/usr/bin/gh"} & set(found), found


def test_the_scripts_a_helper_runs_are_read() -> None:
    assert helper_programs("!sh bin/cred.sh get", {}) == ["sh", "bin/cred.sh"]
    assert helper_programs("/opt/h --x=1", {}) == ["/opt/h"]
    # by a bare name too, on the PATH: git runs ``NAME`` as ``git credential-NAME`` (redfiles28)
    assert helper_programs("store --file=x", {}) == ["git-credential-store"]
    assert helper_programs("mystore", {}) == ["git-credential-mystore"]
    assert helper_programs("!cred get", {}) == ["cred"]


@pytest.mark.parametrize(
    ("pattern", "name"),
    [
        ("keys/deploy", "keys/deploy"),
        ("./keys/deploy", "keys/deploy"),
        ("../up/k", "up/k"),
        ("certs/../c26.txt", "c26.txt"),
        ("/abs/k", None),
        ("keys/*", None),  # a %h (pattern_of makes it *): placed below the tops only
        ("keys/[*]", "keys/*"),
    ],
)
def test_a_relative_key_is_a_name_below_any_directory(pattern: str, name: str | None) -> None:
    assert anywhere_name(pattern) == name
