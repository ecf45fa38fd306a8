"""HTTP clients for outbound integrations, with the integration's TLS settings applied.

Trust is the system roots plus the integration's ``ca_file``. The system roots come
from ``httpx2.create_ssl_context()``, which uses ``truststore`` (the OS trust store) on
Windows and macOS and OpenSSL's default paths (honouring ``SSL_CERT_FILE``) on Linux,
where truststore re-adds verify paths per handshake on OpenSSL < 3.4.

A missing or unreadable CA file raises ConfigError naming the integration, at client
construction (that is, at startup). Contexts are made once per setting and shared. Disabling verification logs one warning per
integration. A TLS failure during a request is re-raised as an ``httpx2.ConnectError``
whose message names the integration and how to fix it, so every caller (openai, mcp,
our own) shows a useful error.
"""

from __future__ import annotations

import functools
import logging
import ssl
import threading
from collections.abc import Mapping
from pathlib import Path

import httpx2

from memserver.clients.config import EndpointSettings
from memserver.errors import ConfigError

log = logging.getLogger(__name__)

_warned: set[tuple[str, str | None]] = set()
_warned_lock = threading.Lock()


def ssl_context(endpoint: EndpointSettings) -> ssl.SSLContext:
    """The SSL context for ``endpoint``: system roots + ``tls.ca_file``, or no verification.

    Made once per setting and shared (a context is safe to share between connections):
    loading the system roots costs ~50 ms, and the read agent opens a client per
    question. A changed CA file is read at the next start."""
    tls = endpoint.tls
    if tls.insecure_skip_verify:
        _warn_insecure(endpoint)
    return _shared_context(tls.insecure_skip_verify, tls.ca_file, endpoint.name)


@functools.lru_cache(maxsize=32)
def _shared_context(insecure: bool, ca_file: str | None, name: str) -> ssl.SSLContext:
    if insecure:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    ctx = httpx2.create_ssl_context()
    if ca_file:
        _load_ca(ctx, name, Path(ca_file))  # raises, so a bad file is never cached
    return ctx


def http_client(
    endpoint: EndpointSettings,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> httpx2.Client:
    """A sync client for ``endpoint`` (pass to ``openai.OpenAI(http_client=...)``)."""
    ctx = ssl_context(endpoint)
    return httpx2.Client(
        verify=ctx,
        transport=_NamedTransport(endpoint, verify=ctx),
        headers=dict(headers or {}),
        timeout=endpoint.timeout if timeout is None else timeout,
    )


def async_http_client(
    endpoint: EndpointSettings,
    headers: Mapping[str, str] | None = None,
    timeout: float | httpx2.Timeout | None = None,
) -> httpx2.AsyncClient:
    """An async client for ``endpoint`` (the agents' MCP connection, async callers)."""
    ctx = ssl_context(endpoint)
    return httpx2.AsyncClient(
        verify=ctx,
        transport=_NamedAsyncTransport(endpoint, verify=ctx),
        headers=dict(headers or {}),
        timeout=endpoint.timeout if timeout is None else timeout,
    )


def tls_hint(name: str) -> str:
    """How to fix a certificate verification failure for integration ``name``."""
    return (
        f"set {name}.tls.ca_file (or tls.ca_file / MEMORY_CA_FILE) to the PEM file of the CA "
        f"that signed the server's certificate, or {name}.tls.insecure_skip_verify: true "
        "on a trusted network"
    )


def _load_ca(ctx: ssl.SSLContext, name: str, path: Path) -> None:
    if not path.is_file():
        raise ConfigError(
            f"{name}: ca_file {path} not found",
            f"fix {name}.tls.ca_file (or tls.ca_file / MEMORY_CA_FILE) to point at a PEM file",
        )
    try:
        ctx.load_verify_locations(cafile=str(path))
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise ConfigError(
            f"{name}: ca_file {path} is not a valid PEM CA bundle ({exc})",
            "export the CA certificate in PEM format (-----BEGIN CERTIFICATE-----)",
        ) from exc


def _warn_insecure(endpoint: EndpointSettings) -> None:
    key = (endpoint.name, endpoint.base_url)
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    log.warning(
        "%s: TLS certificate verification is disabled (insecure_skip_verify) for %s; "
        "anyone on the network path can read and alter this traffic",
        endpoint.name,
        endpoint.base_url or "its endpoint",
    )


def _is_tls_failure(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    text = str(exc)
    return "CERTIFICATE_VERIFY_FAILED" in text or "[SSL" in text


def _named_error(
    endpoint: EndpointSettings, exc: httpx2.ConnectError, request: httpx2.Request
) -> httpx2.ConnectError:
    message = (
        f"{endpoint.name}: TLS certificate verification failed for "
        f"{endpoint.base_url or 'its endpoint'}: {exc}; {tls_hint(endpoint.name)}"
    )
    return httpx2.ConnectError(message, request=request)


class _NamedTransport(httpx2.HTTPTransport):
    """Names the integration in TLS failures, so the error says what to configure."""

    def __init__(self, endpoint: EndpointSettings, verify: ssl.SSLContext) -> None:
        super().__init__(verify=verify)
        self._endpoint = endpoint

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return super().handle_request(request)
        except httpx2.ConnectError as exc:
            if _is_tls_failure(exc):
                raise _named_error(self._endpoint, exc, request) from exc
            raise


class _NamedAsyncTransport(httpx2.AsyncHTTPTransport):
    """The async twin of ``_NamedTransport``."""

    def __init__(self, endpoint: EndpointSettings, verify: ssl.SSLContext) -> None:
        super().__init__(verify=verify)
        self._endpoint = endpoint

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await super().handle_async_request(request)
        except httpx2.ConnectError as exc:
            if _is_tls_failure(exc):
                raise _named_error(self._endpoint, exc, request) from exc
            raise
