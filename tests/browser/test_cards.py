"""Board cards a person can read and move, in a real headless Chromium against a real `kandev serve`:
the agent, its last words and a status in words; a confirmation before a move restarts an agent; a
Move-to menu that works on a phone; a shortcuts dialog; toasts that leave the header visible."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_web_client import TASK, no_horizontal_scroll, open_app, steps, unique
from tests.support.factories import served_task

pytestmark = pytest.mark.slow

START = """mutation($i: StartTaskInput!) { startTask(input: $i) { __typename ... on Error { message }
    ... on StartTaskPayload { session { id } } } }"""
SESSION_STATE = "query($id: ID!) { session(id: $id) { state } }"
TURNS = "query($id: ID!) { session(id: $id) { turns { id } } }"
RAW_STATES = re.compile(r"IN_PROGRESS|WAITING_FOR_INPUT|TODO|REVIEW|COMPLETED")


def card_of(page: Any, task: dict[str, Any]) -> Any:
    return page.locator(f'[data-testid="task-card"][data-task-id="{task["id"]}"]')


def ran_once(server: KandevServer, title: str, prompt: str) -> dict[str, Any]:
    """A task whose scripted agent finished one turn (and so has a session)."""
    task = served_task(server.mutate, server.workspace_id, unique(title))
    session = server.mutate(START, "startTask", i={"taskId": task["id"], "prompt": prompt})["session"]
    server.wait_for(SESSION_STATE, lambda d: d["session"]["state"] == "WAITING_FOR_INPUT", id=session["id"])
    return {**task, "sessionId": session["id"]}


def test_after_a_scripted_turn_the_card_shows_the_agent_its_last_words_and_a_status_in_words(
    page: Any, kandev_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    open_app(page, kandev_server)
    task = ran_once(kandev_server, "Card words", "/say **All done**: see [the notes](https://example.com/n)")
    card = card_of(page, task)
    expect(card.get_by_test_id("card-preview")).to_have_text("All done: see the notes")
    expect(card.get_by_test_id("card-agent")).to_contain_text("Scripted")
    expect(card.get_by_test_id("card-time")).to_have_text(re.compile(r"just now|\d+ min ago"))
    status = card.get_by_test_id("card-status")
    expect(status).to_have_text("Waiting for you")
    assert not RAW_STATES.search(card.inner_text())
    step_id = kandev_server.gql(TASK, id=task["id"])["task"]["workflowStepId"]
    step_name = next(s["name"] for s in steps(kandev_server).values() if s["id"] == step_id)
    expect(card.get_by_test_id("card-step")).to_have_text(step_name)
    page.screenshot(path=str(screenshots / "desktop-cards.png"))


def test_moving_a_task_that_ran_into_an_auto_start_step_asks_first_and_cancel_keeps_the_card(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    in_progress = steps(kandev_server)["In Progress"]["id"]
    task = ran_once(kandev_server, "Asks first", "/say first run")
    before = kandev_server.gql(TASK, id=task["id"])["task"]["workflowStepId"]
    assert before != in_progress
    open_app(page, kandev_server)
    card = card_of(page, task)
    column = page.locator(f'[data-testid="column"][data-step-id="{before}"]')
    expect(column.locator(card)).to_be_visible()

    card.get_by_test_id("move-select").select_option(label="In Progress")
    dialog = page.get_by_test_id("confirm-move")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("starts its agent again")
    dialog.get_by_test_id("confirm-move-cancel").click()
    expect(dialog).to_be_hidden()
    expect(column.locator(card)).to_be_visible()
    assert kandev_server.gql(TASK, id=task["id"])["task"]["workflowStepId"] == before

    card.get_by_test_id("move-select").select_option(label="In Progress")
    dialog.get_by_test_id("confirm-move-ok").click()
    # The agent starts again (a second turn), and its finished turn may already have moved the card back on.
    kandev_server.wait_for(TURNS, lambda d: len(d["session"]["turns"]) == 2, id=task["sessionId"])


def test_a_task_that_never_ran_moves_into_an_auto_start_step_without_a_question(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    backlog = steps(kandev_server)["Backlog"]["id"]
    task = served_task(kandev_server.mutate, kandev_server.workspace_id, unique("Fresh start"))
    open_app(page, kandev_server)
    card_of(page, task).get_by_test_id("move-select").select_option(label="In Progress")
    kandev_server.wait_for(TASK, lambda d: d["task"]["workflowStepId"] != backlog, id=task["id"])
    expect(page.get_by_test_id("confirm-move")).to_be_hidden()


def test_on_a_phone_the_move_to_menu_moves_a_card_to_another_column(phone: Any, kandev_server: KandevServer) -> None:
    from playwright.sync_api import expect

    named = steps(kandev_server)
    task = served_task(kandev_server.mutate, kandev_server.workspace_id, unique("Thumb move"))
    open_app(phone, kandev_server)
    card = card_of(phone, task)
    menu = card.get_by_test_id("move-select")
    expect(menu).to_be_visible()
    box = menu.bounding_box()
    assert box and box["height"] >= 40, box  # a finger's size, not a mouse's
    menu.select_option(label="Review")
    kandev_server.wait_for(TASK, lambda d: d["task"]["workflowStepId"] == named["Review"]["id"], id=task["id"])
    expect(card).to_be_hidden()  # the Backlog tab still shows
    phone.get_by_test_id("board-tab").filter(has_text="Review").click()
    expect(
        phone.locator(f'[data-testid="column"][data-step-id="{named["Review"]["id"]}"]').locator(card)
    ).to_be_visible()
    no_horizontal_scroll(phone)


def test_question_mark_and_the_header_button_open_the_shortcuts_dialog(page: Any, kandev_server: KandevServer) -> None:
    from playwright.sync_api import expect

    open_app(page, kandev_server)
    dialog = page.get_by_test_id("shortcuts")
    page.keyboard.press("?")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Ctrl")
    expect(dialog).to_contain_text("Move the focused card")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    page.get_by_test_id("open-shortcuts").click()
    expect(dialog).to_be_visible()
    dialog.get_by_test_id("shortcuts-close").click()
    expect(dialog).to_be_hidden()
    # In a text field "?" is text, not a shortcut.
    page.get_by_test_id("new-task").click()
    field = page.locator("dialog[open] input").first
    field.press("?")
    expect(field).to_have_value("?")
    expect(dialog).to_be_hidden()


def test_a_toast_appears_below_the_header_and_never_over_it(phone: Any, kandev_server: KandevServer) -> None:
    from playwright.sync_api import expect

    task = served_task(kandev_server.mutate, kandev_server.workspace_id, unique("Toasted"))
    open_app(phone, kandev_server)

    def refuse_moves(route: Any) -> None:
        if "MoveTask" in (route.request.post_data or ""):
            route.abort()
        else:
            route.continue_()

    phone.route("**/graphql", refuse_moves)
    card_of(phone, task).get_by_test_id("move-select").select_option(label="Review")
    toast = phone.locator(".toast").first
    expect(toast).to_contain_text("Could not move the task")
    header, shown = phone.locator(".topbar").bounding_box(), toast.bounding_box()
    assert header and shown
    assert shown["y"] >= header["y"] + header["height"], (header, shown)


def test_the_ctrl_enter_hint_shows_with_a_keyboard_and_not_on_a_touch_phone(
    page: Any, phone: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    task = ran_once(kandev_server, "Hints", "/say hi")
    for where in (page, phone):
        open_app(where, kandev_server, f"/tasks/{task['id']}")
    expect(page.get_by_test_id("send-hint")).to_have_text("Ctrl+Enter sends")
    expect(phone.get_by_test_id("send-message")).to_be_visible()
    expect(phone.get_by_test_id("send-hint")).not_to_contain_text("Ctrl")


def test_a_german_browser_reads_card_statuses_times_and_the_shortcuts_dialog_in_german(
    german_page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    page = german_page
    open_app(page, kandev_server)
    fresh = served_task(kandev_server.mutate, kandev_server.workspace_id, unique("Neu"))
    ran = ran_once(kandev_server, "Gelaufen", "/say fertig")
    expect(card_of(page, fresh).get_by_test_id("card-status")).to_have_text("Nicht gestartet")
    card = card_of(page, ran)
    expect(card.get_by_test_id("card-status")).to_have_text("Wartet auf dich")
    expect(card.get_by_test_id("card-time")).to_have_text(re.compile(r"gerade eben|vor \d+ Min\."))
    page.get_by_test_id("open-shortcuts").click()
    dialog = page.get_by_test_id("shortcuts")
    expect(dialog).to_contain_text("Tastenkürzel")
    expect(dialog).to_contain_text("Die Nachricht im Eingabefeld senden")
