"""How a wrapper script git runs as ssh is read (``rho_domain.ssh_wrappers``), and which
words of an ssh command line may name one (``git_named_files.named_by``): pure, no files."""

from __future__ import annotations

import pytest

from rho_domain.errors import ExecutorError
from rho_domain.git_named_files import named_by
from rho_domain.ssh_wrappers import (
    WRAPPER_BYTES,
    on_search_path,
    wrapper_commands,
    wrapper_script,
)


def test_only_an_elf_file_is_a_program_and_a_script_past_the_bound_is_refused() -> None:
    header = bytearray(64)  # a 64-bit little-endian shared object, one program header
    header[:7] = b"\x7fELF\x02\x01\x01"
    header[16], header[54], header[56] = 3, 56, 1
    assert wrapper_script(bytes(header), "/usr/bin/ssh") is None
    # the magic alone: the kernel refuses it (ENOEXEC) and git runs it with the shell
    fake = b"\x7fELF\nexec ssh -i deploy/k\n"
    assert wrapper_script(fake + bytes(header[len(fake) :]), "bin/w") is not None
    assert (
        wrapper_script(b"#!/bin/sh\n#\0\nexec ssh -i k\n", "w") == "#!/bin/sh\n#\nexec ssh -i k\n"
    )
    with pytest.raises(ExecutorError, match="the script bin/w, which git runs as ssh, is larger"):
        wrapper_script(b"#" * (WRAPPER_BYTES + 1), "bin/w")


def _keys(script: str) -> tuple[str, ...]:
    return named_by(("core", "sshcommand", line) for line in wrapper_commands(script)).secrets


def test_every_command_line_is_read_as_the_shell_gives_it() -> None:
    # a continued line, variables set to literals, no word reading "ssh", Python's call
    script = 'KEY="deploy/k"\nexport D=keys\nexec "${SSH:-ssh}" \\\n  -i "$KEY" -i ${D}/b "$@"\n'
    assert {"deploy/k", "keys/b"} <= set(_keys(script))
    assert _keys('os.execvp("ssh", ["ssh", "-i", "deploy/py"])\n') == ("deploy/py",)
    # a variable set twice (each value read), a default, a value naming another variable
    script = 'K=a/k\n[ -n "$CI" ] && K="b/k"\nssh -i "$K" -i "${J:-d/k}"\nD=$X/k\nssh -i "$D"\n'
    assert set(_keys(script)) >= {"a/k", "b/k", "d/k", "/k"}  # X unset: empty, as in sh


def test_a_bare_name_is_looked_for_in_every_entry_a_relative_one_below_the_bases() -> None:
    assert on_search_path("gssh", ":bin:/usr/bin", ("/ws", "/top")) == (
        "/ws/./gssh",
        "/top/./gssh",
        "/ws/bin/gssh",
        "/top/bin/gssh",
        "/usr/bin/gssh",
    )


def test_ssh_data_is_no_program_and_a_command_string_is_a_command_line() -> None:
    named = named_by([("core", "sshcommand", "ssh -F conf/big.cfg -i conf/k bin/x")])
    assert named.ssh_programs == ("ssh", "bin/x")  # a -F file past 64 KiB: no script
    named = named_by([("core", "sshcommand", "sh -c 'exec ssh -i deploy/k \"$@\"' --")])
    assert "deploy/k" in named.secrets
    named = named_by([("core", "sshcommand", "ssh -o 'ProxyCommand=bin/jump %h'")])
    assert "bin/jump" in named.ssh_programs
