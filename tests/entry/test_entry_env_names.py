"""A ``RHO_AGENT_*`` variable misspelt is named, with the one meant.

Before, ``RHO_AGENT_PROFLE=developer`` was ignored without a word: the run went on under the
readonly profile, and only the header's ``profile readonly`` hinted that the variable had
not been read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rho_domain.permissions import PermissionProfile
from rho_entry.config.env_settings import ENV_VARS, OTHER_VARIABLES
from rho_entry.config.settings import resolve_settings

ROOT = Path(__file__).resolve().parents[2]


def test_a_misspelt_variable_is_named_with_the_one_meant(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    env = {
        "RHO_AGENT_HOME": str(tmp_path),
        "RHO_AGENT_PROFLE": "developer",
        "RHO_AGENT_MODLE": "m",
        "RHO_AGENT_DEPLOY_TAG": "blue",  # near no variable of ours: someone else's
    }
    with caplog.at_level("WARNING", logger="rho_entry"):
        settings = resolve_settings({}, env)
    profile = settings.config.profile
    assert isinstance(profile, PermissionProfile)
    assert profile.name == "readonly"  # ignored, as before, but said
    assert [r.getMessage() for r in caplog.records] == [
        "RHO_AGENT_MODLE is set but rho-agent reads no such variable: did you mean "
        "RHO_AGENT_MODEL? (it was ignored)",
        "RHO_AGENT_PROFLE is set but rho-agent reads no such variable: did you mean "
        "RHO_AGENT_PROFILE? (it was ignored)",
    ]


def test_every_variable_the_sources_read_is_known() -> None:
    """A variable added without being listed would be called misspelt when it is set."""
    known = {name for names in ENV_VARS.values() for name in names} | OTHER_VARIABLES
    found: set[str] = set()
    for path in (ROOT / "src").rglob("*"):
        if path.suffix in (".py", ".sh"):
            found |= set(re.findall(r"(?<![_A-Z])RHO_AGENT_[A-Z0-9_]*[A-Z0-9]", path.read_text()))
    found.discard("RHO_AGENT_SERVER")  # a prefix in a message, not a variable
    assert found - known == set()
