"""POST /api/v1/github/webhook with signed deliveries (auth on, no personal access token): signature
checks before parsing, 404 without an App, 413 over 1 MiB, installation routing, push triggers by branch
glob (deletions ignored, dedup by branch and SHA), CI triggers by conclusion, check name and branch (dedup by
check-run id), and X-GitHub-Delivery dedup."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from sqlalchemy import select

from kandev.adapters.github.deliveries import signature_of
from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.models import AutomationRun, GithubInstallation, GithubWebhookDelivery
from kandev.models.base import new_id
from kandev.models.enums import TriggerType
from tests.conftest import GraphQLCaller
from tests.integration.github.test_poller import add_repository
from tests.integration.rest.conftest import rest_client
from tests.support.factories import settings_for
from tests.support.users import services_as

KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretkeymaterial\n-----END RSA PRIVATE KEY-----"
SECRET = "It's a Secret to Everybody"
PATH = "/api/v1/github/webhook"
INSTALLATION = 4242
SHA = "d" * 40


@pytest.fixture
def settings(database_url, redis_url, tmp_path, github):
    return settings_for(database_url, redis_url, tmp_path, github_api_url=github.url, auth="on")


@pytest.fixture
async def http(settings, db, bus, redis_url, principal, jobs):
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as client:
        yield client


@pytest.fixture
async def app(services, workspace_id):
    await services.github.set_app("123", KEY, SECRET)
    assert await services.github.route_installation(workspace_id, INSTALLATION)


def deliver(http, event: str, payload: Any, *, secret: str | None = SECRET, delivery: str | None = None, **extra):
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery or new_id(), "Content-Type": "application/json"}
    if secret is not None:
        headers["X-Hub-Signature-256"] = signature_of(secret, body)
    headers.update(extra)
    return http.post(PATH, content=body, headers=headers)


def push(branch="main", sha=SHA, repository="acme/widgets", **fields):
    return {
        "ref": f"refs/heads/{branch}",
        "before": "0" * 39 + "1",
        "after": sha,
        "deleted": False,
        "repository": {"full_name": repository},
        "installation": {"id": INSTALLATION},
        "pusher": {"name": "alice"},
        **fields,
    }


def check_run(run_id=1, conclusion="failure", name="tests", branch="main", repository="acme/widgets"):
    return {
        "action": "completed",
        "check_run": {
            "id": run_id,
            "name": name,
            "conclusion": conclusion,
            "head_sha": SHA,
            "html_url": f"https://github.com/{repository}/runs/{run_id}",
            "check_suite": {"head_branch": branch},
        },
        "repository": {"full_name": repository},
        "installation": {"id": INSTALLATION},
    }


async def automation(services, workspace_id, kind, **config):
    saved = await services.automations.create(
        workspace_id,
        AutomationFields(
            name=f"{kind} {new_id()[:6]}",
            prompt="look at {{data.repository}} {{data.branch}}",
            triggers=[TriggerFields(type=kind, config=config)],
            max_concurrent_runs=10,
        ),
    )
    return saved.automation.id


async def runs_of(db, automation_id):
    async with db.read() as session:
        return list(
            await session.scalars(
                select(AutomationRun)
                .where(AutomationRun.automation_id == automation_id)
                .order_by(AutomationRun.created_at)
            )
        )


async def test_without_an_app_the_webhook_is_404(http):
    response = await deliver(http, "push", push())
    assert response.status_code == 404


async def test_a_bad_or_missing_signature_is_401_and_nothing_is_parsed_or_stored(http, db, app):
    assert (await deliver(http, "push", push(), secret=None)).status_code == 401
    assert (await deliver(http, "push", push(), secret="guess")).status_code == 401
    assert (await deliver(http, "push", b"{not json", secret="guess")).status_code == 401
    tampered = json.dumps(push()).encode()
    response = await http.post(
        PATH,
        content=tampered + b" ",
        headers={"X-GitHub-Event": "push", "X-Hub-Signature-256": signature_of(SECRET, tampered)},
    )
    assert response.status_code == 401
    odd = await http.post(PATH, content=tampered, headers={"X-Hub-Signature-256": "sha256=\u00e9".encode("latin-1")})
    assert odd.status_code == 401
    async with db.read() as session:
        assert list(await session.scalars(select(GithubWebhookDelivery))) == []
    # Signed, but not a JSON object: 400 once the signature verified (nested too deep to walk safely, too).
    assert (await deliver(http, "push", b"[1]")).status_code == 400
    deep = await deliver(http, "push", b'{"a":' * 600 + b"1" + b"}" * 600)
    assert (deep.status_code, deep.json()["code"]) == (400, "VALIDATION")
    # A personal access token is not needed; a good signature is enough.
    assert (await deliver(http, "ping", {"zen": "hi"})).status_code == 202


async def test_over_1_mib_is_413(http, app):
    big = b"{" + b" " * (1024 * 1024) + b"}"
    assert (await deliver(http, "push", big)).status_code == 413


async def test_push_fires_by_branch_glob_ignores_deletions_and_dedups_by_branch_and_sha(
    http, db, services, workspace_id, app
):
    releases = await automation(
        services, workspace_id, TriggerType.GITHUB_PUSH, repositories=["acme/widgets"], branches=["release/*"]
    )
    any_branch = await automation(services, workspace_id, TriggerType.GITHUB_PUSH, repositories=["acme/widgets"])
    unlisted = await automation(services, workspace_id, TriggerType.GITHUB_PUSH)  # no repositories: not evaluated
    response = await deliver(http, "push", push("release/1.0"))
    assert response.status_code == 202 and response.json()["fired"] == 2
    [run] = await runs_of(db, releases)
    assert run.trigger_type == "github_push" and run.dedup_key == f"github_push:acme/widgets:release/1.0:{SHA}"
    assert run.trigger_data["branch"] == "release/1.0" and run.trigger_data["sha"] == SHA
    assert run.trigger_data["repository"] == "acme/widgets"
    # The same push delivered again under a new delivery id: deduplicated by branch and SHA.
    again = await deliver(http, "push", push("release/1.0"))
    assert again.status_code == 202 and again.json()["fired"] == 0
    assert (await deliver(http, "push", push("main"))).json()["fired"] == 1
    assert (await deliver(http, "push", push("release/1.0", sha="e" * 40))).json()["fired"] == 2
    deleted = push("release/2.0", sha="0" * 40, deleted=True)
    gone = await deliver(http, "push", deleted)
    assert gone.status_code == 202 and gone.json()["ignored"] == "a branch deletion"
    assert (await deliver(http, "push", push("x", repository="acme/other"))).json()["fired"] == 0
    other = dict(push("release/3"), installation={"id": 999})
    assert (await deliver(http, "push", other)).json()["fired"] == 0
    assert len(await runs_of(db, releases)) == 2
    assert len(await runs_of(db, any_branch)) == 3
    assert await runs_of(db, unlisted) == []


async def test_ci_fires_by_conclusion_check_name_and_branch_and_dedups_by_check_run_id(
    http, db, services, workspace_id, app
):
    failures = await automation(services, workspace_id, TriggerType.GITHUB_CI, repositories=["acme/widgets"])
    lint = await automation(
        services,
        workspace_id,
        TriggerType.GITHUB_CI,
        repositories=["acme/widgets"],
        conclusions=["failure", "timed_out"],
        check_names=["lint*"],
        head_branches=["main"],
    )
    response = await deliver(http, "check_run", check_run(1, name="tests"))
    assert response.status_code == 202 and response.json()["fired"] == 1
    [run] = await runs_of(db, failures)
    assert run.trigger_type == "github_ci" and run.dedup_key == "github_ci:acme/widgets:check_run:1"
    assert {k: run.trigger_data[k] for k in ("check_name", "conclusion", "branch", "sha")} == {
        "check_name": "tests",
        "conclusion": "failure",
        "branch": "main",
        "sha": SHA,
    }
    assert run.trigger_data["url"].endswith("/runs/1")
    assert (await deliver(http, "check_run", check_run(1, name="tests"))).json()["fired"] == 0  # same check run
    assert (await deliver(http, "check_run", check_run(2, conclusion="success"))).json()["fired"] == 0
    assert (await deliver(http, "check_run", check_run(3, name="lint-py", conclusion="timed_out"))).json()["fired"] == 1
    assert (await deliver(http, "check_run", check_run(4, name="lint-py", branch="dev"))).json()["fired"] == 1
    in_progress = dict(check_run(5), action="created")
    assert (await deliver(http, "check_run", in_progress)).json()["ignored"] == "the check run is not completed"
    assert [r.trigger_data["check_run_id"] for r in await runs_of(db, failures)] == [1, 4]
    assert [r.trigger_data["check_run_id"] for r in await runs_of(db, lint)] == [3]


@pytest.mark.parametrize("kind", [TriggerType.GITHUB_PUSH, TriggerType.GITHUB_CI])
async def test_all_repositories_is_explicit_for_push_and_ci_and_an_empty_list_fires_nothing(
    http, db, services, workspace_id, app, kind
):
    """ "All repositories on <host>" evaluates every workspace repository on the GitHub connection's host; an
    empty list evaluates none."""
    await services.github.connect(workspace_id, "good-token")
    await add_repository(db, workspace_id, "acme/widgets")
    await add_repository(db, workspace_id, "acme/elsewhere", host="gitlab.example.com")
    every = await automation(services, workspace_id, kind, all_repositories=True)
    empty = await automation(services, workspace_id, kind)
    event, payload = ("push", push) if kind == TriggerType.GITHUB_PUSH else ("check_run", check_run)
    assert (await deliver(http, event, payload(repository="acme/widgets"))).json()["fired"] == 1
    assert (await deliver(http, event, payload(repository="acme/elsewhere"))).json()["fired"] == 0
    assert (await deliver(http, event, payload(repository="acme/unregistered"))).json()["fired"] == 0
    assert [r.trigger_data["repository"] for r in await runs_of(db, every)] == ["acme/widgets"]
    assert await runs_of(db, empty) == []


async def test_a_redelivery_is_handled_once(http, db, services, workspace_id, app):
    target = await automation(services, workspace_id, TriggerType.GITHUB_PUSH, repositories=["acme/widgets"])
    first = await deliver(http, "push", push("main"), delivery="delivery-1")
    assert first.json()["fired"] == 1 and first.json()["duplicate"] is False
    again = await deliver(http, "push", push("main", sha="f" * 40), delivery="delivery-1")
    assert again.status_code == 202 and again.json()["duplicate"] is True
    assert len(await runs_of(db, target)) == 1


async def test_a_signed_body_sent_again_under_another_delivery_id_or_none_is_a_duplicate(
    http, db, services, workspace_id, app
):
    target = await automation(services, workspace_id, TriggerType.GITHUB_CI, repositories=["acme/widgets"])
    captured = json.dumps(check_run(7)).encode()

    first = await deliver(http, "check_run", captured, delivery="delivery-a")
    # An attacker who captured it replays the same signed bytes under made-up ids, or none.
    replays = [await deliver(http, "check_run", captured, delivery=f"forged-{n}") for n in range(3)]
    unnamed = await http.post(
        PATH,
        content=captured,
        headers={"X-GitHub-Event": "check_run", "X-Hub-Signature-256": signature_of(SECRET, captured)},
    )

    assert first.json()["duplicate"] is False and first.json()["recorded"] == 1
    for replay in [*replays, unnamed]:
        assert replay.status_code == 202 and replay.json()["duplicate"] is True
        assert replay.json()["recorded"] == 0
    assert len(await runs_of(db, target)) == 1
    async with db.read() as session:
        assert [d.delivery_id for d in await session.scalars(select(GithubWebhookDelivery))] == ["delivery-a"]
    # A body differing by one byte is another delivery.
    assert (await deliver(http, "check_run", captured + b" ")).json()["duplicate"] is False


async def test_one_signed_body_sent_at_once_under_many_delivery_ids_is_handled_once(
    http, db, services, workspace_id, app
):
    await automation(services, workspace_id, TriggerType.GITHUB_PUSH, repositories=["acme/widgets"])
    captured = json.dumps(push("main", sha="c" * 40)).encode()

    answers = await asyncio.gather(*(deliver(http, "push", captured, delivery=f"id-{n}") for n in range(8)))

    assert sorted(a.json()["duplicate"] for a in answers) == [False] + [True] * 7
    assert sum(a.json()["fired"] for a in answers) == 1


ROUTE = (
    "mutation($i: RouteGithubInstallationInput!) { routeGithubInstallation(input: $i) { __typename "
    "... on RouteGithubInstallationPayload { installationId routed changed } ... on Error { message } } }"
)


async def test_routing_an_installation_is_for_admins_through_graphql(services, db):
    bob = await services_as(services, "bob")
    bobs = (await bob.workspaces.create("Bob's")).id
    refused = await GraphQLCaller(bob)(ROUTE, i={"workspaceId": bobs, "installationId": "77"})
    assert refused["routeGithubInstallation"]["__typename"] == "PermissionDeniedError"
    admin = await services_as(services, "alice", admin=True)
    workspace_id = (await admin.workspaces.create("Alice's")).id
    alice = GraphQLCaller(admin)
    done = await alice(ROUTE, i={"workspaceId": workspace_id, "installationId": "77"})
    assert done["routeGithubInstallation"] == {
        "__typename": "RouteGithubInstallationPayload",
        "installationId": "77",
        "routed": True,
        "changed": True,
    }
    again = await alice(ROUTE, i={"workspaceId": workspace_id, "installationId": "77"})
    assert again["routeGithubInstallation"]["changed"] is False
    bad = await alice(ROUTE, i={"workspaceId": workspace_id, "installationId": "x7"})
    assert bad["routeGithubInstallation"]["__typename"] == "ValidationError"
    async with db.read() as session:
        assert [(r.installation_id, r.workspace_id) for r in await session.scalars(select(GithubInstallation))] == [
            (77, workspace_id)
        ]
    gone = await alice(ROUTE, i={"workspaceId": workspace_id, "installationId": "77", "routed": False})
    assert gone["routeGithubInstallation"]["changed"] is True
