"""The embedded Redis-protocol server (fakeredis over TCP) that `kandev serve` runs without KANDEV_REDIS_URL.

It runs in its own child process, so a busy API server can't starve it and RQ workers reach it like a
real Redis. It keeps nothing across restarts: the database is the source of truth and work is
re-enqueued from it on start.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import redis

from kandev.platform.redis_client import sync_redis
from kandev.platform.supervisor import spawn, stop_process_group

# The child prints this line, with the port it bound, once it accepts connections.
_READY = "kandev-embedded-redis-port"


class EmbeddedRedisError(RuntimeError):
    """The embedded server did not start, or started without what RQ needs."""


@dataclass
class EmbeddedRedis:
    """A running embedded server: its redis:// URL and its child process."""

    url: str
    process: subprocess.Popen[bytes] = field(repr=False)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/", 1)[0])

    def stop(self, timeout: float = 5.0) -> int | None:
        """Stop the server process (SIGTERM, SIGKILL after `timeout`) and reap it."""
        return stop_process_group(self.process, timeout)

    def __enter__(self) -> EmbeddedRedis:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _read_port(proc: subprocess.Popen[bytes], deadline: float) -> int:
    """Read the child's ready line (bounded by `deadline`) and return the port it announces."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buf = b""
    while b"\n" not in buf:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise EmbeddedRedisError("the embedded Redis-protocol server did not report its port in time")
        readable, _, _ = select.select([fd], [], [], remaining)
        if readable:
            chunk = os.read(fd, 256)
            if not chunk:
                code = proc.wait(timeout=5)
                raise EmbeddedRedisError(f"the embedded server exited with {code} before starting")
            buf += chunk
    word, _, port = buf.split(b"\n", 1)[0].decode().partition(" ")
    if word != _READY or not port.isdigit():
        raise EmbeddedRedisError(f"unexpected output from the embedded Redis-protocol server: {buf!r}")
    return int(port)


def _wait_ready(url: str, deadline: float) -> None:
    """Poll PING until it answers (bounded), then check Lua scripting, which RQ relies on."""
    client = sync_redis(url, socket_timeout=2.0)
    try:
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() >= deadline:
                    raise EmbeddedRedisError(f"the embedded server at {url} does not answer PING") from None
                time.sleep(0.05)
        try:
            client.eval("return 1", 0)
        except redis.ResponseError as exc:
            raise EmbeddedRedisError(f"the embedded server has no Lua (install fakeredis[lua]): {exc}") from exc
    finally:
        client.close()


def start_embedded_redis(timeout: float = 10.0, *, host: str = "127.0.0.1", port: int = 0) -> EmbeddedRedis:
    """Start the server in a child process on loopback `port` (0: a free one); returns once it answers PING."""
    # With port 0 the child binds a free port itself and reports it, so no other process can take it in
    # between; a restart passes the port it had, so every client's URL stays valid.
    proc = spawn(
        [sys.executable, "-I", "-m", "kandev.platform.embedded_redis", "--host", host, "--port", str(port)],
        # It holds only in-memory state, so it can die outright with us.
        death_signal=signal.SIGKILL,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
    )
    deadline = time.monotonic() + timeout
    try:
        bound = _read_port(proc, deadline)
        url = f"redis://{host}:{bound}/0"
        _wait_ready(url, deadline)
    except BaseException:
        stop_process_group(proc, timeout=1.0)
        raise
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
    return EmbeddedRedis(url=url, process=proc)


def _request_handler() -> type[Any]:
    """fakeredis's TCP handler, fixed in two ways.

    CLIENT INFO/LIST report addresses as ip:port like Redis does: fakeredis records the socket tuples
    verbatim ("addr=('127.0.0.1', 5) ..."), which redis-py cannot parse; RQ calls CLIENT INFO when a worker
    starts. And every connection gets a client of its own: fakeredis hands a new connection the client
    still registered under the same address, so one arriving on a reused port while the old one's handler
    is still blocked (a BLPOP waits minutes) would share its half-read command stream and hang.
    """
    from fakeredis._clients._tcp_server import TCPFakeRequestHandler
    from fakeredis._typing import RaiseErrorTypes

    class Handler(TCPFakeRequestHandler):
        def setup(self) -> None:
            self.server.clients.pop(self.client_address, None)
            super().setup()
            info = self.current_client.get_socket()._client_info
            for key in ("addr", "laddr"):
                if isinstance(info.get(key), tuple):
                    info[key] = f"{info[key][0]}:{info[key][1]}"
            server: Any = self.server  # make_server's Server
            server.watch(self.connection, self.current_client.get_socket())
            self._wake_reader, self._wake_writer = _wake_pipe()
            self._wake_lock = threading.Lock()  # a publisher's thread must never write to a closed (reused) fd
            fake: Any = self.current_client.get_socket()
            queue_reply = fake.put_response

            def put_response(message: Any) -> None:
                queue_reply(message)
                with self._wake_lock:
                    if self._wake_writer >= 0:
                        _wake(self._wake_writer)

            fake.put_response = put_response

        def handle(self) -> None:
            """fakeredis's loop, woken when another connection queues a reply here (a published message):
            fakeredis instead polls every 10 ms, which delayed every pub/sub delivery by up to that."""
            client, writer, connection = self.current_client, self.writer, self.connection
            while not self.server._shutdown_event.is_set():
                try:
                    if client.can_read():
                        try:
                            response = client.read_response()
                        except RaiseErrorTypes as error:  # an error reply: sent, and the connection goes on
                            response = error
                        writer.dump(response)
                        continue
                    data = self.rfile.readline()
                    if data == b"":
                        # Non-blocking socket with its buffer drained: wait for bytes or a queued reply.
                        readable, _, _ = select.select([connection, self._wake_reader], [], [], _IDLE_WAIT)
                        if self._wake_reader in readable:
                            _drain(self._wake_reader)
                        if connection not in readable:
                            continue
                        data = self.rfile.readline()
                        if data == b"":
                            break  # readable yet empty: the peer closed
                    client.get_socket().sendall(data)
                except ConnectionError:
                    break
                except Exception as error:
                    writer.dump(error)
                    break

        def finish(self) -> None:
            with self._wake_lock:
                os.close(self._wake_writer)
                self._wake_writer = -1
            os.close(self._wake_reader)
            server: Any = self.server
            server.forget(self.connection)
            mine = self.current_client
            # fakeredis's finish deletes the address's entry: put back a newer connection's, if it is there.
            newer = self.server.clients.get(self.client_address)
            self.server.clients[self.client_address] = mine
            try:
                super().finish()
            finally:
                if newer is not None and newer is not mine:
                    self.server.clients[self.client_address] = newer

    return Handler


# A connection's thread still wakes this often with nothing to do, to notice the server shutting down.
_IDLE_WAIT = 0.5


def _wake_pipe() -> tuple[int, int]:
    reader, writer = os.pipe()
    os.set_blocking(reader, False)
    os.set_blocking(writer, False)
    return reader, writer


def _wake(fd: int) -> None:
    try:
        os.write(fd, b"\0")
    except BlockingIOError:  # the pipe is full: a wake is pending anyway
        pass


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except (BlockingIOError, OSError):
        pass


def make_server(host: str, port: int) -> Any:
    """The fakeredis TCP server, bound, with its fixed handler; `serve_forever()` runs it."""
    from fakeredis import TcpFakeServer

    class Server(TcpFakeServer):
        """With a watchdog: fakeredis keeps a blocking command (BLPOP) of a client that hung up waiting until
        its timeout, and the next item pushed goes to that dead client and is lost. Redis drops such a
        command at once: so does this server, as soon as the client's socket reports end of file."""

        def __init__(self, address: tuple[str, int]) -> None:
            super().__init__(address)
            self._watched: dict[socket.socket, Any] = {}
            self._watched_lock = threading.Lock()
            threading.Thread(target=self._unblock_hung_up, name="unblock-hung-up", daemon=True).start()

        def watch(self, connection: socket.socket, fake_socket: Any) -> None:
            with self._watched_lock:
                self._watched[connection] = fake_socket

        def forget(self, connection: socket.socket) -> None:
            with self._watched_lock:
                self._watched.pop(connection, None)

        def blocked_clients(self) -> int:
            with self._watched_lock:
                return sum(1 for fake in self._watched.values() if fake._blocked)

        def _unblock_hung_up(self) -> None:
            while not self._shutdown_event.is_set():
                with self._watched_lock:
                    blocked = {conn: fake for conn, fake in self._watched.items() if fake._blocked}
                if not blocked:
                    time.sleep(0.02)
                    continue
                try:
                    readable, _, _ = select.select(list(blocked), [], [], 0.05)
                except (OSError, ValueError):  # a socket closed meanwhile: look again
                    continue
                hung_up = [conn for conn in readable if _hung_up(conn)]
                for conn in hung_up:
                    try:
                        _unblock(blocked[conn])
                    except Exception:  # the watchdog must outlive any one connection's oddity
                        continue
                if readable and not hung_up:
                    time.sleep(0.02)  # a live blocked client sent more: nothing to do but not spin

        def get_request(self) -> tuple[socket.socket, Any]:
            connection, address = super().get_request()
            # fakeredis writes a reply in several small sends: with Nagle's algorithm on, each pipeline
            # waits for the client's delayed ACK (about 40 ms) before its last reply leaves.
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return connection, address

    server = Server((host, port))
    server.RequestHandlerClass = _request_handler()
    # Non-daemon handler threads (fakeredis's default) would keep the interpreter from exiting.
    server.daemon_threads = True
    return server


def _hung_up(connection: socket.socket) -> bool:
    try:
        return connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _unblock(fake_socket: Any) -> None:
    """End a blocking command as CLIENT UNBLOCK … TIMEOUT does: it returns empty, taking nothing."""
    db = fake_socket._db
    if db is None:  # its connection closed meanwhile: nothing waits any more
        return
    fake_socket._unblock_reason = b"timeout"
    with db.condition:
        db.condition.notify_all()


def serve(host: str, port: int) -> None:
    """Run the server until SIGTERM/SIGINT; prints the ready line with the bound port on stdout."""
    # Nothing to flush on the way out, and blocked clients must not hold the exit up.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    server = make_server(host, port)
    print(f"{_READY} {server.server_address[1]}", flush=True)
    # The parent stops reading after the ready line; anything printed later goes to stderr, not a dead pipe.
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    """Entry point of `python -m kandev.platform.embedded_redis`."""
    parser = argparse.ArgumentParser(description="Embedded Redis-protocol server (fakeredis over TCP)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args(argv)
    serve(args.host, args.port)


if __name__ == "__main__":
    main()
