"""The model clients' sockets (``network.AsyncioBackend``) over real sockets: streaming through
the pool, TLS against a local server with a certificate made here, timeouts and refusals
mapped as httpcore's own backends map them (and into our errors naming the URL), a connection
the server closed while idle not reused, and a request's head and body in one send.

Timeouts are real (a silent server) but the tests assert outcomes, never durations.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpcore
import httpx
import pytest
from _model_support import collect, text_of
from tls_support import self_signed

from rho_adapters.fakes import FakeClock
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply
from rho_adapters.model import ModelEndpoint, OpenAIChatModel, RetryPolicy, Timeouts
from rho_adapters.model.lean_pool import LeanConnectionPool
from rho_adapters.model.network import AsyncioBackend, AsyncioStream
from rho_adapters.model.tls import PlainTransport
from rho_domain.errors import ModelConnectionError, ModelTimeout
from rho_domain.messages import UserMessage
from rho_domain.model import ModelRequest

LIMITS = httpx.Limits(max_connections=4)


def _request() -> ModelRequest:
    return ModelRequest(model="m", system="s", messages=(UserMessage("hi"),))


class _Counting(AsyncioBackend):
    """The backend, keeping the streams it made (their ``sends``)."""

    def __init__(self) -> None:
        self.streams: list[AsyncioStream] = []

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        stream = await super().connect_tcp(*args, **kwargs)
        assert isinstance(stream, AsyncioStream)
        self.streams.append(stream)
        return stream


def _transport(backend: httpcore.AsyncNetworkBackend, ssl_context: Any = None) -> PlainTransport:
    transport = PlainTransport(LIMITS, ssl_context)
    transport._pool = LeanConnectionPool(network_backend=backend, ssl_context=ssl_context)
    return transport


def _free_port() -> int:
    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


# --- plain HTTP ------------------------------------------------------------------------------


def test_the_model_clients_pool_uses_asyncios_sockets() -> None:
    assert type(PlainTransport(LIMITS)._pool._network_backend) is AsyncioBackend


async def test_a_stream_arrives_through_the_pool_delta_by_delta() -> None:
    with LoopbackServer([text_reply("one two three four five six", deltas=6)] * 2) as server:
        backend = _Counting()
        async with httpx.AsyncClient(transport=_transport(backend)) as client:
            model = OpenAIChatModel(
                model="m",
                endpoint=ModelEndpoint(base_url=server.base_url),
                http=client,
                clock=FakeClock(),
            )
            assert text_of(await collect(model, _request())) == "one two three four five six"
            assert text_of(await collect(model, _request())) == "one two three four five six"
            await model.aclose()
        assert server.connections == 1  # kept alive and reused
        (stream,) = backend.streams
        assert stream.sends == 2  # each request's head and body in one send


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers each request with its body (Content-Length or chunked), kept alive."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode().lower().split("\r\n")
            sizes = [int(x.split(":")[1]) for x in lines if x.startswith("content-length")]
            body = b""
            if any(x.startswith("transfer-encoding: chunked") for x in lines):
                while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
                    body += (await reader.readexactly(size + 2))[:-2]
                await reader.readuntil(b"\r\n")
            elif sizes:
                body = await reader.readexactly(sizes[0])
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


@asynccontextmanager
async def _echo_client(backend: AsyncioBackend) -> AsyncIterator[httpx.AsyncClient]:
    listener = await asyncio.start_server(_echo, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", transport=_transport(backend)
    ) as client:
        yield client
    listener.close()
    await listener.wait_closed()


async def test_a_request_without_a_body_a_post_and_a_chunked_one_are_answered() -> None:
    backend = _Counting()

    async def chunks() -> AsyncIterator[bytes]:
        for part in (b"one ", b"two ", b"three"):
            yield part

    async with _echo_client(backend) as client:
        for i in range(3):
            assert (await client.post("/chat", json={"n": i})).json() == {"n": i}
        assert (await client.get("/")).content == b""
        assert (await client.post("/", content=chunks())).content == b"one two three"
    (stream,) = backend.streams
    # 3 POSTs in one send each (httpcore alone: 6); the GET in one; the chunked POST's head
    # with its first chunk, then two chunks and the last one (httpcore alone: 5).
    assert stream.sends == 3 + 1 + 4


async def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    connections = 0

    async def answer_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()  # while the client keeps the connection for the next request

    listener = await asyncio.start_server(answer_once, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    backend = _Counting()
    async with httpx.AsyncClient(transport=_transport(backend)) as client:
        assert (await client.get(f"http://127.0.0.1:{port}/")).text == "ok"
        first = backend.streams[0]
        for _ in range(100):  # the FIN arrives a moment after the close
            if first.get_extra_info("is_readable"):
                break
            await asyncio.sleep(0.01)
        assert first.get_extra_info("is_readable") is True
        assert (await client.get(f"http://127.0.0.1:{port}/")).text == "ok"
    assert connections == 2
    listener.close()
    await listener.wait_closed()


async def test_an_open_idle_connection_is_not_readable_and_names_its_ends() -> None:
    listener = await asyncio.start_server(_echo, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
    assert stream.get_extra_info("is_readable") is False
    assert stream.get_extra_info("server_addr") == ("127.0.0.1", port)
    assert stream.get_extra_info("client_addr")[0] == "127.0.0.1"
    assert stream.get_extra_info("socket") is not None
    assert stream.get_extra_info("ssl_object") is None
    await stream.write(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
    assert (await stream.read(1024)).endswith(b"\r\n\r\n")
    await stream.aclose()
    listener.close()
    await listener.wait_closed()


async def test_reads_take_at_most_max_bytes_and_a_large_body_arrives_whole() -> None:
    body = bytes(range(256)) * 8192  # 2 MiB: over the read limit, so reading pauses

    async def send(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"0123456789" + body)
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(send, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
    await stream.write(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
    assert await stream.read(4, timeout=5) == b"0123"
    assert await stream.read(6, timeout=5) == b"456789"
    await asyncio.sleep(0.05)  # let the loop receive up to its limit
    received = b""
    while chunk := await stream.read(65536, timeout=5):
        assert len(chunk) <= 65536
        received += chunk
    assert received == body
    await stream.aclose()
    listener.close()
    await listener.wait_closed()


async def test_a_server_that_reads_nothing_is_a_write_timeout() -> None:
    async def deaf(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    listener = await asyncio.start_server(deaf, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
    with pytest.raises(httpcore.WriteTimeout):
        await stream.write(b"x" * (64 << 20), timeout=0.1)
    await stream.aclose()
    listener.close()


# --- timeouts and refusals -------------------------------------------------------------------


async def test_a_silent_server_is_a_read_timeout_and_our_idle_timeout() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1)
        await asyncio.sleep(30)

    listener = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
    await stream.write(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
    with pytest.raises(httpcore.ReadTimeout):
        await stream.read(1024, timeout=0.05)
    await stream.aclose()
    async with httpx.AsyncClient(transport=_transport(AsyncioBackend())) as client:
        endpoint = ModelEndpoint(
            base_url=f"http://127.0.0.1:{port}/v1",
            timeouts=Timeouts(idle=0.1),
            retry=RetryPolicy(max_retries=0),
        )
        model = OpenAIChatModel(model="m", endpoint=endpoint, http=client, clock=FakeClock())
        with pytest.raises(ModelTimeout) as info:
            await collect(model, _request())
        await model.aclose()
    assert "the model server sent nothing for 0.1 s (idle timeout)" in str(info.value)
    listener.close()


async def test_a_refused_connection_is_a_connect_error_naming_the_url() -> None:
    port = _free_port()
    with pytest.raises(httpcore.ConnectError, match=r"Connect call failed \('127.0.0.1'"):
        await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
    with pytest.raises(httpcore.ConnectError, match="port must be 0-65535"):
        await AsyncioBackend().connect_tcp("127.0.0.1", 99999, timeout=5)
    url = f"http://127.0.0.1:{port}/v1"
    message = await _connection_error_at(url)
    assert f"model 'm' at {url}" in message
    assert "is the server running there?" in message


async def test_a_base_url_with_a_login_is_named_without_its_password() -> None:
    """A base URL carrying a proxy's or gateway's login (http://user:PW@host/v1): the error
    that names the endpoint went to the trace, --json and the terminal with the password."""
    port = _free_port()
    message = await _connection_error_at(f"http://gateway:pw-gw-6a1f@127.0.0.1:{port}/v1")
    assert f"model 'm' at http://gateway:***@127.0.0.1:{port}/v1" in message
    assert "pw-gw-6a1f" not in message


async def _connection_error_at(url: str) -> str:
    """What our model client says when it cannot connect to ``url`` (no retries)."""
    async with httpx.AsyncClient(transport=_transport(AsyncioBackend())) as client:
        endpoint = ModelEndpoint(base_url=url, retry=RetryPolicy(max_retries=0))
        model = OpenAIChatModel(model="m", endpoint=endpoint, http=client, clock=FakeClock())
        with pytest.raises(ModelConnectionError) as info:
            await collect(model, _request())
        await model.aclose()
    return str(info.value)


class _TwoAddressLoop(asyncio.SelectorEventLoop):
    """A real loop whose resolver gives ``several.test`` two loopback addresses (this
    machine's hosts file has no name with two)."""

    async def getaddrinfo(self, host: Any, port: Any, **kwargs: Any) -> Any:
        if host == "lcoalhost.test":  # as a resolver answers a typo, without asking one
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if host != "several.test":
            return await super().getaddrinfo(host, port, **kwargs)
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))
            for address in ("127.0.0.1", "127.0.0.2")
        ]


