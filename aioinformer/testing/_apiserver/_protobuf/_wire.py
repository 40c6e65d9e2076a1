"""The protobuf wire format, and messages decoded into the JSON a Go API server would write.

A message table says, for each field number, the JSON name and the type; this module reads
the wire format (varint, length-delimited, 64- and 32-bit) and builds the dict that
``encoding/json`` produces from the Go struct a real API server decodes the bytes into:

* fields come out in the Go struct's declaration order (the table's order);
* ``omitempty`` fields with a zero value are left out; non-pointer structs are always
  written (``"strategy": {}``, ``"status": {}``) and so are fields without ``omitempty``
  (a missing list or map then is ``null``, as a nil Go slice is);
* pointer fields are written when present on the wire, zero or not (``replicas: 0``);
* ``metav1.Time`` is RFC 3339 in seconds (``null`` when zero), ``MicroTime`` has six
  fractional digits, ``IntOrString`` is a number or a string, ``Quantity`` its string,
  ``[]byte`` base64, ``FieldsV1`` the JSON object it holds.

Unknown field numbers are skipped, as gogo-protobuf's generated ``Unmarshal`` skips them.

Table syntax (one block per API package, see ``_protobuf_core``): ``Name: field, …`` with
each field ``NUMBER JSON-NAME TYPE``; ``-`` as the name marks an embedded struct whose fields
are inlined. TYPE is a scalar (``s`` string, ``y`` bytes, ``i`` integer, ``b`` bool, ``f``
double), a special type (``T`` Time, ``MT`` MicroTime, ``F1`` FieldsV1, ``IS`` IntOrString,
``Q`` Quantity, ``XV`` an ``ExtraValue``: a message of repeated strings, a JSON list) or a
message name (``meta.ObjectMeta``; unqualified names are in the block's package), wrapped
in ``[…]`` for a repeated field or ``{…}`` for a ``map<string, …>``, followed by flags:
``*`` pointer (kept when present), ``!`` written even when zero or absent, ``^`` inlined.
"""

from __future__ import annotations

import base64
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

