"""The https endpoints' SSL context is built without httpx (``tls_context``), as httpx builds
it: compared with ``httpx.create_ssl_context()`` setting by setting, used by the pooled
``CoreClient`` against a real TLS server on loopback, and refusing a certificate it does not
trust with our error naming the URL. A ``SSL_CERT_FILE`` that is not a file of certificates
is a ConfigError naming the variable and the file (httpx raised ``FileNotFoundError``,
naming neither). The two variables are read from the environment the wiring is given, never
from the process's (``CaTrust``, carried in ``ProxyRoutes.trust``)."""

from __future__ import annotations

import os
import ssl
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from _model_support import collect, text_of
from tls_support import self_signed

from rho_adapters.fakes import FakeClock
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply
from rho_adapters.model import ClientPool, ModelEndpoint, OpenAIChatModel, RetryPolicy, tls_context
from rho_adapters.model.core_client import CoreClient
from rho_adapters.model.proxies import ProxyRoutes
from rho_adapters.model.tls import shared_ssl_context
from rho_adapters.model.tls_context import MOST_CA_BYTES, CaTrust
from rho_domain.errors import ConfigError, ModelConnectionError
from rho_domain.messages import UserMessage
from rho_domain.model import ModelRequest


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed CA certificate for 127.0.0.1."""
    return self_signed(tmp_path_factory.mktemp("tls"))


def _seen(context: ssl.SSLContext) -> dict[str, Any]:
    """What can be read of a client context's settings."""
    return {
        "protocol": context.protocol,
        "verify_mode": context.verify_mode,
        "check_hostname": context.check_hostname,
        "options": context.options,
        "verify_flags": context.verify_flags,
        "minimum_version": context.minimum_version,
        "maximum_version": context.maximum_version,
        "post_handshake_auth": context.post_handshake_auth,
        "security_level": context.security_level,
        "store": context.cert_store_stats(),
        "cas": sorted(str(ca["subject"]) for ca in context.get_ca_certs()),
    }


def test_the_context_is_httpx_s_for_each_environment(
    certificate: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, _ = certificate
    hashed = tmp_path / "certs"  # a directory is read at each handshake: nothing loaded now
    hashed.mkdir()
    settings: dict[str, dict[str, str]] = {
        "certifi's bundle": {},
        "SSL_CERT_FILE": {"SSL_CERT_FILE": str(cert)},
        "SSL_CERT_DIR": {"SSL_CERT_DIR": str(hashed)},
        "both: the file wins": {"SSL_CERT_FILE": str(cert), "SSL_CERT_DIR": str(hashed)},
        "an empty file is unset": {"SSL_CERT_FILE": "", "SSL_CERT_DIR": str(hashed)},
        "both empty: certifi's": {"SSL_CERT_FILE": "", "SSL_CERT_DIR": ""},
    }
    loaded = {}
    for name, environ in settings.items():
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        for variable, value in environ.items():
            monkeypatch.setenv(variable, value)
        ours = _seen(tls_context.verifying_context(CaTrust.from_environ(environ)))
        assert ours == _seen(httpx.create_ssl_context()), name
        assert ours["verify_mode"] == ssl.CERT_REQUIRED, name
        assert ours["check_hostname"], name
        assert ours["minimum_version"] == ssl.TLSVersion.TLSv1_2, name
        loaded[name] = ours["store"]["x509_ca"]
    assert loaded["SSL_CERT_FILE"] == loaded["both: the file wins"] == 1
    assert loaded["SSL_CERT_DIR"] == loaded["an empty file is unset"] == 0
    assert loaded["certifi's bundle"] == loaded["both empty: certifi's"] > 100


@pytest.fixture
def fresh_shared_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's shared contexts not made yet (another test of this worker may have made
    them), so the ones this test makes are made again; restored after."""
    monkeypatch.setattr(tls_context, "_ssl_contexts", {})


@pytest.mark.usefixtures("fresh_shared_context")
def test_a_cert_file_that_is_not_one_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    not_pem = tmp_path / "notes.txt"
    not_pem.write_text("not a certificate\n")
    # Before: OpenSSL opened a FIFO and waited for a writer forever, under the lock every
    # https client waits on, and read a bundle of any size (100 MB: 12 s of CPU, 300 MB).
    fifo = tmp_path / "bundle.fifo"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.pem"
    with huge.open("wb") as sparse:
        sparse.truncate(MOST_CA_BYTES + 1)
    cases = (
        (tmp_path / "missing.pem", "No such file"),
        (not_pem, "NO_CERTIFICATE"),
        (tmp_path, ": it is a directory;"),
        (fifo, ": it is a FIFO;"),
        (Path("/dev/zero"), ": it is not a regular file;"),
        (huge, f": it holds 16,777,217 bytes, more than the {MOST_CA_BYTES:,} a CA bundle"),
    )
    said: list[str] = []

    def load_each() -> None:
        for path, _ in cases:
            with pytest.raises(ConfigError) as info:
                shared_ssl_context(CaTrust.from_environ({"SSL_CERT_FILE": str(path)}))
            said.append(str(info.value))

    loading = threading.Thread(target=load_each, daemon=True)
    loading.start()
    loading.join(60)  # not a speed bound: the FIFO blocked forever before
    assert not loading.is_alive(), f"blocked after {len(said)} of {len(cases)}"
    for (path, why), message in zip(cases, said, strict=True):
        assert message.startswith(f"SSL_CERT_FILE={path} cannot be loaded as CA certificates")
        assert why in message, message
        assert "set it to a file of PEM certificates" in message


def _request() -> ModelRequest:
    return ModelRequest(model="m", system="s", messages=(UserMessage("hi"),))


async def _call(url: str, pool: ClientPool, environ: dict[str, str] | None = None) -> str:
    proxies = ProxyRoutes.from_environ(environ or {})  # as the wiring builds them
    endpoint = ModelEndpoint(base_url=url, retry=RetryPolicy(max_retries=0), proxies=proxies)
    model = OpenAIChatModel(model="m", endpoint=endpoint, http=pool, clock=FakeClock())
    try:
        return text_of(await collect(model, _request()))
    finally:
        await model.aclose()


@pytest.mark.usefixtures("fresh_shared_context")
async def test_https_through_the_core_client_trusts_as_httpx_and_names_the_url(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate
    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    serving.load_cert_chain(cert, key)
    serving.set_alpn_protocols(["http/1.1"])
    replies = [text_reply("over TLS", deltas=2)]
    with LoopbackServer(replies, ssl_context=serving) as server:
        url = server.base_url
        assert url.startswith("https://127.0.0.1:")
        # certifi's bundle does not hold the loopback certificate: refused, naming the URL,
        # although the process's SSL_CERT_FILE names it: the wiring's environment decides
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        with pytest.raises(ModelConnectionError) as info:
            await _call(url, ClientPool())
        assert "CERTIFICATE_VERIFY_FAILED" in str(info.value)
        assert f"at {url}" in str(info.value)
        assert server.requests == []
        # trusted through the SSL_CERT_FILE of the environment given, as httpx reads it
        monkeypatch.delenv("SSL_CERT_FILE")
        trusted = {"SSL_CERT_FILE": str(cert)}
        pool = ClientPool()
        lease = pool.acquire(url, {}, trust=CaTrust.from_environ(trusted))
        assert type(lease.client) is CoreClient
        pool.release(lease)
        assert await _call(url, pool, trusted) == "over TLS"
        await pool.aclose()
    assert len(server.requests) == 1
    assert server.alpn[-1] == "http/1.1"  # offered by httpcore, as through httpx's client
