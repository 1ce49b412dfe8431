"""A shared result is serialized once for all its subscribers, and their messages stay their own."""

from __future__ import annotations

import json

from kandev.graphql.schema.fanout import next_message_text, shared_event


def test_next_messages_of_one_shared_result_reuse_its_text_and_keep_their_own_ids():
    data = {"taskEvents": {"kind": "CREATED", "task": {"id": "t1", "title": 'quote " and ü'}}}
    first = next_message_text({"id": "a", "type": "next", "payload": {"data": data}})
    second = next_message_text({"id": "b", "type": "next", "payload": {"data": data}})
    assert json.loads(first) == {"id": "a", "type": "next", "payload": {"data": data}}
    assert json.loads(second) == {"id": "b", "type": "next", "payload": {"data": data}}


def test_messages_with_errors_or_of_other_types_are_left_to_the_default_encoder():
    errors = {"id": "a", "type": "next", "payload": {"data": None, "errors": [{"message": "no"}]}}
    assert next_message_text(errors) is None
    assert next_message_text({"id": "a", "type": "complete"}) is None


def test_subscribers_of_one_message_share_an_event_only_when_they_see_the_same():
    memo: dict = {}
    built: list[str] = []

    def build() -> object:
        built.append("event")
        return type("Event", (), {})()

    alice_one = shared_event(memo, "alice", build)
    alice_two = shared_event(memo, "alice", build)
    bob = shared_event(memo, "bob", build)
    assert alice_one is alice_two and bob is not alice_one
    assert len(built) == 2
