"""The Changes panel on the task page, in a real headless Chromium against a real `kandev serve` whose scripted
agent changes files in a real git worktree: the files with their +/−, a comment on a line sent to the agent as
one REVIEW message, the agent's edit outdating the thread and its resolve over MCP showing live; reviewed marks,
discard with a confirmation, the keyboard, and a phone's layout."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_web_client import no_horizontal_scroll, open_app, unique
from tests.support.factories import served_task
from tests.support.git_repos import git, make_repository

pytestmark = pytest.mark.slow

CREATE_REPOSITORY = (
    "mutation($i: CreateRepositoryInput!) "
    "{ createRepository(input: $i) { __typename ... on RepositoryPayload { repository { id name } } } }"
)
TASK_STATE = "query($id: ID!) { task(id: $id) { state changeStats { files additions deletions } } }"
APP = "".join(f"value_{n} = {n}\n" for n in range(1, 9))


def write(path: str, text: str) -> str:
    """A scripted-agent directive writing `text` to `path`."""
    return f"/write {path}\n{text}/end-write"


def repository(server: KandevServer, folder: Path, files: dict[str, str] | None = None) -> dict[str, Any]:
    """A git repository on `main` holding README and `files`, saved in the workspace."""
    path = make_repository(folder / unique("repo").replace(" ", "-"))
    for name, text in (files or {}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "--allow-empty", "-m", "files")
    answer = server.mutate(
        CREATE_REPOSITORY,
        "createRepository",
        i={"workspaceId": server.workspace_id, "name": path.name, "path": str(path)},
    )
    return {**answer["repository"], "path": path}


def agent_task(server: KandevServer, repo: dict[str, Any], prompt: str, title: str = "Changes") -> dict[str, Any]:
    """A task on `repo` whose scripted agent runs `prompt` now; returns once that turn ended (task in REVIEW)."""
    task = served_task(
        server.mutate, server.workspace_id, unique(title), prompt=prompt, repositories=[{"repositoryId": repo["id"]}]
    )
    server.wait_for(TASK_STATE, lambda d: d["task"]["state"] == "REVIEW", timeout=60, id=task["id"])
    return task


def file_row(page: Any, path: str) -> Any:
    return page.locator(f'[data-testid="file-row"][data-path="{path}"]')


def line_number(page: Any, line: int, side: str = "new") -> Any:
    """The gutter number of a line of the shown diff (inside the viewer's shadow root)."""
    kind = ":not([data-line-type='change-deletion'])" if side == "new" else "[data-line-type='change-deletion']"
    return page.locator(f"[data-column-number='{line}']{kind}").first


def thread(page: Any, thread_id: str | None = None) -> Any:
    selector = (
        f'[data-testid="review-thread"][data-thread-id="{thread_id}"]' if thread_id else '[data-testid="review-thread"]'
    )
    return page.locator(selector)


def open_changes(page: Any, server: KandevServer, task_id: str) -> None:
    from playwright.sync_api import expect

    open_app(page, server, f"/tasks/{task_id}")
    # A task in review that changed something opens on its changes.
    expect(page.get_by_test_id("tab-changes")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_test_id("changes-panel")).to_be_visible()


def test_a_review_goes_from_a_line_comment_to_the_agent_and_comes_back_outdated_and_resolved(
    page: Any, kandev_server: KandevServer, tmp_path: Path, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    repo = repository(kandev_server, tmp_path, {"src/app.py": APP})
    edited = APP.replace("value_3 = 3", "value_3 = 30").replace("value_8 = 8\n", "value_8 = 8\nvalue_9 = 9\n")
    prompt = "\n".join([write("src/app.py", edited), write("NOTES.md", "a\nb\n"), "/say written"])
    task = agent_task(kandev_server, repo, prompt)
    open_changes(page, kandev_server, task["id"])

    # Both files, with their status and +/−, and the reviewed count.
    expect(page.get_by_test_id("file-row")).to_have_count(2)
    expect(file_row(page, "NOTES.md")).to_have_attribute("data-status", "ADDED")
    expect(file_row(page, "NOTES.md").locator(".counts")).to_have_text("+2 −0")
    expect(file_row(page, "src/app.py")).to_have_attribute("data-status", "MODIFIED")
    expect(file_row(page, "src/app.py").locator(".counts")).to_have_text("+2 −1")
    expect(page.get_by_test_id("reviewed-progress")).to_have_text("0 of 2 files reviewed")

    # A comment on line 3 of the new version, whose body tells the scripted agent to change that line.
    file_row(page, "src/app.py").get_by_role("button").click()
    expect(page.get_by_test_id("diff-head")).to_have_attribute("data-path", "src/app.py")
    line_number(page, 3).click()
    draft = page.get_by_test_id("draft-comment")
    expect(draft).to_contain_text("line 3")
    fixed = edited.replace("value_3 = 30", "three = 3")
    page.get_by_test_id("draft-comment-text").fill(f"Name this `three`.\n{write('src/app.py', fixed)}")
    page.get_by_test_id("draft-comment-submit").click()
    opened = thread(page)
    expect(opened).to_have_count(1)
    expect(opened).to_have_attribute("data-state", "OPEN")
    expect(opened.locator("code").first).to_have_text("three")  # the body rendered as Markdown
    thread_id = opened.get_attribute("data-thread-id")
    page.screenshot(path=str(screenshots / "desktop-changes.png"))

    # Send: one prompt; the transcript shows it as one REVIEW message listing the comment.
    send = page.get_by_test_id("send-review")
    expect(send).to_have_text("Send 1 comment to agent")
    send.click()
    expect(send).to_have_text("Send 0 comments to agent")
    expect(send).to_be_disabled()

    # The agent rewrote line 3: the thread is outdated and keeps showing the line as it was.
    expect(thread(page, thread_id)).to_have_attribute("data-state", "OUTDATED", timeout=60_000)
    expect(thread(page, thread_id).get_by_test_id("thread-snippet")).to_have_text("value_3 = 30")
    # The open diff read the file again: line 3 is the agent's new one.
    expect(page.locator("[data-line][data-line-type='change-addition']", has_text="three = 3")).to_have_count(1)

    page.get_by_test_id("tab-conversation").click()
    review = page.get_by_test_id("msg-review")
    expect(review).to_have_count(1)
    expect(review).to_contain_text("src/app.py:3")
    expect(review.get_by_test_id("msg-review-thread")).to_have_count(1)

    # The agent resolves it over MCP (a scripted tool call): the panel shows it resolved by the agent, folded.
    resolve = json.dumps({"thread_id": thread_id, "note": "Renamed to `three`."})
    page.get_by_test_id("composer-text").fill(f"/tool resolve_review_comment_kandev {resolve}")
    page.get_by_test_id("send-message").click()
    page.get_by_test_id("tab-changes").click()
    resolved = thread(page, thread_id)
    expect(resolved).to_have_attribute("data-state", "RESOLVED", timeout=60_000)
    expect(resolved.locator("details")).not_to_have_attribute("open", "")
    resolved.locator("summary").click()
    expect(resolved.get_by_test_id("thread-resolved-by")).to_have_text("Resolved by Agent")
    expect(resolved.get_by_test_id("review-comment").last).to_contain_text("Renamed to three.")


ADD_COMMENT = (
    "mutation($i: AddReviewCommentInput!) { addReviewComment(input: $i) { __typename "
    "... on ReviewThreadPayload { thread { id } } } }"
)
LONG = "".join(f"line_{n} = {n}\n" for n in range(1, 31))


def comment(server: KandevServer, task_id: str, path: str, line: int, body: str) -> str:
    answer = server.mutate(
        ADD_COMMENT, "addReviewComment", i={"taskId": task_id, "path": path, "line": line, "body": body}
    )
    return answer["thread"]["id"]


def shown_path(page: Any) -> str | None:
    return page.get_by_test_id("diff-head").get_attribute("data-path")


def test_keys_j_and_k_walk_the_files_and_n_and_p_the_threads(
    page: Any, kandev_server: KandevServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    repo = repository(kandev_server, tmp_path)
    prompt = "\n".join(write(p, "one\ntwo\nthree\n") for p in ("a.txt", "b/c.txt", "d.txt"))
    task = agent_task(kandev_server, repo, prompt, "Keys")
    first = comment(kandev_server, task["id"], "a.txt", 2, "On a")
    second = comment(kandev_server, task["id"], "d.txt", 3, "On d")
    open_changes(page, kandev_server, task["id"])

    # The tree's order: the folder b/ first, then the files beside it.
    expect(page.get_by_test_id("diff-head")).to_have_attribute("data-path", "b/c.txt")
    page.keyboard.press("j")
    expect(page.get_by_test_id("diff-head")).to_have_attribute("data-path", "a.txt")
    page.keyboard.press("j")
    expect(page.get_by_test_id("diff-head")).to_have_attribute("data-path", "d.txt")
    page.keyboard.press("j")  # the last file: nothing further
    expect(page.get_by_test_id("diff-head")).to_have_attribute("data-path", "d.txt")
    page.keyboard.press("k")
    expect(page.get_by_test_id("diff-head")).to_have_attribute("data-path", "a.txt")

    focused = "() => document.activeElement?.getAttribute('data-thread-id')"
    page.keyboard.press("n")  # the first thread from the file shown: a.txt's
    page.wait_for_function(f"() => ({focused})() === {json.dumps(first)}")
    page.keyboard.press("n")
    expect(page.get_by_test_id("diff-head")).to_have_attribute("data-path", "d.txt")
    page.wait_for_function(f"() => ({focused})() === {json.dumps(second)}")
    page.keyboard.press("p")
    expect(page.get_by_test_id("diff-head")).to_have_attribute("data-path", "a.txt")
    page.wait_for_function(f"() => ({focused})() === {json.dumps(first)}")

    # Typing in a field is not a shortcut.
    thread(page, first).get_by_test_id("thread-reply-text").fill("j")
    expect(page.get_by_test_id("diff-head")).to_have_attribute("data-path", "a.txt")


def test_a_file_marked_reviewed_counts_and_turns_unreviewed_when_the_agent_changes_it_again(
    page: Any, kandev_server: KandevServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    repo = repository(kandev_server, tmp_path)
    task = agent_task(kandev_server, repo, "\n".join([write("a.txt", "a\n"), write("b.txt", "b\nbb\n")]), "Reviewed")
    open_app(page, kandev_server)
    card = page.locator(f'[data-testid="task-card"][data-task-id="{task["id"]}"]')
    expect(card.get_by_test_id("card-changes")).to_contain_text("+3 −0 · 2 files")

    open_changes(page, kandev_server, task["id"])
    progress = page.get_by_test_id("reviewed-progress")
    expect(progress).to_have_text("0 of 2 files reviewed")
    file_row(page, "a.txt").get_by_test_id("file-reviewed").check()
    expect(progress).to_have_text("1 of 2 files reviewed")
    page.reload()  # kept on the server
    expect(file_row(page, "a.txt")).to_have_attribute("data-reviewed", "true")
    expect(page.get_by_test_id("reviewed-progress")).to_have_text("1 of 2 files reviewed")

    # The agent changes a.txt again: its mark was for the diff the person saw, so it goes, live.
    page.get_by_test_id("composer-text").fill(write("a.txt", "a\nmore\n"))
    page.get_by_test_id("send-message").click()
    expect(file_row(page, "a.txt")).to_have_attribute("data-reviewed", "false", timeout=60_000)
    expect(page.get_by_test_id("reviewed-progress")).to_have_text("0 of 2 files reviewed")
    expect(file_row(page, "a.txt").locator(".counts")).to_have_text("+2 −0")


DISCARD = (
    "mutation($i: DiscardChangesInput!) { discardChanges(input: $i) { __typename ... on Error { code message } } }"
)


def test_a_board_column_read_before_a_change_does_not_hide_the_change_that_arrived_meanwhile(
    page: Any, kandev_server: KandevServer, tmp_path: Path
) -> None:
    """The change stats are stored apart from the task's own edits, so their event can carry the same updatedAt
    as a column page read just before them: the page must not put the old stats back when it lands last."""
    from playwright.sync_api import expect

    repo = repository(kandev_server, tmp_path)
    task = agent_task(kandev_server, repo, "\n".join([write("a.txt", "a\n"), write("b.txt", "b\n")]), "Column")
    step = kandev_server.wait_for(
        "query($id: ID!) { task(id: $id) { workflowStepId changeStats { files } } }",
        lambda d: (d["task"]["changeStats"] or {}).get("files") == 2,
        id=task["id"],
    )["task"]["workflowStepId"]

    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))
    held: list[tuple[Any, Any]] = []

    def hold_review_column(route: Any) -> None:
        body = route.request.post_data_json or {}
        is_page = "query Tasks(" in str(body.get("query"))
        if not held and is_page and (body.get("variables") or {}).get("step") == step:
            held.append((route, route.fetch()))  # read now, delivered after the change below
        else:
            route.continue_()

    page.route("**/graphql", hold_review_column)
    open_app(page, kandev_server)
    until(page, lambda: bool(held), "the Review column's page was requested")

    kandev_server.mutate(
        DISCARD, "discardChanges", i={"taskId": task["id"], "repositoryId": repo["id"], "paths": ["b.txt"]}
    )
    until(page, lambda: any('"CHANGES"' in f and task["id"] in f for f in frames), "the CHANGES event reached the page")
    route, response = held[0]
    route.fulfill(response=response)

    card = page.locator(f'[data-testid="task-card"][data-task-id="{task["id"]}"]')
    expect(card.get_by_test_id("card-changes")).to_contain_text("+1 −0 · 1 file")


def until(page: Any, check: Any, what: str, timeout: float = 20) -> None:
    """Let the page run (its events and routes) until `check()` holds; fails naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"not seen within {timeout:g} s: {what}"
        page.wait_for_timeout(20)


def test_discarding_a_hunk_or_a_file_asks_first_and_the_panel_follows(
    page: Any, kandev_server: KandevServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    repo = repository(kandev_server, tmp_path, {"long.txt": LONG})
    edited = LONG.replace("line_2 = 2", "line_2 = 20").replace("line_28 = 28", "line_28 = 280")
    task = agent_task(
        kandev_server, repo, "\n".join([write("long.txt", edited), write("scratch.txt", "x\n")]), "Discard"
    )
    open_changes(page, kandev_server, task["id"])
    file_row(page, "long.txt").get_by_role("button").click()
    expect(page.locator("[data-line][data-line-type='change-addition']")).to_have_count(2)

    page.get_by_test_id("discard-open").click()
    dialog = page.get_by_test_id("discard-dialog")
    expect(dialog.get_by_test_id("discard-hunk-row")).to_have_count(2)
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("[data-line][data-line-type='change-addition']")).to_have_count(2)  # nothing went

    page.get_by_test_id("discard-open").click()
    expect(dialog.get_by_test_id("discard-hunk-row").first).to_contain_text("line_2 = 20")
    dialog.get_by_test_id("discard-hunk").first.click()
    expect(dialog).to_be_hidden()
    expect(file_row(page, "long.txt").locator(".counts")).to_have_text("+1 −1")
    expect(page.locator("[data-line][data-line-type='change-addition']")).to_have_count(1)
    expect(page.locator("[data-line][data-line-type='change-addition']", has_text="line_28 = 280")).to_have_count(1)

    file_row(page, "scratch.txt").get_by_role("button").click()
    page.get_by_test_id("discard-open").click()
    dialog.get_by_test_id("discard-file").click()
    expect(file_row(page, "scratch.txt")).to_have_count(0)
    expect(page.get_by_test_id("file-row")).to_have_count(1)


def test_unchanged_lines_between_hunks_expand_and_the_split_view_shows_both_versions(
    page: Any, kandev_server: KandevServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    repo = repository(kandev_server, tmp_path, {"long.txt": LONG})
    task = agent_task(kandev_server, repo, write("long.txt", LONG.replace("line_15 = 15", "line_15 = 150")), "Expand")
    open_changes(page, kandev_server, task["id"])
    content = page.locator("[data-content] [data-line]")
    expect(page.locator("[data-line][data-line-type='change-addition']")).to_have_count(1)
    expect(page.locator("[data-content] [data-line='1']")).to_have_count(0)  # folded away
    before = content.count()
    page.locator("[data-expand-button]").first.click()
    expect(page.locator("[data-content] [data-line='1']").first).to_be_attached()
    assert content.count() > before

    page.get_by_test_id("diff-mode-split").click()
    expect(page.get_by_test_id("diff-mode-split")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("pre[data-diff-type='split']")).to_have_count(1)
    expect(page.locator("[data-line][data-line-type='change-deletion']", has_text="line_15 = 15")).to_have_count(1)
    expect(page.locator("[data-line][data-line-type='change-addition']", has_text="line_15 = 150")).to_have_count(1)


def test_on_a_phone_the_diff_is_unified_and_wraps_the_files_are_a_sheet_and_nothing_scrolls_sideways(
    phone: Any, kandev_server: KandevServer, tmp_path: Path, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    repo = repository(kandev_server, tmp_path)
    wide = "x = '" + "a long line that does not fit on a phone " * 6 + "'\n"
    task = agent_task(
        kandev_server, repo, "\n".join([write("wide.py", wide + "y = 1\n"), write("z.txt", "z\n")]), "Phone"
    )
    open_changes(phone, kandev_server, task["id"])
    expect(phone.get_by_test_id("diff-mode-split")).to_have_count(0)
    expect(phone.get_by_test_id("file-tree")).to_have_count(0)  # not beside the diff: in the sheet
    expect(phone.locator("pre[data-diff-type='single'][data-overflow='wrap']")).to_have_count(1)
    no_horizontal_scroll(phone)

    phone.get_by_test_id("open-file-sheet").click()
    sheet = phone.get_by_test_id("file-sheet")
    expect(sheet.get_by_test_id("file-row")).to_have_count(2)
    phone.screenshot(path=str(screenshots / "mobile-changes-files.png"))
    file_row(sheet, "z.txt").get_by_role("button").click()
    expect(sheet).to_be_hidden()
    expect(phone.get_by_test_id("diff-head")).to_have_attribute("data-path", "z.txt")

    phone.get_by_test_id("open-file-sheet").click()
    file_row(sheet, "wide.py").get_by_role("button").click()
    line_number(phone, 2).tap()
    phone.get_by_test_id("draft-comment-text").fill("Fine on a phone too.")
    phone.get_by_test_id("draft-comment-submit").click()
    expect(thread(phone)).to_have_count(1)
    no_horizontal_scroll(phone)
    phone.screenshot(path=str(screenshots / "mobile-changes.png"))
