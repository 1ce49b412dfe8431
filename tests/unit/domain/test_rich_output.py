"""Every rule of a version-1 rich-output presentation, and how a CSV chart is resolved."""

from __future__ import annotations

import copy
import math
import os
from pathlib import Path
from typing import Any

import pytest

from kandev.domain.errors import ValidationError
from kandev.domain.sessions.rich_output import resolve_presentation

SPEC_EXAMPLE: dict[str, Any] = {
    "version": 1,
    "title": "Build health",
    "description": "Latest local verification",
    "blocks": [
        {
            "type": "metrics",
            "items": [
                {"label": "Passed", "value": "38"},
                {"label": "Duration", "value": "12.4s", "detail": "Warm cache"},
            ],
        },
        {
            "type": "chart",
            "chart_type": "line",
            "title": "Runtime by run",
            "summary": "Runtime fell across the last five runs.",
            "labels": ["1", "2", "3", "4", "5"],
            "series": [{"label": "Runtime (s)", "values": [18.2, 16.4, 15.1, 13.8, 12.4]}],
        },
        {
            "type": "file",
            "path": "reports/build.json",
            "title": "Raw report",
            "mime_type": "application/json",
        },
    ],
}
LATENCY = "recorded_at,p50_ms,p95_ms\n2026-08-13T10:00:00Z,18.2,29.4\n2026-08-14T10:00:00Z,16.4,25.1\n"


def chart_csv(path: str = "reports/latency.csv", **extra: Any) -> dict[str, Any]:
    csv = {
        "path": path,
        "x_column": "recorded_at",
        "series": [{"column": "p50_ms", "label": "p50 (ms)"}, {"column": "p95_ms", "label": "p95 (ms)"}],
    }
    csv.update(extra)
    return {
        "version": 1,
        "title": "API latency",
        "blocks": [
            {
                "type": "chart",
                "chart_type": "line",
                "title": "p50 and p95",
                "summary": "Tail latency fell.",
                "csv": csv,
            }
        ],
    }


def with_block(block: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "title": "T", "blocks": [block]}


def file_block(path: Any, **extra: Any) -> dict[str, Any]:
    return with_block({"type": "file", "path": path, **extra})


def inline_chart(**changes: Any) -> dict[str, Any]:
    block = {
        "type": "chart",
        "chart_type": "bar",
        "title": "Requests",
        "summary": "API leads.",
        "labels": ["api", "web"],
        "series": [{"label": "Requests", "values": [10, 3]}],
    }
    block.update(changes)
    return with_block({k: v for k, v in block.items() if v is not ...})


def metrics(items: Any) -> dict[str, Any]:
    return with_block({"type": "metrics", "items": items})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "reports").mkdir(parents=True)
    (root / "reports" / "latency.csv").write_text(LATENCY)
    return root


def resolve(presentation: Any, root: Path | None = None) -> dict[str, Any]:
    return resolve_presentation(presentation, lambda repo: root if repo is None else None)


def rejected(presentation: Any, root: Path | None = None) -> str:
    with pytest.raises(ValidationError) as caught:
        resolve(presentation, root)
    return caught.value.message


def test_the_spec_example_is_accepted_as_it_is():
    assert resolve(copy.deepcopy(SPEC_EXAMPLE)) == SPEC_EXAMPLE


def test_a_csv_chart_resolves_to_labels_and_numbers_only(workspace):
    resolved = resolve(chart_csv(), workspace)
    block = resolved["blocks"][0]
    assert block["labels"] == ["2026-08-13T10:00:00Z", "2026-08-14T10:00:00Z"]
    assert block["series"] == [
        {"label": "p50 (ms)", "values": [18.2, 16.4]},
        {"label": "p95 (ms)", "values": [29.4, 25.1]},
    ]
    assert block["source"] == {"type": "csv", "path": "reports/latency.csv"}
    assert "csv" not in block and LATENCY not in repr(resolved)


def test_empty_csv_cells_are_gaps_and_a_bom_and_blank_lines_are_tolerated(workspace):
    (workspace / "reports" / "gaps.csv").write_text("\ufeffday,count\nmon,1\n\ntue,\nwed,-3.5e1\n\n", encoding="utf-8")
    presentation = with_block(
        {
            "type": "chart",
            "chart_type": "bar",
            "title": "C",
            "summary": "S",
            "csv": {
                "path": "./reports//gaps.csv",
                "x_column": "day",
                "series": [{"column": "count", "label": "Count"}],
            },
        }
    )
    block = resolve(presentation, workspace)["blocks"][0]
    assert block["labels"] == ["mon", "tue", "wed"] and block["series"][0]["values"] == [1, None, -35.0]
    assert block["source"]["path"] == "reports/gaps.csv"


