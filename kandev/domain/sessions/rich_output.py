"""show_rich_output_kandev: a small, validated presentation (files, charts, metrics) kept in the transcript.

Version 1 only. The agent chooses content, never markup or layout. A CSV-backed chart is read once,
at call time, from the session's working directory; only its resolved labels and numbers are stored,
so the presentation replays unchanged whatever later happens to the file.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import select

from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.session_rows import is_terminal, lock_session
from kandev.domain.sessions.transcript import append_message
from kandev.models import Message, Session, Turn
from kandev.models.enums import MessageKind
from kandev.platform.confined_files import Escape, LinkEscape, open_inside, read_at_most

VERSION = 1
MAX_INPUT_BYTES = 64 * 1024
MAX_TITLE = 120
MAX_DESCRIPTION = 500
MAX_SUMMARY = 1000
MAX_BLOCKS = 4
MAX_SERIES = 4
MAX_POINTS = 100
MAX_METRICS = 6
MAX_LABEL = 120
MAX_DETAIL = 500
MAX_PATH = 1000
MAX_NAME = 200
MAX_CSV_BYTES = 256 * 1024
CHART_TYPES = ("line", "bar")
BLOCK_TYPES = ("file", "chart", "metrics")

_SAFE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_DRIVE = re.compile(r"^[A-Za-z]:([\\/]|$)")
_MIME = re.compile(r"^[A-Za-z0-9][\w.+\-]*/[A-Za-z0-9][\w.+\-]*$")
_INTEGER = re.compile(r"^[+-]?\d+$")

# Finds the folder a workspace-relative path is resolved against (None: the session has none).
RootFinder = Callable[[str | None], Path | None]


def _bad(where: str, message: str) -> ValidationError:
    return ValidationError(f"{where} {message}", field=where)


def _object(value: Any, where: str, required: tuple[str, ...], optional: tuple[str, ...]) -> dict[str, Any]:
    """A JSON object with exactly the known fields; names unknown ones only when they look like names."""
    if not isinstance(value, dict):
        raise _bad(where, "must be an object")
    unknown = [k for k in value if k not in required and k not in optional]
    if unknown:
        named = [k for k in unknown if isinstance(k, str) and _SAFE_KEY.match(k)]
        shown = ", ".join(named) if len(named) == len(unknown) else f"{len(unknown)} unnamed field(s)"
        raise _bad(where, f"has unknown field{'s' if len(unknown) > 1 else ''}: {shown}")
    missing = [k for k in required if k not in value]
    if missing:
        raise _bad(where, f"is missing required field{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
    return value


def _text(obj: dict[str, Any], key: str, where: str, limit: int, *, required: bool = True) -> str | None:
    path = f"{where}.{key}" if where else key
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise _bad(path, "must be a string")
    text = value.strip()
    if not text:
        if not required:
            return None
        raise _bad(path, "must not be empty")
    if len(text) > limit:
        raise _bad(path, f"is too long (at most {limit} characters)")
    return text


def _list(obj: dict[str, Any], key: str, where: str, low: int, high: int) -> list[Any]:
    path = f"{where}.{key}"
    value = obj.get(key)
    if not isinstance(value, list):
        raise _bad(path, "must be a list")
    if not low <= len(value) <= high:
        raise _bad(path, f"must have {low} to {high} items")
    return value


def relative_path(value: Any, where: str, *, suffix: str | None = None) -> str:
    """A path inside the task workspace: no absolute path, traversal, URL, data URI or home folder."""
    if not isinstance(value, str) or not value.strip():
        raise _bad(where, "must be a non-empty workspace-relative path")
    path = value.strip()
    if len(path) > MAX_PATH:
        raise _bad(where, f"is too long (at most {MAX_PATH} characters)")
    if any(ord(c) < 32 for c in path):
        raise _bad(where, "must not contain control characters")
    if path.lower().startswith("data:"):
        raise _bad(where, "must be a workspace-relative path, not a data URI (file bytes are never accepted)")
    if path.startswith("//") or (_SCHEME.match(path) and not _DRIVE.match(path)):
        raise _bad(where, "must be a workspace-relative path, not a URL")
    if _DRIVE.match(path) or path.startswith(("/", "\\", "~")):
        raise _bad(where, "must be relative to the task workspace, not an absolute path")
    parts = re.split(r"[\\/]+", path)
    if ".." in parts:
        raise _bad(where, "must not leave the task workspace ('..' is not allowed)")
    normalized = "/".join(p for p in parts if p not in ("", "."))
    if not normalized:
        raise _bad(where, "must name a file")
    if suffix is not None and not normalized.lower().endswith(suffix):
        raise _bad(where, f"must name a {suffix} file")
    return normalized


def _file_block(block: dict[str, Any], where: str) -> dict[str, Any]:
    _object(block, where, ("type", "path"), ("repo", "title", "caption", "mime_type"))
    out: dict[str, Any] = {"type": "file", "path": relative_path(block["path"], f"{where}.path")}
    for key, limit in (
        ("repo", MAX_NAME),
        ("title", MAX_TITLE),
        ("caption", MAX_DESCRIPTION),
        ("mime_type", MAX_NAME),
    ):
        value = _text(block, key, where, limit, required=False)
        if value is not None:
            out[key] = value
    if "mime_type" in out and not _MIME.match(out["mime_type"]):
        raise _bad(f"{where}.mime_type", "must look like type/subtype")
    return out


def _number(value: Any, where: str) -> float | int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(where, "must be a finite number or null")
    if isinstance(value, float) and not math.isfinite(value):
        raise _bad(where, "must be a finite number or null")
    return value


def _labels(values: list[Any], where: str) -> list[str]:
    labels = []
    for index, label in enumerate(values):
        if not isinstance(label, str) or not label.strip():
            raise _bad(f"{where}[{index}]", "must be a non-empty string")
        if len(label) > MAX_LABEL:
            raise _bad(f"{where}[{index}]", f"is too long (at most {MAX_LABEL} characters)")
        labels.append(label)
    return labels


def _inline_chart(block: dict[str, Any], where: str) -> tuple[list[str], list[dict[str, Any]]]:
    labels = _labels(_list(block, "labels", where, 1, MAX_POINTS), f"{where}.labels")
    series = []
    for index, item in enumerate(_list(block, "series", where, 1, MAX_SERIES)):
        at = f"{where}.series[{index}]"
        _object(item, at, ("label", "values"), ())
        label = _text(item, "label", at, MAX_LABEL)
        values = item["values"]
        if not isinstance(values, list):
            raise _bad(f"{at}.values", "must be a list")
        if len(values) != len(labels):
            raise _bad(f"{at}.values", f"must have one value per label ({len(labels)}), not {len(values)}")
        series.append({"label": label, "values": [_number(v, f"{at}.values[{i}]") for i, v in enumerate(values)]})
    return labels, series


def _csv_descriptor(block: dict[str, Any], where: str) -> dict[str, Any]:
    at = f"{where}.csv"
    spec = _object(block["csv"], at, ("path", "x_column", "series"), ("repo",))
    columns = []
    for index, item in enumerate(_list(spec, "series", at, 1, MAX_SERIES)):
        sat = f"{at}.series[{index}]"
        _object(item, sat, ("column", "label"), ())
        columns.append({"column": _column(item, "column", sat), "label": _text(item, "label", sat, MAX_LABEL)})
    return {
        "path": relative_path(spec["path"], f"{at}.path", suffix=".csv"),
        "repo": _text(spec, "repo", at, MAX_NAME, required=False),
        "x_column": _column(spec, "x_column", at),
        "series": columns,
    }


def _column(obj: dict[str, Any], key: str, where: str) -> str:
    """A header name, matched exactly (not trimmed)."""
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise _bad(f"{where}.{key}", "must be a non-empty column name")
    if len(value) > MAX_NAME:
        raise _bad(f"{where}.{key}", f"is too long (at most {MAX_NAME} characters)")
    return value


def read_csv_chart(root: Path, descriptor: dict[str, Any], where: str) -> tuple[list[str], list[dict[str, Any]]]:
    """The chart's labels and series from the CSV file now; errors name the data row and column."""
    at = f"{where}.csv"
    data = _read_bounded(root, descriptor["path"], f"{at}.path")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _bad(f"{at}.path", f"is not UTF-8 text (invalid byte at offset {error.start})") from None
    text = text.removeprefix("\ufeff")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise _bad(f"{at}.path", "is empty: it needs a header row and 1 to 100 data rows")
        seen: set[str] = set()
        for name in header:
            if name in seen:
                raise _bad(f"{at}.path", f"has a header row with the column '{name}' twice; names must be unique")
            seen.add(name)
        index = {name: i for i, name in enumerate(header)}
        for key, name in [("x_column", descriptor["x_column"])] + [
            (f"series[{i}].column", s["column"]) for i, s in enumerate(descriptor["series"])
        ]:
            if name not in index:
                # The field path says which argument; its value is not echoed back.
                raise _bad(f"{at}.{key}", "names a column that is not in the header row (names match exactly)")
        x_at = index[descriptor["x_column"]]
        labels: list[str] = []
        columns: list[list[float | int | None]] = [[] for _ in descriptor["series"]]
        row = 0
        for record in reader:
            if not record:  # a blank line
                continue
            row += 1
            if row > MAX_POINTS:
                raise _bad(f"{at}.path", f"has more than {MAX_POINTS} data rows")
            place = f"row {row} (line {reader.line_num})"
            if len(record) != len(header):
                raise _bad(f"{at}.path", f"{place} has {len(record)} cells; the header row has {len(header)}")
            label = record[x_at]
            x_name = descriptor["x_column"]
            if not label.strip():
                raise _bad(f"{at}.path", f"{place}, column '{x_name}': the x value is empty")
            if len(label) > MAX_LABEL:
                raise _bad(
                    f"{at}.path",
                    f"{place}, column '{x_name}': the x value is longer than {MAX_LABEL} characters",
                )
            labels.append(label)
            for values, series in zip(columns, descriptor["series"], strict=True):
                values.append(_cell(record[index[series["column"]]], f"{at}.path", place, series["column"]))
    except csv.Error as error:
        raise _bad(f"{at}.path", f"is not valid CSV at line {reader.line_num} ({error})") from None
    if row == 0:
        raise _bad(f"{at}.path", "has no data rows (1 to 100 are needed)")
    series = [{"label": s["label"], "values": v} for s, v in zip(descriptor["series"], columns, strict=True)]
    return labels, series


