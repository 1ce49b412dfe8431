"""Schedules fire when a brute-force walk over every minute in their zone says they do, across both daylight-saving
changes of 2026; @-names, @every and every refusal are checked beside it.

The oracle encodes Debian cron's daylight-saving rule, the one cronsim follows (its `fixup_tz` branch):
- a job whose minute and hour fields both start with something other than `*` is a fixed-time job and is matched
  against wall-clock minutes: a wall-clock minute that a fall-back repeats fires once, at its first pass
  (fold=0); a wall-clock minute that a spring-forward skips fires at the first real minute after the gap, and
  several skipped minutes (or a skipped one and the gap's end itself) fire there once;
- any other job is matched against every real minute's local wall clock, so it fires in both passes of a
  repeated hour and never in a skipped one.
Day fields combine as in cron: when either starts with `*` both must match, otherwise either may.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from kandev.domain.automations.schedule import MAX_CHECK_COUNT, CronCheck, Schedule, check
from kandev.domain.errors import ValidationError

ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata"]
MINUTE = timedelta(minutes=1)
MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


# -- the oracle ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cron:
    """A generated expression beside the sets it means, built without parsing its text."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday; 7 folded into 0
    fixed_time: bool
    days_and: bool

    def matches(self, wall: datetime) -> bool:
        if wall.minute not in self.minutes or wall.hour not in self.hours or wall.month not in self.months:
            return False
        dom = wall.day in self.days
        dow = (wall.weekday() + 1) % 7 in self.weekdays
        return (dom and dow) if self.days_and else (dom or dow)


def is_real(wall: datetime, zone: ZoneInfo) -> bool:
    aware = wall.replace(tzinfo=zone, fold=0)
    return aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None) == wall


def oracle_fires(cron: Cron, zone: ZoneInfo, start: datetime, end: datetime) -> list[datetime]:
    """Every fire in [start, end), found by walking each minute."""
    fires: set[datetime] = set()
    if cron.fixed_time:
        wall = start.astimezone(zone).replace(tzinfo=None) - timedelta(hours=3)
        last = end.astimezone(zone).replace(tzinfo=None) + timedelta(hours=3)
        while wall < last:
            if cron.matches(wall):
                real = wall
                while not is_real(real, zone):
                    real += MINUTE
                fires.add(real.replace(tzinfo=zone, fold=0).astimezone(UTC))
            wall += MINUTE
    else:
        instant = start
        while instant < end:
            if cron.matches(instant.astimezone(zone).replace(tzinfo=None)):
                fires.add(instant)
            instant += MINUTE
    return sorted(fire for fire in fires if start <= fire < end)


