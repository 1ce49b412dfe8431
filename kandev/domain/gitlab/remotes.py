"""Where a git remote points on a GitLab instance: its host and project path (subgroups allowed)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")


def parse_gitlab_remote(url: str | None, base_path: str = "") -> tuple[str, str] | None:
    """(lower-case host, group/.../name without `.git`) of an https, ssh or scp-like remote; `base_path` (an
    instance served under a path, e.g. /gitlab) is removed from http(s) paths. None when it is not such a URL."""
    if not url:
        return None
    url = url.strip()
    if "://" in url:
        split = urlsplit(url)
        if split.scheme not in ("https", "http", "ssh", "git"):
            return None
        host, path = (split.hostname or "").lower(), split.path
        prefix = base_path.rstrip("/")
        if prefix and split.scheme in ("http", "https") and path.startswith(prefix + "/"):
            path = path[len(prefix) :]
    elif found := _SCP.match(url):
        host, path = found[1].lower(), found[2]
    else:
        return None
    parts = [p for p in path.strip("/").removesuffix(".git").split("/") if p]
    if not host or len(parts) < 2 or any(p in (".", "..", "-") for p in parts):
        return None
    return host, "/".join(parts)
