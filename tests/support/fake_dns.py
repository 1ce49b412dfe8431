"""A resolver the test controls, in place of the system's for the outbound rule (kandev.domain.outbound), so no
test asks real DNS. Unknown names answer one public address, as an Internet name would; `.invalid` names answer
nothing; a name given several answers takes the next one at each lookup (the last repeats), which is how a
rebinding name behaves."""

from __future__ import annotations

from collections.abc import Iterable

PUBLIC = "93.184.216.34"  # a globally routable address no test ever connects to
PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946"


class FakeDns:
    def __init__(self) -> None:
        self.answers: dict[str, list[list[str]]] = {"localhost": [["127.0.0.1", "::1"]]}
        self.asked: list[str] = []

    def set(self, name: str, *answers: Iterable[str]) -> None:
        """`name` answers these address lists, one per lookup in turn, the last one repeated."""
        self.answers[name.lower()] = [list(answer) for answer in answers]

    def __call__(self, host: str, port: int) -> list[str]:
        name = host.lower().rstrip(".")
        self.asked.append(name)
        queued = self.answers.get(name)
        if queued is None:
            return [] if name.endswith(".invalid") else [PUBLIC]
        return queued.pop(0) if len(queued) > 1 else list(queued[0])
