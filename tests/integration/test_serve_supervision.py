"""`kandev serve` supervises its children: kill -9 of any of them is noticed and healed, and turns run again."""

from __future__ import annotations

import os
import re
import signal
import socket
from pathlib import Path

import pytest
import redis

from kandev.platform.job_queues import ALL, TURNS, capabilities_key, capability_queues, worker_queue_name
from tests.support.healing import kill_and_heal, redis_url_of, wait_for
from tests.support.serve import Served, serving


def heal(served: Served, role: str) -> None:
    figures = kill_and_heal(served, role)
    print(f"healing {role}: " + ", ".join(f"{k}={v:.2f}" for k, v in figures.items()))


def worker_role(served: Served) -> str:
    return next(role for role in served.children() if role not in ("redis", "scheduler"))


@pytest.mark.slow
def test_pooled_workers_have_own_names_and_queues_and_kill_9_of_every_child_of_serve_is_healed(tmp_path: Path):
    with serving(tmp_path, KANDEV_WORKERS="2") as served:
        workers = sorted(r for r in served.children() if r not in ("redis", "scheduler"))
        host = socket.gethostname()
        assert workers == [f"{host}-w1", f"{host}-w2"]
        client = redis.Redis.from_url(redis_url_of(served))
        for name in workers:
            queues = wait_for(lambda name=name: client.hget(f"rq:worker:{name}", "queues"), what=f"{name} registered")
            assert isinstance(queues, bytes)
            # Besides the shared queues, those of the box executors this host can run (docker, sandbox), if any.
            offered = client.get(capabilities_key(name))
            capabilities = frozenset(offered.decode().split(",")) - {""} if offered else frozenset()
            assert queues.decode().split(",") == [worker_queue_name(name), *capability_queues(capabilities), *ALL]
        client.close()
        status, body = served.health()
        assert status == 200 and body["embedded"] == {
            "workers": 2,
            "configured_workers": 2,
            "scheduler": "ok",
            "redis": "ok",
        }
        assert body["workers"] == 2
        for name in (*workers, "scheduler", "redis"):
            heal(served, name)
            # The death was noticed and explained.
            assert re.search(rf"{re.escape(name)} \(pid \d+\) was killed by SIGKILL", served.log())
        # A worker whose job was finishing when Redis died may quit over it; it is restarted like any other.
        everything = body["embedded"]
        wait_for(lambda: served.health()[1].get("embedded") == everything, what="every child up again")
        assert sorted(r for r in served.children() if r not in ("redis", "scheduler")) == workers


@pytest.mark.slow
def test_a_folder_named_kandev_in_the_working_directory_cannot_shadow_the_childrens_package(tmp_path: Path):
    cwd = tmp_path / "cwd"
    marker = tmp_path / "shadowed"
    (cwd / "kandev").mkdir(parents=True)
    (cwd / "kandev" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'a').write('imported\\n')\nraise SystemExit(7)\n"
    )
    # serve itself starts isolated (-I), so only its children face the folder in their working directory.
    with serving(tmp_path, cwd=cwd, python_flags=("-I",)) as served:
        assert served.run_turn("not shadowed") == "not shadowed"
        assert set(served.children()) >= {"redis", "scheduler"}
    assert not marker.exists()


@pytest.mark.slow
def test_after_the_embedded_redis_restarts_recovery_enqueues_again_the_turn_it_lost(tmp_path: Path):
    with serving(tmp_path) as served:
        children = served.children()
        worker, scheduler = children[worker_role(served)], children["scheduler"]
        # Nobody takes the job, and no scheduler tick recovers it: only the restart's own recovery can.
        for pid in (worker, scheduler):
            os.kill(pid, signal.SIGSTOP)
        try:
            session_id = served.start_turn("/say queued before the crash")
            client = redis.Redis.from_url(redis_url_of(served))
            assert client.llen(f"rq:queue:{TURNS}") == 1
            os.kill(children["redis"], signal.SIGKILL)
            wait_for(lambda: "recovery after the embedded Redis restarted" in served.log(), what="recovery")
            # The new, empty Redis holds the job again, on the same URL.
            assert client.llen(f"rq:queue:{TURNS}") == 1
            client.close()
        finally:
            for pid in (worker, scheduler):
                os.kill(pid, signal.SIGCONT)
        assert "'enqueued': 1" in served.log()
        assert served.wait_for_agent_text(session_id) == "queued before the crash"
