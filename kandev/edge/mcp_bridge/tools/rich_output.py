"""show_rich_output_kandev: files, charts and metrics rendered natively in the conversation."""

from __future__ import annotations

from typing import Any

from kandev.edge.mcp_bridge.catalogue import ToolSpec, register
from kandev.graphql.contract import command

SHOW = command("showRichOutput")


def _shown(data: dict[str, Any]) -> dict[str, Any]:
    message = data["showRichOutput"]["transcript_message"]
    presentation = message["data"]["rich_output"]
    return {
        "id": message["id"],
        "status": "shown",
        "title": presentation["title"],
        "blocks": len(presentation["blocks"]),
    }


register(
    ToolSpec(
        name="show_rich_output_kandev",
        description=(
            "Show the user a native presentation in the conversation: a workspace file preview, a line or "
            "bar chart, or a few metrics. Use it when the user asks for a chart, graph, plot or file preview "
            "and the data is available, or when a trend or small metric group is much clearer shown than "
            "told; otherwise answer in text (small comparisons as Markdown tables). Chart data is either "
            "inline (labels plus 1-4 series, one value per label) or a csv descriptor read now from your "
            "workspace. Input <= 64 KiB."
        ),
        # The adapter: the tool's arguments are the declared presentation itself.
        input_schema={k: v for k, v in SHOW.parameters[0].schema.items() if k != "description"},
        document=SHOW.document("... on ShowRichOutputPayload { transcript_message: transcriptMessage { id data } }"),
        variables=lambda call: {"presentation": call.arguments},
        result=_shown,
    ),
)