def _cell(raw: str, where: str, place: str, column: str) -> float | int | None:
    """Empty is a gap; anything else must be a finite number."""
    cell = raw.strip()
    if not cell:
        return None
    if _INTEGER.match(cell):
        return int(cell)
    try:
        value = float(cell)
    except ValueError:
        raise _bad(where, f"{place}, column '{column}': the value is not a number") from None
    if not math.isfinite(value):
        raise _bad(where, f"{place}, column '{column}': the value is not a finite number")
    return value


def _read_bounded(root: Path, relative: str, where: str) -> bytes:
    try:
        opened = open_inside(root, relative)
    except LinkEscape as escape:
        if escape.kind == Escape.LOOP:
            raise _bad(where, "goes through a link that leads back to itself") from None
        raise _bad(where, "leads outside the task workspace (through a link)") from None
    if opened is None:
        raise _bad(where, "names no file in the task workspace")
    fd, _ = opened
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _bad(where, "names no file in the task workspace")
        data = read_at_most(fd, MAX_CSV_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_CSV_BYTES:
        raise _bad(where, f"names a file larger than {MAX_CSV_BYTES // 1024} KiB")
    return data


def _chart_block(block: dict[str, Any], where: str, roots: RootFinder) -> dict[str, Any]:
    _object(block, where, ("type", "chart_type", "title", "summary"), ("labels", "series", "csv"))
    chart_type = block["chart_type"]
    if chart_type not in CHART_TYPES:
        raise _bad(f"{where}.chart_type", "must be one of: line, bar")
    out: dict[str, Any] = {
        "type": "chart",
        "chart_type": chart_type,
        "title": _text(block, "title", where, MAX_TITLE),
        "summary": _text(block, "summary", where, MAX_SUMMARY),
    }
    inline = "labels" in block or "series" in block
    if inline and "csv" in block:
        raise _bad(where, "takes either labels and series, or csv, not both")
    if "csv" in block:
        descriptor = _csv_descriptor(block, where)
        root = roots(descriptor["repo"])
        if root is None:
            raise _bad(f"{where}.csv", "can't be read: the session has no working directory (or no such repo in it)")
        out["labels"], out["series"] = read_csv_chart(root, descriptor, where)
        out["source"] = {
            "type": "csv",
            "path": descriptor["path"],
            **({"repo": descriptor["repo"]} if descriptor["repo"] else {}),
        }
    elif inline:
        out["labels"], out["series"] = _inline_chart(block, where)
    else:
        raise _bad(where, "needs its data: labels and series, or csv")
    return out


def _metrics_block(block: dict[str, Any], where: str) -> dict[str, Any]:
    _object(block, where, ("type", "items"), ())
    items = []
    for index, item in enumerate(_list(block, "items", where, 1, MAX_METRICS)):
        at = f"{where}.items[{index}]"
        _object(item, at, ("label", "value"), ("detail",))
        entry = {"label": _text(item, "label", at, MAX_LABEL), "value": _text(item, "value", at, MAX_LABEL)}
        detail = _text(item, "detail", at, MAX_DETAIL, required=False)
        if detail is not None:
            entry["detail"] = detail
        items.append(entry)
    return {"type": "metrics", "items": items}


def resolve_presentation(raw: Any, roots: RootFinder) -> dict[str, Any]:
    """Validate a version-1 presentation and resolve its chart data; errors name the field at fault."""
    try:
        size = len(json.dumps(raw, ensure_ascii=False, separators=(",", ":"), allow_nan=True).encode())
    except (TypeError, ValueError):
        raise ValidationError("the presentation must be a JSON object", field="presentation") from None
    if size > MAX_INPUT_BYTES:
        raise ValidationError(f"the presentation is larger than {MAX_INPUT_BYTES // 1024} KiB", field="presentation")
    top = _object(raw, "presentation", ("version", "title", "blocks"), ("description",))
    version = top["version"]
    if isinstance(version, bool) or version != VERSION:
        raise _bad("version", f"is not supported; use {VERSION}")
    result: dict[str, Any] = {"version": VERSION, "title": _text(top, "title", "", MAX_TITLE)}
    description = _text(top, "description", "", MAX_DESCRIPTION, required=False)
    if description is not None:
        result["description"] = description
    blocks = top["blocks"]
    if not isinstance(blocks, list) or not 1 <= len(blocks) <= MAX_BLOCKS:
        raise _bad("blocks", f"must be a list of 1 to {MAX_BLOCKS} blocks")
    resolved = []
    for index, block in enumerate(blocks):
        where = f"blocks[{index}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "file":
            resolved.append(_file_block(block, where))
        elif kind == "chart":
            resolved.append(_chart_block(block, where, roots))
        elif kind == "metrics":
            resolved.append(_metrics_block(block, where))
        else:
            raise _bad(f"{where}.type", f"must be one of: {', '.join(BLOCK_TYPES)}")
    result["blocks"] = resolved
    return result


def summary_text(presentation: dict[str, Any]) -> str:
    """The message text plain readers get: the title and the description."""
    return "\n".join(p for p in (presentation["title"], presentation.get("description")) if p)


def _roots(working_dir: str | None, task_id: str) -> RootFinder:
    """The session's working directory; with a repo, that repository's folder in the task workspace."""

    def find(repo: str | None) -> Path | None:
        if not working_dir:
            return None
        base = Path(working_dir)
        if repo is None or base.name == repo:
            return base
        candidates = [base / repo]
        if base.parent.name == task_id:  # a worktree layout: sibling repositories under the task folder
            candidates.append(base.parent / repo)
        for candidate in candidates:
            if "/" not in repo and "\\" not in repo and repo not in (".", "..") and candidate.is_dir():
                return candidate
        return None

    return find


class RichOutputService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def show(self, presentation: Any) -> Message:
        """Append the accepted presentation to the caller's session transcript (agents only)."""
        session_id = self.ctx.principal.session_id
        if session_id is None:
            raise PermissionDeniedError("only an agent in a task session can show rich output")
        async with self.ctx.read() as db:
            session = await db.get(Session, session_id)
            if session is None:
                raise NotFoundError("session", session_id)
            working_dir, task_id = session.working_dir, session.task_id
        # Files are read outside the write transaction.
        resolved = resolve_presentation(presentation, _roots(working_dir, task_id))
        async with self.ctx.unit_of_work() as uow:
            session = await lock_session(uow.db, session_id)
            if session is None:
                raise NotFoundError("session", session_id)
            if is_terminal(session):
                raise ConflictError(f"the session is {session.state.lower()}")
            # A call made while the session is idle belongs to its latest turn.
            turn_id = await uow.db.scalar(
                select(Turn.id).where(Turn.session_id == session.id).order_by(Turn.seq.desc()).limit(1)
            )
            return await append_message(
                uow,
                session,
                MessageKind.RICH_OUTPUT,
                summary_text(resolved),
                turn_id=turn_id,
                data={"rich_output": resolved},
            )
