"""The server's own HTTP requests to a URL a non-admin set (a notification target, a code host): every request is
checked by the outbound rule (kandev.domain.outbound) when it is sent, and connects to an address that check
validated, so a name that answered a public address when it was saved cannot answer loopback now (DNS
rebinding). The URL's host stays the `Host` header and the TLS name (SNI and the certificate check); redirects
are the client's to refuse (`follow_redirects=False`, httpx's default), each one being a new checked request."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import httpx

from kandev.domain.outbound import DEFAULT_PORTS, OutboundPolicy


class PinnedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that resolves each request's host once, refuses it (ValidationError naming `field`)
    when any address is inward, and connects to the first validated address."""

    def __init__(self, policy: OutboundPolicy, field: str = "url", **transport_options: Any) -> None:
        self._policy = policy
        self._field = field
        self._inner = httpx.AsyncHTTPTransport(**transport_options)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        port = url.port or DEFAULT_PORTS.get(url.scheme, 443)
        target = await asyncio.to_thread(self._policy.check_host, url.host, port, self._field)
        if target.addresses:
            # The Host header was set from the URL when the request was built; SNI and the certificate check
            # follow `sni_hostname`.
            request.url = url.copy_with(host=target.addresses[0])
            request.extensions = {**request.extensions, "sni_hostname": url.host}
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def pinned_client(
    policy: OutboundPolicy, field: str = "url", *, verify: ssl.SSLContext | bool = True, **client_options: Any
) -> httpx.AsyncClient:
    """An httpx client whose every request goes through PinnedTransport (`verify` is its TLS trust), with no
    proxy from the environment (a proxy would resolve the name itself) and no redirect followed."""
    return httpx.AsyncClient(
        transport=PinnedTransport(policy, field, verify=verify),
        follow_redirects=False,
        trust_env=False,
        **client_options,
    )
