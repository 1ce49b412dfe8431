"""Rich output in the transcript, in a real headless Chromium against a real `kandev serve`: the scripted agent
calls show_rich_output_kandev over MCP (`/tool`), and the page draws its charts with uPlot (pixels on the
canvas, a legend that names the series, shows the hovered values and hides a series on click, remembered across
reloads for that chart alone), its metrics, its chart data as a table, and file blocks whose Preview fetches text
or an image, or says why not."""

from __future__ import annotations

import base64
import json
import shutil
import struct
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import KandevServer, serve
from tests.browser.test_web_client import no_horizontal_scroll, open_app, unique
from tests.support.factories import served_task

pytestmark = pytest.mark.slow

START = """mutation($i: StartTaskInput!) { startTask(input: $i) { __typename ... on Error { message }
    ... on StartTaskPayload { session { id } } } }"""
SESSION = "query($id: ID!) { session(id: $id) { state messages(first: 50) { nodes { kind text } } } }"

LINE = {
    "type": "chart",
    "chart_type": "line",
    "title": "Latency by build",
    "summary": "p95 latency fell from 120 ms to 80 ms over four builds.",
    "labels": ["b1", "b2", "b3", "b4"],
    "series": [{"label": "p95 (ms)", "values": [120, 110, None, 80]}],
}
BARS = {
    "type": "chart",
    "chart_type": "bar",
    "title": "Tests by suite",
    "summary": "Unit tests outnumber integration tests in every suite.",
    "labels": ["api", "web", "cli"],
    "series": [
        {"label": "unit", "values": [40, 25, 10]},
        {"label": "integration", "values": [30, 20, 15]},
    ],
}
METRICS = {
    "type": "metrics",
    "items": [{"label": "Coverage", "value": "91 %", "detail": "up 2 points"}, {"label": "Failures", "value": "0"}],
}
FILES = [
    {"type": "file", "path": "notes/report.txt", "title": "Report", "caption": "The summary of the run."},
    {"type": "file", "path": "shot.png", "title": "Screenshot"},
    {"type": "file", "path": "gone.txt", "title": "Missing file"},
]
# A bar chart's series colours, as ChartPlot.tsx draws them (COLORS[0] and COLORS[1]).
UNIT_RGB = (0x2F, 0x6F, 0xDF)
INTEGRATION_RGB = (0xE0, 0x70, 0x1F)

COUNT_COLOR = """([el, rgb]) => {
  const canvas = el.querySelector("canvas");
  const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  let n = 0;
  for (let i = 0; i < data.length; i += 4) {
    const exact = rgb !== null && data[i] === rgb[0] && data[i + 1] === rgb[1] && data[i + 2] === rgb[2];
    if (rgb === null ? data[i + 3] > 0 : exact && data[i + 3] === 255) n++;
  }
  return n;
}"""


def presentation(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {
        "version": 1,
        "title": "Build report",
        "description": "What changed in **this** run.",
        "blocks": list(blocks),
    }


def rich_prompt(*blocks: dict[str, Any]) -> str:
    return "/say Here is the report\n/tool show_rich_output_kandev " + json.dumps(presentation(*blocks))


def png(width: int = 4, height: int = 3) -> bytes:
    """A small opaque red PNG, encoded by hand (no imaging library)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@pytest.fixture(scope="module")
def rich_server(web_client: Path) -> Iterator[tuple[KandevServer, Path]]:
    """A server of its own, whose agents' working trees are in a folder the test knows (to put files there)."""
    work = Path(tempfile.mkdtemp(prefix="kandev-rich-work-"))
    try:
        with serve("browser-rich-output-serve.log", KANDEV_WORK_DIR=str(work)) as (base, _env):
            workspaces = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { id } }"}, timeout=10).json()
            yield KandevServer(base=base, workspace_id=workspaces["data"]["workspaces"][0]["id"]), work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_agent(server: KandevServer, prompt: str) -> str:
    """A task whose scripted agent ran `prompt` to the end, its rich output accepted; the task's id."""
    task = served_task(server.mutate, server.workspace_id, unique("Rich output"))
    session = server.mutate(START, "startTask", i={"taskId": task["id"], "prompt": prompt})["session"]["id"]
    done = server.wait_for(SESSION, lambda d: d["session"]["state"] == "WAITING_FOR_INPUT", id=session)
    kinds = [m["kind"] for m in done["session"]["messages"]["nodes"]]
    assert "RICH_OUTPUT" in kinds, done  # the tool call was accepted, not refused
    return task["id"]


def count(chart: Any, rgb: tuple[int, int, int] | None) -> int:
    """Canvas pixels of exactly `rgb` in the chart (None: any pixel drawn at all)."""
    return int(chart.evaluate(f"(el, rgb) => ({COUNT_COLOR})([el, rgb])", list(rgb) if rgb else None))


def plot(page: Any, title: str) -> Any:
    from playwright.sync_api import expect

    chart = page.get_by_test_id("rich-chart").filter(has_text=title)
    expect(chart.locator("canvas")).to_have_count(1)
    return chart


