"""A loopback HTTP(S) server that records each request's Host header and TLS name (SNI), for proving where a
client connected and what name it kept; its certificate, when TLS, is for a name of the test's choosing."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.support.git_http import certificate_for


@dataclass
class EchoServer:
    port: int = 0
    ca_file: str = ""
    hosts: list[str] = field(default_factory=list)
    tls_names: list[str | None] = field(default_factory=list)


@contextmanager
def echo_server(tls_for: str | None = None, folder: Path | None = None) -> Iterator[EchoServer]:
    """Serving on 127.0.0.1 for the block; with `tls_for`, over TLS with a certificate for that name."""
    state = EchoServer()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            state.hosts.append(self.headers.get("Host", ""))
            body = b"ok"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls_for is not None:
        assert folder is not None
        folder.mkdir(parents=True, exist_ok=True)
        cert, key = certificate_for(folder, tls_for)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)

        def note_name(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
            state.tls_names.append(name)

        context.sni_callback = note_name  # type: ignore[assignment]
        server.socket = context.wrap_socket(server.socket, server_side=True)
        state.ca_file = cert
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
