"""Schedule expressions of scheduled triggers: when they fire, what they say, and why a bad one is refused.

Three forms, each read in an IANA timezone (empty means UTC):

- five-field cron (minute hour day-of-month month day-of-week): numbers, `*`, ranges `a-b`, steps `*/n`,
  `a-b/n` and `a/n`, lists `a,b`, month names JAN-DEC and day names SUN-SAT (any case, 0 and 7 are Sunday).
  When both day fields are restricted a day matches either, as in cron. Quartz extensions (`L`, `W`, `#`,
  `?`) and a seconds field are refused.
- the @-names of cron: `@hourly`, `@daily` (and `@midnight`), `@weekly`, `@monthly`, `@yearly` (and
  `@annually`), all of them, not just the three the issue names, because a user pasting a crontab line
  expects them; `@reboot` is refused (there is no boot to fire on).
- `@every D`, D a Go duration as Go's time.ParseDuration reads it (decimal numbers with optional fractions and
  units ns, us/µs, ms, s, m, h: `1.5h`, `1h30m`, `90000ms`; a leading `+`), plus the unit d (a day) as a
  superset, from 1 minute to 31 days. Like the original system's scheduler it counts whole seconds (a fraction
  of a second is dropped). It fires at anchor + k*D for k >= 1, the anchor being the automation's last save.

Cron runs on `cronsim`, which follows Debian cron across daylight-saving changes: a job whose minute and hour
fields are both fixed (neither starts with `*`) is matched against wall-clock time, so a wall-clock minute
repeated by a fall-back fires once (at its first occurrence) and one skipped by a spring-forward fires at the
first minute after the gap; a job with `*` leading its minute or hour field is matched against every real
instant, so it fires in both passes of a repeated hour and not at all in a skipped one.

Instants in and out are timezone-aware; a naive datetime is a programming error (ValueError), as it is for the
database's UTC columns. Results are in UTC.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from functools import cache
from itertools import islice
from zoneinfo import ZoneInfo, available_timezones

from cron_descriptor import ExpressionDescriptor, Options
from cronsim import CronSim, CronSimError

from kandev.domain.errors import ValidationError

MAX_EXPRESSION_LENGTH = 200
MIN_EVERY = timedelta(minutes=1)
MAX_EVERY = timedelta(days=31)
MAX_CHECK_COUNT = 50

# The cron text each @-name stands for (Debian crontab(5)).
AT_NAMES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}

_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()  # names[i] is the value low + i

    def value(self, text: str) -> int | None:
        if text.upper() in self.names:
            return self.low + self.names.index(text.upper())
        return int(text) if re.fullmatch(r"[0-9]{1,2}", text) else None


_FIELDS = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day-of-month", 1, 31),
    _Field("month", 1, 12, _MONTHS),
    _Field("day-of-week", 0, 7, _DAYS),
)
_TERM = re.compile(r"(?P<base>\*|(?P<start>[0-9A-Za-z]+)(?:-(?P<end>[0-9A-Za-z]+))?)(?:/(?P<step>[0-9]+))?")
# Go's duration grammar: [+]?(number unit)+, number = digits with an optional fraction, either side may be empty.
_EVERY_PART = re.compile(r"([0-9]*)(?:\.([0-9]*))?(ns|us|µs|μs|ms|s|m|h|d)")
_EVERY_NANOSECONDS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
    "d": 86400 * 10**9,
}
# Aliases of the host's own zone, not IANA names: a schedule must not change with the machine it runs on.
_HOST_ZONES = {"localtime", "posixrules"}
_EVERY_HELP = "use a Go duration with units h, m, s or ms (and d), such as 30m, 1.5h, 1h30m or 90000ms"


@dataclass(frozen=True)
class CronCheck:
    """What `validateCron` answers: whether an expression is valid, why not, what it means and when it fires."""

    valid: bool
    error: str | None
    description: str | None
    next_fires: list[datetime]


@dataclass(frozen=True)
class Schedule:
    """A parsed, valid schedule in its timezone; `anchor` (aware, UTC) is where `@every` counts from."""

    expression: str
    timezone: str = ""
    anchor: datetime | None = None
    _zone: tzinfo = field(init=False, repr=False, compare=False)
    _cron: str | None = field(init=False, repr=False, compare=False)
    _every: timedelta | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        expression = self.expression.strip()
        timezone = self.timezone.strip()
        object.__setattr__(self, "expression", expression)
        object.__setattr__(self, "timezone", timezone)
        cron, every = _parse_expression(expression)
        object.__setattr__(self, "_zone", _zone(timezone))
        if self.anchor is not None:
            object.__setattr__(self, "anchor", _utc(self.anchor, "anchor"))
        object.__setattr__(self, "_cron", cron)
        object.__setattr__(self, "_every", every)

    @classmethod
    def parse(cls, expression: str, timezone: str = "", *, anchor: datetime | None = None) -> Schedule:
        """The schedule, or ValidationError naming the field (`expression` or `timezone`) that is wrong."""
        return cls(expression, timezone, anchor)

    @property
    def is_every(self) -> bool:
        """An `@every` schedule, which fires from its anchor and so needs one to be evaluated."""
        return self._every is not None

    def next_after(self, instant: datetime) -> datetime:
        """The first fire strictly after `instant`, aware UTC (whole minutes for cron)."""
        return next(self._occurrences(_utc(instant, "instant")))

    def next_fires(self, after: datetime, count: int) -> list[datetime]:
        """The next `count` fires strictly after `after`, in order."""
        return list(islice(self._occurrences(_utc(after, "after")), max(count, 0)))

    def latest_due(self, since: datetime, now: datetime) -> datetime | None:
        """The newest fire in (since, now], or None: what a scheduler that was down fires, once."""
        since, now = _utc(since, "since"), _utc(now, "now")
        if now <= since or self.next_after(since) > now:
            return None
        if self._every is not None:
            anchor = self._anchor()
            return anchor + ((now - anchor) // self._every) * self._every
        # next_after is monotone and fires are at least a minute apart: the largest start whose next fire is
        # still due, found to the second, has the newest due fire as its next one.
        low, high = since, now
        while high - low > timedelta(seconds=1):
            middle = low + (high - low) / 2
            if self.next_after(middle) <= now:
                low = middle
            else:
                high = middle
        return self.next_after(low)

    def shortest_interval(self) -> timedelta:
        """The shortest time between two fires, on the wall clock (a daylight-saving jump may shorten one gap
        a year by an hour): what a per-user floor on how often a schedule fires is compared with."""
        if self._every is not None:
            return self._every
        assert self._cron is not None
        return _shortest_cron_interval(self._cron)

    def describe(self) -> str:
        """Plain English, e.g. "At 09:00, Monday through Friday (Europe/Berlin)" or "Every 90 minutes"."""
        if self._every is not None:
            return "Every " + _describe_duration(self._every)
        assert self._cron is not None
        return f"{_describe_cron(self._cron)} ({self.timezone or 'UTC'})"

    def _anchor(self) -> datetime:
        if self.anchor is None:
            raise ValueError("an @every schedule counts from an anchor (the automation's last save): none given")
        return self.anchor

    def _occurrences(self, after: datetime) -> Iterator[datetime]:
        """Every fire strictly after `after` (aware UTC), in order."""
        if self._every is not None:
            anchor, every = self._anchor(), self._every
            k = max((after - anchor) // every + 1, 1)
            while True:
                yield anchor + k * every
                k += 1
        assert self._cron is not None
        last = after
        # cronsim reads a fixed-time job in wall-clock time, so a start in the second pass of a repeated hour
        # can give that hour's first pass, which is before the start: those are skipped.
        for local in CronSim(self._cron, after.astimezone(self._zone)):
            fire = local.astimezone(UTC)
            if fire > last:
                last = fire
                yield fire


def check(expression: str, timezone: str, count: int, now: datetime) -> CronCheck:
    """`validateCron`: never raises on a bad expression or timezone; `@every` counts from `now` (a save now)."""
    if not 1 <= count <= MAX_CHECK_COUNT:
        raise ValidationError(f"count must be between 1 and {MAX_CHECK_COUNT}", field="count")
    now = _utc(now, "now")
    try:
        schedule = Schedule.parse(expression, timezone, anchor=now)
    except ValidationError as refused:
        return CronCheck(valid=False, error=refused.message, description=None, next_fires=[])
    return CronCheck(True, None, schedule.describe(), schedule.next_fires(now, count))


def _utc(instant: datetime, name: str) -> datetime:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware")
    return instant.astimezone(UTC)


@cache
def _iana_names() -> frozenset[str]:
    return frozenset(available_timezones() - _HOST_ZONES)


def _zone(name: str) -> tzinfo:
    if not name:
        return UTC
    if name not in _iana_names():
        raise ValidationError("timezone must be an IANA name such as Europe/Berlin, or empty for UTC", field="timezone")
    return ZoneInfo(name)


def _parse_expression(expression: str) -> tuple[str | None, timedelta | None]:
    """(cron text, None) or (None, @every duration)."""
    if not expression:
        raise _invalid("expression must not be empty")
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise _invalid(f"expression must be at most {MAX_EXPRESSION_LENGTH} characters")
    if expression.startswith("@"):
        word, *rest = expression.split(maxsplit=1)
        word = word.lower()
        if word == "@every":
            return None, _parse_every("".join(rest))
        if word in AT_NAMES and not rest:
            return AT_NAMES[word], None
        raise _invalid("the @-forms are @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually and @every D")
    return _parse_cron(expression), None


def _parse_every(text: str) -> timedelta:
    if not text:
        raise _invalid(f"@every needs a duration: {_EVERY_HELP}")
    if text.startswith("-"):
        raise _invalid("the @every duration must be positive")
    nanoseconds = _go_duration(text.removeprefix("+"))
    if nanoseconds is None or len(text) > 40:
        raise _invalid(f"the @every duration is not one: {_EVERY_HELP}")
    seconds = nanoseconds // 10**9  # whole seconds, as the original scheduler counted them
    if seconds < MIN_EVERY.total_seconds():
        raise _invalid("the @every duration must be at least 1 minute")
    if seconds > MAX_EVERY.total_seconds():
        raise _invalid("the @every duration must be at most 31 days")
    return timedelta(seconds=seconds)


def _go_duration(text: str) -> int | None:
    """Nanoseconds of a Go duration (exactly: fractions are kept as integers), or None when it is not one."""
    total, position = 0, 0
    while position < len(text):
        part = _EVERY_PART.match(text, position)
        if part is None or not (part[1] or part[2]):
            return None
        whole, fraction, unit = part[1] or "0", part[2] or "", part[3]
        scale = _EVERY_NANOSECONDS[unit]
        total += int(whole) * scale + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)
        position = part.end()
    return total if text else None


def _parse_cron(expression: str) -> str:
    parts = expression.split()
    if len(parts) != len(_FIELDS):
        raise _invalid(
            "a cron expression has five fields (minute hour day-of-month month day-of-week); "
            "or use @hourly, @daily, @weekly, @monthly, @yearly or @every D"
        )
    for spec, text in zip(_FIELDS, parts, strict=True):
        for term in text.split(","):
            _check_term(spec, term)
    cron = " ".join(parts)
    try:
        CronSim(cron, datetime(2000, 1, 1, tzinfo=UTC))
    except CronSimError:
        # What passes the checks above and still fails: a day of month no chosen month has (31 in February).
        raise _invalid("the day-of-month field names no day that the chosen months have") from None
    return cron


def _check_term(spec: _Field, term: str) -> None:
    match = _TERM.fullmatch(term)
    if match is None:
        names = f" or {spec.names[0]}-{spec.names[-1]}" if spec.names else ""
        raise _invalid(
            f"the {spec.name} field takes *, values {spec.low}-{spec.high}{names}, "
            "ranges (a-b), steps (*/n or a-b/n) and lists (a,b)"
        )
    values = [spec.value(text) for text in (match["start"], match["end"]) if text is not None]
    if any(value is None or not spec.low <= value <= spec.high for value in values):
        names = f" (or {spec.names[0]}-{spec.names[-1]})" if spec.names else ""
        raise _invalid(f"the {spec.name} field takes values {spec.low}-{spec.high}{names}")
    if len(values) == 2 and values[0] is not None and values[1] is not None and values[0] > values[1]:
        raise _invalid(f"a range in the {spec.name} field must go from low to high")
    if match["step"] is not None and not 1 <= int(match["step"]) <= spec.high:
        raise _invalid(f"a step in the {spec.name} field must be between 1 and {spec.high}")


def _shortest_cron_interval(cron: str) -> timedelta:
    """The least gap between two fires of a valid cron text: between the times of one firing day, or from a
    firing day's last time to the next firing day's first (the day fields decide how far apart those days
    can be: found over _DAY_SCAN of calendar, which holds every leap-year and weekday pattern that matters)."""
    fields = CronSim(cron, _DAY_SCAN_START)
    times = sorted(hour * 60 + minute for hour in fields.hours for minute in fields.minutes)
    within = min((b - a for a, b in zip(times, times[1:], strict=False)), default=None)
    wrap = 1440 - times[-1] + times[0]  # from the last fire of a day to the first of the next day
    if within is not None and within <= wrap:
        return timedelta(minutes=within)  # days further apart only lengthen the wrap
    days_apart = _fewest_days_between_firing_days(" ".join(["0", "0", *cron.split()[2:]]))
    across = (days_apart - 1) * 1440 + wrap
    return timedelta(minutes=across if within is None else min(within, across))


_DAY_SCAN_START = datetime(2000, 1, 1, tzinfo=UTC)
_DAY_SCAN = timedelta(days=366 * 9)


def _fewest_days_between_firing_days(daily: str) -> int:
    """The fewest days between two consecutive days a midnight cron text fires on (1: neighbouring days)."""
    end = _DAY_SCAN_START + _DAY_SCAN
    fewest, previous = _DAY_SCAN.days, None
    for fire in CronSim(daily, _DAY_SCAN_START):
        if fire > end:
            break
        if previous is not None:
            fewest = min(fewest, (fire - previous).days)
            if fewest == 1:
                break
        previous = fire
    return fewest


def _describe_cron(cron: str) -> str:
    fallback = f"On the cron schedule {cron}"
    try:
        options = Options(locale_code="en_US", use_24hour_time_format=True)
        text = str(ExpressionDescriptor(cron, options).get_description())
    except Exception:  # the describer is a nicety: a valid schedule it can't word is still valid
        return fallback
    # Lists that mix steps come out garbled (", , every 4 hours"): the expression itself says more.
    return fallback if ", ," in text or "  " in text else text


def _describe_duration(every: timedelta) -> str:
    seconds = int(every.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        if seconds % size == 0:
            count = seconds // size
            return unit if count == 1 else f"{count} {unit}s"
    raise AssertionError("unreachable: every duration is whole seconds")


def _invalid(message: str) -> ValidationError:
    return ValidationError(message, field="expression")
