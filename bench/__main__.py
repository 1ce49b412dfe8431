"""Run every benchmark and print one JSON document."""

from __future__ import annotations

import asyncio
import json
import sys

from bench.acks import run as acks
from bench.automations import run as automations
from bench.board import run as board
from bench.changes import run as changes
from bench.diff_view import run as diff_view
from bench.executors import run as executors
from bench.fanout import run as fanout
from bench.fix_rounds import run as fix_rounds
from bench.foundation import run as foundation
from bench.healing import run as healing
from bench.mcp import run as mcp
from bench.turns import run as turns
from bench.web import run as web
from bench.webhooks import run as webhooks
from bench.writes import run as writes


def main() -> None:
    results = {
        "board": asyncio.run(board()),
        "foundation": asyncio.run(foundation()),
        "fanout": asyncio.run(fanout()),
        "writes": asyncio.run(writes()),
        "turns": asyncio.run(turns()),
        "executors": asyncio.run(executors()),
        "mcp": asyncio.run(mcp()),
        "webhooks": asyncio.run(webhooks()),
        "healing": healing(),
        "automations": asyncio.run(automations()),
        "automation_acks": asyncio.run(acks()),
        "changes": asyncio.run(changes()),
        "diff_view": asyncio.run(diff_view()),
        "web": asyncio.run(web()),
        "fix_rounds": asyncio.run(fix_rounds()),
    }
    json.dump(results, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
