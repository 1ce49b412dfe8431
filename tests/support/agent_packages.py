"""Stand-ins for catalogue agents' npm packages: the same name, pinned version and executable as the real package,
packed locally with `npm pack` into the folder KANDEV_MCP_NPM_SOURCE names, so Install works without the registry."""

from __future__ import annotations

import json
from pathlib import Path

from kandev.runtime.agent_catalogue import CatalogueEntry, entry
from tests.support.fake_mcp import npm_pack

SCRIPT = "#!/usr/bin/env node\nprocess.stdout.write('stand-in agent\\n');\n"


def pack_stand_in(destination: Path, agent_id: str) -> CatalogueEntry:
    """Pack a dependency-free stand-in of the catalogue agent's package into `destination`; the agent's entry."""
    item = entry(agent_id)
    assert item is not None and item.npm_package and item.version, agent_id
    source = destination.parent / f"stand-in-{agent_id}"
    source.mkdir(parents=True, exist_ok=True)
    (source / "agent.js").write_text(SCRIPT)
    manifest = {
        "name": item.npm_package,
        "version": item.version,
        "bin": {item.command[0]: "agent.js"},
        "files": ["agent.js"],
        "license": "MIT",
    }
    (source / "package.json").write_text(json.dumps(manifest))
    npm_pack(source, destination)
    return item
