"""A base URL refused for a typo does not print the login it carries.

``AgentConfig(base_url=...)`` names the URL in its refusal (a bad port, no host, not http);
the refusal goes to a terminal, a CI log or a service's log, and a gateway's login in the URL
(``http://user:PW@gateway/v1``) went with it. An unclosed IPv6 bracket raised ValueError
(the CLI's 'internal error') instead of the refusal.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.mcp_config import McpServerConfig
from rho_domain.permissions import PermissionProfile


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://gw:pw-cfg-6d2e@gateway:99999/v1", "the port must be a number"),
        ("http://gw:pw-cfg-6d2e@:8080/v1", "names no host"),
        ("ftp://gw:pw-cfg-6d2e@gateway/v1", "is not an http:// or https:// URL"),
        ("http://gw:pw-cfg-6d2e@[::1/v1", "is not a URL"),
        # httpx's InvalidURL at the first request before
        ("http://gw:pw-cfg-6d2e@gateway/v1\r\n", "has a line break at character 33"),
    ],
)
def test_a_refused_base_url_hides_its_password(url: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        AgentConfig(base_url=url)
    message = str(caught.value)
    assert said in message
    assert "pw-cfg-6d2e" not in message
    assert "gw:***@" in message


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("https://gw:pw-cfg-6d2e@mcp.example:x/mcp", "the port must be a number"),
        ("http://gw:pw-cfg-6d2e@mcp.example:99999/mcp", "the port must be a number"),
        ("http://gw:pw-cfg-6d2e@[::1/mcp", "is not a URL"),
        ("http://gw:pw-cfg-6d2e@/mcp", "names no host"),
        ("http://gw:pw-cfg-6d2e@mcp.example/mcp\t", "has the control character '\\t'"),
    ],
)
def test_an_mcp_url_is_checked_as_the_base_url_is_when_the_config_is_built(
    url: str, said: str
) -> None:
    """Before, an MCP server's URL was only checked for its scheme: the config was built and
    the server's first message raised httpx.InvalidURL (a traceback, the password in it) for
    the bad ports and the open bracket, and a connection error for the missing host."""
    for build in (
        lambda server: AgentConfig(mcp_servers={"docs": server}),
        lambda server: PermissionProfile(name="p", mcp_servers={"docs": server}),
    ):
        with pytest.raises(ConfigError) as caught:
            build(McpServerConfig(url=url))
        message = str(caught.value)
        assert "mcp_servers.docs.url" in message
        assert said in message
        assert "pw-cfg-6d2e" not in message


def test_a_password_holding_a_raw_hash_slash_or_question_mark_is_refused_hidden() -> None:
    """A URL's login ends at a raw '#', '/' or '?'. Before: ``http://gw:pw#x@gateway/v1`` was
    refused for its port ("pw"), the password shown in the clear, and
    ``http://gw:123#x@gateway/v1`` was accepted: requests went to the host "gw", port 123."""
    for password in ("pw-cfg#6d2e", "123#pw-cfg", "12/pw-cfg", "pw?cfg"):
        url = f"http://gw:{password}@gateway.test/v1"
        builds: tuple[Callable[[str], object], ...] = (
            lambda given: AgentConfig(base_url=given),
            lambda given: AgentConfig(mcp_servers={"docs": McpServerConfig(url=given)}),
        )
        for build in builds:
            with pytest.raises(ConfigError) as caught:
                build(url)
            message = str(caught.value)
            assert "'http://gw:***@gateway.test/v1': its password holds a '/', '?'" in message
            assert "percent-encode them in the password (%2F, %3F, %23)" in message
            assert "cfg" not in message
    for kept in ("http://gw:p@ss@gateway.test/v1", "http://gw:pw@gateway.test/v1?to=a@b"):
        assert AgentConfig(base_url=kept).base_url == kept


def test_a_key_in_a_urls_query_is_hidden_wherever_a_login_is() -> None:
    # redmcp25: hide_url_logins hid a URL's password only: an MCP gateway's or a model
    # proxy's ?api_key=KEY was quoted whole in every error naming the URL (the model and the
    # trace read them). A parameter named as a key is hidden now; a ${VAR} and a name whose
    # last word is no secret's (max_tokens, mytoken) are not.
    from rho_domain.url_logins import hide_url_logins

    url = "https://u:pw@gw/mcp?team=ops&api_key=k1&apiKey=k2&key=k3&access_token=k4&x-api-key=k5"
    assert hide_url_logins(f"refused {url}#top; retry") == (
        "refused https://u:***@gw/mcp?team=ops&api_key=***&apiKey=***&key=***"
        "&access_token=***&x-api-key=***#top; retry"
    )
    kept = "https://gw/mcp?token=${GW_TOKEN}&max_tokens=5&mytoken=m"
    assert hide_url_logins(kept) == kept
