"""The DOCKER executor: one container per session through the Docker Engine API (aiodocker: asyncio, so the agent's
stdio is one more stream on the worker's event loop; never the `docker` CLI).

The container gets the task's worktree at /workspace, the session's MCP bridge folder at /run/kandev (read-only),
the profile's limits (memory without swap, CPUs, processes), no network unless the profile names one, a non-root
user, no capabilities and no privilege escalation. The agent speaks ACP over the container's stdin and stdout
(attached before it starts, so nothing is lost); its stderr is kept for error reports. A profile's prepare script
runs in the container before the agent, and the launch waits for it: its failure is the launch's. The Engine is
found as the `docker` client finds it (DOCKER_HOST, else the local socket)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import logging
import os
import tarfile
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kandev.domain.ports import Box, BoxRequest, BoxState, ExecutorError
from kandev.domain.workspace.executor_config import BRIDGE_DIR, NO_NETWORK, WORKSPACE, BoxConfig

if TYPE_CHECKING:
    import aiodocker

log = logging.getLogger(__name__)

HOME = "/home/kandev"
# Where host folders the agent only reads (a built-in agent's interpreter and package) are seen in the container:
# under a prefix of their own, never over the image's folders, and reachable whatever the image's /root allows.
HOST = "/kandev-host"
PREPARE = "prepare.sh"
# What the prepare wrapper says on stderr once the script succeeded, and its exit status when it failed.
_READY = "kandev: box prepared"
_PREPARE_FAILED = 97
_WRAPPER = (
    f'sh {BRIDGE_DIR}/{PREPARE} >&2 || {{ echo "kandev: the prepare script failed with status $?" >&2; '
    f'exit {_PREPARE_FAILED}; }}; echo "{_READY}" >&2; exec "$@"'
)
_PREPARE_TIMEOUT = 900.0
_STDOUT_LIMIT = 16 * 1024 * 1024
_LINE_CAP = 4096
_SOCKET = "/var/run/docker.sock"


def _client() -> aiodocker.Docker:
    """A client for one operation or one box: an aiohttp session belongs to the event loop it was made on."""
    import aiodocker  # lazy: aiohttp costs 0.7 s of start-up, paid only by processes that run containers

    return aiodocker.Docker()


def _engine_error(exc: Exception) -> ExecutorError:
    import aiodocker

    if isinstance(exc, aiodocker.DockerError):
        return ExecutorError(f"the Docker Engine refused: {exc.message}", reason="start_failed")
    return ExecutorError(f"the Docker daemon does not answer ({type(exc).__name__})", reason="daemon_unavailable")


class DockerExecutor:
    """Executor port over the Docker Engine API."""

    kind = "docker"

    async def launch(self, request: BoxRequest) -> Box:
        docker = _client()
        try:
            return await self._launch(docker, request)
        except BaseException:
            await docker.close()
            raise

    async def _launch(self, docker: aiodocker.Docker, request: BoxRequest) -> Box:
        import aiodocker

        config = request.config
        user = self._user(request)
        if config.prepare_script:
            if request.bridge_dir is None:
                raise ExecutorError("a prepare script needs the session's bridge folder", reason="prepare_failed")
            script = Path(request.bridge_dir, PREPARE)
            script.write_text(config.prepare_script)
            script.chmod(0o644)
        try:
            image = await self._image(docker, config)
            container = await docker.containers.create(self._container(request, image, user))
        except ExecutorError:
            raise
        except (aiodocker.DockerError, OSError) as exc:
            raise _engine_error(exc) from None
        box = DockerBox(docker, container, config)
        try:
            await box.attach()
            await container.start()
            if config.prepare_script:
                await box.prepared()
        except BaseException as exc:
            await box.kill_group()
            if isinstance(exc, ExecutorError):
                raise
            if isinstance(exc, aiodocker.DockerError | OSError):
                raise _engine_error(exc) from None
            raise
        return box

    def _user(self, request: BoxRequest) -> str:
        if request.config.user:
            return request.config.user
        if request.run_as is not None:
            return f"{request.run_as.uid}:{request.run_as.gid}"
        if os.geteuid() != 0:  # the server's own identity, which owns the worktree
            return f"{os.geteuid()}:{os.getegid()}"
        raise ExecutorError(
            "a DOCKER executor runs agents as a non-root user: set the profile's user, or run agents as their own "
            "identities (KANDEV_AGENT_UIDS)",
            reason="no_user",
        )

    async def _image(self, docker: aiodocker.Docker, config: BoxConfig) -> str:
        import aiodocker

        if config.dockerfile:
            return await self._build(docker, config)
        try:
            await docker.images.inspect(config.image)
            return config.image
        except aiodocker.DockerError as exc:
            if exc.status != 404:
                raise
        if config.pull_policy == "NEVER":
            raise ExecutorError(
                f"the image {config.image} is not on this worker and the profile's pull policy is NEVER",
                reason="image_missing",
            )
        try:
            await docker.images.pull(config.image)
        except aiodocker.DockerError as exc:
            raise ExecutorError(
                f"the image {config.image} could not be pulled: {exc.message}", "image_missing"
            ) from None
        return config.image

    async def _build(self, docker: aiodocker.Docker, config: BoxConfig) -> str:
        """The profile's Dockerfile built once per content (its tag is its digest)."""
        import aiodocker

        tag = f"kandev-profile:{hashlib.sha256(config.dockerfile.encode()).hexdigest()[:16]}"
        with contextlib.suppress(aiodocker.DockerError):
            await docker.images.inspect(tag)
            return tag
        context = io.BytesIO()
        with tarfile.open(fileobj=context, mode="w") as archive:
            data = config.dockerfile.encode()
            entry = tarfile.TarInfo("Dockerfile")
            entry.size = len(data)
            archive.addfile(entry, io.BytesIO(data))
        context.seek(0)
        lines: deque[str] = deque(maxlen=8)
        try:
            # On the Engine's default build network (the client library offers no other); the box gets the profile's.
            async for chunk in docker.images.build(
                fileobj=context, tag=tag, rm=True, forcerm=True, stream=True, encoding="identity"
            ):
                if "error" in chunk:
                    lines.append(str(chunk["error"]).strip())
                    raise ExecutorError("the profile's Dockerfile did not build: " + " | ".join(lines), "build_failed")
                lines.extend(line for line in str(chunk.get("stream", "")).splitlines() if line.strip())
        except aiodocker.DockerError as exc:
            said = " | ".join([*lines, str(exc.message).strip()][-4:])
            raise ExecutorError(f"the profile's Dockerfile did not build: {said}", "build_failed") from None
        return tag

    def _container(self, request: BoxRequest, image: str, user: str) -> dict[str, Any]:
        config = request.config
        binds = [f"{request.workdir}:{WORKSPACE}:rw"]
        binds += [f"{path}:{path}:rw" for path in request.writable]
        readable = _readable(request)
        binds += [f"{path}:{HOST}{path}:ro" for path in readable]
        binds += [f"{m.source}:{m.target}:{'ro' if m.read_only else 'rw'}" for m in config.mounts]
        if request.bridge_dir is not None:
            binds.append(f"{request.bridge_dir}:{BRIDGE_DIR}:ro")
        host: dict[str, Any] = {
            "Binds": binds,
            "NetworkMode": "none" if config.network == NO_NETWORK else config.network,
            "CapDrop": ["ALL"],
            "SecurityOpt": ["no-new-privileges"],
            "Tmpfs": {HOME: "rw,nosuid,nodev,mode=1777"},
            "Init": False,
        }
        if config.memory_mb:
            host["Memory"] = host["MemorySwap"] = config.memory_mb << 20
        if config.cpus:
            host["NanoCpus"] = int(config.cpus * 1e9)
        if config.pids:
            host["PidsLimit"] = config.pids
        command = [_in_box(arg, readable) for arg in request.argv]
        if config.prepare_script:
            command = ["/bin/sh", "-c", _WRAPPER, "kandev-box", *command]
        env = {**request.env, "HOME": HOME, "TMPDIR": "/tmp"}
        return {
            "Image": image,
            "Cmd": command,
            "Env": [f"{k}={v}" for k, v in env.items()],
            "WorkingDir": WORKSPACE,
            "User": user,
            "Hostname": "kandev-box",
            "Labels": dict(request.labels or {}),
            "AttachStdin": True,
            "AttachStdout": True,
            "AttachStderr": True,
            "OpenStdin": True,
            "StdinOnce": True,
            "Tty": False,
            "HostConfig": host,
        }

    def seen_inside(self, request: BoxRequest, arg: str) -> str:
        return _in_box(arg, _readable(request))

    async def stop(self, box_id: str) -> None:
        async with _client() as docker:
            with contextlib.suppress(Exception):
                await docker.containers.container(box_id).kill()

    async def inspect(self, box_id: str) -> BoxState | None:
        import aiodocker

        async with _client() as docker:
            try:
                info = await docker.containers.container(box_id).show()
            except aiodocker.DockerError as exc:
                if exc.status == 404:
                    return None
                raise
        return _state(info)

    async def remove(self, box_id: str) -> None:
        import aiodocker

        async with _client() as docker:
            try:
                await docker.containers.container(box_id).delete(force=True, v=True)
            except aiodocker.DockerError as exc:
                if exc.status not in (404, 409):  # gone, or its removal already under way
                    raise

    async def boxes(self, labels: dict[str, str]) -> list[BoxState]:
        filters = json.dumps({"label": [f"{k}={v}" for k, v in labels.items()]})
        async with _client() as docker:
            found = await docker.containers.list(all=True, filters=filters)
            return [BoxState(c.id, running=c["State"] == "running", labels=dict(c["Labels"] or {})) for c in found]

    async def available(self) -> str | None:
        """Whether the local Engine answers its ping (plain HTTP over its socket: no client library needed)."""
        host = os.environ.get("DOCKER_HOST", f"unix://{_SOCKET}")
        if not host.startswith("unix://"):
            return None  # a remote Engine: asked at launch
        path = host.removeprefix("unix://")
        try:
            async with asyncio.timeout(3.0):
                reader, writer = await asyncio.open_unix_connection(path)
                writer.write(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
                status = await reader.readline()
                writer.close()
        except (OSError, TimeoutError) as exc:
            return f"the Docker daemon does not answer at {path} ({exc.strerror or type(exc).__name__})"
        if b" 200 " not in status:
            return f"the Docker daemon at {path} answered {status.decode('latin-1').strip()}"
        return None


def _readable(request: BoxRequest) -> list[str]:
    """The host folders the container reads, each under HOST."""
    return [path for path in request.readable if os.path.exists(path)]


def _in_box(arg: str, readable: list[str]) -> str:
    """An argument naming a read-only host folder (or a folder above one, such as a package's import root) as the
    container sees it."""
    if not arg.startswith("/"):
        return arg
    path = os.path.normpath(arg)
    if any(path == p or path.startswith(p + "/") or p.startswith(path + "/") for p in readable):
        return HOST + path
    return arg


def _state(info: Any) -> BoxState:
    state = info["State"]
    return BoxState(
        info["Id"],
        running=bool(state.get("Running")),
        exit_code=None if state.get("Running") else state.get("ExitCode"),
        oom_killed=bool(state.get("OOMKilled")),
        labels=dict(info["Config"].get("Labels") or {}),
    )


class DockerBox:
    """A container attached by its stdio: stdout feeds the ACP reader, stderr a ring of lines."""

    kind = "docker"
    cwd = WORKSPACE

    def __init__(self, docker: aiodocker.Docker, container: Any, config: BoxConfig) -> None:
        self._docker = docker
        self._container = container
        self._config = config
        self._stream: Any = None
        self._reader = asyncio.StreamReader(limit=_STDOUT_LIMIT)
        self._pipe: _StdinPipe | None = None
        self.stdin: asyncio.StreamWriter | None = None
        self._tail: deque[str] = deque(maxlen=200)
        self._partial = ""
        self._ready = asyncio.Event()
        self._pump: asyncio.Task[None] | None = None
        self._waiter: asyncio.Task[int] | None = None
        self._status: int | None = None
        self._pid = 0
        self._removed = False

    @property
    def box_id(self) -> str:
        return str(self._container.id)

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        return self._status

    @property
    def stdout(self) -> asyncio.StreamReader:
        return self._reader

    async def attach(self) -> None:
        self._stream = self._container.attach(stdin=True, stdout=True, stderr=True)
        await self._stream.__aenter__()
        self._pipe = _StdinPipe(self._stream)
        self.stdin = asyncio.StreamWriter(self._pipe, _Drain(self._pipe), None, asyncio.get_running_loop())
        self._pump = asyncio.create_task(self._read(), name=f"box-{self.box_id[:12]}-stdio")

    async def prepared(self) -> None:
        """Until the prepare script succeeded; ExecutorError with its last words when it failed."""
        waiter = self._wait_task()
        ready = asyncio.ensure_future(self._ready.wait())
        try:
            done, _ = await asyncio.wait({ready, waiter}, timeout=_PREPARE_TIMEOUT, return_when="FIRST_COMPLETED")
        finally:
            ready.cancel()
        if ready in done:
            return
        said = "; ".join(line for line in await self.stderr_tail(5) if line.strip())
        if not done:
            raise ExecutorError(f"the prepare script ran past {_PREPARE_TIMEOUT:g}s", reason="prepare_failed")
        raise ExecutorError(f"the prepare script failed: {said or 'no output'}", reason="prepare_failed")

    async def _read(self) -> None:
        try:
            while (message := await self._stream.read_out()) is not None:
                if message.stream == 1:
                    self._reader.feed_data(message.data)
                else:
                    self._stderr(message.data)
        except Exception:  # the connection went with the container
            log.debug("box %s: its stdio stream ended", self.box_id[:12], exc_info=True)
        finally:
            self._reader.feed_eof()

    def _stderr(self, data: bytes) -> None:
        lines = (self._partial + data.decode("utf-8", "replace")).split("\n")
        self._partial = lines.pop()[-_LINE_CAP:]
        for line in lines:
            if line == _READY:
                self._ready.set()
            else:
                self._tail.append(line[-_LINE_CAP:])

    def _wait_task(self) -> asyncio.Task[int]:
        if self._waiter is None:
            self._waiter = asyncio.create_task(self._wait_exit(), name=f"box-{self.box_id[:12]}-wait")
        return self._waiter

    async def _wait_exit(self) -> int:
        try:
            result = await self._container.wait()
            code = int(result.get("StatusCode", -1))
        except Exception:  # the Engine connection broke: the box is as good as gone to us
            code = -1
        self._status = code
        return code

    async def wait(self) -> int:
        return await asyncio.shield(self._wait_task())

    async def stderr_tail(self, lines: int = 20, settle: float = 0.5) -> list[str]:
        if self._pump is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(settle):
                    await asyncio.shield(self._pump)
        tail = list(self._tail) + ([self._partial] if self._partial else [])
        return tail[-lines:]

    async def exit_reason(self) -> str | None:
        try:
            info = await self._container.show()
        except Exception:
            return None
        if info["State"].get("OOMKilled"):
            limit = f" of {self._config.memory_mb} MB" if self._config.memory_mb else ""
            return f"the agent's container exceeded its memory limit{limit} and was stopped"
        return None

    async def kill_group(self, term_grace: float = 0.5) -> int | None:
        """Stop the container (SIGTERM, then SIGKILL after `term_grace`), remove it, close the client."""
        if self._removed:
            return self._status
        self._removed = True
        with contextlib.suppress(Exception):
            await self._container.stop(t=max(0, int(round(term_grace))))
        if self._status is None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(5.0):
                    await self.wait()
        with contextlib.suppress(Exception):
            await self._container.delete(force=True, v=True)
        if self._pipe is not None:
            self._pipe.close()
        if self._stream is not None:
            with contextlib.suppress(Exception):
                await self._stream.close()
        if self._pump is not None:
            self._pump.cancel()
        if self._waiter is not None:
            self._waiter.cancel()
        self._reader.feed_eof()
        with contextlib.suppress(Exception):
            await self._docker.close()
        return self._status


class _StdinPipe(asyncio.WriteTransport):
    """The container's stdin as an asyncio transport (the ACP connection wants a real StreamWriter): writes are
    queued and sent in order over the attach stream; draining waits until they are sent."""

    def __init__(self, stream: Any) -> None:
        super().__init__()
        self._stream = stream
        self._queue: asyncio.Queue[bytes] = asyncio.Queue()
        self._closing = False
        self._sender = asyncio.create_task(self._send(), name="box-stdin")

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._closing:
            self._queue.put_nowait(bytes(data))

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True
        self._sender.cancel()

    def can_write_eof(self) -> bool:
        return False

    async def drained(self) -> None:
        if self._closing:
            raise ConnectionResetError("the container's stdin is closed")
        await self._queue.join()

    async def _send(self) -> None:
        while True:
            data = await self._queue.get()
            try:
                await self._stream.write_in(data)
            except (RuntimeError, OSError):
                self._closing = True  # the container is gone: what is queued can't be sent
            finally:
                self._queue.task_done()


class _Drain(asyncio.Protocol):
    """What StreamWriter.drain() awaits: the pipe's queue sent."""

    def __init__(self, pipe: _StdinPipe) -> None:
        self._pipe = pipe

    async def _drain_helper(self) -> None:
        await self._pipe.drained()
