"""Watch-stream framing and decoding (``aioinformer._wire._framing``).

The wire format is the API server's: JSON lines ``{"type":...,"object":...}`` separated by
``\\n`` (``k8s.io/apimachinery/pkg/watch`` over ``streaming.NewEncoder``; a proxy may add
``\\r``), chunked arbitrarily by the transport.
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aioinformer._listwatch import WatchEventType
from aioinformer._wire._framing import LineFramer, WatchDecoder, decode_event
from aioinformer.errors import MalformedWatchEventError

Item = bytes | MalformedWatchEventError


def feed_all(framer: LineFramer, chunks: list[bytes]) -> list[Item]:
    out: list[Item] = []
    for chunk in chunks:
        out += framer.feed(chunk)
    return out + framer.finish()


def shown(items: list[Item]) -> list[bytes | str]:
    """Lines as they are, errors as their reason (for comparisons)."""
    return [item.reason if isinstance(item, MalformedWatchEventError) else item for item in items]


TOO_LARGE = "event larger than max_event_size (10 bytes) skipped"


def line(event_type: str, obj: Any) -> bytes:
    return b'{"type":"' + event_type.encode() + b'","object":' + orjson.dumps(obj) + b"}"


# -- LineFramer ------------------------------------------------------------------------------


def test_a_chunk_of_whole_lines_gives_every_line_in_order() -> None:
    """Lines inside one chunk come out in order, without their line breaks."""
    framer = LineFramer(max_line_size=100)
    assert framer.feed(b"one\ntwo\nthree\n") == [b"one", b"two", b"three"]
    assert framer.finish() == []


def test_a_line_split_across_chunks_is_joined_once_it_ends() -> None:
    """The unterminated tail of a chunk is carried until a later chunk ends it."""
    framer = LineFramer(max_line_size=100)
    assert framer.feed(b"one\ntw") == [b"one"]
    assert framer.pending == 2
    assert framer.feed(b"o-and-") == []
    assert framer.feed(b"more") == []
    assert framer.feed(b"\nthree\nfo") == [b"two-and-more", b"three"]
    assert framer.feed(b"ur\n") == [b"four"]
    assert framer.pending == 0


def test_blank_lines_are_skipped_and_crlf_lines_keep_their_carriage_return() -> None:
    """Empty and whitespace-only lines (``\\r\\n`` included) are skipped; a CRLF line keeps its
    ``\\r``, which JSON treats as whitespace."""
    framer = LineFramer(max_line_size=100)
    assert feed_all(framer, [b"\n\na\r\n\r\n  \nb\n\n", b"\r", b"\nc"]) == [b"a\r", b"b", b"c"]


def test_the_last_line_without_a_line_break_is_given_at_the_end() -> None:
    """finish() gives the unterminated last line (if not blank) and forgets it."""
    framer = LineFramer(max_line_size=100)
    assert framer.feed(b"a\nlast") == [b"a"]
    assert framer.finish() == [b"last"]
    assert framer.finish() == []
    framer.feed(b"  ")
    assert framer.finish() == []


def test_a_line_over_the_limit_in_one_chunk_becomes_an_error_in_its_place() -> None:
    """A too-long line is replaced by a MalformedWatchEventError; the lines around it stay."""
    framer = LineFramer(max_line_size=10)
    items = framer.feed(b"short\n" + b"x" * 11 + b"\nexactly-10\nend\n")
    assert shown(items) == [b"short", TOO_LARGE, b"exactly-10", b"end"]


def test_a_line_over_the_limit_across_chunks_is_dropped_as_it_streams_by() -> None:
    """A too-long line spanning chunks is not kept while it streams: one error when it ends,
    and the lines before and after it come out."""
    framer = LineFramer(max_line_size=10)
    items = framer.feed(b"a\n" + b"x" * 8)
    items += framer.feed(b"x" * 8)
    assert framer.pending == 0
    items += framer.feed(b"x" * 100)
    items += framer.feed(b"x\nb\n")
    assert shown(items) == [b"a", TOO_LARGE, b"b"]


def test_a_line_over_the_limit_made_of_a_tail_and_its_end_is_an_error() -> None:
    """A carried tail under the limit plus the start of the next chunk over it: an error."""
    framer = LineFramer(max_line_size=10)
    items = framer.feed(b"a\n123456")
    items += framer.feed(b"78901\nb\n")
    assert shown(items) == [b"a", TOO_LARGE, b"b"]


def test_a_line_over_the_limit_at_the_end_of_the_stream_is_reported() -> None:
    """finish() reports a too-long unterminated last line as an error."""
    framer = LineFramer(max_line_size=10)
    assert framer.feed(b"a\n" + b"x" * 20) == [b"a"]
    assert shown(framer.finish()) == [TOO_LARGE]


def test_the_limit_must_be_positive() -> None:
    """A limit under one byte is a configuration error."""
    with pytest.raises(ValueError):
        LineFramer(max_line_size=0)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    crlf=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=500), max_size=12),
    limit=st.integers(min_value=1, max_value=40),
)
def test_any_chunking_gives_the_lines_of_the_whole_stream(
    lines: list[bytes], crlf: bool, cuts: list[int], limit: int
) -> None:
    """However the stream is cut into chunks, the framer gives what splitting the whole
    stream gives: the non-blank lines, each over the limit replaced by one error."""
    stream = b"".join(line + (b"\r\n" if crlf else b"\n") for line in lines)
    points = sorted({0, len(stream), *(c for c in cuts if c < len(stream))})
    chunks = [stream[a:b] for a, b in itertools.pairwise(points)]
    expected: list[bytes | str] = []
    for part in stream.split(b"\n"):
        if len(part) > limit:
            expected.append(f"event larger than max_event_size ({limit} bytes) skipped")
        elif part.strip():
            expected.append(part)
    assert shown(feed_all(LineFramer(max_line_size=limit), chunks)) == expected


# -- decode_event ----------------------------------------------------------------------------


@pytest.mark.parametrize("event_type", list(WatchEventType))
def test_the_api_servers_shape_gives_the_objects_exact_json(event_type: WatchEventType) -> None:
    """``{"type":T,"object":O}`` decodes to (T, O, raw) with raw the exact bytes of O in the
    line, for every event type."""
    obj = {"metadata": {"name": "a", "resourceVersion": "7"}, "spec": {"x": [1, 2.5, None]}}
    decoded_type, decoded, raw = decode_event(line(event_type.value, obj))
    assert decoded_type is event_type
    assert decoded == obj
    assert raw == orjson.dumps(obj)


def test_a_crlf_line_gives_the_json_without_the_carriage_return() -> None:
    """A trailing ``\\r`` is not part of the object's bytes."""
    assert decode_event(line("ADDED", {"a": 1}) + b"\r") == ("ADDED", {"a": 1}, b'{"a":1}')


