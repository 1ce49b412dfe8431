"""Notification channels through GraphQL and the service: what a channel answers (never its URL), the outbound
rule for a non-admin's URL (at save, and pinned at every send, so DNS rebinding reaches nothing), the Send test
button against a local receiver, and typed refusals that store nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import func, select

from kandev.domain.errors import PermissionDeniedError, ValidationError
from kandev.domain.services import Services
from kandev.models import NotificationChannel
from tests.support.fake_webhook import fake_webhook

CREATE = """mutation($input: CreateNotificationChannelInput!) { createNotificationChannel(input: $input) {
  __typename ... on NotificationChannelPayload { channel { id name service target events status } }
  ... on Error { code message fields } ... on ValidationError { field } } }"""
TEST = """mutation($id: ID!) { testNotificationChannel(id: $id) {
  __typename ... on TestNotificationPayload { delivered error } ... on Error { code message } } }"""
LIST = """query($ws: ID!) { notificationChannels(workspaceId: $ws) {
  id status lastError lastDurationMs lastDeliveredAt pendingDeliveries failedDeliveries } }"""
ALL = ["NEEDS_INPUT", "TURN_FAILED", "REVIEW_READY"]


def as_person(services: Services, *, admin: bool) -> Services:
    return Services(services.ctx.with_principal(replace(services.principal, admin=admin)))


async def stored(db) -> int:
    async with db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(NotificationChannel)) or 0)


async def test_an_admins_json_webhook_is_saved_without_its_url_and_the_test_button_reaches_it(gql, workspace_id, db):
    with fake_webhook() as receiver:
        url = receiver.url("/hooks/s3cr3t-t0ken")
        made = await gql(CREATE, input={"workspaceId": workspace_id, "name": "Team hook", "url": url, "events": ALL})
        channel = made["createNotificationChannel"]["channel"]
        assert (channel["service"], channel["target"], channel["status"]) == ("json", "127.0.0.1", "NEW")
        assert "s3cr3t" not in str(made)
        async with db.read() as s:
            row = await s.get(NotificationChannel, channel["id"])
            assert row is not None and b"s3cr3t" not in row.url_ciphertext
        tested = await gql(TEST, id=channel["id"])
        assert tested["testNotificationChannel"] == {
            "__typename": "TestNotificationPayload",
            "delivered": True,
            "error": None,
        }
        [request] = receiver.wait_for(1)
        assert request.path == "/hooks/s3cr3t-t0ken"
        assert request.body["title"] == "Kandev test notification" and "Team hook" in request.body["message"]
        assert request.key and request.key.startswith("test:")
    [listed] = (await gql(LIST, ws=workspace_id))["notificationChannels"]
    assert listed["status"] == "OK" and listed["lastDeliveredAt"] and listed["lastError"] is None


@pytest.mark.parametrize(
    ("scheme", "path", "secret", "expected_path", "expected"),
    [
        (
            "ntfy",
            "/kandev-alerts",
            "kandev-alerts",
            "/",
            {"topic": "kandev-alerts", "title": "Kandev test notification"},
        ),
        ("mmost", "/m4ttermost-t0ken", "m4ttermost-t0ken", "/hooks/m4ttermost-t0ken", {"username": "Kandev"}),
        ("gotify", "/G0tifyT0kenXYZ", "G0tifyT0kenXYZ", "/message", {"title": "Kandev test notification"}),
    ],
)
async def test_other_services_are_reached_in_their_own_form_through_the_notification_library(
    gql, workspace_id, scheme, path, secret, expected_path, expected
):
    with fake_webhook() as receiver:
        url = f"{scheme}://127.0.0.1:{receiver.port}{path}"
        made = await gql(CREATE, input={"workspaceId": workspace_id, "name": scheme, "url": url, "events": ALL})
        channel = made["createNotificationChannel"]["channel"]
        assert (channel["service"], channel["target"]) == (scheme, "127.0.0.1") and secret not in str(made)
        tested = await gql(TEST, id=channel["id"])
        assert tested["testNotificationChannel"]["delivered"] is True
        [request] = receiver.wait_for(1)
    assert request.path == expected_path
    assert expected.items() <= request.body.items()
    assert scheme in str(request.body)  # the test notification names its channel


async def test_the_test_button_says_why_a_target_that_answers_an_error_failed(gql, workspace_id):
    with fake_webhook(status=500) as receiver:
        made = await gql(
            CREATE, input={"workspaceId": workspace_id, "name": "Down", "url": receiver.url(), "events": ALL}
        )
        tested = (await gql(TEST, id=made["createNotificationChannel"]["channel"]["id"]))["testNotificationChannel"]
    assert tested["delivered"] is False and "500" in tested["error"]
    [listed] = (await gql(LIST, ws=workspace_id))["notificationChannels"]
    assert listed["status"] == "FAILING" and "500" in listed["lastError"]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("json://127.0.0.1:9/hook", "inward_address"),
        ("json://10.0.0.7/hook", "inward_address"),
        ("jsons://169.254.169.254/latest/meta-data", "inward_address"),
        ("json://[::1]:8420/graphql", "inward_address"),
        ("json://localhost/x", "inward_address"),
        ("json://nowhere.invalid/x", "unresolvable"),
        ("syslog://", "service_not_allowed"),
        ("not a url", "unknown_service"),
        ("bogus://host/x", "unknown_service"),
    ],
)
async def test_a_non_admins_url_pointing_inward_or_unknown_is_refused_and_nothing_is_stored(
    services, workspace_id, db, url, reason
):
    person = as_person(services, admin=False)
    with pytest.raises(ValidationError) as refused:
        await person.notification_channels.create(workspace_id, "Hook", url, ALL)
    assert refused.value.field == "url" and refused.value.fields["reason"] == reason
    assert url not in refused.value.message
    assert await stored(db) == 0


async def test_a_non_admins_url_on_a_public_name_is_saved_after_a_check_that_connects_nowhere(
    services, workspace_id, dns
):
    person = as_person(services, admin=False)
    record = await person.notification_channels.create(workspace_id, "Hook", "jsons://hooks.example.com/x", ALL)
    assert (record.service, record.target) == ("jsons", "hooks.example.com")
    assert "hooks.example.com" in dns.asked


async def test_a_name_that_rebinds_to_loopback_after_the_save_is_refused_at_send_and_nothing_arrives(
    services, workspace_id, dns
):
    """DNS answers a public address when the URL is saved and this machine when it is used."""
    person = as_person(services, admin=False)
    with fake_webhook() as receiver:
        dns.set("rebind.example.com", ["93.184.216.34"], ["127.0.0.1"])
        url = f"json://rebind.example.com:{receiver.port}/hook"
        record = await person.notification_channels.create(workspace_id, "Rebinding", url, ALL)
        outcome = await person.notification_channels.test(record.id)
        assert outcome.delivered is False
        assert outcome.error is not None and "must not point to this machine" in outcome.error
        assert receiver.received == []


async def test_a_non_admins_url_on_an_admin_allowed_host_is_delivered_through_the_pinned_resolver(
    services, workspace_id
):
    with fake_webhook() as receiver:
        settings = services.ctx.settings.model_copy(update={"mcp_allowed_hosts": "127.0.0.1"})
        ctx = replace(services.ctx, settings=settings).with_principal(replace(services.principal, admin=False))
        person = Services(ctx)
        record = await person.notification_channels.create(workspace_id, "Allowed", receiver.url(), ALL)
        outcome = await person.notification_channels.test(record.id)
        assert outcome.delivered is True, outcome.error
        assert len(receiver.wait_for(1)) == 1


async def test_bad_names_and_events_are_refused_by_field(services, workspace_id, db):
    for name, events, field in [("", ALL, "name"), ("Hook", [], "events"), ("Hook", ["SOMETHING"], "events")]:
        with pytest.raises(ValidationError) as refused:
            await services.notification_channels.create(workspace_id, name, "json://127.0.0.1:9/x", events)
        assert refused.value.field == field
    assert await stored(db) == 0


async def test_an_agent_session_cannot_configure_notifications(services, workspace_id):
    agent = Services(services.ctx.with_principal(replace(services.principal, session_id="s1", task_id="t1")))
    with pytest.raises(PermissionDeniedError):
        await agent.notification_channels.list(workspace_id)
