"""Outbound URLs a non-admin sets (a remote MCP server, a code host, a notification target) never point inward:
not at this machine, its link-local neighbours (cloud metadata at 169.254.169.254) or a private network.

The one rule every such URL passes when it is saved and again when it is used: its host must be one an admin
allowed (KANDEV_MCP_ALLOWED_HOSTS), or every address it resolves to must be globally reachable — no loopback,
link-local, private, shared, unique-local, site-local, unspecified, reserved or multicast address, nor such an
IPv4 address wrapped in IPv6 (mapped, compatible, 6to4, NAT64, Teredo). A check answers the addresses it
validated, and the server's own connections go to one of them (kandev.domain.outbound_http, a pinned clone), so DNS
cannot answer one thing at the check and another at the connect. Refusals are typed, name the field and echo
neither the URL (it may carry a secret) nor what its host resolved to."""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from kandev.domain.errors import ValidationError
from kandev.platform.settings import Settings

SETTING = "KANDEV_MCP_ALLOWED_HOSTS"
DEFAULT_PORTS = {"http": 80, "https": 443, "ssh": 22}

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# (host, port) -> the addresses it resolves to, empty when none; the system's by default, a fake in tests.
Resolver = Callable[[str, int], Sequence[str]]

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_PLAIN_HOST = re.compile(r"[a-z0-9._-]+|[0-9a-f:.]+")  # a name, or an IPv6 address without a zone
_NUMERIC_V4 = re.compile(r"[0-9a-fx.]+")  # what inet_aton reads as IPv4: 127.1, 0x7f000001, 017700000001


def system_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for `host`, in its order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _wrapped_ipv4(ip: Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address stands for."""
    if isinstance(ip, ipaddress.IPv4Address):
        return []
    found = [v4 for v4 in (ip.ipv4_mapped, ip.sixtofour) if v4 is not None]
    if ip.teredo is not None:
        found += list(ip.teredo)
    if ip in _NAT64 or (int(ip) >> 32 == 0 and int(ip) > 1):  # NAT64, IPv4-compatible ::a.b.c.d
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return found


def inward(address: str | Address) -> bool:
    """Whether a connection to `address` would stay on this machine or reach a non-public network."""
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    for candidate in (ip, *_wrapped_ipv4(ip)):
        if (
            not candidate.is_global
            or candidate.is_multicast
            or candidate.is_private
            or candidate.is_loopback
            or candidate.is_link_local
            or candidate.is_unspecified
            or candidate.is_reserved
            or getattr(candidate, "is_site_local", False)
        ):
            return True
    return False


def literal_address(host: str) -> Address | None:
    """The address a host written as a number stands for (dotted, shortened, hex or octal IPv4; IPv6)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if _NUMERIC_V4.fullmatch(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def allowed_hosts(settings: Settings) -> frozenset[str]:
    return frozenset(_host(part) for part in (settings.mcp_allowed_hosts or "").split(",") if part.strip())


def _host(value: str) -> str:
    return value.strip().lower().rstrip(".").removeprefix("[").removesuffix("]")


@dataclass(frozen=True)
class Target:
    """A checked host: the addresses a connection to it may use (a host an admin allowed: what it resolved to,
    unchecked; none when it did not resolve, and the connection then resolves it itself)."""

    host: str
    port: int
    addresses: tuple[str, ...]


@dataclass(frozen=True)
class OutboundPolicy:
    allowed: frozenset[str]
    resolver: Resolver

    def check_url(self, url: str, field: str, schemes: Sequence[str] = ("http", "https")) -> Target:
        """The URL's target when it may be connected to; a ValidationError naming `field` otherwise."""
        try:
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port
        except ValueError:
            raise ValidationError(f"{_leaf(field)} is not a valid URL", field=field) from None
        # Only plain names and addresses: what another parser (a WHATWG one, in Node or a browser) would read
        # differently — a backslash ending the host, a percent-encoded host — is no URL to connect to.
        if "\\" in parts.netloc or (host and not _PLAIN_HOST.fullmatch(host)):
            raise ValidationError(f"{_leaf(field)} is not a valid URL", field=field)
        if parts.scheme not in schemes or not host:
            raise ValidationError(f"{_leaf(field)} must be a {' or '.join(schemes)} URL with a host", field=field)
        return self.check_host(host, port or DEFAULT_PORTS.get(parts.scheme, 443), field)

    def check_host(self, host: str, port: int, field: str) -> Target:
        """`host`'s validated addresses (resolved once, here); a ValidationError when any of them is inward."""
        name = _host(host)
        if not name.isascii():  # what a connection resolves must be what was checked: IDNA is theirs to write
            raise ValidationError(f"{_leaf(field)} must name its host in ASCII (punycode)", field=field)
        allowed = name in self.allowed
        if not allowed and (name == "localhost" or name.endswith(".localhost")):
            raise _refusal(field)
        literal = literal_address(name.split("%", 1)[0])
        addresses = [str(literal)] if literal is not None else [str(a) for a in self.resolver(name, port)]
        if allowed:  # an admin's word: connect where it resolves now, whatever that is
            return Target(name, port, tuple(addresses))
        if not addresses:
            raise ValidationError(
                f"{_leaf(field)} names a host that does not resolve", field=field, reason="unresolvable"
            )
        try:
            if any(inward(address.split("%", 1)[0]) for address in addresses):
                raise _refusal(field)
        except ValueError:  # a resolver answering something that is no address
            raise _refusal(field) from None
        return Target(name, port, tuple(addresses))


def outbound_policy(settings: Settings) -> OutboundPolicy:
    """The rule as this server applies it: its allowed hosts, the system's resolver."""
    return OutboundPolicy(allowed_hosts(settings), system_resolver)


def _refusal(field: str) -> ValidationError:
    return ValidationError(
        f"{_leaf(field)} must not point to this machine or a private network (loopback, link-local, private or "
        f"unique-local addresses); an admin can allow a host with {SETTING}",
        field=field,
        reason="inward_address",
        setting=SETTING,
    )


def _leaf(field: str) -> str:
    return field.split(".")[-1]
