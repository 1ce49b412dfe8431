"""Secret redaction: of whole values, and over a stream of text pieces that may split a secret anywhere, even
across messages. Pure logic below the domain and the runtime, which both redact."""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from typing import Any

REDACTED = "[REDACTED]"

Release = tuple[Hashable, str]


class Redactor:
    """Replaces secret values (longest first, so overlapping values vanish whole)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self._values = sorted({s for s in secrets if s}, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self._values:
            value = value.replace(secret, REDACTED)
        return value

    def data(self, value: Any) -> Any:
        """Redacts every string inside JSON-like data."""
        if not self._values:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value


class StreamRedactor:
    """Holds back the last (longest secret - 1) characters of the text fed so far, so a secret split
    across pieces is still seen whole; each piece belongs to a key (a message), and the part of a
    secret that falls in each key's text becomes REDACTED there."""

    def __init__(self, secrets: Iterable[str]) -> None:
        values = sorted({s for s in secrets if s}, key=len, reverse=True)
        # Alternation tries longest first at each position, like Redactor's longest-first replace.
        self._pattern = re.compile("|".join(map(re.escape, values))) if values else None
        self._hold = len(values[0]) - 1 if values else 0
        self._pending: list[tuple[Hashable, str]] = []

    @property
    def holding(self) -> bool:
        return bool(self._pending)

    def feed(self, key: Hashable, text: str) -> list[Release]:
        """Add `text` to `key`; returns the (key, redacted text) that may now be shown, in stream order."""
        if not text:
            return []
        if self._pending and self._pending[-1][0] == key:
            self._pending[-1] = (key, self._pending[-1][1] + text)
        else:
            self._pending.append((key, text))
        return self._release(final=False)

    def flush(self) -> list[Release]:
        """Everything still held, redacted (the stream ended)."""
        return self._release(final=True)

    def rekey(self, old: Hashable, new: Hashable) -> None:
        """Held text of `old` now belongs to `new` (a message got its id after its first piece)."""
        self._pending = [(new if k == old else k, t) for k, t in self._pending]

    def _release(self, *, final: bool) -> list[Release]:
        raw = "".join(text for _, text in self._pending)
        spans = [m.span() for m in self._pattern.finditer(raw)] if self._pattern else []
        cut = len(raw) if final else max(0, len(raw) - self._hold)
        for start, end in spans:
            if start < cut < end:  # a whole secret straddles the cut: release it, redacted
                cut = end
        releases: list[Release] = []
        held: list[tuple[Hashable, str]] = []
        offset = 0
        for key, text in self._pending:
            start, end = offset, offset + len(text)
            offset = end
            if min(end, cut) > start:
                releases.append((key, _redact_span(raw, start, min(end, cut), spans)))
            if end > cut:
                held.append((key, raw[max(start, cut) : end]))
        self._pending = held
        return releases


def _redact_span(raw: str, start: int, end: int, spans: list[tuple[int, int]]) -> str:
    """raw[start:end] with each secret's overlap with it replaced by one REDACTED."""
    parts: list[str] = []
    position = start
    for secret_start, secret_end in spans:
        lo, hi = max(secret_start, start), min(secret_end, end)
        if lo >= hi:
            continue
        parts.append(raw[position:lo])
        parts.append(REDACTED)
        position = hi
    parts.append(raw[position:end])
    return "".join(parts)
