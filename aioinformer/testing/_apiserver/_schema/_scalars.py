"""The scalars the API server decodes with their own rules: times, bytes, int-or-string.

Ports of the behaviour of Go's ``time.Parse`` with ``time.RFC3339`` (``metav1.Time``) and
``RFC3339Micro`` (``metav1.MicroTime``), including the text of its errors for the common
cases, of ``encoding/base64.StdEncoding`` as ``encoding/json`` decodes ``[]byte`` (the
``illegal base64 data at input byte N`` errors), and of the output side: times are printed in
UTC, at second (``Time``) or microsecond (``MicroTime``) precision.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from datetime import UTC, datetime, timedelta, timezone

__all__ = ["ScalarError", "canonical_time", "check_base64", "format_time", "parse_time"]

_RFC3339 = "2006-01-02T15:04:05Z07:00"
_RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
_ELEMENTS = (
    ("2006", r"[0-9]{4}"),
    ("-", "-"),
    ("01", r"[0-9]{2}"),
    ("-", "-"),
    ("02", r"[0-9]{2}"),
    ("T", "T"),
    ("15", r"[0-9]{2}"),
    (":", ":"),
    ("04", r"[0-9]{2}"),
    (":", ":"),
    ("05", r"[0-9]{2}"),
)
_FRACTION = re.compile(r"\.([0-9]+)")
_ZONE = re.compile(r"Z|[+-][0-9]{2}:[0-9]{2}")
_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


class ScalarError(ValueError):
    """A value Go refuses; the message is Go's."""


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_time(value: str, *, micro: bool = False) -> datetime:
    """``time.Parse(time.RFC3339, value)`` (``RFC3339Micro`` with ``micro``).

    :raises ScalarError: ``parsing time "…" as "…": cannot parse "…" as "…"`` and friends.
    """
    layout = _RFC3339_MICRO if micro else _RFC3339
    prefix = f"parsing time {_quote(value)}"
    rest = value
    parts: list[str] = []
    for element, pattern in _ELEMENTS:
        match = re.match(pattern, rest)
        if match is None:
            raise ScalarError(
                f"{prefix} as {_quote(layout)}: cannot parse {_quote(rest)} as {_quote(element)}"
            )
        parts.append(match.group())
        rest = rest[match.end() :]
    fraction = _FRACTION.match(rest)
    digits = ""
    if fraction is not None:
        digits = fraction.group(1)
        rest = rest[fraction.end() :]
    elif micro:
        raise ScalarError(
            f"{prefix} as {_quote(layout)}: cannot parse {_quote(rest)} as {_quote('.000000')}"
        )
    zone = _ZONE.match(rest)
    if zone is None:
        raise ScalarError(
            f"{prefix} as {_quote(layout)}: cannot parse {_quote(rest)} as {_quote('Z07:00')}"
        )
    if rest[zone.end() :]:
        raise ScalarError(f"{prefix}: extra text: {_quote(rest[zone.end() :])}")
    year, month, day, hour, minute, second = (int(parts[i]) for i in (0, 2, 4, 6, 8, 10))
    for name, number, low, high in (
        ("month", month, 1, 12),
        ("hour", hour, 0, 23),
        ("minute", minute, 0, 59),
        ("second", second, 0, 59),
    ):
        if not low <= number <= high:
            raise ScalarError(f"{prefix}: {name} out of range")
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:
        raise ScalarError(f"{prefix}: day out of range") from None
    moment += timedelta(microseconds=int((digits + "000000")[:6]) if digits else 0)
    text = zone.group()
    if text != "Z":
        sign = 1 if text[0] == "+" else -1
        offset = timedelta(hours=int(text[1:3]), minutes=int(text[4:6]))
        moment = moment.replace(tzinfo=timezone(sign * offset))
    return moment.astimezone(UTC)


def format_time(moment: datetime, *, micro: bool = False) -> str:
    """A time as ``metav1.Time`` (UTC, seconds) or ``MicroTime`` (UTC, 6 digits) prints it."""
    moment = moment.astimezone(UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@functools.lru_cache(maxsize=4096)
def canonical_time(value: str, *, micro: bool = False) -> str:
    """A time as the server stores it: :func:`parse_time` then :func:`format_time` (cached:
    the times of one test run repeat, every write decodes every time in the object).

    :raises ScalarError: as :func:`parse_time`.
    """
    return format_time(parse_time(value, micro=micro), micro=micro)


def check_base64(value: str) -> None:
    """``base64.StdEncoding.Decode`` as ``encoding/json`` runs it on a ``[]byte`` field.

    :raises ScalarError: ``illegal base64 data at input byte N`` (Go's offsets).
    """
    data = value.encode()
    index = 0
    length = len(data)
    while index < length:
        count = 0
        while count < 4:
            if index == length:
                if count == 0:
                    return
                raise ScalarError(f"illegal base64 data at input byte {index - count}")
            char = data[index]
            index += 1
            if char in _ALPHABET:
                count += 1
                continue
            if char in b"\r\n":
                continue
            if char != ord("=") or count < 2:
                raise ScalarError(f"illegal base64 data at input byte {index - 1}")
            if count == 2:
                while index < length and data[index] in b"\r\n":
                    index += 1
                if index == length:
                    raise ScalarError(f"illegal base64 data at input byte {length}")
                if data[index] != ord("="):
                    raise ScalarError(f"illegal base64 data at input byte {index - 1}")
                index += 1
            while index < length and data[index] in b"\r\n":
                index += 1
            if index < length:
                raise ScalarError(f"illegal base64 data at input byte {index}")
            return
    try:
        base64.b64decode(data.replace(b"\r", b"").replace(b"\n", b""), validate=True)
    except binascii.Error as error:  # pragma: no cover - the scan above is stricter
        raise ScalarError(str(error)) from None
