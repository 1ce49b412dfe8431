"""Print the GraphQL schema as SDL into schema.graphql (`make schema`); `--check` only compares.

The one place that names the root schema object: move it here when the schema moves.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SDL_PATH = ROOT / "schema.graphql"
REGENERATE = "make schema"


def render() -> str:
    """The SDL the code defines, as committed (one trailing newline)."""
    from kandev.schema.root import schema

    return schema.as_str().rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    sdl = render()
    if "--check" in argv:
        current = SDL_PATH.read_text(encoding="utf-8") if SDL_PATH.exists() else ""
        if current != sdl:
            print(f"{SDL_PATH.name} differs from the code: run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    SDL_PATH.write_text(sdl, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
