"""Conversation tools: message a task, read its conversation, list its sessions."""

from __future__ import annotations

from typing import Any

from kandev.edge.mcp_bridge.catalogue import ToolCall, ToolInputError, ToolSpec, command_tool, obj, register, string
from kandev.edge.mcp_bridge.tools.fields import SESSION, TASK_ID, task_id_of
from kandev.models.enums import MessageKind

# A message's attachments name the ids message_task_kandev can hand the task's agent again.
MESSAGE = "id kind text turn_id: turnId created_at: createdAt attachments { id name size content_type: contentType }"


def _sent(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "task_id": payload["task"]["id"],
        "session_id": payload["session"]["id"],
        "queued_prompt_id": payload["queued_prompt_id"],
        "status": "queued",
    }


# Message kinds as the tool takes them; "message" is the conversation proper (user and agent text).
MESSAGE_TYPES = {kind.lower(): [kind.value] for kind in MessageKind} | {"message": ["USER", "REVIEW", "AGENT"]}


def _conversation_variables(call: ToolCall) -> dict[str, Any]:
    args = call.arguments
    types = args.get("message_types")
    return {
        "id": task_id_of(call),
        "session": args.get("session_id"),
        "first": args.get("limit", 50),
        "after": args.get("cursor"),
        "order": args.get("sort", "desc").upper(),
        "kinds": None if types is None else list(dict.fromkeys(k for t in types for k in MESSAGE_TYPES[t])),
        "newer": args.get("after"),
        "older": args.get("before"),
    }


def _conversation(data: dict[str, Any]) -> dict[str, Any]:
    task = data["task"]
    sessions = task["sessions"]  # an unknown session_id is refused by the query (not found)
    chosen = sessions[0] if sessions else None
    page: dict[str, Any] = chosen["messages"] if chosen else {"nodes": [], "page_info": {"has_next_page": False}}
    has_more = page["page_info"]["has_next_page"]
    return {
        "task_id": task["id"],
        "session_id": chosen["id"] if chosen else None,
        "messages": page["nodes"],
        "has_more": has_more,
        "next_cursor": page["page_info"]["end_cursor"] if has_more else None,
    }


register(
    command_tool(
        "message_task_kandev",
        "sendMessage",
        "Send a message to a task's agent. Without session_id it goes to the task's primary session (or its "
        "newest session that can still take one). A running agent gets it queued after its current turn; "
        "delivery_mode 'interrupt' cancels that turn first (only for your direct child; an automation run may "
        "interrupt any other task of its workspace).",
        "... on SendMessagePayload { queued_prompt_id: queuedPromptId task { id } session { id } }",
        _sent,
    ),
    ToolSpec(
        name="get_task_conversation_kandev",
        description=(
            "Read a task's conversation (its primary session unless session_id is given), newest first unless "
            "sort is 'asc'. message_types keeps only those kinds of message. While has_more is true, call again "
            "with cursor set to next_cursor (same sort and filters) for the next page. before / after take a "
            "message id and keep only messages older / newer than it."
        ),
        input_schema=obj(
            {
                "task_id": TASK_ID,
                "session_id": string("A specific session of the task."),
                "limit": {"type": "integer", "minimum": 1, "maximum": 200, "description": "Page size. Default: 50."},
                "sort": {
                    "type": "string",
                    "enum": ["desc", "asc"],
                    "description": "desc: newest first (default); asc: oldest first.",
                },
                "message_types": {
                    "type": "array",
                    "minItems": 1,
                    "uniqueItems": True,
                    "items": {"type": "string", "enum": list(MESSAGE_TYPES)},
                    "description": (
                        "Only these kinds (a message's kind, lowercase); 'message' means user and agent messages. "
                        "Default: every kind."
                    ),
                },
                "cursor": string("next_cursor of the previous page.", minLength=1),
                "before": string("A message id: only messages older than it.", minLength=1),
                "after": string("A message id: only messages newer than it.", minLength=1),
            },
            ("task_id",),
        ),
        document=f"""query($id: ID!, $session: ID, $first: Int!, $after: String, $order: SortOrder!,
          $kinds: [MessageKind!], $newer: ID, $older: ID) {{ task(id: $id) {{ id
          sessions(only: $session) {{ id messages(first: $first, after: $after, order: $order, kinds: $kinds,
            afterMessageId: $newer, beforeMessageId: $older) {{ nodes {{ {MESSAGE} }}
            page_info: pageInfo {{ has_next_page: hasNextPage end_cursor: endCursor }} }} }} }} }}""",
        variables=_conversation_variables,
        result=_conversation,
    ),
    ToolSpec(
        name="list_task_sessions_kandev",
        description="List a task's sessions, primary first, with their states.",
        input_schema=obj({"task_id": TASK_ID}, ("task_id",)),
        document=f"query($id: ID!) {{ task(id: $id) {{ sessions {{ {SESSION} }} }} }}",
        variables=lambda call: {"id": task_id_of(call)},
        result=lambda data: {"sessions": data["task"]["sessions"]},
    ),
)


