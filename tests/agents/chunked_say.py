"""Test agent: the scripted agent, but each `/say` line is its own agent message streamed in 4-character
chunks (as real agents stream, and as the scripted agent will once every /say line is a message).

Run as `python tests/agents/chunked_say.py`."""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
from typing import Any, cast

import acp
from acp.schema import AgentMessageChunk

from kandev.runtime.scripted import ScriptedAgent

CHUNK = 4


class ChunkedSayAgent(ScriptedAgent):
    def __init__(self) -> None:
        super().__init__()
        self._message_ids = itertools.count(1)

    async def _say(self, session_id: str, text: str) -> None:
        message_id = f"say-{next(self._message_ids)}"
        for i in range(0, len(text), CHUNK):
            update: Any = AgentMessageChunk(
                session_update="agent_message_chunk", content=acp.text_block(text[i : i + CHUNK]), message_id=message_id
            )
            await self._conn.session_update(session_id=session_id, update=update)


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    asyncio.run(acp.run_agent(cast(acp.Agent, ChunkedSayAgent())))
