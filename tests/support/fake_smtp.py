"""A local SMTP server standing in for a mail relay (aiosmtpd): it keeps every message it accepts."""

from __future__ import annotations

import email
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import Message
from typing import Any

from aiosmtpd.controller import Controller

from tests.support.server import free_port


@dataclass
class FakeSmtp:
    port: int = 0
    mails: list[Message] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)

    def url(self, to: str = "ops@example.com") -> str:
        """The channel's URL in Apprise's form (plain SMTP: the relay is on loopback)."""
        return f"mailto://127.0.0.1:{self.port}?from=kandev@example.com&to={to}&mode=insecure"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's name)
        self.mails.append(email.message_from_bytes(envelope.content))
        self.arrived.set()
        return "250 OK"


def text_of(mail: Message) -> str:
    """The plain-text part of a mail."""
    for part in mail.walk():
        if part.get_content_type() == "text/plain":
            payload = part.get_payload(decode=True)
            return payload.decode() if isinstance(payload, bytes) else ""
    return ""


@contextmanager
def fake_smtp() -> Iterator[FakeSmtp]:
    fake = FakeSmtp(port=free_port())
    controller = Controller(fake, hostname="127.0.0.1", port=fake.port)
    controller.start()
    try:
        yield fake
    finally:
        controller.stop()
