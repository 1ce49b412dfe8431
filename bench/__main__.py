"""Run every benchmark and print one JSON document."""

from __future__ import annotations

import asyncio
import json
import sys

from bench.foundation import run as foundation


def main() -> None:
    results = {"foundation": asyncio.run(foundation())}
    json.dump(results, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