def test_a_line_chart_draws_on_its_canvas_with_a_legend_that_names_its_series_and_shows_the_hovered_values(
    page: Any, rich_server: tuple[KandevServer, Path], screenshots: Path
) -> None:
    from playwright.sync_api import expect

    server, _work = rich_server
    task = run_agent(server, rich_prompt(LINE, METRICS))
    open_app(page, server, f"/tasks/{task}")
    rich = page.get_by_test_id("msg-rich")
    expect(rich.get_by_role("region", name="Build report")).to_be_visible()
    expect(rich.locator(".rich-description strong")).to_have_text("this")  # the description is Markdown
    chart = plot(page, "Latency by build")
    image = chart.get_by_role("img")
    expect(image).to_have_attribute("aria-label", "Line chart: Latency by build. " + LINE["summary"])
    page.wait_for_function(
        "el => { const c = el.querySelector('canvas'); return c && c.width > 0; }", arg=chart.element_handle()
    )
    drawn = count(chart, None)
    assert drawn > 500, drawn  # axes, labels, grid and the line: far from an empty canvas
    legend = chart.locator(".u-legend")
    expect(legend).to_contain_text("p95 (ms)")
    over = chart.locator(".u-over")
    over.scroll_into_view_if_needed()  # a hover needs the point inside the viewport
    box = over.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] - 2, box["y"] + box["height"] / 2)  # over the last point, b4
    expect(legend.locator(".u-series").first.locator(".u-value")).to_have_text("b4")
    expect(legend.locator(".u-series").nth(1).locator(".u-value")).to_have_text("80")
    metrics = rich.get_by_test_id("rich-metrics")
    expect(metrics.locator("dt")).to_have_text(["Coverage", "Failures"])
    expect(metrics.locator(".rich-metric-value")).to_have_text(["91 %", "0"])
    expect(metrics).to_contain_text("up 2 points")
    table = chart.get_by_test_id("rich-chart-table")
    chart.locator("summary", has_text="Data table").click()
    expect(table.get_by_role("columnheader")).to_have_text(["Label", "p95 (ms)"])
    expect(table.get_by_role("rowheader")).to_have_text(["b1", "b2", "b3", "b4"])
    expect(table.get_by_role("cell")).to_have_text(["120", "110", "—", "80"])
    page.screenshot(path=screenshots / "rich-output-line-chart.png")


def test_a_bar_chart_draws_each_series_and_its_legend_entry_hides_and_shows_that_series(
    page: Any, rich_server: tuple[KandevServer, Path], screenshots: Path
) -> None:
    from playwright.sync_api import expect

    server, _work = rich_server
    task = run_agent(server, rich_prompt(BARS))
    open_app(page, server, f"/tasks/{task}")
    chart = plot(page, "Tests by suite")
    handle = chart.element_handle()
    page.wait_for_function(f"([el, rgb]) => ({COUNT_COLOR})([el, rgb]) > 100", arg=[handle, list(INTEGRATION_RGB)])
    assert count(chart, UNIT_RGB) > 100
    chart.screenshot(path=screenshots / "rich-output-bar-chart.png")
    entry = chart.locator(".u-legend .u-series").filter(has_text="integration")
    entry.locator("th").click()
    expect(entry).to_have_class("u-series u-off")
    page.wait_for_function(f"([el, rgb]) => ({COUNT_COLOR})([el, rgb]) === 0", arg=[handle, list(INTEGRATION_RGB)])
    page.wait_for_function(f"([el, rgb]) => ({COUNT_COLOR})([el, rgb]) > 100", arg=[handle, list(UNIT_RGB)])
    # A new message re-renders the transcript: the chart is not redrawn from scratch, the series stays hidden.
    page.get_by_test_id("composer-text").fill("/say still here")
    page.get_by_test_id("send-message").click()
    expect(page.get_by_test_id("msg-agent").filter(has_text="still here")).to_have_count(1)
    expect(entry).to_have_class("u-series u-off")
    assert count(chart, INTEGRATION_RGB) == 0
    entry.locator("th").focus()  # by keyboard too
    page.keyboard.press("Enter")
    page.wait_for_function(f"([el, rgb]) => ({COUNT_COLOR})([el, rgb]) > 100", arg=[handle, list(INTEGRATION_RGB)])


HIDDEN_KEY = "kandev.chartHiddenSeries"  # where ChartPlot.tsx keeps the hidden series


def hidden_in(chart: Any) -> list[str]:
    """The series names of the chart's legend entries that are off."""
    return list(chart.locator(".u-legend .u-series.u-off .u-label").all_inner_texts())


