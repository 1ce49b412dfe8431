"""A local smart-HTTP git server over TLS that needs HTTP basic auth: bare repositories under `root`,
served by `git http-backend` (CGI) in a thread. Tokens in `read_tokens` may fetch, those in `push_tokens`
may also push; every request's URL and whether it carried a token is recorded, so a test can prove the
token travelled in the Authorization header (from a credential helper), never in a URL.

`GIT_SSL_CAINFO=server.ca_file` makes git trust it (a self-signed certificate for 127.0.0.1, or the name the
test serves it under)."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import ssl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class GitHttpServer:
    root: Path
    read_tokens: set[str] = field(default_factory=set)
    push_tokens: set[str] = field(default_factory=set)
    # (method, path with query, token or None) of every request
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    url: str = ""
    ca_file: str = ""

    def repository_url(self, name: str) -> str:
        return f"{self.url}/{name}.git"

    def bare(self, name: str) -> Path:
        return self.root / f"{name}.git"


def certificate_for(folder: Path, host: str = "127.0.0.1") -> tuple[str, str]:
    """A self-signed certificate (and key) in `folder` valid for `host` only (an address or a DNS name)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    try:
        alternative: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        alternative = x509.DNSName(host)
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([alternative]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return str(cert_file), str(key_file)


def _handler(server: GitHttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def _token(self) -> str | None:
            scheme, _, value = self.headers.get("Authorization", "").partition(" ")
            if scheme.lower() != "basic":
                return None
            try:
                return base64.b64decode(value).decode().partition(":")[2]
            except ValueError:
                return None

        def _deny(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _serve(self) -> None:
            token = self._token()
            server.requests.append((self.command, self.path, token))
            path, _, query = self.path.partition("?")
            pushing = "git-receive-pack" in path or "service=git-receive-pack" in query
            allowed = server.push_tokens if pushing else server.read_tokens | server.push_tokens
            if token is None or token not in allowed:
                self._deny()
                return
            body = b""
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size = int(self.rfile.readline().strip(), 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                body = b"".join(chunks)
            elif length := int(self.headers.get("Content-Length") or 0):
                body = self.rfile.read(length)
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "GIT_PROJECT_ROOT": str(server.root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "REQUEST_METHOD": self.command,
                "PATH_INFO": path,
                "QUERY_STRING": query,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "REMOTE_USER": "contributor",
                "REMOTE_ADDR": "127.0.0.1",
                "GIT_HTTP_MAX_REQUEST_BUFFER": "100M",
            }
            if encoding := self.headers.get("Content-Encoding"):
                env["HTTP_CONTENT_ENCODING"] = encoding
            if protocol := self.headers.get("Git-Protocol"):
                env["GIT_PROTOCOL"] = protocol
            done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60)
            head, _, payload = done.stdout.partition(b"\r\n\r\n")
            status = 200
            headers = []
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.strip().split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = _serve
        do_POST = _serve

    return Handler


@contextmanager
def git_http_server(
    folder: Path, read_tokens: set[str], push_tokens: set[str], host: str = "127.0.0.1"
) -> Iterator[GitHttpServer]:
    """Serving on 127.0.0.1 for the block, under the name `host` (its certificate's and its URLs')."""
    root = folder / "served"
    root.mkdir(parents=True)
    server = GitHttpServer(root=root, read_tokens=read_tokens, push_tokens=push_tokens)
    cert, key = certificate_for(folder, host)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    server.url = f"https://{host}:{httpd.server_address[1]}"
    server.ca_file = cert
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def bare_from(source: Path, server: GitHttpServer, name: str) -> Path:
    """A bare clone of `source` served as `name`."""
    bare = server.bare(name)
    bare.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(bare)], check=True)
    return bare
