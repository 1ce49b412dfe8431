"""Defence in depth for logs: secret values this process has handled (submitted, created or resolved
into an agent's env) are scrubbed from every log record, whichever logger or handler it goes through."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from typing import Any

from kandev.platform.redaction import REDACTED

# Shorter values would scrub ordinary words out of every log line; such values can't be kept secret anyway.
MIN_LENGTH = 4
MAX_LENGTH = 65_536  # longer values are refused as secrets, and never echoed
MAX_REMEMBERED = 10_000

_lock = threading.Lock()
_values: set[str] = set()
_pattern: re.Pattern[str] | None = None
_installed = False


def remember_secrets(values: Iterable[str]) -> None:
    """Values to keep out of this process's logs from now on."""
    global _pattern
    fresh = {v for v in values if isinstance(v, str) and MIN_LENGTH <= len(v) <= MAX_LENGTH} - _values
    if not fresh:
        return
    with _lock:
        if len(_values) + len(fresh) > MAX_REMEMBERED:
            _values.clear()  # bounded memory; the newest values are the ones in use
        _values.update(fresh)
        ordered = sorted(_values, key=len, reverse=True)
        _pattern = re.compile("|".join(map(re.escape, ordered)))


def scrub(text: str) -> str:
    pattern = _pattern
    return pattern.sub(REDACTED, text) if pattern is not None else text


class SecretLogFilter(logging.Filter):
    """Rewrites a record whose message, arguments or traceback hold a remembered secret; drops nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _pattern is None:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken format: keep its parts, scrubbed
            message = f"{record.msg} {record.args}"
        if scrub(message) != message:
            record.msg, record.args = scrub(message), None
        if record.exc_info and not record.exc_text:
            # Formatted now, scrubbed, and cached where every Formatter looks first.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


_FILTER = SecretLogFilter()


def install_log_redaction() -> None:
    """Scrub every record as it is made (so handlers configured later, e.g. uvicorn's, are covered) and
    on the root handlers; idempotent."""
    global _installed
    for handler in logging.getLogger().handlers:
        if _FILTER not in handler.filters:
            handler.addFilter(_FILTER)
    with _lock:
        if _installed:
            return
        _installed = True
        make = logging.getLogRecordFactory()

        def scrubbed_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = make(*args, **kwargs)
            _FILTER.filter(record)
            return record

        logging.setLogRecordFactory(scrubbed_record)