__all__ = ["ProtobufError", "decode_message", "iter_fields", "read_varint", "register"]

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5
_SCALARS = frozenset({"s", "y", "i", "b", "f"})
_SPECIAL = frozenset({"T", "MT", "F1", "IS", "Q", "XV"})
#: Go's zero ``time.Time`` in Unix seconds (0001-01-01T00:00:00Z).
_ZERO_TIME = -62135596800
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class ProtobufError(ValueError):
    """Bytes that are not a valid encoding of the expected message (gogo's wording)."""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at ``pos`` and the position after it."""
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("unexpected EOF")
        byte = data[pos]
        pos += 1
        if shift >= 64:
            raise ProtobufError("proto: integer overflow")
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7


def _signed(value: int) -> int:
    """A varint read as Go's int64 (int32 values are sign-extended to 64 bits on the wire)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def iter_fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """``(number, wire type, value)`` per field: an int, or bytes for length-delimited."""
    pos = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number <= 0:
            raise ProtobufError(f"proto: illegal tag {number} (wire type {wire})")
        value: int | bytes
        if wire == VARINT:
            value, pos = read_varint(data, pos)
        elif wire == BYTES:
            length, pos = read_varint(data, pos)
            if length > len(data) - pos:
                raise ProtobufError("unexpected EOF")
            value, pos = data[pos : pos + length], pos + length
        elif wire in (FIXED64, FIXED32):
            size = 8 if wire == FIXED64 else 4
            if pos + size > len(data):
                raise ProtobufError("unexpected EOF")
            value, pos = int.from_bytes(data[pos : pos + size], "little"), pos + size
        else:
            raise ProtobufError(f"proto: illegal wireType {wire}")
        yield number, wire, value


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message table."""

    number: int
    name: str
    type: str
    repeated: bool = False
    map: bool = False
    pointer: bool = False
    keep: bool = False
    inline: bool = False


#: Message name (``core.Container``) → its fields in declaration order.
MESSAGES: dict[str, tuple[Field, ...]] = {}
_FIELD = re.compile(r"^(\d+) (\S+) ([\[{]?)([\w.]+)[\]}]?([!*^]*)$")


def register(package: str, text: str) -> None:
    """Add the message tables of one package (``core``, ``apps``, ``meta``…) from ``text``."""
    for block in re.split(r"\n(?=\S)", text.strip()):
        if block.startswith("#"):
            continue
        name, _, body = block.partition(":")
        fields = []
        for spec in " ".join(body.split()).split(", "):
            match = _FIELD.match(spec)
            if match is None:
                raise ValueError(f"bad field {spec!r} in {package}.{name}")
            number, json_name, wrapper, base, flags = match.groups()
            if base not in _SCALARS and base not in _SPECIAL and "." not in base:
                base = f"{package}.{base}"
            fields.append(
                Field(
                    int(number),
                    json_name,
                    base,
                    repeated=wrapper == "[",
                    map=wrapper == "{",
                    pointer="*" in flags,
                    keep="!" in flags,
                    inline="^" in flags,
                )
            )
        MESSAGES[f"{package}.{name.strip()}"] = tuple(fields)


def _time(data: bytes, *, micro: bool) -> str | None:
    if not data:
        return None
    seconds = nanos = 0
    for number, _, value in iter_fields(data):
        if number == 1 and isinstance(value, int):
            seconds = _signed(value)
        elif number == 2 and isinstance(value, int):
            nanos = _signed(value)
    if not micro:
        nanos = 0  # metav1.Time keeps seconds only (time_proto.go)
    if seconds == _ZERO_TIME and nanos == 0:
        return None
    moment = _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{moment.microsecond:06d}Z" if micro else f"{text}Z"


def _int_or_string(data: bytes) -> int | str:
    kind, number, text = 0, 0, ""
    for field, _, value in iter_fields(data):
        if field == 1 and isinstance(value, int):
            kind = _signed(value)
        elif field == 2 and isinstance(value, int):
            number = _signed(value)
        elif field == 3 and isinstance(value, bytes):
            text = value.decode()
    return text if kind == 1 else number


def _single_bytes(data: bytes) -> bytes | None:
    """The bytes of field 1 (Quantity's string, FieldsV1's raw JSON), None when absent."""
    found = None
    for field, _, value in iter_fields(data):
        if field == 1 and isinstance(value, bytes):
            found = value
    return found


def _special(kind: str, data: bytes) -> Any:
    if kind in ("T", "MT"):
        return _time(data, micro=kind == "MT")
    if kind == "IS":
        return _int_or_string(data)
    if kind == "XV":
        return [v.decode() for n, _, v in iter_fields(data) if n == 1 and isinstance(v, bytes)]
    raw = _single_bytes(data)
    if kind == "Q":
        return "0" if raw is None else raw.decode()
    return None if raw is None else orjson.loads(raw)  # FieldsV1


def _zero(field: Field) -> Any:
    """The JSON of a Go zero value (an absent field that is written anyway)."""
    if field.repeated or field.map or field.type in ("y", "F1", "T", "MT"):
        return None
    if field.type in _SCALARS:
        return {"s": "", "i": 0, "b": False, "f": 0.0}[field.type]
    return _value(field, b"")


def _is_zero(value: Any) -> bool:
    """Whether ``omitempty`` leaves the value out (``""``, 0, false, empty list or map)."""
    return not value


def _value(field: Field, raw: int | bytes) -> Any:
    kind = field.type
    if kind == "i" and isinstance(raw, int):
        return _signed(raw)
    if kind == "b" and isinstance(raw, int):
        return raw != 0
    if kind == "f" and isinstance(raw, int):
        value: float = struct.unpack("<d", raw.to_bytes(8, "little"))[0]
        return value
    if not isinstance(raw, bytes):
        raise ProtobufError(f"proto: wrong wireType for field {field.name}")
    if kind == "s":
        return raw.decode()
    if kind == "y":
        return base64.b64encode(raw).decode()
    if kind in _SPECIAL:
        return _special(kind, raw)
    return decode_message(kind, raw)


def _expected_wire(field: Field) -> int:
    if field.map or field.type not in ("i", "b", "f"):
        return BYTES
    return FIXED64 if field.type == "f" else VARINT


def _unpack(field: Field, data: bytes) -> list[int]:
    """A packed repeated scalar field (accepted as proto2 parsers do)."""
    values: list[int] = []
    pos = 0
    while pos < len(data):
        if field.type == "f":
            values.append(int.from_bytes(data[pos : pos + 8], "little"))
            pos += 8
        else:
            value, pos = read_varint(data, pos)
            values.append(value)
    return values


def _map_entry(field: Field, data: bytes) -> tuple[str, Any]:
    key, value = "", None
    for number, _, raw in iter_fields(data):
        if number == 1 and isinstance(raw, bytes):
            key = raw.decode()
        elif number == 2:
            value = _value(field, raw)
    if value is None:
        value = _zero(Field(2, field.name, field.type))
    return key, value


def decode_message(name: str, data: bytes) -> dict[str, Any]:
    """Decode the message ``name`` (``apps.Deployment``) into its JSON-shaped dict.

    :raises ProtobufError: when ``data`` is not a valid encoding of the message.
    """
    try:
        return _decode(MESSAGES[name], data)
    except UnicodeDecodeError:
        raise ProtobufError(f"proto: invalid UTF-8 in a string of {name}") from None


def _decode(fields: tuple[Field, ...], data: bytes) -> dict[str, Any]:
    by_number = {f.number: f for f in fields}
    found: dict[int, Any] = {}
    for number, wire, raw in iter_fields(data):
        field = by_number.get(number)
        if field is None:
            continue
        if wire != _expected_wire(field) and not (field.repeated and wire == BYTES):
            raise ProtobufError(f"proto: wrong wireType = {wire} for field {field.name}")
        if field.map:
            key, entry = _map_entry(field, raw if isinstance(raw, bytes) else b"")
            found.setdefault(number, {})[key] = entry
        elif field.repeated:
            items = found.setdefault(number, [])
            if wire == BYTES and field.type in ("i", "b", "f") and isinstance(raw, bytes):
                items.extend(_value(field, v) for v in _unpack(field, raw))
            else:
                items.append(_value(field, raw))
        elif isinstance(raw, bytes) and field.type not in _SCALARS:
            found[number] = found.get(number, b"") + raw  # proto merges repeated messages
        else:
            found[number] = raw
    out: dict[str, Any] = {}
    for field in fields:
        present = field.number in found
        value: Any = found.get(field.number)
        if present and not (field.map or field.repeated):
            value = _value(field, found[field.number])
        if field.inline:
            out.update(value if present else _value(field, b""))
        elif present:
            if field.pointer or field.keep or not _is_zero(value):
                out[field.name] = value
        elif field.pointer:
            if field.keep:
                out[field.name] = None
        elif field.keep:
            out[field.name] = _zero(field)
    return out
