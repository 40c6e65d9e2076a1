"""Resource quantities (``resource.Quantity``) as the API server parses and prints them.

A port of the behaviour of apimachinery's ``pkg/api/resource/quantity.go``: a quantity is a
signed decimal number with an optional suffix, binary (``Ki`` … ``Ei``), decimal SI (``n``,
``u``, ``m``, ``k``, ``M`` … ``E``) or an exponent (``e3``, ``E-2``). Values below one nano
are rounded up; a stored quantity is printed in canonical form: decimal SI with the largest
exponent (a multiple of 3) that leaves an integer mantissa (``0.5`` → ``500m``, ``2000`` →
``2k``), binary SI with the largest power of 1024 when the value is a whole number of bytes
(``1024Mi`` → ``1Gi``, else decimal SI), exponent form alike (``12000e3`` → ``12e6``).
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

__all__ = [
    "QuantityError",
    "canonical",
    "canonical_text",
    "parse_quantity",
    "quantity_value",
    "round_up",
    "rounded_text",
]

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SHAPE = re.compile(r"([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)\Z")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z")
_EXPONENT = re.compile(r"[eE][-+]?[0-9]+\Z")
BINARY_SI, DECIMAL_SI, DECIMAL_EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"

#: The messages of ``ErrFormatWrong``, ``ErrNumeric`` and ``ErrSuffix``.
FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
NUMERIC = "unable to parse numeric part of quantity"
SUFFIX = "unable to parse quantity's suffix"


class QuantityError(ValueError):
    """A string that is not a quantity (the message is the real one)."""


def parse_quantity(text: str) -> tuple[Fraction, str]:
    """The value and format of a quantity.

    :raises QuantityError: with the real server's message.
    """
    text = text.strip()
    match = _SHAPE.match(text)
    if not text or match is None:
        raise QuantityError(FORMAT_WRONG)
    number, suffix = match.groups()
    # the numeric part may have swallowed an exponent's digits: split at the suffix letters
    if not _NUMBER.match(number):
        raise QuantityError(NUMERIC)
    value = Fraction(number.lstrip("+"))
    if suffix in _BINARY:
        value *= 2 ** _BINARY[suffix]
        form = BINARY_SI
    elif suffix in _DECIMAL:
        value *= Fraction(10) ** _DECIMAL[suffix]
        form = DECIMAL_SI
    elif _EXPONENT.match(suffix):
        value *= Fraction(10) ** int(suffix[1:])
        form = DECIMAL_EXPONENT
    else:
        raise QuantityError(SUFFIX)
    return round_up(value, -9), form


def round_up(value: Fraction, scale: int) -> Fraction:
    """The value rounded away from zero to a multiple of ``10**scale`` (``RoundUp``)."""
    unit = Fraction(10) ** scale
    steps = value / unit
    whole = math.ceil(steps) if value >= 0 else math.floor(steps)
    return whole * unit


def _decimal(value: Fraction, exponent_form: bool) -> str:
    sign = "-" if value < 0 else ""
    value = abs(value)
    exponent = 0
    while value.denominator != 1:
        value *= 1000
        exponent -= 3
    mantissa = int(value)
    while mantissa and mantissa % 1000 == 0 and exponent < 18:
        mantissa //= 1000
        exponent += 3
    if mantissa == 0:
        return "0"
    if exponent_form:
        suffix = f"e{exponent}" if exponent else ""
    else:
        suffix = next(k for k, v in _DECIMAL.items() if v == exponent)
    return f"{sign}{mantissa}{suffix}"


def canonical(value: Fraction, form: str) -> str:
    """The canonical spelling of a quantity (``Quantity.String``)."""
    if form == BINARY_SI and value.denominator == 1 and value != 0:
        sign = "-" if value < 0 else ""
        mantissa, power = abs(int(value)), 0
        while mantissa % 1024 == 0 and power < 60:
            mantissa //= 1024
            power += 10
        if power == 0:
            return _decimal(value, False)
        suffix = next(k for k, v in _BINARY.items() if v == power)
        return f"{sign}{mantissa}{suffix}"
    return _decimal(value, form == DECIMAL_EXPONENT)


@functools.lru_cache(maxsize=4096)
def _cached(text: str, scale: int) -> tuple[bool, str]:
    try:
        value, form = parse_quantity(text)
    except QuantityError as error:
        return False, str(error)
    if scale != -9:
        value = round_up(value, scale)
    return True, canonical(value, form)


def canonical_text(text: str) -> str:
    """A quantity's canonical spelling (cached: the same few quantities recur).

    :raises QuantityError: for what is not a quantity.
    """
    ok, result = _cached(text, -9)
    if not ok:
        raise QuantityError(result)
    return result


def rounded_text(text: str) -> str:
    """A resource list's quantity: rounded up to milli-units, canonical
    (``SetDefaults_ResourceList``); the text itself when it is not a quantity."""
    ok, result = _cached(text, -3)
    return result if ok else text


@functools.lru_cache(maxsize=4096)
def quantity_value(text: str) -> Fraction | None:
    """The value of a quantity, None when the text is not one (cached)."""
    try:
        return parse_quantity(text)[0]
    except QuantityError:
        return None
