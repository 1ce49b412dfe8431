"""The built-in authoring agent's understanding: common phrasings of an automation turned into a draft, and
the conversation rules around it (at most three follow-up questions in a row, then a recap that asks nothing;
the full definition confirmed before anything is created; a credential the pre-flight check finds missing asked
for, and the automation held until it is there, unless the operator says to save it anyway; a hand-off to the
form after five operator messages without a viable draft).

Pure and deterministic (no model, no I/O): the ACP program around it (kandev.runtime.author) calls the
authoring tools. Phrasings understood, anywhere in a message:

    every weekday at 9 / on weekdays at 9:30am     -> 0 9 * * 1-5 / 30 9 * * 1-5
    every day at 18:00 / daily at 6pm              -> 0 18 * * *
    every monday at 10                             -> 0 10 * * 1
    every 15 minutes / every 2 hours / every day   -> @every 15m / @every 2h / @daily
    hourly / daily / weekly                        -> @hourly / @daily / @weekly
    in Europe/Berlin                               -> the schedule's timezone
    on each push to main                           -> a GitHub push trigger on branch main (all repositories)
    when a pull request is opened                  -> a GitHub pull-request trigger (opened, all repositories)
    webhook                                        -> a webhook trigger
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

MAX_FOLLOW_UPS_IN_A_ROW = 3
HANDOFF_AFTER_OPERATOR_MESSAGES = 5

_DAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_TIME = r"(\d{1,2})(?:[:.](\d{2}))?\s*(am|pm)?"
_UNITS = {"minute": "m", "min": "m", "hour": "h", "day": "d"}
_NAMED = {"hourly": "@hourly", "daily": "@daily", "weekly": "@weekly", "every hour": "@hourly", "every day": "@daily"}
_YES = re.compile(r"^\s*(yes|yep|yeah|y|ok|okay|sure|confirm(ed)?|create it|go ahead|looks good|do it)\b", re.I)
_NO = re.compile(r"^\s*(no|nope|cancel|stop|never mind)\b", re.I)
_ANYWAY = re.compile(r"\b(save|create|make)\s+it\s+anyway\b|\banyway\b", re.I)


@dataclass(frozen=True)
class Draft:
    """What has been understood so far; `trigger` is shaped as create_automation's trigger argument."""

    name: str | None = None
    prompt: str | None = None
    trigger: dict[str, Any] | None = None
    timezone: str | None = None

    @property
    def viable(self) -> bool:
        return self.trigger is not None and bool(self.prompt)

    def definition(self) -> dict[str, Any]:
        """The create_automation arguments (less the workspace and agent, which the program adds)."""
        trigger = dict(self.trigger or {})
        if trigger.get("type") == "scheduled":
            trigger["timezone"] = self.timezone or ""
        return {"name": self.name or _name_of(self.prompt or ""), "prompt": self.prompt or "", "triggers": [trigger]}

    def summary(self) -> list[str]:
        lines = [f"Name: {self.name or _name_of(self.prompt or '') or '(not yet)'}"]
        lines.append(f"Fires: {describe(self.trigger, self.timezone) if self.trigger else '(not yet)'}")
        lines.append(f"Prompt: {self.prompt or '(not yet)'}")
        return lines


def describe(trigger: dict[str, Any] | None, timezone: str | None) -> str:
    if trigger is None:
        return "nothing yet"
    kind = trigger["type"]
    if kind == "scheduled":
        return f"on the schedule {trigger['expression']} ({timezone or 'UTC'})"
    if kind == "github_push":
        return f"on each push to {', '.join(trigger['filters']['branches'])}, in every repository on the connected host"
    if kind == "github_pr":
        return "when a pull request is opened, in every repository on the connected host"
    return "when its webhook is called"


def understand(text: str, draft: Draft) -> Draft:
    """The draft with whatever `text` says; what it doesn't mention stays as it was."""
    rest = text.strip()
    trigger, rest = _trigger(rest)
    zone = re.search(r"\bin ([A-Z][A-Za-z_]+/[A-Za-z_]+(?:/[A-Za-z_]+)?|UTC)\b", rest)
    timezone = draft.timezone
    if zone:
        timezone = "" if zone[1] == "UTC" else zone[1]
        rest = (rest[: zone.start()] + rest[zone.end() :]).strip()
    named = re.match(r"^\s*(?:call it|name it|named)\s+[\"']?([^\"'\n]+?)[\"']?\s*$", rest, re.I)
    if named:
        return replace(draft, name=named[1].strip(), trigger=trigger or draft.trigger, timezone=timezone)
    prompt = _prompt_of(rest)
    if _YES.match(text) or _NO.match(text):
        prompt = None
    return replace(
        draft, trigger=trigger or draft.trigger, timezone=timezone, prompt=prompt if prompt else draft.prompt
    )


