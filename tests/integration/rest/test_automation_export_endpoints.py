"""GET /api/v1/workspaces/{id}/automations/export and /export/zip over HTTP: what the YAML says (names, not
ids; no secret), byte-identical repeats, the zip's layout, and one 404 for unknown and unseen workspaces."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any, NamedTuple

import yaml
from sqlalchemy import update

from kandev.domain.access.bootstrap import bootstrap
from kandev.domain.access.tokens import create_token
from kandev.domain.access.users import create_user
from kandev.domain.services import Services
from kandev.models import Repository
from kandev.platform.database import Database
from tests.conftest import GraphQLCaller
from tests.integration.rest.conftest import rest_client
from tests.support.factories import new_agent_profile, settings_for
from tests.support.git_repos import make_repository

CREATE = """mutation($i: CreateAutomationInput!) { createAutomation(input: $i) { __typename
  ... on Error { message } ... on AutomationPayload { webhookSecret automation { id } } } }"""
DELETE = "mutation($id: ID!) { deleteAutomation(automationId: $id) { __typename } }"
TOKEN = "ghp_SECRETTOKEN4242"
STEPS = "query($id: ID!) { workflow(id: $id) { name steps { id name } } }"


def export_url(workspace_id: str, zipped: bool = False) -> str:
    return f"/api/v1/workspaces/{workspace_id}/automations/export" + ("/zip" if zipped else "")


async def create(gql: GraphQLCaller, workspace_id: str, name: str, **fields: Any) -> dict[str, Any]:
    payload = (await gql(CREATE, i={"workspaceId": workspace_id, "name": name, "prompt": "/end", **fields}))[
        "createAutomation"
    ]
    assert payload["__typename"] == "AutomationPayload", payload
    return payload


class Furnished(NamedTuple):
    ids: list[str]  # every id the export must not show
    webhook_secret: str


async def furnish(services: Services, db: Database, workspace_id: str, folder: Path) -> Furnished:
    """Three automations pointing at a profile, a workflow and its step, two repositories (one with a token in
    its remote URL), a schedule, a GitHub condition and a webhook; and a deleted one."""
    gql = GraphQLCaller(services)
    agent = await new_agent_profile(services, workspace_id, "Reviewer")
    executor = (await services.executor_profiles.list(workspace_id))[0]
    workflow_id = (await services.workspaces.get(workspace_id)).default_workflow_id
    step = (await gql(STEPS, id=workflow_id))["workflow"]["steps"][1]
    api = await services.repositories.create(workspace_id, "api", str(make_repository(folder / "api")))
    web = await services.repositories.create(
        workspace_id, "web", str(make_repository(folder / "web", branches=("develop",)))
    )
    async with db.transaction() as session:
        await session.execute(
            update(Repository)
            .where(Repository.id == api.id)
            .values(remote_url=f"https://x-access-token:{TOKEN}@github.com/acme/api.git")
        )
    nightly = await create(
        gql,
        workspace_id,
        "Nightly review",
        description="Reviews what merged today",
        agentProfileId=agent.id,
        executorProfileId=executor.id,
        destination="NORMAL",
        workflowId=workflow_id,
        workflowStepId=step["id"],
        repositories=[{"repositoryId": web.id, "baseBranch": "develop"}, {"repositoryId": api.id}],
        prompt="Review today's merges.\nSay what broke.\n",
        titleTemplate="Review {{trigger.timestamp}}",
        context="CONTINUE_SESSION",
        triggers=[
            {"type": "SCHEDULED", "expression": "0 18 * * 1-5", "timezone": "Europe/Berlin"},
            {"type": "GITHUB_PR", "filters": {"repositories": ["acme/api"], "base_branches": ["main"]}},
        ],
    )
    hook = await create(
        gql, workspace_id, "Deploy hook", enabled=False, maxConcurrentRuns=3, triggers=[{"type": "WEBHOOK"}]
    )
    bare = await create(gql, workspace_id, "A scratch one")
    gone = await create(gql, workspace_id, "Deleted one")
    await gql(DELETE, id=gone["automation"]["id"])
    ids = [workspace_id, agent.id, executor.id, workflow_id, step["id"], api.id, web.id]
    ids += [made["automation"]["id"] for made in (nightly, hook, bare, gone)]
    return Furnished(ids=ids, webhook_secret=hook["webhookSecret"])


EXPECTED = [
    {
        "name": "A scratch one",
        "description": "",
        "agent_profile": None,
        "executor_profile": None,
        "destination": "hidden",
        "workflow": None,
        "workflow_step": None,
        "repositories": [],
        "prompt": "/end",
        "title_template": "",
        "context": "new_task_per_run",
        "max_concurrent_runs": 1,
        "enabled": True,
        "triggers": [],
    },
    {
        "name": "Deploy hook",
        "description": "",
        "agent_profile": None,
        "executor_profile": None,
        "destination": "hidden",
        "workflow": None,
        "workflow_step": None,
        "repositories": [],
        "prompt": "/end",
        "title_template": "",
        "context": "new_task_per_run",
        "max_concurrent_runs": 3,
        "enabled": False,
        "triggers": [{"type": "webhook", "enabled": True, "config": {}}],
    },
    {
        "name": "Nightly review",
        "description": "Reviews what merged today",
        "agent_profile": "Reviewer",
        "executor_profile": "EXECUTOR",
        "destination": "normal",
        "workflow": "WORKFLOW",
        "workflow_step": "STEP",
        "repositories": [
            {"name": "web", "url": None, "base_branch": "develop"},
            {"name": "api", "url": "https://github.com/acme/api.git", "base_branch": "main"},
        ],
        "prompt": "Review today's merges.\nSay what broke.\n",
        "title_template": "Review {{trigger.timestamp}}",
        "context": "continue_session",
        "max_concurrent_runs": 1,
        "enabled": True,
        "triggers": [
            {
                "type": "scheduled",
                "enabled": True,
                "config": {"expression": "0 18 * * 1-5", "timezone": "Europe/Berlin"},
            },
            {
                "type": "github_pr",
                "enabled": True,
                "config": {
                    "base_branches": ["main"],
                    "events": ["opened"],
                    "exclude_drafts": False,
                    "repositories": ["acme/api"],
                },
            },
        ],
    },
]


async def expected(services: Services, workspace_id: str) -> list[dict[str, Any]]:
    executor = (await services.executor_profiles.list(workspace_id))[0].name
    workflow_id = (await services.workspaces.get(workspace_id)).default_workflow_id
    workflow = (await GraphQLCaller(services)(STEPS, id=workflow_id))["workflow"]
    wanted = [dict(a) for a in EXPECTED]
    wanted[2] |= {
        "executor_profile": executor,
        "workflow": workflow["name"],
        "workflow_step": workflow["steps"][1]["name"],
    }
    return wanted


async def test_the_yaml_export_names_what_automations_point_at_and_holds_no_id_or_secret(
    http, services, db, workspace_id, tmp_path
):
    furnished = await furnish(services, db, workspace_id, tmp_path)

    response = await http.get(export_url(workspace_id))

    assert response.status_code == 200 and response.headers["content-type"] == "application/yaml"
    document = yaml.safe_load(response.text)
    assert document == {"version": 1, "automations": await expected(services, workspace_id)}
    for secret in (furnished.webhook_secret, TOKEN, *furnished.ids):
        assert secret not in response.text
    assert "prompt: |\n" in response.text  # multi-line text stays readable


async def test_an_export_is_byte_identical_when_repeated(http, services, db, workspace_id, tmp_path):
    await furnish(services, db, workspace_id, tmp_path)
    for zipped in (False, True):
        first = await http.get(export_url(workspace_id, zipped))
        second = await http.get(export_url(workspace_id, zipped))
        assert first.status_code == second.status_code == 200
        assert first.content == second.content


async def test_the_zip_holds_one_file_per_automation_as_the_yaml_lists_it(http, services, db, workspace_id, tmp_path):
    await furnish(services, db, workspace_id, tmp_path)

    response = await http.get(export_url(workspace_id, zipped=True))

    assert response.status_code == 200 and response.headers["content-type"] == "application/zip"
    assert 'filename="automations.zip"' in response.headers["content-disposition"]
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert archive.testzip() is None
    assert archive.namelist() == [
        ".kandev/automations/a-scratch-one.yml",
        ".kandev/automations/deploy-hook.yml",
        ".kandev/automations/nightly-review.yml",
    ]
    wanted = await expected(services, workspace_id)
    for entry, automation in zip(archive.infolist(), wanted, strict=True):
        assert yaml.safe_load(archive.read(entry)) == {"version": 1, **automation}
        assert entry.date_time == (1980, 1, 1, 0, 0, 0)
        assert entry.external_attr >> 16 == 0o100644 and entry.compress_type == zipfile.ZIP_DEFLATED


async def test_a_workspace_without_automations_exports_an_empty_zip_and_an_empty_list(http, gql, workspace_id):
    made = await create(gql, workspace_id, "Deleted")
    await gql(DELETE, id=made["automation"]["id"])

    archive = await http.get(export_url(workspace_id, zipped=True))
    assert archive.status_code == 200
    assert zipfile.ZipFile(io.BytesIO(archive.content)).namelist() == []
    document = await http.get(export_url(workspace_id))
    assert document.status_code == 200 and document.text == "version: 1\nautomations: []\n"


async def test_automations_whose_names_give_one_slug_get_distinct_files_the_oldest_first(http, gql, workspace_id):
    for name in ("Nightly", "nightly!", "Nightly 2", "Ünïcode ☃", "☃"):
        await create(gql, workspace_id, name)

    response = await http.get(export_url(workspace_id, zipped=True))

    names = zipfile.ZipFile(io.BytesIO(response.content)).namelist()
    slugs = {yaml.safe_load(zipfile.ZipFile(io.BytesIO(response.content)).read(n))["name"]: n for n in names}
    assert slugs == {
        "Nightly": ".kandev/automations/nightly.yml",
        "nightly!": ".kandev/automations/nightly-2.yml",
        "Nightly 2": ".kandev/automations/nightly-2-2.yml",  # younger than the one that took nightly-2
        "Ünïcode ☃": ".kandev/automations/unicode.yml",
        "☃": ".kandev/automations/automation.yml",
    }


async def test_an_unknown_workspace_and_another_users_are_the_same_404_and_no_token_is_a_401(
    database_url, redis_url, bus, jobs, tmp_path
):
    settings = settings_for(database_url, redis_url, tmp_path, auth="on")
    database = Database(settings.resolved_database_url())
    try:
        principal = await bootstrap(database, settings)
        mine = {"Authorization": f"Bearer {(await create_token(database, name='ci', login='local')).token}"}
        await create_user(database, "mallory")
        theirs = {"Authorization": f"Bearer {(await create_token(database, name='m', login='mallory')).token}"}
        async with rest_client(settings, database, bus, redis_url, principal, jobs) as client:
            workspace_id = (
                await client.post("/graphql", json={"query": "{ workspaces { id } }"}, headers=mine)
            ).json()["data"]["workspaces"][0]["id"]
            for zipped in (False, True):
                assert (await client.get(export_url(workspace_id, zipped), headers=mine)).status_code == 200
                assert (await client.get(export_url(workspace_id, zipped))).status_code == 401
                unseen = await client.get(export_url(workspace_id, zipped), headers=theirs)
                unknown = await client.get(export_url("0" * 36, zipped), headers=theirs)
                assert unseen.status_code == unknown.status_code == 404
                assert unseen.text.replace(workspace_id, "0" * 36) == unknown.text
                assert unseen.json()["code"] == "NOT_FOUND"
    finally:
        await database.dispose()
