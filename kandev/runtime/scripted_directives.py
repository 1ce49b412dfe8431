"""Parse a scripted-agent prompt into steps: the DESIGN.md directive table, pure and side-effect free."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

CONTEXT_BLOCK = re.compile(r"<kandev-context>.*?(?:</kandev-context>|\Z)", re.S)
_DIRECTIVE = re.compile(
    r"^/(say|tool|sleep|fail|end|on-question|permission|mcp-servers|usage|attachments|write|delete|run)"
    r"(?:\s+(.*))?$",
    re.S,
)
END_WRITE = "/end-write"
# A short utility request from Kandev (a commit message for the task's changes): answered with a fixed text, and
# nothing in it (a diff of anyone's making) is read as a directive.
UTILITY_BLOCK = "<kandev-utility"
UTILITY_ANSWER = "Apply the task's changes"
STATE_FILE = ".kandev-scripted.json"
REPLY_TOOL = "message_task_kandev"
REPLY_KEYS = ("task_id", "reply_to_question_id")

StepKind = Literal[
    "say",
    "tool",
    "sleep",
    "fail",
    "end",
    "on-question",
    "permission",
    "mcp-servers",
    "usage",
    "attachments",
    "write",
    "delete",
    "run",
]


class Step(NamedTuple):
    """One directive to execute; `tool` steps carry parsed arguments or the reason they are unusable."""

    kind: StepKind
    text: str = ""
    seconds: float = 0.0
    tool: str = ""
    arguments: Mapping[str, Any] = MappingProxyType({})  # read-only: a shared default
    error: str | None = None
    # `/write`: the file's content (the lines up to `/end-write`, each ending in a newline).
    content: str = ""


def reply_shape(line: str) -> dict[str, Any] | None:
    """The JSON object on `line` if it carries both `task_id` and `reply_to_question_id`."""
    start, end = line.find("{"), line.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        value = json.loads(line[start : end + 1])
    except ValueError:
        return None
    if isinstance(value, dict) and all(isinstance(value.get(k), str) and value[k] for k in REPLY_KEYS):
        return value
    return None


def _tool_step(arg: str) -> Step:
    name, _, raw = arg.strip().partition(" ")
    if not name:
        return Step("tool", error="/tool needs a tool name: /tool NAME {json}")
    if not raw.strip():
        return Step("tool", tool=name)
    try:
        arguments = json.loads(raw)
    except json.JSONDecodeError as exc:
        return Step("tool", tool=name, error=f"/tool {name}: arguments are not valid JSON ({exc.msg})")
    if not isinstance(arguments, dict):
        return Step("tool", tool=name, error=f"/tool {name}: arguments must be a JSON object")
    return Step("tool", tool=name, arguments=arguments)


def _directive(line: str) -> Step | None:
    match = _DIRECTIVE.match(line)
    if match is None:
        return None
    kind, arg = match.group(1), (match.group(2) or "").strip()
    if kind == "tool":
        return _tool_step(arg)
    if kind == "sleep":
        try:
            return Step("sleep", seconds=max(0.0, float(arg)))
        except ValueError:
            return None  # not a usable directive: ignored like any other line
    return Step(kind, text=arg)  # type: ignore[arg-type]  # _DIRECTIVE matches only StepKind names


def _answer(question: dict[str, Any], answer: str) -> Step:
    arguments = {"task_id": question["task_id"], "reply_to_question_id": question["reply_to_question_id"]}
    return Step("tool", tool=REPLY_TOOL, arguments={**arguments, "prompt": answer})


def plan(prompt: str, on_question: str | None = None) -> list[Step]:
    """The steps for `prompt`; with `on_question` set, parent-question lines become reply tool calls."""
    steps: list[Step] = []
    if CONTEXT_BLOCK.sub("", prompt).lstrip().startswith(UTILITY_BLOCK):
        return [Step("say", text=UTILITY_ANSWER)]
    if on_question is not None:
        # A question's reply shape may sit in the context block too; those come first, in order.
        for block in CONTEXT_BLOCK.findall(prompt):
            steps += [_answer(q, on_question) for line in block.splitlines() if (q := reply_shape(line))]
    body = CONTEXT_BLOCK.sub("", prompt)
    first_line: str | None = None
    lines = iter(body.splitlines())
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        first_line = line if first_line is None else first_line
        if (step := _directive(line)) is not None:
            if step.kind == "write":
                step = step._replace(content=_content(lines))
            if step.kind in ("write", "delete", "run") and not step.text:
                step = step._replace(error=f"/{step.kind} needs a {'command' if step.kind == 'run' else 'path'}")
            steps.append(step)
        elif on_question is not None and (question := reply_shape(line)) is not None:
            steps.append(_answer(question, on_question))
    if not steps and first_line is not None:
        steps.append(Step("say", text=first_line))
    return steps


def _content(lines: Iterator[str]) -> str:
    """A `/write` block: the lines as they are up to a line `/end-write` (or the prompt's end)."""
    taken = []
    for raw in lines:
        if raw.strip() == END_WRITE:
            break
        taken.append(raw + "\n")
    return "".join(taken)


def load_answer(cwd: str) -> str | None:
    """The remembered `/on-question` answer of this working directory, if any."""
    try:
        with open(os.path.join(cwd, STATE_FILE), encoding="utf-8") as file:
            state = json.load(file)
    except (OSError, ValueError):
        return None
    answer = state.get("on_question") if isinstance(state, dict) else None
    return answer if isinstance(answer, str) else None


def save_answer(cwd: str, answer: str) -> None:
    """Remember `answer` for later parent questions in this working directory."""
    path = os.path.join(cwd, STATE_FILE)
    tmp = f"{os.path.splitext(path)[0]}.tmp"
    with open(tmp, "w", encoding="utf-8") as file:
        json.dump({"on_question": answer}, file)
    os.replace(tmp, path)
