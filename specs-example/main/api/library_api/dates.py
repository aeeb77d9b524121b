"""Conversion between the core's day numbers and calendar dates.

The core counts days from 1970-01-01 in the library's local time zone and has
no time of day, so the API exchanges plain ISO dates (``2024-03-01``).
"""

from datetime import date, timedelta

EPOCH = date(1970, 1, 1)


def to_day(value: date) -> int:
    return (value - EPOCH).days


def from_day(day: int) -> date:
    return EPOCH + timedelta(days=day)


def today() -> int:
    return to_day(date.today())
