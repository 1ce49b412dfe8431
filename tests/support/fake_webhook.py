"""A local webhook receiver standing in for a notification service (Slack, ntfy, a JSON webhook): it records every
request (headers and JSON body), and can answer an error status, answer slowly, or hold requests until released."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def key(self) -> str | None:
        return self.headers.get("idempotency-key")


@dataclass
class FakeWebhook:
    port: int = 0
    status: int = 200
    delay: float = 0.0
    # While set, requests wait (up to `hold_limit` s) until `release` is set: a target that is stuck mid-answer.
    hold: bool = False
    hold_limit: float = 30.0
    received: list[Received] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str = "/hook") -> str:
        return f"json://127.0.0.1:{self.port}{path}"

    def keys(self) -> list[str | None]:
        with self._lock:
            return [r.key for r in self.received]

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.05)
        raise AssertionError(f"{len(self.received)} request(s) arrived, {count} expected")

    def record(self, item: Received) -> None:
        with self._lock:
            self.received.append(item)
        self.arrived.set()


def _handler(fake: FakeWebhook) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"raw": raw.decode(errors="replace")}
            fake.record(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if fake.hold:
                fake.release.wait(fake.hold_limit)
            if fake.delay:
                time.sleep(fake.delay)
            try:
                self.send_response(fake.status)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
            except OSError:  # the sender is gone (killed mid-delivery)
                pass

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def fake_webhook(**options: Any) -> Iterator[FakeWebhook]:
    fake = FakeWebhook(**options)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, name="fake-webhook", daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()