def field_term(
    rng: random.Random, low: int, high: int, near: list[int], names: list[str] | None
) -> tuple[str, set[int]]:
    """One term of a field: its text and the values it means."""

    def value() -> int:
        return rng.choice(near) if rng.random() < 0.7 else rng.randint(low, high)

    def text_of(number: int) -> str:
        if names and rng.random() < 0.4 and number - low < len(names):
            name = names[number - low]
            return rng.choice([name, name.lower(), name.title()])
        return str(number)

    kind = rng.choice(["value", "value", "range", "range_step", "star_step", "start_step"])
    if kind == "value":
        number = value()
        return text_of(number), {number}
    a, b = sorted((value(), value()))
    if kind == "range":
        return f"{text_of(a)}-{text_of(b)}", set(range(a, b + 1))
    step = rng.randint(1, max(1, (high - low) // 3))
    if kind == "range_step":
        return f"{text_of(a)}-{text_of(b)}/{step}", set(range(a, b + 1, step))
    if kind == "star_step":
        return f"*/{step}", set(range(low, high + 1, step))
    return f"{a}/{step}", set(range(a, high + 1, step))


def field(rng: random.Random, low: int, high: int, near: list[int], star: float, names: list[str] | None = None):
    if rng.random() < star:
        return "*", set(range(low, high + 1))
    terms = [field_term(rng, low, high, near, names) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    return ",".join(text for text, _ in terms), set().union(*(values for _, values in terms))


def random_cron(rng: random.Random, day: datetime) -> Cron:
    """An expression likely to fire in the hours around a daylight-saving change on `day` (local)."""
    minute = field(rng, 0, 59, [0, 1, 15, 29, 30, 45, 59], star=0.15)
    hour = field(rng, 0, 23, [0, 1, 2, 3, 4], star=0.25)
    dom = field(rng, 1, 31, [day.day - 1 or 1, day.day, day.day + 1], star=0.7)
    month = field(rng, 1, 12, [day.month], star=0.6, names=MONTHS)
    weekday = (day.weekday() + 1) % 7
    dow = field(rng, 0, 7, [weekday, (weekday + 1) % 7, 7], star=0.6, names=DAYS)
    text = " ".join(part for part, _ in (minute, hour, dom, month, dow))
    return Cron(
        text=text,
        minutes=frozenset(minute[1]),
        hours=frozenset(hour[1]),
        days=frozenset(dom[1]),
        months=frozenset(month[1]),
        weekdays=frozenset(value % 7 for value in dow[1]),
        fixed_time=not minute[0].startswith("*") and not hour[0].startswith("*"),
        days_and=dom[0].startswith("*") or dow[0].startswith("*"),
    )


def transitions(zone: ZoneInfo, year: int) -> list[datetime]:
    """The UTC hours of `year` at which `zone` changes its offset."""
    hour = utc(year, 1, 1)
    found = []
    while hour.year == year:
        if (hour + timedelta(hours=1)).astimezone(zone).utcoffset() != hour.astimezone(zone).utcoffset():
            found.append(hour + timedelta(hours=1))
        hour += timedelta(hours=1)
    return found


BERLIN_2026 = transitions(ZoneInfo("Europe/Berlin"), 2026)


def test_the_oracle_sees_both_changes_of_2026_in_every_zone_that_has_them():
    assert transitions(ZoneInfo("Europe/Berlin"), 2026) == [utc(2026, 3, 29, 1), utc(2026, 10, 25, 1)]
    assert transitions(ZoneInfo("America/New_York"), 2026) == [utc(2026, 3, 8, 7), utc(2026, 11, 1, 6)]
    assert transitions(ZoneInfo("Australia/Sydney"), 2026) == [utc(2026, 4, 4, 16), utc(2026, 10, 3, 16)]
    assert transitions(ZoneInfo("Asia/Kolkata"), 2026) == []


@pytest.mark.parametrize("zone_name", ZONES)
def test_next_after_agrees_with_a_minute_by_minute_walk_around_both_changes_of_the_year(zone_name):
    zone = ZoneInfo(zone_name)
    rng = random.Random(f"schedule-{zone_name}")
    compared = 0
    for change in transitions(zone, 2026) or BERLIN_2026:
        start, end = change - timedelta(hours=12), change + timedelta(hours=12)
        for _ in range(30):
            cron = random_cron(rng, change.astimezone(zone))
            schedule = Schedule.parse(cron.text, zone_name)
            expected = oracle_fires(cron, zone, start, end)
            # The chain of next_after from the window's start gives exactly the oracle's fires.
            chain, instant = [], start - timedelta(seconds=1)
            while (instant := schedule.next_after(instant)) < end:
                chain.append(instant)
            assert chain == expected, (cron.text, zone_name)
            # Starts between minutes give the first fire strictly after them.
            for _ in range(10):
                query = start + timedelta(seconds=rng.randrange(int((end - start).total_seconds())))
                query += timedelta(microseconds=rng.choice([0, 1, 500_000]))
                after = [fire for fire in expected if fire > query]
                if after:
                    assert schedule.next_after(query) == after[0], (cron.text, zone_name, query)
                    since = query - timedelta(hours=rng.choice([0, 1, 6]), minutes=rng.randrange(60))
                    due = [fire for fire in expected if since < fire <= after[0]]
                    assert schedule.latest_due(since, after[0]) == due[-1]
            compared += len(expected)
    assert compared > 1000  # the windows really contain fires


# -- daylight saving, spelled out ------------------------------------------------------------------------------


def fires(expression: str, zone: str, start: datetime, hours: int) -> list[datetime]:
    schedule = Schedule.parse(expression, zone)
    return [fire for fire in schedule.next_fires(start, 500) if fire < start + timedelta(hours=hours)]


def test_a_fixed_time_in_the_skipped_hour_fires_once_right_after_the_spring_forward():
    # Berlin 2026-03-29: 02:00 CET becomes 03:00 CEST at 01:00 UTC.
    assert fires("30 2 * * *", "Europe/Berlin", utc(2026, 3, 28, 12), 24) == [utc(2026, 3, 29, 1)]
    assert fires("0,30 2 * * *", "Europe/Berlin", utc(2026, 3, 28, 12), 24) == [utc(2026, 3, 29, 1)]


def test_a_fixed_time_in_the_repeated_hour_fires_once_at_its_first_pass():
    # Berlin 2026-10-25: 03:00 CEST becomes 02:00 CET at 01:00 UTC.
    assert fires("30 2 * * *", "Europe/Berlin", utc(2026, 10, 24, 12), 24) == [utc(2026, 10, 25, 0, 30)]
    # A start in the second pass, after the first pass fired, gives the next day.
    assert Schedule.parse("45 2 * * *", "Europe/Berlin").next_after(utc(2026, 10, 25, 1, 30)) == utc(
        2026, 10, 26, 1, 45
    )


def test_a_wildcard_job_fires_in_both_passes_of_a_repeated_hour_and_never_in_a_skipped_one():
    # New York 2026-11-01: 02:00 EDT becomes 01:00 EST at 06:00 UTC; 2026-03-08: 02:00 EST becomes 03:00 EDT.
    assert fires("*/30 2 * * *", "America/New_York", utc(2026, 11, 1), 12) == [
        utc(2026, 11, 1, 7),
        utc(2026, 11, 1, 7, 30),
    ]
    assert fires("*/30 1 * * *", "America/New_York", utc(2026, 11, 1), 12) == [
        utc(2026, 11, 1, 5),
        utc(2026, 11, 1, 5, 30),
        utc(2026, 11, 1, 6),
        utc(2026, 11, 1, 6, 30),
    ]
    assert fires("*/30 2 * * *", "America/New_York", utc(2026, 3, 8), 12) == []


def test_hourly_fires_every_real_hour_through_a_change():
    for start in (utc(2026, 10, 24, 22), utc(2026, 3, 28, 22)):
        assert fires("@hourly", "Europe/Berlin", start, 5) == [start + timedelta(hours=k) for k in range(1, 5)]


def test_a_zone_with_a_half_hour_offset_fires_on_its_own_wall_clock():
    assert Schedule.parse("0 9 * * *", "Asia/Kolkata").next_after(utc(2026, 6, 1)) == utc(2026, 6, 1, 3, 30)


def test_an_empty_timezone_is_utc():
    assert Schedule.parse("0 9 * * *").next_after(utc(2026, 6, 1, 9)) == utc(2026, 6, 2, 9)
    assert Schedule.parse("0 9 * * *", "").next_after(utc(2026, 6, 1, 8, 59, 59)) == utc(2026, 6, 1, 9)


# -- the @-names -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "cron"),
    [
        ("@hourly", "0 * * * *"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@weekly", "0 0 * * 0"),
        ("@monthly", "0 0 1 * *"),
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@DAILY", "0 0 * * *"),
    ],
)
def test_an_at_name_fires_as_the_cron_line_it_stands_for(name, cron):
    start = utc(2026, 3, 1)
    for zone in ("", "Europe/Berlin", "Australia/Sydney"):
        assert Schedule.parse(name, zone).next_fires(start, 30) == Schedule.parse(cron, zone).next_fires(start, 30)


def test_weekly_fires_at_midnight_on_sunday_in_its_zone():
    # 2026-06-07 is a Sunday; Berlin is UTC+2 in June.
    assert Schedule.parse("@weekly", "Europe/Berlin").next_after(utc(2026, 6, 3)) == utc(2026, 6, 6, 22)


def test_cron_names_and_sunday_as_seven_mean_what_the_numbers_mean():
    start = utc(2026, 1, 1)
    same = Schedule.parse("0 9 * 1-3 1-5").next_fires(start, 100)
    assert Schedule.parse("0 9 * jan-MAR Mon-fri").next_fires(start, 100) == same
    assert Schedule.parse("0 9 * * 7").next_fires(start, 10) == Schedule.parse("0 9 * * SUN").next_fires(start, 10)


def test_both_restricted_day_fields_match_either_as_in_cron():
    # 2026-06-01 is a Monday: the 15th or any Monday.
    got = Schedule.parse("0 0 15 6 1").next_fires(utc(2026, 6, 1, 1), 4)
    assert got == [utc(2026, 6, 8), utc(2026, 6, 15), utc(2026, 6, 22), utc(2026, 6, 29)]


def test_a_leap_day_schedule_waits_for_the_next_leap_year():
    assert Schedule.parse("0 0 29 2 *").next_after(utc(2026, 1, 1)) == utc(2028, 2, 29)


# -- @every ----------------------------------------------------------------------------------------------------

ANCHOR = datetime(2026, 5, 4, 10, 17, 31, 250_000, tzinfo=UTC)


@pytest.mark.parametrize(
    ("duration", "every"),
    [
        ("30m", timedelta(minutes=30)),
        ("45m", timedelta(minutes=45)),
        ("1h30m", timedelta(minutes=90)),
        ("2h", timedelta(hours=2)),
        ("1d", timedelta(days=1)),
        ("7d", timedelta(days=7)),
        ("31d", timedelta(days=31)),
        ("1m", timedelta(minutes=1)),
        ("90s", timedelta(seconds=90)),
        ("1d12h", timedelta(hours=36)),
    ],
)
def test_every_fires_at_the_anchor_plus_whole_multiples_of_its_duration(duration, every):
    schedule = Schedule.parse(f"@every {duration}", "Europe/Berlin", anchor=ANCHOR)
    assert schedule.next_fires(ANCHOR, 3) == [ANCHOR + every, ANCHOR + 2 * every, ANCHOR + 3 * every]
    assert schedule.next_after(ANCHOR + 2 * every) == ANCHOR + 3 * every
    assert schedule.next_after(ANCHOR + 2 * every - timedelta(microseconds=1)) == ANCHOR + 2 * every


@pytest.mark.parametrize(
    ("duration", "every"),
    [
        ("1.5h", timedelta(minutes=90)),
        ("1h30m", timedelta(minutes=90)),
        ("90000ms", timedelta(seconds=90)),
        ("+5m", timedelta(minutes=5)),
        (".5h", timedelta(minutes=30)),
        ("1.h", timedelta(hours=1)),
        ("2h45m30.5s", timedelta(hours=2, minutes=45, seconds=30)),
        ("60000000000ns", timedelta(minutes=1)),
        ("90000000us", timedelta(seconds=90)),
        ("90000000µs", timedelta(seconds=90)),
        ("744h", timedelta(days=31)),
    ],
)
def test_every_takes_go_durations_within_one_minute_and_31_days(duration, every):
    """As Go's time.ParseDuration reads them (fractions, ms/us/ns, a leading +), counted in whole seconds."""
    schedule = Schedule.parse(f"@every {duration}", anchor=ANCHOR)
    assert schedule.next_fires(ANCHOR, 2) == [ANCHOR + every, ANCHOR + 2 * every]


def test_every_before_its_anchor_first_fires_one_duration_after_it():
    schedule = Schedule.parse("@every 1h", anchor=ANCHOR)
    assert schedule.next_after(ANCHOR - timedelta(days=3)) == ANCHOR + timedelta(hours=1)


def test_every_ignores_daylight_saving_and_counts_real_time():
    anchor = utc(2026, 10, 24, 23)
    schedule = Schedule.parse("@every 1h", "Europe/Berlin", anchor=anchor)
    assert schedule.next_fires(anchor, 4) == [anchor + timedelta(hours=k) for k in range(1, 5)]


def test_every_without_an_anchor_can_be_validated_but_not_evaluated():
    schedule = Schedule.parse("@every 1h")
    assert schedule.describe() == "Every hour"
    with pytest.raises(ValueError, match="anchor"):
        schedule.next_after(ANCHOR)


def test_the_anchor_is_kept_in_utc():
    berlin = ANCHOR.astimezone(ZoneInfo("Europe/Berlin"))
    schedule = Schedule.parse("@every 1h", anchor=berlin)
    assert schedule.anchor == ANCHOR and schedule.anchor.tzinfo is UTC
    assert schedule == Schedule.parse("@every 1h", anchor=ANCHOR)


# -- the newest due fire ---------------------------------------------------------------------------------------


def test_the_newest_due_fire_after_downtime_is_the_one_fire_to_make_up():
    schedule = Schedule.parse("*/15 * * * *", "Europe/Berlin")
    assert schedule.latest_due(utc(2026, 6, 1, 8, 1), utc(2026, 6, 3, 17, 44, 59)) == utc(2026, 6, 3, 17, 30)
    assert schedule.latest_due(utc(2026, 6, 1, 8, 1), utc(2026, 6, 1, 8, 15)) == utc(2026, 6, 1, 8, 15)
    assert schedule.latest_due(utc(2026, 6, 1, 8, 15), utc(2026, 6, 1, 8, 29, 59)) is None
    assert schedule.latest_due(utc(2026, 6, 1, 9), utc(2026, 6, 1, 8)) is None


def test_the_newest_due_fire_of_a_rare_schedule_is_found_over_years():
    schedule = Schedule.parse("0 0 29 2 *")
    assert schedule.latest_due(utc(2020, 1, 1), utc(2026, 6, 1)) == utc(2024, 2, 29)


def test_the_newest_due_fire_of_every_is_the_last_multiple_not_after_now():
    schedule = Schedule.parse("@every 90m", anchor=ANCHOR)
    now = ANCHOR + timedelta(days=2, minutes=10)
    assert schedule.latest_due(ANCHOR, now) == ANCHOR + 32 * timedelta(minutes=90)
    assert schedule.latest_due(ANCHOR, ANCHOR + timedelta(minutes=89)) is None
    assert schedule.latest_due(ANCHOR - timedelta(days=1), ANCHOR + timedelta(minutes=90)) == ANCHOR + timedelta(
        minutes=90
    )


# -- refusals --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    [
        "",
        "   ",
        "* * * *",
        "* * * * * *",
        "0 0 * * * 2026",
        "60 * * * *",
        "-1 * * * *",
        "* 24 * * *",
        "* * 0 * *",
        "* * 32 * *",
        "* * * 13 *",
        "* * * 0 *",
        "* * * * 8",
        "5-1 * * * *",
        "*/0 * * * *",
        "*/61 * * * *",
        "1-5/0 * * * *",
        "MON * * * *",
        "* * * MON *",
        "* * * * JAN",
        "* * * * FOO",
        "* * L * *",
        "* * 15W * *",
        "* * * * 5#2",
        "* * ? * *",
        "* * * * 5L",
        "0 0 31 2 *",
        "0 0 30,31 2 *",
        "0 0 31 4,6,9,11 *",
        "1,,2 * * * *",
        "1, * * * *",
        "*/ * * * *",
        "1-* * * * *",
        "** * * * *",
        "007 * * * *",
        "١ * * * *",
        "0 0 * * * ; rm -rf /",
        "@reboot",
        "@daily 5",
        "@fortnightly",
        "@",
        "@every",
        "@every ",
        "@every 0m",
        "@every 0",
        "@every 30",
        "@every 30s",
        "@every 59s",
        "@every -5m",
        "@every 32d",
        "@every 31d1s",
        "@every 744h1m",
        "@every 1.5",
        "@every .h",
        "@every 1..5h",
        "@every 1h-5m",
        "@every 59999ms",
        "@every 1m-",
        "@every 5ms",
        "@every 1w",
        "@every 5 m",
        "@every 5m 5m",
        "@every m",
        "@every 99999999999999999999999d",
        "@every five minutes",
        "x" * 201,
        "0 0" + " " * 300 + "* * *",  # over the length bound even though its trimmed ends are short
    ],
)
def test_a_bad_expression_is_refused_naming_the_expression(expression):
    with pytest.raises(ValidationError) as refused:
        Schedule.parse(expression, "Europe/Berlin")
    assert refused.value.field == "expression"
    assert refused.value.message


@pytest.mark.parametrize(
    "timezone",
    [
        "Europe/Nowhere",
        "europe/berlin",
        "Europe",
        "localtime",
        "posixrules",
        "../etc/passwd",
        "/etc/localtime",
        "+02:00",
    ],
)
def test_an_unknown_timezone_is_refused_naming_the_timezone(timezone):
    with pytest.raises(ValidationError) as refused:
        Schedule.parse("0 9 * * *", timezone)
    assert refused.value.field == "timezone"


def test_refusals_never_echo_what_was_submitted():
    for expression, timezone in [("0 0 * * secretday", ""), ("@every secretm", ""), ("0 0 * * *", "Secret/Zone")]:
        with pytest.raises(ValidationError) as refused:
            Schedule.parse(expression, timezone)
        assert "secret" not in refused.value.message.lower()


@pytest.mark.parametrize(
    "expression",
    ["0 9 * * 1-5", " 0  9 * *  1-5 ", "*/5 * * * *", "0 */6 * * *", "5/10 * * * *", "0 0 1,15 * *", "00 09 * * *"],
)
def test_good_expressions_are_accepted_with_surrounding_space_trimmed(expression):
    assert Schedule.parse(expression, " Europe/Berlin ").expression == expression.strip()


def test_naive_instants_are_a_programming_error():
    schedule = Schedule.parse("0 9 * * *")
    naive = datetime(2026, 6, 1, 9)
    for call in (
        lambda: schedule.next_after(naive),
        lambda: schedule.next_fires(naive, 3),
        lambda: schedule.latest_due(naive, utc(2026, 6, 2)),
        lambda: Schedule.parse("@every 1h", anchor=naive),
        lambda: check("0 9 * * *", "", 3, naive),
    ):
        with pytest.raises(ValueError, match="timezone-aware"):
            call()


# -- descriptions ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "timezone", "description"),
    [
        ("0 9 * * 1-5", "Europe/Berlin", "At 09:00, Monday through Friday (Europe/Berlin)"),
        ("0 9 * * MON-FRI", "Europe/Berlin", "At 09:00, Monday through Friday (Europe/Berlin)"),
        ("*/15 * * * *", "", "Every 15 minutes (UTC)"),
        ("30 8 * * *", "America/New_York", "At 08:30 (America/New_York)"),
        ("0 */6 * * *", "", "Every 6 hours (UTC)"),
        ("@hourly", "", "Every hour (UTC)"),
        ("@daily", "Asia/Kolkata", "At 00:00 (Asia/Kolkata)"),
        ("@weekly", "", "At 00:00, only on Sunday (UTC)"),
        ("@every 90m", "Europe/Berlin", "Every 90 minutes"),
        ("@every 1h30m", "", "Every 90 minutes"),
        ("@every 2h", "", "Every 2 hours"),
        ("@every 1d", "", "Every day"),
        ("@every 7d", "", "Every 7 days"),
        ("@every 1m", "", "Every minute"),
        ("@every 90s", "", "Every 90 seconds"),
        ("1 1,1/6,0/3 * * *", "", "On the cron schedule 1 1,1/6,0/3 * * * (UTC)"),
        ("27,29 1/7,0/4 10 * *", "", "On the cron schedule 27,29 1/7,0/4 10 * * (UTC)"),
    ],
)
def test_describe_says_it_in_plain_english(expression, timezone, description):
    assert Schedule.parse(expression, timezone).describe() == description


