"""The shape of a show_rich_output_kandev presentation, declared on showRichOutput's argument: the MCP tool
advertises it as its arguments; the domain (kandev.domain.sessions.rich_output) checks it and names what is wrong."""

from __future__ import annotations

from typing import Annotated, Any

from strawberry.scalars import JSON

from kandev.domain.sessions import rich_output as limits
from kandev.graphql.schema.declare import argument


def _obj(properties: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "additionalProperties": False, "required": list(required)}


def _text(description: str, limit: int) -> dict[str, Any]:
    return {"type": "string", "description": description, "minLength": 1, "maxLength": limit}


def _array(items: dict[str, Any], low: int, high: int, description: str) -> dict[str, Any]:
    return {"type": "array", "items": items, "minItems": low, "maxItems": high, "description": description}


def _kind(name: str) -> dict[str, Any]:
    return {"type": "string", "const": name, "description": f"Always '{name}'."}


PATH = _text("A path relative to the task workspace (no absolute path, '..', URL or data URI).", limits.MAX_PATH)
REPO = _text("Which repository of the task the path is in, when it has several.", limits.MAX_NAME)
FILE = _obj(
    {
        "type": _kind("file"),
        "path": PATH,
        "repo": REPO,
        "title": _text("Heading for the file.", limits.MAX_TITLE),
        "caption": _text("One line about what to look at.", limits.MAX_DESCRIPTION),
        "mime_type": _text("MIME type, e.g. application/json.", limits.MAX_NAME),
    },
    ("type", "path"),
)
INLINE_SERIES = _obj(
    {
        "label": _text("Series name, with its unit, e.g. 'p95 (ms)'.", limits.MAX_LABEL),
        "values": {
            "type": "array",
            "items": {"type": ["number", "null"]},
            "maxItems": limits.MAX_POINTS,
            "description": "One finite number (or null for a gap) per label.",
        },
    },
    ("label", "values"),
)
CSV = _obj(
    {
        "path": _text(
            "A workspace-relative .csv file: UTF-8, one unique header row, <= 256 KiB, 1-100 data rows.",
            limits.MAX_PATH,
        ),
        "repo": REPO,
        "x_column": _text("Header of the x-axis column (exact).", limits.MAX_NAME),
        "series": _array(
            _obj(
                {
                    "column": _text("Header of a numeric column (exact); empty cells are gaps.", limits.MAX_NAME),
                    "label": _text("Series name, with its unit.", limits.MAX_LABEL),
                },
                ("column", "label"),
            ),
            1,
            limits.MAX_SERIES,
            "1 to 4 numeric columns to plot.",
        ),
    },
    ("path", "x_column", "series"),
)
CHART = _obj(
    {
        "type": _kind("chart"),
        "chart_type": {"type": "string", "enum": list(limits.CHART_TYPES), "description": "line or bar."},
        "title": _text("Chart heading.", limits.MAX_TITLE),
        "summary": _text("What the chart shows, in plain text, for readers who can't see it.", limits.MAX_SUMMARY),
        "labels": _array(_text("An x value.", limits.MAX_LABEL), 1, limits.MAX_POINTS, "Inline data: the x values."),
        "series": _array(INLINE_SERIES, 1, limits.MAX_SERIES, "Inline data: 1 to 4 series."),
        "csv": CSV,
    },
    ("type", "chart_type", "title", "summary"),
)
METRICS = _obj(
    {
        "type": _kind("metrics"),
        "items": _array(
            _obj(
                {
                    "label": _text("What is measured.", limits.MAX_LABEL),
                    "value": _text("The value as text, with its unit.", limits.MAX_LABEL),
                    "detail": _text("A short note.", limits.MAX_DETAIL),
                },
                ("label", "value"),
            ),
            1,
            limits.MAX_METRICS,
            "1 to 6 label/value pairs.",
        ),
    },
    ("type", "items"),
)
PRESENTATION = _obj(
    {
        "version": {"type": "integer", "enum": [limits.VERSION], "description": "Always 1."},
        "title": _text("Heading of the presentation.", limits.MAX_TITLE),
        "description": _text("One or two sentences of context.", limits.MAX_DESCRIPTION),
        "blocks": _array({"oneOf": [FILE, CHART, METRICS]}, 1, limits.MAX_BLOCKS, "1 to 4 blocks, shown in order."),
    },
    ("version", "title", "blocks"),
)


PresentationArgument = Annotated[
    JSON, argument("A version-1 presentation (show_rich_output_kandev's arguments).", json_schema=PRESENTATION)
]
