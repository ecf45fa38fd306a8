"""TLS against a real HTTPS server whose certificate comes from a throwaway CA (trustme)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trustme

from memserver.clients.config import EndpointSettings, TLSSettings
from memserver.clients.laya import LayaClient, NoulQuestion
from memserver.clients.llm import LLMClient
from memserver.clients.tls import async_http_client, http_client, ssl_context
from memserver.errors import ConfigError, LayaError, LLMError
from tests.fixtures.llm_server import LayaServer, LLMServer, serve_app

USER = [{"role": "user", "content": "hi"}]


@dataclass(frozen=True)
class HTTPSServers:
    llm: LLMServer
    laya: LayaServer
    ca_file: Path
    other_ca_file: Path


@pytest.fixture(scope="module")
def https(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HTTPSServers]:
    folder = tmp_path_factory.mktemp("tls")
    ca, other_ca = trustme.CA(), trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    certfile, keyfile = folder / "server.pem", folder / "server.key"
    cert.cert_chain_pems[0].write_to_path(str(certfile))
    cert.private_key_pem.write_to_path(str(keyfile))
    ca_file, other_ca_file = folder / "ca.pem", folder / "other-ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    other_ca.cert_pem.write_to_path(str(other_ca_file))
    llm, laya = LLMServer(), LayaServer()
    tls_args: dict[str, Any] = {
        "certfile": str(certfile),
        "keyfile": str(keyfile),
        "ca_file": str(ca_file),
    }
    with serve_app(llm.app(), **tls_args) as llm_url, serve_app(laya.app(), **tls_args) as laya_url:
        llm.url, laya.url = llm_url, laya_url
        yield HTTPSServers(llm, laya, ca_file, other_ca_file)


def llm_endpoint(server: LLMServer, tls: TLSSettings) -> EndpointSettings:
    return EndpointSettings(
        name="llm", base_url=server.base_url, model=server.model, timeout=5.0, tls=tls
    )


def test_servers_really_speak_https(https: HTTPSServers) -> None:
    assert https.llm.base_url.startswith("https://127.0.0.1:")
    assert https.laya.base_url.startswith("https://127.0.0.1:")


def test_ca_file_trusts_the_server(https: HTTPSServers) -> None:
    https.llm.reset()
    https.llm.enqueue("over TLS")
    endpoint = llm_endpoint(https.llm, TLSSettings(ca_file=str(https.ca_file)))
    with LLMClient(endpoint, max_attempts=1) as llm:
        assert llm.chat(USER).content == "over TLS"


def test_async_client_trusts_the_ca_file(https: HTTPSServers) -> None:
    endpoint = llm_endpoint(https.llm, TLSSettings(ca_file=str(https.ca_file)))

    async def probe() -> int:
        async with async_http_client(endpoint, headers={"X-Test": "1"}) as client:
            response = await client.get(f"{https.llm.url}/health")
            return response.status_code

    assert asyncio.run(probe()) == 200


def test_system_roots_alone_reject_the_private_ca(https: HTTPSServers) -> None:
    endpoint = llm_endpoint(https.llm, TLSSettings())
    with LLMClient(endpoint, max_attempts=1) as llm, pytest.raises(LLMError) as info:
        llm.chat(USER)
    message = str(info.value)
    assert message.startswith("llm: ")
    assert "TLS certificate verification failed" in message
    assert "llm.tls.ca_file" in message


def test_wrong_ca_fails_naming_the_integration(https: HTTPSServers) -> None:
    endpoint = EndpointSettings(
        name="laya",
        base_url=https.laya.base_url,
        timeout=5.0,
        tls=TLSSettings(ca_file=str(https.other_ca_file)),
    )
    question = {"people": NoulQuestion("Is it about people?", "yes", "no")}
    with LayaClient(endpoint, max_attempts=1) as laya, pytest.raises(LayaError) as info:
        laya.ask("Alice joined", question)
    assert "laya: TLS certificate verification failed" in str(info.value)
    assert "laya.tls.ca_file" in str(info.value)


def test_insecure_switch_connects_and_warns_once_per_integration(
    https: HTTPSServers, caplog: pytest.LogCaptureFixture
) -> None:
    https.laya.reset()
    endpoint = EndpointSettings(
        name="laya",
        base_url=https.laya.base_url,
        timeout=5.0,
        tls=TLSSettings(insecure_skip_verify=True),
    )
    question = {"people": NoulQuestion("Is it about people?", "yes", "no")}
    with (
        caplog.at_level(logging.WARNING, logger="memserver.clients.tls"),
        LayaClient(endpoint) as first,
        LayaClient(endpoint) as second,
    ):
        assert first.ask("people at Acme", question)["people"].p_yes == pytest.approx(0.9)
        assert second.health()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].getMessage().startswith("laya: TLS certificate verification is disabled")


def test_missing_ca_file_fails_at_startup_naming_the_integration(tmp_path: Path) -> None:
    endpoint = EndpointSettings(
        name="rerank",
        base_url="https://127.0.0.1:1",
        tls=TLSSettings(ca_file=str(tmp_path / "absent.pem")),
    )
    with pytest.raises(ConfigError, match=r"^rerank: ca_file .*absent\.pem not found"):
        http_client(endpoint)


def test_one_context_serves_every_client_of_a_setting_and_a_bad_file_is_never_kept(
    tmp_path: Path, https: HTTPSServers
) -> None:
    """Clients of one TLS setting share a context (the read agent opens one per
    question); a CA file that is missing fails every time, and once it is there it works."""
    trusted = llm_endpoint(https.llm, TLSSettings(ca_file=str(https.ca_file)))
    assert ssl_context(trusted) is ssl_context(trusted)
    assert ssl_context(trusted) is not ssl_context(llm_endpoint(https.llm, TLSSettings()))
    later = tmp_path / "later.pem"
    endpoint = llm_endpoint(https.llm, TLSSettings(ca_file=str(later)))
    for _ in range(2):
        with pytest.raises(ConfigError, match="not found"):
            ssl_context(endpoint)
    later.write_bytes(https.ca_file.read_bytes())
    https.llm.reset()
    https.llm.enqueue("shared context")
    with LLMClient(endpoint, max_attempts=1) as llm:
        assert llm.chat(USER).content == "shared context"


def test_invalid_ca_file_fails_naming_the_integration(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("this is not a certificate\n")
    endpoint = EndpointSettings(
        name="embedding", base_url="https://127.0.0.1:1", tls=TLSSettings(ca_file=str(bad))
    )
    with pytest.raises(ConfigError, match=r"^embedding: ca_file .* is not a valid PEM"):
        http_client(endpoint)