def test_inline_nulls_are_gaps():
    block = resolve(inline_chart(series=[{"label": "R", "values": [None, 2.5]}]))["blocks"][0]
    assert block["series"][0]["values"] == [None, 2.5]


@pytest.mark.parametrize(
    ("presentation", "fragment"),
    [
        ([1], "presentation must be an object"),
        ({**SPEC_EXAMPLE, "theme": "dark"}, "unknown field: theme"),
        ({**SPEC_EXAMPLE, "<b>": 1}, "1 unnamed field(s)"),
        ({"title": "T", "blocks": []}, "missing required field: version"),
        ({"version": 1, "blocks": [{"type": "metrics", "items": [{"label": "a", "value": "b"}]}]}, "title"),
        ({"version": 1, "title": "T"}, "missing required field: blocks"),
        ({**SPEC_EXAMPLE, "version": 2}, "version is not supported"),
        ({**SPEC_EXAMPLE, "version": "1"}, "version is not supported"),
        ({**SPEC_EXAMPLE, "version": True}, "version is not supported"),
        ({**SPEC_EXAMPLE, "title": "   "}, "title must not be empty"),
        ({**SPEC_EXAMPLE, "title": "x" * 121}, "title is too long (at most 120"),
        ({**SPEC_EXAMPLE, "title": 5}, "title must be a string"),
        ({**SPEC_EXAMPLE, "description": "x" * 501}, "description is too long (at most 500"),
        ({**SPEC_EXAMPLE, "blocks": []}, "1 to 4 blocks"),
        ({**SPEC_EXAMPLE, "blocks": SPEC_EXAMPLE["blocks"] + SPEC_EXAMPLE["blocks"][:2]}, "1 to 4 blocks"),
        ({**SPEC_EXAMPLE, "blocks": {"type": "file"}}, "1 to 4 blocks"),
        (with_block("file"), "blocks[0].type must be one of: file, chart, metrics"),
        (with_block({"type": "table", "rows": []}), "blocks[0].type must be one of"),
        (with_block({"path": "a.txt"}), "blocks[0].type must be one of"),
        (
            with_block({"type": "file", "path": "a.txt", "html": "<b>x</b>"}),
            "blocks[0] has unknown field: html",
        ),
    ],
)
def test_the_presentation_shape_is_enforced(presentation, fragment):
    assert fragment in rejected(presentation)


def test_input_over_64_kib_is_rejected():
    big = {**SPEC_EXAMPLE, "description": "ok", "blocks": [{"type": "file", "path": "a" * 70_000}]}
    assert "larger than 64 KiB" in rejected(big)


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("/etc/passwd", "not an absolute path"),
        ("\\\\server\\share\\x.txt", "not an absolute path"),
        ("C:\\Users\\x.txt", "not an absolute path"),
        ("~/secrets.txt", "not an absolute path"),
        ("../outside.txt", "'..' is not allowed"),
        ("reports/../../outside.txt", "'..' is not allowed"),
        ("reports\\..\\..\\x", "'..' is not allowed"),
        ("https://example.com/report.json", "not a URL"),
        ("file:///etc/passwd", "not a URL"),
        ("//example.com/x", "not a URL"),
        ("data:application/json;base64,e30=", "not a data URI"),
        ("DATA:text/plain,hello", "not a data URI"),
        ("", "non-empty workspace-relative path"),
        ("   ", "non-empty workspace-relative path"),
        ("./", "must name a file"),
        ("a\x00b", "control characters"),
        (42, "non-empty workspace-relative path"),
        ("x" * 1001, "too long"),
    ],
)
def test_a_file_block_takes_only_a_workspace_relative_path(path, fragment):
    message = rejected(file_block(path))
    assert fragment in message and "blocks[0].path" in message


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        ({"content": "aGVsbG8="}, "unknown field: content"),
        ({"bytes": [104, 105]}, "unknown field: bytes"),
        ({"mime_type": "not a mime"}, "mime_type must look like type/subtype"),
        ({"title": "x" * 121}, "title is too long"),
        ({"caption": "x" * 501}, "caption is too long"),
        ({"repo": 3}, "repo must be a string"),
    ],
)
def test_a_file_block_rejects_inline_bytes_and_bad_optional_fields(extra, fragment):
    assert fragment in rejected(file_block("reports/a.json", **extra))


def test_a_file_block_keeps_its_optional_fields_and_normalizes_the_path():
    block = resolve(file_block("./reports/a.json", repo="api", title="A", caption="See", mime_type="application/json"))
    assert block["blocks"][0] == {
        "type": "file",
        "path": "reports/a.json",
        "repo": "api",
        "title": "A",
        "caption": "See",
        "mime_type": "application/json",
    }


