"""Repeat schedules: five-field cron expressions (minute hour day-of-month month day-of-week,
in UTC), checked and stepped by croniter."""

from __future__ import annotations

from datetime import datetime

from croniter import CroniterBadDateError, CroniterError, croniter
from django.core.exceptions import ValidationError


def parse_cron(expression: str) -> str:
    """A five-field cron expression, checked by croniter (standard cron: when both days are
    restricted, either one fires); returns it with its fields single-spaced."""
    fields = expression.split()
    if len(fields) != 5:
        raise ValidationError({"repeat": "a cron expression has five fields: m h dom mon dow"})
    text = " ".join(fields)
    try:
        croniter(text)
    except (CroniterError, ValueError, TypeError) as exc:
        raise ValidationError({"repeat": f"not a valid cron expression: {exc}"}) from None
    return text


def next_run(expression: str, after: datetime) -> datetime:
    """The first time the cron expression fires after ``after`` (leap days included: ``0 0 29
    2 *`` from 2030 gives 2032-02-29).

    >>> from datetime import timezone
    >>> next_run("0 0 29 2 *", datetime(2030, 1, 1, tzinfo=timezone.utc)).isoformat()
    '2032-02-29T00:00:00+00:00'
    """
    text = parse_cron(expression)
    try:
        moment: datetime = croniter(text, after).get_next(datetime)
    except CroniterBadDateError:
        raise ValidationError({"repeat": "the cron expression never fires"}) from None
    return moment
