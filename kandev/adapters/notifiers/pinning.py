"""The outbound rule applied where a library resolves names: Apprise sends with `requests` (and `smtplib` for
e-mail), which take no transport of ours, so Kandev's pinned httpx client (kandev.domain.outbound_http) can't be
handed to it. Instead, while a `pinned` block is active in the current context (contextvars: Apprise's own
threads copy it; `asyncio.to_thread` does too), every `socket.getaddrinfo` call goes through the rule: the host is
resolved once, refused when any address is inward, and answered with the validated addresses only, so the
connection that follows can't be sent elsewhere by a second DNS answer (rebinding). Outside such a block the
system's resolver answers as always."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from kandev.domain.errors import ValidationError
from kandev.domain.outbound import OutboundPolicy

_system_getaddrinfo = socket.getaddrinfo
_installed = threading.Lock()


@dataclass
class Pin:
    """One pinned block: the rule, and (probing) the hosts a send would have connected to, with no connection."""

    policy: OutboundPolicy
    field_name: str
    probe: bool = False
    hosts: list[str] = field(default_factory=list)
    refusal: ValidationError | None = None

    def resolve(self, host: Any, port: Any, family: int, kind: int, proto: int, flags: int) -> list[Any]:
        name = host.decode() if isinstance(host, bytes) else str(host)
        number = int(port) if isinstance(port, int) or (isinstance(port, str) and port.isdigit()) else 0
        token = _ACTIVE.set(None)  # the rule's own lookup is the system's
        try:
            target = self.policy.check_host(name, number or 443, self.field_name)
        except ValidationError as refused:
            self.refusal = self.refusal or refused
            raise socket.gaierror(socket.EAI_FAIL, "refused by Kandev's outbound rule") from None
        finally:
            _ACTIVE.reset(token)
        self.hosts.append(name)
        if self.probe:
            raise socket.gaierror(socket.EAI_FAIL, "a check: nothing is sent")
        if not target.addresses:  # an admin-allowed host that did not resolve
            return _system_getaddrinfo(host, port, family, kind, proto, flags)
        found: list[Any] = []
        for address in target.addresses:
            found += _system_getaddrinfo(address, port, family, kind, proto, flags | socket.AI_NUMERICHOST)
        return found


_ACTIVE: ContextVar[Pin | None] = ContextVar("kandev_outbound_pin", default=None)


def _getaddrinfo(host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0) -> Any:
    pin = _ACTIVE.get()
    if pin is None:
        return _system_getaddrinfo(host, port, family, type, proto, flags)
    return pin.resolve(host, port, family, type, proto, flags)


def install() -> None:
    """Route this process's name lookups through `_getaddrinfo` (idempotent; inert outside `pinned`)."""
    with _installed:
        socket.getaddrinfo = _getaddrinfo


@contextmanager
def pinned(policy: OutboundPolicy, field: str, *, probe: bool = False) -> Iterator[Pin]:
    """Every name looked up in this context (and threads that copy it) passes `policy`; with `probe`, none is
    connected to: the block only learns which hosts a send would reach."""
    install()
    pin = Pin(policy, field, probe)
    token = _ACTIVE.set(pin)
    try:
        yield pin
    finally:
        _ACTIVE.reset(token)
