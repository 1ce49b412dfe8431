"""One TLS context per process for the code hosts' API clients: making one reads and parses the CA bundle (about
0.1 s here), which every GitHub or GitLab call paid when each client made its own."""

from __future__ import annotations

import ssl
from functools import lru_cache

import httpx


@lru_cache(maxsize=1)
def client_tls() -> ssl.SSLContext:
    """httpx's default verifying context (certifi, or SSL_CERT_FILE / SSL_CERT_DIR), made once."""
    return httpx.create_ssl_context()