@pytest.mark.parametrize(
    ("presentation", "fragment"),
    [
        (inline_chart(chart_type="pie"), "chart_type must be one of: line, bar"),
        (inline_chart(summary=...), "missing required field: summary"),
        (inline_chart(title=...), "missing required field: title"),
        (inline_chart(summary="x" * 1001), "summary is too long"),
        (inline_chart(colors=["red"]), "unknown field: colors"),
        (inline_chart(labels=..., series=...), "needs its data"),
        (
            inline_chart(csv={"path": "a.csv", "x_column": "x", "series": [{"column": "y", "label": "Y"}]}),
            "either labels and series, or csv",
        ),
        (inline_chart(labels=[]), "labels must have 1 to 100 items"),
        (
            inline_chart(labels=[str(i) for i in range(101)], series=[{"label": "R", "values": [1] * 101}]),
            "labels must have 1 to 100 items",
        ),
        (inline_chart(labels=["a", ""]), "labels[1] must be a non-empty string"),
        (inline_chart(labels=["a", 2]), "labels[1] must be a non-empty string"),
        (inline_chart(labels=["a", "x" * 121]), "labels[1] is too long"),
        (inline_chart(series=[]), "series must have 1 to 4 items"),
        (
            inline_chart(series=[{"label": f"S{i}", "values": [1, 2]} for i in range(5)]),
            "series must have 1 to 4",
        ),
        (
            inline_chart(series=[{"label": "R", "values": [1, 2], "color": "red"}]),
            "series[0] has unknown field: color",
        ),
        (inline_chart(series=[{"values": [1, 2]}]), "series[0] is missing required field: label"),
        (inline_chart(series=[{"label": "R", "values": [1]}]), "one value per label (2), not 1"),
        (
            inline_chart(series=[{"label": "R", "values": [1, "2"]}]),
            "values[1] must be a finite number or null",
        ),
        (
            inline_chart(series=[{"label": "R", "values": [1, True]}]),
            "values[1] must be a finite number or null",
        ),
        (inline_chart(series=[{"label": "R", "values": [math.nan, 1]}]), "values[0] must be a finite number"),
        (inline_chart(series=[{"label": "R", "values": [1, math.inf]}]), "values[1] must be a finite number"),
        (inline_chart(series=[{"label": "R", "values": "1,2"}]), "values must be a list"),
    ],
)
def test_an_inline_chart_is_validated(presentation, fragment):
    assert fragment in rejected(presentation)


@pytest.mark.parametrize(
    ("descriptor", "fragment"),
    [
        ({"path": "/tmp/x.csv"}, "csv.path must be relative to the task workspace"),
        ({"path": "../x.csv"}, "'..' is not allowed"),
        ({"path": "https://example.com/x.csv"}, "not a URL"),
        ({"path": "reports/latency.txt"}, "must name a .csv file"),
        ({"delimiter": ";"}, "csv has unknown field: delimiter"),
        ({"series": []}, "csv.series must have 1 to 4 items"),
        ({"series": [{"column": c, "label": c} for c in "abcde"]}, "csv.series must have 1 to 4 items"),
        ({"series": [{"column": "p50_ms"}]}, "series[0] is missing required field: label"),
        ({"x_column": ""}, "x_column must be a non-empty column name"),
        ({"x_column": "time"}, "csv.x_column names a column that is not in the header row"),
        ({"x_column": "Recorded_At"}, "csv.x_column names a column that is not in the header row"),
        (
            {"series": [{"column": "p99_ms", "label": "p99"}]},
            "csv.series[0].column names a column that is not in the header row",
        ),
        ({"path": "reports/missing.csv"}, "names no file in the task workspace"),
    ],
)
def test_a_csv_descriptor_is_validated(workspace, descriptor, fragment):
    assert fragment in rejected(chart_csv(**descriptor), workspace)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"", "is empty: it needs a header row"),
        (b"recorded_at,p50_ms,p95_ms\n", "has no data rows"),
        (b"recorded_at,p50_ms,p50_ms,p95_ms\nx,1,2,3\n", "the column 'p50_ms' twice"),
        ("recorded_at,p50_ms,p95_ms\nt\u00e9,1,2\n".encode("latin-1"), "is not UTF-8 text"),
        (b"recorded_at,p50_ms,p95_ms\na,1,2\nb,1\n", "row 2 (line 3) has 2 cells; the header row has 3"),
        (
            b"recorded_at,p50_ms,p95_ms\na,1,2\n ,1,2\n",
            "row 2 (line 3), column 'recorded_at': the x value is empty",
        ),
        (
            b"recorded_at,p50_ms,p95_ms\n" + b"x" * 121 + b",1,2\n",
            "row 1 (line 2), column 'recorded_at': the x value is longer",
        ),
        (
            b"recorded_at,p50_ms,p95_ms\na,1,2\nb,1,fast\n",
            "row 2 (line 3), column 'p95_ms': the value is not a number",
        ),
        (
            b"recorded_at,p50_ms,p95_ms\na,nan,2\n",
            "row 1 (line 2), column 'p50_ms': the value is not a finite number",
        ),
        (b"recorded_at,p50_ms,p95_ms\na,1,-Infinity\n", "column 'p95_ms': the value is not a finite number"),
        (
            b"recorded_at,p50_ms,p95_ms\n" + b"".join(b"r%d,1,2\n" % i for i in range(101)),
            "more than 100 data rows",
        ),
        (b'recorded_at,p50_ms,p95_ms\n"a,1,2\n', "is not valid CSV"),
        (b"recorded_at,p50_ms,p95_ms\n" + b"a,1,2\n" * 5 + b"#" * (256 * 1024), "larger than 256 KiB"),
    ],
)
def test_the_csv_file_is_held_to_its_limits_and_errors_name_row_and_column(workspace, content, fragment):
    (workspace / "reports" / "latency.csv").write_bytes(content)
    assert fragment in rejected(chart_csv(), workspace)