def _related(data: dict[str, Any]) -> dict[str, Any]:
    task = data["task"]
    parent = task["parent"]
    siblings = [t for t in (parent["children"] if parent else []) if t["id"] != task["id"]]
    return {
        "task_id": task["id"],
        "parent": parent and {k: v for k, v in parent.items() if k != "children"},
        "children": task["children"],
        "siblings": siblings,
    }


register(
    command_tool(
        "spawn_session_kandev",
        "spawnSession",
        "Open a new named session on your own task (default) or another task of your workspace, optionally "
        "starting it with a prompt. Use it when every session of a task has ended.",
        f"... on SpawnSessionPayload {{ queued_prompt_id: queuedPromptId task {{ id }} session {{ {SESSION} }} }}",
        lambda payload: {**payload["session"], "queued_prompt_id": payload["queued_prompt_id"]},
    ),
    command_tool(
        "stop_task_kandev",
        "stopTask",
        "Stop your direct child task (an automation run: any other task of its workspace): sessions with "
        "something live (a starting or running turn, a wait on a question) are cancelled (status 'stopped'); "
        "with nothing live nothing changes (status 'not_running'). "
        "A task in IN_PROGRESS or SCHEDULING goes to REVIEW; its queued prompts run when it is started again.",
        "... on StopTaskPayload { status task { id state } stopped_sessions: stoppedSessions { id } }",
        lambda payload: {
            "task_id": payload["task"]["id"],
            "status": payload["status"],
            "state": payload["task"]["state"],
            "stopped_session_ids": [s["id"] for s in payload["stopped_sessions"]],
        },
    ),
    ToolSpec(
        name="list_related_tasks_kandev",
        description="Show a task's parent, children and siblings ('self' or omitted: your own task).",
        input_schema=obj({"task_id": string("The task. Default: your own task.")}),
        document="""query($id: ID!) { task(id: $id) { id
          parent { id title state autopilot children { id title state autopilot } }
          children { id title state autopilot } } }""",
        variables=lambda call: {"id": _related_of(call)},
        result=_related,
    ),
)


def _related_of(call: ToolCall) -> str:
    """The task whose relations are asked for; an automation run's own task has none to discover."""
    if call.arguments.get("task_id"):
        task_id = task_id_of(call)
    elif call.caller.task_id is None:
        raise ToolInputError("missing required field: task_id")
    else:
        task_id = call.caller.task_id
    call.caller.principal.refuse_own_run_task(task_id, "look up the related tasks of")
    return task_id


register(
    command_tool(
        "set_task_title_kandev",
        "setTaskTitle",
        "Give your new task its title: a short phrase of about six words in sentence case. Call it first, "
        "before other work. Answers title_not_pending when a person renamed the task first.",
        """... on SetTaskTitlePayload { status task { id title } renamed_branches: renamedBranches
          preserved_branches: preservedBranches failed_branches: failedBranches }""",
        lambda payload: {
            "status": payload["status"],
            "task_id": payload["task"]["id"],
            "title": payload["task"]["title"],
            "branches": {
                "renamed": payload["renamed_branches"],
                "preserved": payload["preserved_branches"],
                "failed": payload["failed_branches"],
            },
        },
    ),
)