def test_a_hidden_series_stays_hidden_after_a_reload_and_only_in_its_own_chart(
    page: Any, rich_server: tuple[KandevServer, Path]
) -> None:
    from playwright.sync_api import expect

    server, _work = rich_server
    # Two messages, each with the same chart: what one remembers must not reach the other.
    second = "\n/tool show_rich_output_kandev " + json.dumps(presentation(BARS))
    task = run_agent(server, rich_prompt(BARS) + second)
    open_app(page, server, f"/tasks/{task}")
    expect(page.get_by_test_id("msg-rich")).to_have_count(2)
    # Garbage where the choices are kept (another version, a hand edit): ignored, every series shown.
    page.evaluate(f"() => localStorage.setItem({HIDDEN_KEY!r}, '{{not json')")
    page.reload()
    first, other = (page.get_by_test_id("msg-rich").nth(i).get_by_test_id("rich-chart") for i in (0, 1))
    for chart in (first, other):
        expect(chart.locator("canvas")).to_have_count(1)
        expect(chart.locator(".u-legend .u-series")).to_have_count(3)
        assert hidden_in(chart) == []
    first.locator(".u-legend .u-series").filter(has_text="integration").locator("th").click()
    expect(first.locator(".u-legend .u-series").filter(has_text="integration")).to_have_class("u-series u-off")

    page.reload()
    first, other = (page.get_by_test_id("msg-rich").nth(i).get_by_test_id("rich-chart") for i in (0, 1))
    entry = first.locator(".u-legend .u-series").filter(has_text="integration")
    expect(entry).to_have_class("u-series u-off")
    page.wait_for_function(
        f"([el, rgb]) => ({COUNT_COLOR})([el, rgb]) > 100", arg=[first.element_handle(), list(UNIT_RGB)]
    )
    assert count(first, INTEGRATION_RGB) == 0  # not drawn, not merely marked off
    expect(other.locator(".u-legend .u-series")).to_have_count(3)
    assert hidden_in(other) == []
    page.wait_for_function(
        f"([el, rgb]) => ({COUNT_COLOR})([el, rgb]) > 100", arg=[other.element_handle(), list(INTEGRATION_RGB)]
    )

    # Shown again, and that is remembered too: after leaving the task and coming back, every series is drawn.
    entry.locator("th").click()
    expect(entry).to_have_class("u-series")
    open_app(page, server, "/")
    open_app(page, server, f"/tasks/{task}")
    first = page.get_by_test_id("msg-rich").first.get_by_test_id("rich-chart")
    expect(first.locator(".u-legend .u-series")).to_have_count(3)
    assert hidden_in(first) == []
    page.wait_for_function(
        f"([el, rgb]) => ({COUNT_COLOR})([el, rgb]) > 100", arg=[first.element_handle(), list(INTEGRATION_RGB)]
    )

    # The kept choices are bounded: with a reader's 300 charts already there, the oldest goes when one more comes.
    page.evaluate(
        "key => localStorage.setItem(key, JSON.stringify(Object.fromEntries("
        "Array.from({ length: 300 }, (_, i) => [`old-${i}/0`, ['unit']]))))",
        HIDDEN_KEY,
    )
    unit = first.locator(".u-legend .u-series").filter(has_text="unit")
    unit.locator("th").click()
    expect(unit).to_have_class("u-series u-off")
    kept = page.evaluate(f"() => Object.keys(JSON.parse(localStorage.getItem({HIDDEN_KEY!r})))")
    assert len(kept) == 300 and kept[0] == "old-1/0" and not kept[-1].startswith("old-"), kept[:2] + kept[-2:]


def test_file_blocks_preview_text_and_an_image_on_demand_and_say_when_a_file_is_missing(
    phone: Any, rich_server: tuple[KandevServer, Path], screenshots: Path
) -> None:
    from playwright.sync_api import expect

    server, work = rich_server
    task = run_agent(server, rich_prompt(LINE, *FILES))  # the chart too: nothing may scroll sideways at 375 px
    files = work / "scratch" / task  # the folder a task without repositories works in
    (files / "notes").mkdir(parents=True, exist_ok=True)
    (files / "notes" / "report.txt").write_text("all 42 checks passed\n<script>window.__pwned = 1</script>\n")
    (files / "shot.png").write_bytes(png())
    open_app(phone, server, f"/tasks/{task}")
    blocks = phone.get_by_test_id("rich-file")
    expect(blocks).to_have_count(3)
    report, shot, gone = blocks.nth(0), blocks.nth(1), blocks.nth(2)
    expect(report).to_contain_text("notes/report.txt")
    expect(report).to_contain_text("The summary of the run.")
    expect(report.get_by_test_id("rich-file-text")).to_have_count(0)  # nothing is fetched before it is asked for
    report.get_by_role("button", name="Preview Report").click()
    text = report.get_by_test_id("rich-file-text")
    expect(text).to_contain_text("all 42 checks passed")
    expect(text).to_contain_text("<script>window.__pwned = 1</script>")  # shown as text, never run
    assert phone.evaluate("() => window.__pwned") is None
    shot.get_by_role("button", name="Preview Screenshot").click()
    image = shot.get_by_role("img", name="Screenshot")
    expect(image).to_have_attribute("src", "data:image/png;base64," + base64.b64encode(png()).decode())
    phone.wait_for_function("img => img.complete && img.naturalWidth === 4", arg=image.element_handle())
    gone.get_by_role("button", name="Preview Missing file").click()
    expect(gone.get_by_test_id("rich-file-unavailable")).to_have_text(
        "Preview unavailable: the file does not exist (or the task's files are not there yet)."
    )
    no_horizontal_scroll(phone)
    phone.screenshot(path=screenshots / "rich-output-files-phone.png")
