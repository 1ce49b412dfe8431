"""Numeric agent identities (KANDEV_AGENT_UIDS): one per user, recorded, reused, never given to anyone else, and a
clear error when the range is spent; concurrent first launches agree."""

from __future__ import annotations

import asyncio
import pwd

import pytest
from sqlalchemy import delete, select

from kandev.domain.access.agent_identities import agent_identity
from kandev.domain.access.users import create_user
from kandev.domain.errors import ConflictError
from kandev.models import AgentIdentity, User


@pytest.fixture
def uid_settings(settings):
    return settings.model_copy(update={"agent_uids": "61000-61002"})


async def identity(db, settings, user_id):
    async with db.transaction() as s:
        return await agent_identity(s, settings, user_id)


async def test_each_user_gets_an_id_of_their_own_kept_across_calls(db, uid_settings, principal):
    bob = await create_user(db, "bob")
    mine = await identity(db, uid_settings, principal.user_id)
    theirs = await identity(db, uid_settings, bob.id)
    assert mine.uid != theirs.uid and {mine.uid, theirs.uid} <= set(range(61000, 61003))
    assert (mine.gid, mine.groups, mine.name) == (mine.uid, (), f"kandev-agent-{mine.uid}")
    assert mine.home == str(uid_settings.work_path / "homes" / str(mine.uid))
    assert (await identity(db, uid_settings, principal.user_id)).uid == mine.uid


async def test_a_removed_users_id_is_never_given_to_a_new_user(db, uid_settings, principal):
    bob = await create_user(db, "bob")
    bobs = (await identity(db, uid_settings, bob.id)).uid
    async with db.transaction() as s:
        await s.execute(delete(User).where(User.id == bob.id))
    carol = await create_user(db, "carol")
    assert (await identity(db, uid_settings, carol.id)).uid != bobs
    async with db.read() as s:
        assert await s.scalar(select(AgentIdentity.user_id).where(AgentIdentity.uid == bobs)) is None


async def test_a_spent_range_says_to_widen_it(db, uid_settings, principal):
    narrow = uid_settings.model_copy(update={"agent_uids": "61000-61000"})
    await identity(db, narrow, principal.user_id)
    bob = await create_user(db, "bob")
    with pytest.raises(ConflictError, match="KANDEV_AGENT_UIDS 61000-61000 has no id left for another user: widen"):
        await identity(db, narrow, bob.id)


async def test_an_id_that_is_an_account_of_this_machine_is_skipped(db, settings, principal):
    account = pwd.getpwnam("nobody").pw_uid
    around = settings.model_copy(update={"agent_uids": f"{account}-{account + 1}"})
    assert (await identity(db, around, principal.user_id)).uid == account + 1


async def test_concurrent_first_launches_of_several_users_get_distinct_ids(db, settings, principal):
    users = [await create_user(db, f"user{n}") for n in range(4)]
    wide = settings.model_copy(update={"agent_uids": "61000-61099"})
    given = await asyncio.gather(*(identity(db, wide, u.id) for u in users for _ in range(2)))
    by_user: dict[str, set[int]] = {}
    for user, result in zip([u for u in users for _ in range(2)], given, strict=True):
        by_user.setdefault(user.id, set()).add(result.uid)
    assert all(len(uids) == 1 for uids in by_user.values())
    assert len({next(iter(uids)) for uids in by_user.values()}) == len(users)
