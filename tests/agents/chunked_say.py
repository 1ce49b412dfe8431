"""Test agent: the scripted agent, but each `/say` line is its own agent message streamed in 4-character
chunks (as real agents stream, and as the scripted agent will once every /say line is a message).

Run as `python tests/agents/chunked_say.py`."""

from __future__ import annotations

import itertools

from kandev.runtime.scripted import ScriptedAgent

CHUNK = 4


class ChunkedSayAgent(ScriptedAgent):
    def __init__(self) -> None:
        super().__init__()
        self._message_ids = itertools.count(1)

    def _say(self, session_id: str, text: str) -> None:
        message_id = f"say-{next(self._message_ids)}"
        for i in range(0, len(text), CHUNK):
            chunk = {"text": text[i : i + CHUNK], "type": "text"}
            self._update(
                session_id, {"content": chunk, "messageId": message_id, "sessionUpdate": "agent_message_chunk"}
            )


if __name__ == "__main__":
    ChunkedSayAgent().serve()
