"""A base URL refused for a typo does not print the login it carries.

``AgentConfig(base_url=...)`` names the URL in its refusal (a bad port, no host, not http);
the refusal goes to a terminal, a CI log or a service's log, and a gateway's login in the URL
(``http://user:PW@gateway/v1``) went with it. An unclosed IPv6 bracket raised ValueError
(the CLI's 'internal error') instead of the refusal.
"""

from __future__ import annotations

import pytest

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://gw:pw-cfg-6d2e@gateway:99999/v1", "the port must be a number"),
        ("http://gw:pw-cfg-6d2e@:8080/v1", "names no host"),
        ("ftp://gw:pw-cfg-6d2e@gateway/v1", "is not an http:// or https:// URL"),
        ("http://gw:pw-cfg-6d2e@[::1/v1", "is not a URL"),
    ],
)
def test_a_refused_base_url_hides_its_password(url: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        AgentConfig(base_url=url)
    message = str(caught.value)
    assert said in message
    assert "pw-cfg-6d2e" not in message
    assert "gw:***@" in message