def test_a_host_whose_every_address_refuses_names_each_in_our_error() -> None:
    port = _free_port()
    url = f"http://several.test:{port}/v1"

    with asyncio.Runner(loop_factory=_TwoAddressLoop) as runner:
        message = runner.run(_connection_error_at(url))
    assert "connection to the model server failed: Multiple exceptions:" in message
    assert f"('127.0.0.1', {port})" in message
    assert f"('127.0.0.2', {port})" in message
    assert f"model 'm' at {url}" in message
    assert "is the server running there?" in message


# --- TLS -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for ``localhost`` (only)."""
    return self_signed(tmp_path_factory.mktemp("tls"), name="localhost", alt="DNS:localhost")


@asynccontextmanager
async def _tls_in_front_of(server: LoopbackServer, cert: Path, key: Path) -> AsyncIterator[int]:
    """A TLS server on loopback that passes each connection's bytes to ``server``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        inner_reader, inner_writer = await asyncio.open_connection("127.0.0.1", server.port)
        await asyncio.gather(pipe(reader, inner_writer), pipe(inner_reader, writer))

    listener = await asyncio.start_server(relay, "127.0.0.1", 0, ssl=context)
    yield listener.sockets[0].getsockname()[1]
    listener.close()


async def _tls_call(url: str, context: ssl.SSLContext) -> str:
    async with httpx.AsyncClient(transport=_transport(AsyncioBackend(), context)) as client:
        endpoint = ModelEndpoint(base_url=url, retry=RetryPolicy(max_retries=0))
        model = OpenAIChatModel(model="m", endpoint=endpoint, http=client, clock=FakeClock())
        try:
            return text_of(await collect(model, _request()))
        finally:
            await model.aclose()


async def test_https_to_a_trusted_certificate_streams(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    trusting = ssl.create_default_context(cafile=str(cert))
    with LoopbackServer([text_reply("over TLS, streamed", deltas=4)]) as server:
        async with _tls_in_front_of(server, cert, key) as port:
            assert await _tls_call(f"https://localhost:{port}/v1", trusting) == (
                "over TLS, streamed"
            )
            plain = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            tls = await plain.start_tls(trusting, server_hostname="localhost", timeout=5)
            assert tls.get_extra_info("ssl_object").server_hostname == "localhost"
            assert tls.get_extra_info("is_readable") is False
            await tls.aclose()


async def test_https_untrusted_or_for_another_name_is_our_error_naming_the_url(
    certificate: tuple[Path, Path],
) -> None:
    cert, key = certificate
    with LoopbackServer([]) as server:
        async with _tls_in_front_of(server, cert, key) as port:
            untrusted = f"https://localhost:{port}/v1"
            with pytest.raises(ModelConnectionError) as info:
                await _tls_call(untrusted, ssl.create_default_context())
            assert "CERTIFICATE_VERIFY_FAILED" in str(info.value)
            assert f"at {untrusted}" in str(info.value)
            other_name = f"https://127.0.0.1:{port}/v1"  # the certificate names localhost only
            trusting = ssl.create_default_context(cafile=str(cert))
            with pytest.raises(ModelConnectionError) as info:
                await _tls_call(other_name, trusting)
            assert "IP address mismatch" in str(info.value)
            assert f"at {other_name}" in str(info.value)
        assert server.requests == []


def test_a_host_name_that_does_not_resolve_is_named_as_such() -> None:
    """``--base-url http://lcoalhost:11434/v1``. Before: "Name or service not known ... is the
    server running there?", which sends the user to start a server that is running."""
    with asyncio.Runner(loop_factory=_TwoAddressLoop) as runner:
        message = runner.run(_connection_error_at("http://lcoalhost.test:11434/v1"))
    assert "the host name 'lcoalhost.test' could not be resolved (DNS)" in message
    assert "check its spelling in the base URL (--base-url, OPENAI_BASE_URL" in message
    assert "is the server running there?" not in message
