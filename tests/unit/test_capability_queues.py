"""Turns are placed by capability: a turn waits in the queue named by exactly what it needs, a worker listens on
the queue of every subset of what it offers, and what no single live worker offers is named."""

from __future__ import annotations

from kandev.platform.job_queues import TURNS, capability_queue, capability_queues, missing_capabilities


def test_a_turn_needing_nothing_goes_to_the_shared_turn_queue():
    assert capability_queue(frozenset()) == TURNS


def test_a_worker_listens_on_every_subset_of_its_capabilities_most_demanding_first():
    queues = capability_queues(frozenset({"docker", "gpu"}))
    assert queues == [capability_queue({"docker", "gpu"}), capability_queue({"docker"}), capability_queue({"gpu"})]
    assert capability_queue({"gpu", "docker"}) == capability_queue({"docker", "gpu"})


def test_a_turn_reaches_only_workers_offering_all_it_needs():
    needed = frozenset({"docker", "gpu"})
    assert capability_queue(needed) in capability_queues(frozenset({"docker", "gpu", "sandbox"}))
    assert capability_queue(needed) not in capability_queues(frozenset({"docker", "sandbox"}))


def test_what_is_missing_is_what_the_best_live_worker_lacks():
    live = {"a": frozenset({"docker"}), "b": frozenset({"gpu"})}
    assert missing_capabilities(frozenset({"docker", "gpu"}), live) in (["docker"], ["gpu"])
    assert missing_capabilities(frozenset({"docker"}), live) == []
    assert missing_capabilities(frozenset({"docker"}), {}) == ["docker"]
    assert missing_capabilities(frozenset(), {}) == []
