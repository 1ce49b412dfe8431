"""Where a git remote points: its host and `owner/name`, for https, ssh and scp-like URLs."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")


def api_host(api_url: str) -> str:
    """The code host an API URL serves: api.github.com -> github.com; https://ghe.example/api/v3 -> ghe.example."""
    host = (urlsplit(api_url).hostname or "").lower()
    return host.removeprefix("api.") if host.startswith("api.") else host


def parse_remote(url: str | None) -> tuple[str, str] | None:
    """(host, owner/name) of a remote URL, lower-case host, without `.git`; None when it is not such a URL."""
    if not url:
        return None
    url = url.strip()
    if "://" in url:
        split = urlsplit(url)
        if split.scheme not in ("https", "http", "ssh", "git"):
            return None
        host, path = (split.hostname or "").lower(), split.path
    elif found := _SCP.match(url):
        host, path = found[1].lower(), found[2]
    else:
        return None
    parts = [p for p in path.strip("/").removesuffix(".git").split("/") if p]
    if not host or len(parts) != 2:
        return None
    return host, "/".join(parts)
