"""A process's open connections follow their people's access: an announced change closes or recalls exactly the
connections it names; what may have missed an announcement (opened while one was under way, or while the watch
lapsed) is checked against the database within a poll."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import pytest

from kandev.domain.context import Principal
from kandev.edge.open_connections import OpenConnections

POLL = OpenConnections.UNTRUSTED_POLL_SECONDS


@dataclass
class FakeWatch:
    generation: int = 0
    is_trusted: bool = True

    def trusted(self) -> bool:
        return self.is_trusted


@dataclass
class FakeDatabase:
    """Which tokens still prove someone, and that user's admin flag."""

    live: dict[str, bool] = field(default_factory=dict)
    asked: list[set[str]] = field(default_factory=list)

    async def verify(self, tokens: Collection[str]) -> dict[str, bool]:
        self.asked.append(set(tokens))
        return {t: self.live[t] for t in tokens if t in self.live}


@dataclass
class Held:
    principal: Principal
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    recalled: list[Principal] = field(default_factory=list)

    async def close(self) -> None:
        self.closed.set()

    def recall(self, now: Principal) -> None:
        self.recalled.append(now)


def person(user: str, token: str, admin: bool = False) -> Principal:
    return Principal(user_id=user, login=user, admin=admin, credential=token)


@pytest.fixture
async def opened() -> Any:
    watch, database, connections = FakeWatch(), FakeDatabase(), OpenConnections()
    connections.start(watch, database.verify)  # type: ignore[arg-type]

    def hold(principal: Principal, mark: int | None = 0) -> Held:
        held = Held(principal)
        database.live.setdefault(principal.credential or "", principal.admin)
        connections.open(principal, held.close, held.recall, mark)
        return held

    yield watch, database, connections, hold
    await connections.stop()


async def closed(held: Held, within: float = 1.0) -> bool:
    try:
        async with asyncio.timeout(within):
            await held.closed.wait()
    except TimeoutError:
        return False
    return True


async def test_a_revoked_token_closes_its_connections_and_no_other(opened):
    _, _, connections, hold = opened
    alice_a, alice_b, bob = hold(person("alice", "ta")), hold(person("alice", "tb")), hold(person("bob", "tc"))
    connections.apply([{"token": "ta"}])
    assert await closed(alice_a)
    assert not await closed(alice_b, POLL * 3) and not bob.closed.is_set()


async def test_a_removed_user_closes_every_connection_of_theirs(opened):
    _, _, connections, hold = opened
    mine = [hold(person("mallory", "t1")), hold(person("mallory", "t2"))]
    other = hold(person("bob", "t3"))
    connections.apply([{"user": "mallory", "removed": True}])
    assert all([await closed(held) for held in mine]) and not other.closed.is_set()


async def test_a_withdrawn_admin_flag_recalls_the_connection_as_a_non_admin_without_closing_it(opened):
    _, _, connections, hold = opened
    admin = hold(person("root-ish", "t1", admin=True))
    connections.apply([{"user": "root-ish", "admin": False}])
    assert [p.admin for p in admin.recalled] == [False] and admin.recalled[0].credential == "t1"
    assert not admin.closed.is_set()


async def test_a_connection_whose_check_raced_an_announcement_is_checked_again(opened):
    watch, database, _, hold = opened
    watch.generation = 1  # an announcement came between its check (mark 0) and its opening
    database.live["gone"] = True
    held = Held(person("alice", "gone"))
    del database.live["gone"]  # ...and it was this token's revocation
    opened[2].open(held.principal, held.close, held.recall, 0)
    assert await closed(held, POLL * 4)


async def test_while_the_watch_is_not_trusted_every_connection_is_checked_against_the_database(opened):
    watch, database, _, hold = opened
    held, kept = hold(person("alice", "ta", admin=True)), hold(person("bob", "tb"))
    watch.is_trusted = False  # Redis lost: announcements may be missed
    del database.live["ta"]
    assert await closed(held, POLL * 4) and not kept.closed.is_set()
    database.live["tb"] = True  # bob became an admin meanwhile
    async with asyncio.timeout(POLL * 4):
        while not kept.recalled:
            await asyncio.sleep(0.02)
    assert kept.recalled[-1].admin is True


async def test_without_a_token_there_is_nothing_to_hold(opened):
    _, database, connections, _ = opened
    release = connections.open(Principal(user_id="local", login="local"), Held(person("x", "y")).close)
    release()
    await asyncio.sleep(POLL * 2)
    assert database.asked == []
