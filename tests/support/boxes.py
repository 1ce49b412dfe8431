"""What the executor tests need of this machine: Docker with the locally built test image (scripts/test_image.sh;
nothing is ever pulled), bubblewrap, and capability names of their own so parallel tests never take each other's
turns."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from kandev.adapters.executors.docker import DockerExecutor
from kandev.adapters.executors.sandbox import SandboxExecutor
from kandev.domain.ports import BoxState

TEST_IMAGE = os.environ.get("KANDEV_TEST_IMAGE", "kandev-test-agent:1")
PROBE = Path(__file__).parents[1] / "agents" / "box_probe.py"


async def _image_present(name: str) -> bool:
    import aiodocker

    async with aiodocker.Docker() as docker:
        try:
            await docker.images.inspect(name)
        except aiodocker.DockerError:
            return False
    return True


def _run(coroutine: Any) -> Any:
    """A coroutine run to its end from sync or async code alike (in a thread with a loop of its own)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@cache
def docker_missing() -> str | None:
    """Why the Docker tests can't run here, or None."""
    reason = _run(DockerExecutor().available())
    if reason is not None:
        return f"Docker: {reason}"
    if not _run(_image_present(TEST_IMAGE)):
        return f"the test image {TEST_IMAGE} is not built: run `bash scripts/test_image.sh`"
    return None


@cache
def sandbox_missing() -> str | None:
    reason = _run(SandboxExecutor().available())
    return None if reason is None else f"sandbox: {reason}"


def needs(kind: str) -> None:
    """Skip (a failure under KANDEV_TEST_STRICT=1) when this machine can't make boxes of `kind`."""
    reason = docker_missing() if kind == "docker" else sandbox_missing()
    if reason is not None:
        pytest.skip(reason)


def own_capability() -> str:
    """A capability only this test's worker offers: its turns reach no other test's worker."""
    return f"t-{secrets.token_hex(4)}"


async def containers(**labels: str) -> list[BoxState]:
    return await DockerExecutor().boxes({"kandev.managed": "1", **labels})


def with_probe(repository: Path) -> Path:
    """The probe agent committed into a repository, so it sits in every worktree of it, whatever the box."""
    shutil.copyfile(PROBE, repository / PROBE.name)
    return repository / PROBE.name