# -- validateCron ----------------------------------------------------------------------------------------------

NOW = utc(2026, 6, 1, 8, 59, 30)


def test_check_of_a_good_expression_gives_its_description_and_next_fires():
    result = check("0 9 * * 1-5", "Europe/Berlin", 3, NOW)
    assert result == CronCheck(
        valid=True,
        error=None,
        description="At 09:00, Monday through Friday (Europe/Berlin)",
        next_fires=[utc(2026, 6, 2, 7), utc(2026, 6, 3, 7), utc(2026, 6, 4, 7)],  # 09:00 CEST on June 1 has passed
    )


def test_check_counts_every_from_now_as_if_saved_now():
    assert check("@every 45m", "", 2, NOW).next_fires == [NOW + timedelta(minutes=45), NOW + timedelta(minutes=90)]


def test_check_of_a_bad_expression_or_timezone_says_why_without_raising():
    assert check("61 * * * *", "", 5, NOW) == CronCheck(False, "the minute field takes values 0-59", None, [])
    bad_zone = check("0 9 * * *", "Mars/Olympus", 5, NOW)
    assert not bad_zone.valid and bad_zone.error and "timezone" in bad_zone.error


@pytest.mark.parametrize("count", [0, -1, MAX_CHECK_COUNT + 1])
def test_check_refuses_a_count_outside_its_bounds(count):
    with pytest.raises(ValidationError) as refused:
        check("* * * * *", "", count, NOW)
    assert refused.value.field == "count"