def _trigger(text: str) -> tuple[dict[str, Any] | None, str]:
    """The trigger a message names and the message without that phrase."""
    patterns: list[tuple[str, Any]] = [
        (rf"\b(?:every\s+weekdays?|on\s+weekdays|weekdays)\s+at\s+{_TIME}", lambda m: _cron(m, 1, "1-5")),
        (rf"\b(?:every\s+day|daily)\s+at\s+{_TIME}", lambda m: _cron(m, 1, "*")),
        (
            rf"\b(?:every|on)\s+({'|'.join(_DAYS)})s?\s+at\s+{_TIME}",
            lambda m: _cron(m, 2, str(_DAYS.index(m[1].lower()))),
        ),
        (r"\bevery\s+(\d+)\s+(minute|min|hour|day)s?\b", lambda m: _every(int(m[1]), _UNITS[m[2].lower()])),
        (r"\b(hourly|daily|weekly|every hour|every day)\b", lambda m: _scheduled(_NAMED[m[1].lower()])),
        (
            r"\bon\s+(?:each|every|a)?\s*push(?:es)?\s+to\s+([\w./*-]+)",
            lambda m: {"type": "github_push", "filters": {"branches": [m[1]], "all_repositories": True}},
        ),
        (
            r"\bwhen(?:ever)?\s+an?\s+(?:pull request|pr)\s+is\s+opened\b",
            lambda m: {"type": "github_pr", "filters": {"events": ["opened"], "all_repositories": True}},
        ),
        (r"\b(?:on|via|from|with)\s+an?\s+webhook\b|\bwebhook\b", lambda m: {"type": "webhook"}),
    ]
    for pattern, build in patterns:
        found = re.search(pattern, text, re.I)
        if found:
            return build(found), (text[: found.start()] + text[found.end() :]).strip()
    return None, text


def _cron(match: re.Match[str], first: int, days: str) -> dict[str, Any]:
    hour, minute, half = int(match[first]), int(match[first + 1] or 0), (match[first + 2] or "").lower()
    if half == "pm" and hour < 12:
        hour += 12
    if half == "am" and hour == 12:
        hour = 0
    return _scheduled(f"{minute} {hour} * * {days}")


def _every(count: int, unit: str) -> dict[str, Any]:
    return _scheduled(f"@every {count}{unit}")


def _scheduled(expression: str) -> dict[str, Any]:
    return {"type": "scheduled", "expression": expression}


def _prompt_of(rest: str) -> str | None:
    """What the automation should do: the message less its trigger phrase and joining words."""
    text = re.sub(r"^[\s,;:.-]*(?:and|then|to|,)?\s*", "", rest)
    text = re.sub(r"[\s,;:-]+$", "", text).strip()
    return text or None


def _name_of(prompt: str) -> str:
    words = re.findall(r"[\w'-]+", prompt)[:6]
    return " ".join(words).capitalize() if words else ""


@dataclass
class Conversation:
    """The authoring chat's rules, message by message."""

    draft: Draft = field(default_factory=Draft)
    operator_messages: int = 0
    follow_ups_in_a_row: int = 0
    awaiting_confirmation: bool = False
    # A yes was held: the pre-flight check found a credential missing (see `hold`).
    awaiting_credential: bool = False
    done: bool = False

    def hear(self, text: str) -> Reply:
        """The agent's answer to one operator message."""
        if self.done:
            return Reply(["This chat is finished; start a new one to describe another automation."])
        self.operator_messages += 1
        if self.awaiting_credential and not _NO.match(text):
            # Any word back ("done", "added it") checks again; "save it anyway" creates without it.
            self.done, self.awaiting_credential = True, False
            return Reply([], create=self.draft, anyway=bool(_ANYWAY.search(text)))
        if self.awaiting_confirmation and (_YES.match(text) or _ANYWAY.search(text)):
            self.done = True
            return Reply([], create=self.draft, anyway=bool(_ANYWAY.search(text)))
        if self.awaiting_credential:
            self.awaiting_credential = False
            self.awaiting_confirmation = False
            return self._ask("What should change?")
        if self.awaiting_confirmation and _NO.match(text):
            self.awaiting_confirmation = False
            return self._ask("What should change?")
        self.draft = understand(text, self.draft)
        if self.draft.viable:
            self.awaiting_confirmation = True
            self.follow_ups_in_a_row = 0
            lines = ["Here is the automation I will create:", *self.draft.summary()]
            return Reply([*lines, "Reply yes to create it, or tell me what to change."], confirm=self.draft)
        if self.operator_messages >= HANDOFF_AFTER_OPERATOR_MESSAGES:
            self.done = True
            captured = ["I'm having trouble — let's switch to the form. What I captured:", *self.draft.summary()]
            return Reply(captured, handoff=self.draft)
        if self.draft.trigger is None:
            return self._ask(
                "When should it run? For example 'every weekday at 9', 'every 15 minutes' or 'on each push to main'."
            )
        return self._ask("What should the agent do on each run?")

    def hold(self) -> None:
        """The operator's yes found a credential missing: nothing is created; their next message checks again,
        unless it says to save it anyway (or no)."""
        self.done, self.awaiting_confirmation, self.awaiting_credential = False, True, True

    def _ask(self, question: str) -> Reply:
        """A follow-up question, unless three came in a row: then a recap that asks nothing, so the operator
        can say it their own way (the streak starts again after it)."""
        if self.follow_ups_in_a_row >= MAX_FOLLOW_UPS_IN_A_ROW:
            self.follow_ups_in_a_row = 0
            recap = ["Here is what I have so far:", *self.draft.summary()]
            return Reply([*recap, "Describe the rest in your own words, or open the form to fill it in."])
        self.follow_ups_in_a_row += 1
        return Reply([question])


@dataclass(frozen=True)
class Reply:
    messages: list[str]
    create: Draft | None = None  # the operator confirmed: create it (once the pre-flight finds its credentials)
    anyway: bool = False  # the operator said to save it anyway, missing credential or not
    confirm: Draft | None = None  # shown for confirmation
    handoff: Draft | None = None  # handed over to the form with what was captured