def test_exactly_one_hundred_rows_is_fine(workspace):
    (workspace / "reports" / "latency.csv").write_text(
        "recorded_at,p50_ms,p95_ms\n" + "".join(f"r{i},{i},{i * 2}\n" for i in range(100))
    )
    assert len(resolve(chart_csv(), workspace)["blocks"][0]["labels"]) == 100


def test_a_link_out_of_the_workspace_is_refused(workspace, tmp_path):
    outside = tmp_path / "outside.csv"
    outside.write_text(LATENCY)
    (workspace / "reports" / "escape.csv").symlink_to(outside)
    assert "outside the task workspace" in rejected(chart_csv("reports/escape.csv"), workspace)


def test_a_link_loop_or_a_folder_named_like_a_csv_is_a_validation_error_not_a_crash(workspace):
    (workspace / "reports" / "a.csv").symlink_to(workspace / "reports" / "b.csv")
    (workspace / "reports" / "b.csv").symlink_to(workspace / "reports" / "a.csv")
    (workspace / "reports" / "folder.csv").mkdir()
    assert "link that leads back to itself" in rejected(chart_csv("reports/a.csv"), workspace)
    assert "names no file in the task workspace" in rejected(chart_csv("reports/folder.csv"), workspace)


def test_a_csv_chart_needs_a_working_directory():
    assert "no working directory" in rejected(chart_csv(), None)


@pytest.mark.parametrize(
    ("items", "fragment"),
    [
        ([], "items must have 1 to 6 items"),
        ([{"label": f"L{i}", "value": "1"} for i in range(7)], "items must have 1 to 6 items"),
        ("38 passed", "items must be a list"),
        ([{"label": "Passed"}], "items[0] is missing required field: value"),
        ([{"label": "Passed", "value": 38}], "items[0].value must be a string"),
        ([{"label": "Passed", "value": "38", "color": "green"}], "items[0] has unknown field: color"),
        ([{"label": "Passed", "value": "38", "detail": "x" * 501}], "items[0].detail is too long"),
        ([{"label": "", "value": "38"}], "items[0].label must not be empty"),
    ],
)
def test_metrics_take_one_to_six_plain_text_pairs(items, fragment):
    assert fragment in rejected(metrics(items))


def test_metrics_with_all_fields_resolve_unchanged():
    items = [{"label": f"L{i}", "value": f"{i} ms", "detail": "d"} for i in range(6)]
    assert resolve(metrics(items))["blocks"][0]["items"] == items


def test_task_sessions_are_told_when_to_show_rich_output():
    from kandev.domain.sessions.agent_context import RICH_OUTPUT_INSTRUCTION, context_block
    from kandev.models import Session, Task

    task = Task(id="t", title="Chart it", prompt="", autopilot=False)
    assert RICH_OUTPUT_INSTRUCTION in context_block(task, Session(id="s", purpose="task"), None)
    assert RICH_OUTPUT_INSTRUCTION not in context_block(task, Session(id="s", purpose="configuration"), None)


def test_a_fifo_named_as_the_csv_is_refused_without_waiting_for_a_writer(workspace):
    (workspace / "reports" / "latency.csv").unlink()
    os.mkfifo(workspace / "reports" / "latency.csv")
    assert "names no file in the task workspace" in rejected(chart_csv(), workspace)
