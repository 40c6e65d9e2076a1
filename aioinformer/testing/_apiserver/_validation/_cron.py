"""Cron schedules as the API server checks a CronJob's ``spec.schedule``.

The server parses schedules with robfig/cron v3's ``ParseStandard``: five fields (minute,
hour, day of month, month, day of week; names like ``jan``/``mon`` allowed), lists, ranges
and steps, or a descriptor (``@hourly``, ``@every 5m``, …). :func:`schedule_error` returns
that parser's error text for a bad schedule, which the server shows after
``spec.schedule: Invalid value: "<schedule>": ``.
"""

from __future__ import annotations

import re
import zoneinfo

__all__ = ["schedule_error", "time_zone_error"]

_MONTHS = {
    name: i + 1
    for i, name in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_DAYS = {name: i for i, name in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
# (min, max, names) per field, in order
_BOUNDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, _MONTHS),
    (0, 6, _DAYS),
)
_DESCRIPTORS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_DURATION = re.compile(r"[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+\Z")


class _CronError(Exception):
    pass


def _atoi(text: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise _CronError(
            f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax'
        )
    number = int(text)
    if not -(2**63) <= number < 2**63:
        raise _CronError(
            f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": value out of range'
        )
    if number < 0:
        raise _CronError(f"negative number ({number}) not allowed: {text}")
    return number


def _int_or_name(text: str, names: dict[str, int]) -> int:
    found = names.get(text.lower())
    return found if found is not None else _atoi(text)


def _range(expr: str, low: int, high: int, names: dict[str, int]) -> None:
    range_and_step = expr.split("/")
    bounds = range_and_step[0].split("-")
    if bounds[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _int_or_name(bounds[0], names)
        if len(bounds) == 1:
            end = start
        elif len(bounds) == 2:
            end = _int_or_name(bounds[1], names)
        else:
            raise _CronError(f"too many hyphens: {expr}")
    step = 1
    if len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if len(bounds) == 1:
            end = high
    elif len(range_and_step) > 2:
        raise _CronError(f"too many slashes: {expr}")
    if start < low:
        raise _CronError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise _CronError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise _CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise _CronError(f"step of range should be a positive number: {expr}")


def _descriptor(spec: str) -> None:
    if spec in _DESCRIPTORS:
        return
    if spec.startswith("@every "):
        duration = spec[len("@every ") :]
        if not _DURATION.match(duration) and duration != "0":
            raise _CronError(
                f'failed to parse duration {spec}: time: invalid duration "{duration}"'
            )
        return
    raise _CronError(f"unrecognized descriptor: {spec}")


def schedule_error(spec: str) -> str:
    """robfig/cron ``ParseStandard``'s error for ``spec``, or ``""`` when it parses."""
    try:
        if not spec:
            raise _CronError("empty spec string")
        if spec.startswith(("TZ=", "CRON_TZ=")):
            head, _, rest = spec.partition(" ")
            zone = head.partition("=")[2]
            if time_zone_error(zone):
                raise _CronError(f"provided bad location {zone}: unknown time zone {zone}")
            spec = rest.strip()
        if spec.startswith("@"):
            _descriptor(spec)
            return ""
        fields = spec.split()
        if len(fields) != 5:
            shown = "[" + " ".join(fields) + "]"
            raise _CronError(f"expected exactly 5 fields, found {len(fields)}: {shown}")
        for text, (low, high, names) in zip(fields, _BOUNDS, strict=True):
            for expr in (part for part in text.split(",") if part):
                _range(expr, low, high, names)
    except _CronError as error:
        return str(error)
    return ""


_ZONE_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}\Z")


def time_zone_error(zone: str) -> str:
    """Why ``spec.timeZone`` is not a time zone (``validateTimeZone``), or ``""``."""
    if not zone:
        return "timeZone must be nil or non-empty string"
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _ZONE_PART.match(part):
            return f"unknown time zone {zone}"
    if zone.lower() == "local":
        return (
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
        )
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return f"unknown time zone {zone}"
    return ""
