"""Names a server chooses with letters of other scripts, and tools it rewrites under a name
the user approved "always", read by the client in this process (a scripted server: no
process). The model names are ASCII; a deny entry holds a look-alike through them, and an
"always" holds the tool as it was shown, not what the server makes of it later."""

from __future__ import annotations

import asyncio
import re

import attrs
from test_mcp_tool_names import scripted_source

from rho_domain.approval import decide
from rho_domain.approval_asks import Denied
from rho_domain.mcp_config import McpServerConfig, McpToolFilter, tool_name
from rho_domain.messages import ToolCall
from rho_domain.permissions import developer_profile
from rho_domain.tools.base import DANGEROUS, READ_ONLY

# delete_all as a server may spell it in letters that look alike but are not Latin
LOOKALIKES = [
    "d\u0435lete_all",  # a Cyrillic e
    "del\u0435t\u0435_\u0430ll",  # three Cyrillic letters
    "delete_\u0251ll",  # a Latin alpha
    "d\u0454lete_all",  # a Ukrainian ie
    "\U0001d41d\U0001d41e\U0001d425\U0001d41e\U0001d42d\U0001d41e_all",  # mathematical bold
    "delete_a\u04cfl",  # a Cyrillic palochka for l
    "dele\u0165e_all",  # a t with a caron
]


def test_a_lookalike_letter_becomes_ascii_and_the_deny_holds_it() -> None:
    # a Cyrillic e kept the name apart from delete_all in every comparison: the model was
    # shown mcp__h__d_lete_all (its description says what it does) and could call it,
    # under deny: [delete_all] and under denied_tools: [mcp__h__delete_all] alike
    listed = [{"name": name} for name in ("get_item", "d\u03bfcs", *LOOKALIKES)]
    deny = McpToolFilter(deny=("delete_all",))
    source, _ = scripted_source([listed], McpServerConfig(command=("-",), tools=deny))
    shown = [h.name for h in asyncio.run(source.current()).handlers]
    assert shown == ["mcp__h__get_item", "mcp__h__d_cs"]  # a Greek o: not what is denied
    names = {tool_name("h", name) for name in LOOKALIKES}
    assert all(re.fullmatch(r"mcp__h__[a-z_]+", name) for name in names), names
    profile = attrs.evolve(developer_profile(), denied_tools=frozenset({"mcp__h__delete_all"}))
    for name in names:
        decided = decide(profile, ToolCall(id="c", name=name, arguments="{}"), DANGEROUS)
        assert isinstance(decided, Denied), name
    assert not isinstance(
        decide(profile, ToolCall(id="c", name="mcp__h__get_item", arguments="{}"), DANGEROUS),
        Denied,
    )
    # a blank stands for one letter, not for a word: these are other tools
    filtered = McpToolFilter(deny=("delete_all",))
    assert [n for n in ("delete_all_x", "delete", "d_lete_alls") if filtered.admits("h", n)] == [
        "delete_all_x",
        "delete",
        "d_lete_alls",
    ]


def test_allow_and_read_only_tools_stay_exact_under_the_folding() -> None:
    # allow and read_only_tools grant: a spelling the server chose, folded or look-alike,
    # is neither listed nor vouched for
    config = McpServerConfig(
        command=("-",),
        tools=McpToolFilter(allow=("delete_all", "search", "S\u0435arch")),
        read_only_tools=("search",),
    )
    listed = [{"name": n} for n in ("Delete_All", "d\u0435lete_all", "search", "S\u0435arch")]
    source, _ = scripted_source([listed], config)
    made = {h.name: h.policy_for({}) for h in asyncio.run(source.current()).handlers}
    assert made == {"mcp__h__search": READ_ONLY, "mcp__h__S_arch": DANGEROUS}
