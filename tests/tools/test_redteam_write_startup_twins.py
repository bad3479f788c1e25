"""The twins of the start-up files already refused are never written either, in any mode.

Red-team pass (redwrite17) under ``file_write: full``: .yarnrc and .yarn/releases were
refused, but Yarn 2+'s .yarnrc.yml was written, whose yarnPath (and plugins) name the
JavaScript every yarn command in the project runs; .bashrc and .config/xonsh were refused, but
xonsh's .xonshrc was written; .gdbinit, but gdb's .gdbearlyinit and .config/gdb/gdbinit; and
.Rprofile, .irbrc and .pryrc (read from the current directory as from the home), but the
REPLs' twins read from there too: GHCi's .ghci (``:!`` runs a command), Octave's .octaverc,
R's .Renviron (its R_PROFILE_USER names the R code run at start); and .zed was refused, but
Helix's .helix, whose languages.toml names the language servers it starts, was written."""

from __future__ import annotations

from pathlib import Path

import pytest
from write_backends import KINDS, writer

from rho_domain.errors import SensitivePath, ToolError
from rho_domain.permissions import FileWriteMode

TWINS = {
    ".yarnrc.yml": b"yarnPath: scripts/x.cjs\n",
    "web/.YARNRC.YML": b"plugins:\n  - path: x.cjs\n",
    ".xonshrc": b"$(id)\n",
    ".gdbearlyinit": b"shell id\n",
    ".config/gdb/gdbinit": b"shell id\n",
    ".ghci": b":! id\n",
    "analysis/.octaverc": b"system('id');\n",
    ".Renviron": b"R_PROFILE_USER=x.R\n",
    ".helix/languages.toml": b'[language-server.x]\ncommand = "sh"\n',
}


@pytest.mark.parametrize("kind", KINDS)
async def test_a_start_up_files_twin_is_never_written(tmp_path: Path, kind: str) -> None:
    executor = writer(kind, tmp_path, FileWriteMode.FULL)
    refused: dict[str, str] = {}
    try:
        await executor.write("notes.txt", b"ordinary\n", overwrite=True)  # the writer writes
        for path, data in TWINS.items():
            with pytest.raises(SensitivePath) as caught:
                await executor.write(path, data, overwrite=True)
            refused[path] = str(caught.value)
            # nothing was left, on any backend's disk (.yarnrc.yml is a secret too: its
            # npmAuthToken, so the read is refused before it looks)
            with pytest.raises(ToolError, match=r"no such file|may not be read"):
                await executor.read(path)
            assert not (tmp_path / path).exists()
        assert await executor.read("notes.txt") == b"ordinary\n"
    finally:
        await executor.aclose()
    for path, message in refused.items():
        assert repr(path) in message
        assert "agents never write" in message, message
