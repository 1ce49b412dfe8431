"""Run every benchmark and print one JSON document."""

from __future__ import annotations

import asyncio
import json
import sys

from bench.board import run as board
from bench.foundation import run as foundation
from bench.healing import run as healing
from bench.mcp import run as mcp
from bench.turns import run as turns


def main() -> None:
    results = {
        "foundation": asyncio.run(foundation()),
        "turns": asyncio.run(turns()),
        "mcp": asyncio.run(mcp()),
        "healing": healing(),
        "board": asyncio.run(board()),
    }
    json.dump(results, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