@pytest.mark.parametrize(
    ("text", "expected_type", "expected_object"),
    [
        # another member after the object
        (b'{"type":"ADDED","object":{"a":1},"extra":true}', "ADDED", {"a": 1}),
        # a duplicate member: the slice would not be the object orjson keeps
        (b'{"type":"ADDED","object":{"a":1},"object":{"b":2}}', "ADDED", {"b": 2}),
        # members in the other order, or spaced
        (b'{"object":{"a":1},"type":"MODIFIED"}', "MODIFIED", {"a": 1}),
        (b'{ "type": "ADDED", "object": {"a": 1} }', "ADDED", {"a": 1}),
        # a type written with an escape, or unknown to this client
        (b'{"type":"ADD\\u0045D","object":{"a":1}}', "ADDED", {"a": 1}),
        (b'{"type":"SOMETHING","object":{"a":1}}', "SOMETHING", {"a": 1}),
    ],
)
def test_other_shapes_are_decoded_whole_without_a_slice(
    text: bytes, expected_type: str, expected_object: dict[str, Any]
) -> None:
    """A line of any other shape is decoded as a whole (orjson's reading of it) and gives no
    slice, so nothing but the object's own encoding is ever stored."""
    event_type, obj, raw = decode_event(text)
    assert (event_type, obj, raw) == (expected_type, expected_object, None)
    if expected_type == "ADDED":
        assert event_type is WatchEventType.ADDED


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b'{"type":"ADDED","object":{"a":', "not JSON"),
        (b"nonsense", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"type":"ADDED"}', "missing 'type' or 'object'"),
        (b'{"type":"ADDED","object":[1]}', "missing 'type' or 'object'"),
        (b'{"type":7,"object":{}}', "missing 'type' or 'object'"),
    ],
)
def test_an_undecodable_line_is_a_malformed_event_error(text: bytes, reason: str) -> None:
    """Lines that are not watch events raise MalformedWatchEventError with the line's start."""
    with pytest.raises(MalformedWatchEventError) as caught:
        decode_event(text)
    assert caught.value.reason.startswith(reason)
    assert caught.value.line == text[:200]


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(
    event_type=st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "X"]),
    obj=st.dictionaries(st.text(max_size=5), JSON, max_size=4),
    extra=st.sampled_from([b"", b',"extra":1', b',"object":{}', b" ", b"\r"]),
)
def test_the_slice_when_given_is_the_encoding_of_the_decoded_object(
    event_type: str, obj: dict[str, Any], extra: bytes
) -> None:
    """Whatever the line, decode_event agrees with decoding it whole, and a slice it returns
    decodes to the very object returned."""
    text = b'{"type":"' + event_type.encode() + b'","object":' + orjson.dumps(obj) + extra
    text += b"}" if extra != b"\r" else b"}\r"
    whole = orjson.loads(text)
    decoded_type, decoded, raw = decode_event(text)
    assert (decoded_type, decoded) == (whole["type"], whole["object"])
    if raw is not None:
        assert orjson.loads(raw) == decoded
    assert (raw is not None) == (extra in (b"", b" ", b"\r") and event_type != "X")


# -- WatchDecoder ----------------------------------------------------------------------------


def test_the_decoder_gives_events_and_errors_in_stream_order() -> None:
    """Chunks in, decoded events out; an undecodable or too-long line comes as its error in
    its place, and the events after it still come."""
    decoder = WatchDecoder(max_event_size=60)
    stream = b"".join(
        [
            line("ADDED", {"n": 1}) + b"\n",
            b"garbage\n",
            line("MODIFIED", {"n": "x" * 80}) + b"\n",
            line("DELETED", {"n": 3}),
        ]
    )
    items = decoder.feed(stream[:30]) + decoder.feed(stream[30:]) + decoder.finish()
    assert items[0] == ("ADDED", {"n": 1}, b'{"n":1}')
    assert isinstance(items[1], MalformedWatchEventError)
    assert items[1].reason.startswith("not JSON")
    assert isinstance(items[2], MalformedWatchEventError)
    assert items[2].reason == "event larger than max_event_size (60 bytes) skipped"
    assert items[3] == ("DELETED", {"n": 3}, b'{"n":3}')
    assert len(items) == 4