def test_check_gives_up_to_fifty_fires():
    assert len(check("* * * * *", "", MAX_CHECK_COUNT, NOW).next_fires) == MAX_CHECK_COUNT


def test_check_never_raises_on_random_input():
    rng = random.Random("check-fuzz")
    alphabet = string.printable + "@*/-,#?LW١é\x00"
    pieces = ["*", "*/", "-", ",", "@every", "@daily", "1", "59", "60", "99999999999", "MON", "JAN", "d", "h", "m", " "]
    for _ in range(3000):
        if rng.random() < 0.5:
            expression = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        else:
            expression = " ".join("".join(rng.choices(pieces, k=rng.randint(1, 3))) for _ in range(rng.randint(1, 6)))
        timezone = rng.choice(["", "UTC", "Europe/Berlin", "Nope/Nope", "\x00", "../x", "Europe"])
        result = check(expression, timezone, rng.randint(1, 5), NOW)
        assert result.valid == (result.error is None)
        assert all(fire > NOW and fire.tzinfo is UTC for fire in result.next_fires)


# -- the shortest interval (what a per-user floor on schedule frequency compares with) -------------------------


@pytest.mark.parametrize(
    ("expression", "shortest"),
    [
        ("* * * * *", timedelta(minutes=1)),
        ("*/15 9-17 * * 1-5", timedelta(minutes=15)),
        ("1,58 * * * *", timedelta(minutes=3)),  # across each hour's turn
        ("0 23,0 * * *", timedelta(hours=1)),  # across midnight
        ("0 9 * * 1-5", timedelta(days=1)),
        ("0 9 * * 1,3,5", timedelta(days=2)),
        ("0 9 * * 1", timedelta(days=7)),
        ("0 0 28,1 2,3 *", timedelta(days=1)),  # 28 February and 1 March, in a year that is not a leap year
        ("0 0 1 1 *", timedelta(days=365)),
        ("0 0 29 2 *", timedelta(days=366 + 365 * 3)),
        ("@hourly", timedelta(hours=1)),
        ("@every 90s", timedelta(seconds=90)),
        ("@every 1h30m", timedelta(minutes=90)),
    ],
)
def test_the_shortest_interval_is_the_least_gap_between_two_fires(expression, shortest):
    assert Schedule.parse(expression).shortest_interval() == shortest


def test_the_shortest_interval_is_never_longer_than_a_gap_the_schedule_really_fires_with():
    # Longer would let a schedule past a frequency floor that it breaks.
    rng = random.Random("shortest-interval")
    for _ in range(150):
        day = utc(2026, rng.randint(1, 12), rng.randint(1, 28))
        cron = random_cron(rng, day)
        schedule = Schedule.parse(cron.text)
        fires = schedule.next_fires(day - timedelta(days=rng.randint(0, 400)), 400)
        observed = min((b - a for a, b in zip(fires, fires[1:], strict=False)), default=None)
        if observed is not None:
            assert schedule.shortest_interval() <= observed, cron.text
