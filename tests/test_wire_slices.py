"""The wire-slice decoder (``aioinformer._wire._slices``) against the dict path as the oracle.

The oracle is the library's own dict decoding: ``orjson.loads`` of the whole page or line,
``list_result_from_body``'s kind/apiVersion fill, ``_framing.decode_event`` and
``object_problem``; what the splitter gives must be what the dict path gives (or, for the
documented divergences, what the module docstring says).
"""

from __future__ import annotations

import gc
import json
import random
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from aioinformer._listwatch import list_result_from_body
from aioinformer._objects import (
    meta_namespace_key,
    namespace_of,
    object_problem,
    try_resource_version,
)
from aioinformer._wire._framing import decode_event
from aioinformer._wire._slices import (
    MISSING,
    FieldSet,
    UndecodableBodyError,
    WireDecoder,
    WireEvent,
    WireObject,
    cachable,
    decode_many,
    gc_paused,
    loads,
)
from aioinformer.errors import MalformedWatchEventError

from .pods import PodEncoder, list_body, make_pod, watch_line

FIELDS = FieldSet.of(
    "spec.nodeName",
    ("metadata", "annotations"),
    ("metadata", "labels", "app"),
    "status.phase",
    "metadata.namespace",
    "spec",  # a whole subtree as a leaf
    "spec.template.x",  # under the leaf above: read from its value
    labels=True,
)


# -- the oracle ----------------------------------------------------------------------------------


def walk(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(obj, dict) or part not in obj:
            return MISSING
        obj = obj[part]
    return obj


def oracle_items(page: bytes) -> tuple[list[Any], list[Any]]:
    """(today's filled items, the raw decoded items) of a page orjson accepts."""
    decoded = orjson.loads(page)
    raw_items = orjson.loads(page).get("items") or []
    items = decoded.get("items") or []
    kind = decoded.get("kind")
    item_kind = kind[:-4] if isinstance(kind, str) and kind.endswith("List") else None
    api = decoded.get("apiVersion")
    api = api if isinstance(api, str) else None
    for item in items:
        if not isinstance(item, dict):
            continue  # today's fill raises TypeError here (see NOTES: a bug, not kept)
        if item_kind and "kind" not in item:
            item["kind"] = item_kind
        if api and "apiVersion" not in item:
            item["apiVersion"] = api
    return items, raw_items


def same(a: Any, b: Any) -> bool:
    """``a == b`` for decoded JSON, without recursion (values nested 1000 levels deep)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if list(x) != list(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif x != y:
            return False
    return True


def depth(value: Any) -> int:
    """Nesting depth of a decoded JSON value (iterative)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in node)
    return deepest


def expected_extras(fields: FieldSet, item: dict[str, Any]) -> tuple[Any, ...]:
    meta = item["metadata"]
    builtins = {
        "name": meta["name"],
        "namespace": meta.get("namespace") or "",
        "resourceVersion": meta.get("resourceVersion") or "",
        "uid": meta["uid"] if isinstance(meta.get("uid"), str) else "",
    }
    out = []
    for path in fields.paths:
        if path[0] == "metadata" and len(path) > 1 and path[1] in builtins:
            out.append(walk(builtins[path[1]], path[2:]))
        elif fields.labels and path[:2] == ("metadata", "labels"):
            labels = meta.get("labels")
            out.append(walk(labels, path[2:]) if isinstance(labels, dict) else MISSING)
        else:
            out.append(walk(item, path))
    return tuple(out)


def check_wire(wire: WireObject, item: dict[str, Any], fields: FieldSet) -> None:
    """``wire`` carries ``item`` (today's dict) exactly."""
    decoded = orjson.loads(wire.data)
    assert same(decoded, item)  # key order too (kind/apiVersion appended at the end)
    assert same(wire.decode(), item)
    assert wire.key == meta_namespace_key(item)
    assert wire.namespace == namespace_of(item)
    assert wire.name == item["metadata"]["name"]
    assert wire.resource_version == try_resource_version(item)
    uid = item["metadata"].get("uid")
    assert wire.uid == (uid if isinstance(uid, str) else "")
    if fields.labels:
        labels = item["metadata"].get("labels")
        assert wire.labels == (labels if isinstance(labels, dict) else None)
    else:
        assert wire.labels is None
    assert wire.extras == expected_extras(fields, item)


_DECODERS: dict[FieldSet, WireDecoder] = {}


def decoder_for(fields: FieldSet) -> WireDecoder:
    decoder = _DECODERS.get(fields)
    if decoder is None:
        decoder = _DECODERS[fields] = WireDecoder(fields)
    return decoder


def check_page(page: bytes, fields: FieldSet = FIELDS) -> None:
    """The splitter agrees with today's decoding of ``page`` (which orjson accepts)."""
    decoder = decoder_for(fields)
    try:
        today = list_result_from_body(orjson.loads(page))
    except ValueError:
        with pytest.raises(UndecodableBodyError, match="unexpected response"):
            decoder.split_list(page)
        return
    except (TypeError, AttributeError):
        today = None  # today's code crashes on this page (non-dict items or metadata)
    items, raw_items = oracle_items(page)
    result = decoder.split_list(page)
    if today is not None:
        assert result.resource_version == today.resource_version
        assert result.continue_token == today.continue_token
        assert result.remaining_item_count == today.remaining_item_count
        assert result.shard_info == today.shard_info
    storable = [object_problem(item) is None and depth(item) < 900 for item in items]
    valid = [(i, item) for i, item in enumerate(items) if storable[i]]
    invalid = [(i, raw_items[i]) for i, item in enumerate(items) if not storable[i]]
    assert [i.position for i in result.invalid] == [i for i, _ in invalid]
    assert len(result.invalid) == len(invalid)
    for got, (_, doc) in zip(result.invalid, invalid, strict=True):
        assert same(got.document, doc)
    assert len(result.items) == len(valid)
    for wire, (_, item) in zip(result.items, valid, strict=True):
        check_wire(wire, item, fields)


def check_line(line: bytes, fields: FieldSet = FIELDS) -> None:
    """The decoder agrees with ``decode_event`` and today's checks on ``line``."""
    decoder = decoder_for(fields)
    try:
        event = decode_event(line)
    except MalformedWatchEventError as exc:
        with pytest.raises(MalformedWatchEventError) as caught:
            decoder.decode_line(line)
        assert caught.value.reason == exc.reason
        return
    got = decoder.decode_line(line)
    assert got.type == event.type
    change = event.type in ("ADDED", "MODIFIED", "DELETED")
    if change and object_problem(event.object) is None:
        assert got.object is not None and got.document is None
        check_wire(got.object, event.object, fields)
        if event.raw is not None:
            assert got.object.data == event.raw  # the very same slice
    else:
        assert got.object is None
        assert got.document == event.object


# -- JSON text with every escape and spacing the wire may use --------------------------------------


def _string(text: str, rnd: random.Random) -> str:
    out = ['"']
    for char in text:
        code = ord(char)
        short = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b"}
        roll = rnd.random()
        if char in short and roll < 0.7:
            out.append(short[char])
        elif code < 0x20 or char in '"\\' or roll < 0.3:
            if code > 0xFFFF:
                code -= 0x10000
                out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04X}")
            else:
                out.append(f"\\u{code:04x}" if rnd.random() < 0.5 else f"\\u{code:04X}")
        elif char == "/" and roll < 0.6:
            out.append("\\/")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def to_json(value: Any, rnd: random.Random, *, newlines: bool = True) -> str:
    """``value`` as JSON with random escapes and whitespace (parses back to ``value``)."""

    def ws() -> str:
        roll = rnd.random()
        if roll < 0.8:
            return ""
        return rnd.choice([" ", "  ", "\t", "\r\n", "\n "] if newlines else [" ", "\t", "  "])

    if isinstance(value, dict):
        members = [
            f"{ws()}{_string(k, rnd)}{ws()}:{ws()}{to_json(v, rnd, newlines=newlines)}{ws()}"
            for k, v in value.items()
        ]
        return "{" + ",".join(members) + ws() + "}"
    if isinstance(value, list):
        return (
            "["
            + ",".join(ws() + to_json(v, rnd, newlines=newlines) + ws() for v in value)
            + ws()
            + "]"
        )
    if isinstance(value, str):
        return _string(value, rnd)
    return json.dumps(value)


# -- strategies ----------------------------------------------------------------------------------

seeds = st.integers(0, 2**32 - 1)
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
names = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=12)
leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=12,
)
# What a metadata field may be: mostly right, sometimes hostile.
name_values: st.SearchStrategy[Any] = names | st.sampled_from([None, "", 7, [], {}, True])
namespace_values: st.SearchStrategy[Any] = names | st.sampled_from([None, "", 3, ["a"], False])
rv_values: st.SearchStrategy[Any] = st.text("0123456789", min_size=1, max_size=8) | st.sampled_from(
    [None, 30, "", 1.5]
)
uid_values: st.SearchStrategy[Any] = text | st.sampled_from([None, 5, {}])
labels_values: st.SearchStrategy[Any] = st.dictionaries(text, text, max_size=4) | st.sampled_from(
    [None, [], {"a": 1}]
)


@st.composite
def metadata(draw: st.DrawFn) -> Any:
    meta: dict[str, Any] = {}
    for key, strategy in [
        ("name", name_values),
        ("namespace", namespace_values),
        ("resourceVersion", rv_values),
        ("uid", uid_values),
        ("labels", labels_values),
        ("annotations", st.dictionaries(text, text, max_size=3)),
        ("generation", st.integers(0, 2**63 - 1)),
        ("finalizers", st.lists(text, max_size=2)),
    ]:
        if draw(st.integers(0, 9)) < 8:
            meta[key] = draw(strategy)
    keys = list(meta)
    random.Random(draw(seeds)).shuffle(keys)
    return {key: meta[key] for key in keys}


@st.composite
def kube_objects(draw: st.DrawFn, *, hostile: bool = True) -> Any:
    if hostile and draw(st.integers(0, 19)) == 0:
        return draw(values)  # not an object at all, or an object without metadata
    obj: dict[str, Any] = {}
    if draw(st.booleans()):
        obj["kind"] = draw(st.sampled_from(["Pod", "Widget", None, 3]))
    if draw(st.booleans()):
        obj["apiVersion"] = draw(st.sampled_from(["v1", "example.com/v1", None]))
    roll = draw(st.integers(0, 19))
    if roll == 0 and hostile:
        pass  # no metadata
    elif roll == 1 and hostile:
        obj["metadata"] = draw(st.sampled_from([None, [], "m", 4]))
    else:
        obj["metadata"] = draw(metadata())
    if draw(st.booleans()):
        spec: Any = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "nodeName": text | st.none() | st.integers(),
                    "template": st.fixed_dictionaries({}, optional={"x": values}) | values,
                    "containers": values,
                },
            )
        )
        obj["spec"] = spec if draw(st.integers(0, 9)) else draw(values)
    if draw(st.booleans()):
        obj["status"] = draw(st.fixed_dictionaries({}, optional={"phase": text, "extra": values}))
    for key, value in draw(st.dictionaries(text, values, max_size=2)).items():
        obj.setdefault(key, value)
    keys = list(obj)
    random.Random(draw(seeds)).shuffle(keys)
    return {key: obj[key] for key in keys}


list_kinds = st.sampled_from(["PodList", "WidgetList", "List", "Pod", None, 7])
list_api_versions = st.sampled_from(["v1", "example.com/v1", "", None])


@st.composite
def pages(draw: st.DrawFn) -> bytes:
    body: dict[str, Any] = {}
    kind = draw(list_kinds)
    if kind is not None:
        body["kind"] = kind
    api = draw(list_api_versions)
    if api is not None:
        body["apiVersion"] = api
    meta = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "resourceVersion": rv_values,
                "continue": text | st.none() | st.integers(),
                "remainingItemCount": st.integers(0, 10**6) | st.none() | text,
                "shardInfo": st.fixed_dictionaries({"selector": text | st.none()}),
            },
        )
    )
    if draw(st.integers(0, 9)):
        body["metadata"] = meta
    body["items"] = draw(st.lists(kube_objects(), max_size=4))
    rnd = random.Random(draw(seeds))
    return to_json(body, rnd).encode()


# -- properties ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "number", ["-9223372036854775809", "18446744073709551616", "-9223372036854775808"]
)
@pytest.mark.parametrize("field", ["continue", "remainingItemCount"])
def test_list_metadata_integers_beyond_64_bits_as_today(field: str, number: str) -> None:
    """orjson reads an integer beyond 64 bits as a float, msgspec as an int: list metadata
    holding one takes today's path (found by hypothesis 6.100.3 under make test-lowest)."""
    check_page(f'{{"kind":"PodList","metadata":{{"{field}":{number}}},"items":[]}}'.encode())


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages())
def test_page_property(page: bytes) -> None:
    """Any page: the same items, kind/apiVersion fill, metadata and invalid items as today."""
    check_page(page)
    check_page(page, FieldSet())


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "RENAMED"]),
    kube_objects(),
    seeds,
    st.sampled_from(["wire", "spaced", "reordered", "extra", "crlf"]),
)
def test_line_property(event_type: str, obj: Any, seed: int, shape: str) -> None:
    """Any line: the same type, object (same slice) or error as ``decode_event``."""
    rnd = random.Random(seed)
    encoded = to_json(obj, rnd, newlines=False)
    if shape == "wire":
        line = f'{{"type":"{event_type}","object":{encoded}}}'
    elif shape == "spaced":
        line = f'{{ "type": "{event_type}", "object": {encoded} }}'
    elif shape == "reordered":
        line = f'{{"object":{encoded},"type":"{event_type}"}}'
    elif shape == "extra":
        line = f'{{"type":"{event_type}","object":{encoded},"x":1}}'
    else:
        line = f'{{"type":"{event_type}","object":{encoded}}}\r'
    check_line(line.encode())


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mutated_pages_accepted_exactly_when_orjson_accepts(data: st.DataObject) -> None:
    """Random byte damage: refused exactly when orjson refuses the page (except for numbers
    beyond float range, the documented divergence); accepted pages agree with today."""
    encoder = PodEncoder(list_item=True)
    page = bytearray(list_body([encoder.encode(i) for i in range(2)], 10))
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(page) - 1))
        damage = data.draw(
            st.sampled_from(
                [
                    b"",
                    b"{",
                    b"}",
                    b"[",
                    b"]",
                    b",",
                    b":",
                    b'"',
                    b"\\",
                    b"\\u12",
                    b"\xff",
                    b"\xc3",
                    b"\xed\xa0\x80",
                    b"1e999",
                    b"-",
                    b"0",
                    b"null",
                    b" ",
                    b"\x01",
                    b"\\ud800",
                ]
            )
        )
        width = data.draw(st.integers(0, 2))
        page[position : position + width] = damage
    body = bytes(page)
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        assume("infinity" not in str(exc))
        with pytest.raises(UndecodableBodyError, match="undecodable response"):
            WireDecoder(FIELDS).split_list(body)
        return
    check_page(body)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mutated_lines_agree_with_decode_event(data: st.DataObject) -> None:
    line = bytearray(watch_line("MODIFIED", PodEncoder().encode(3)).rstrip(b"\n"))
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(line) - 1))
        damage = data.draw(
            st.sampled_from(
                [
                    b"",
                    b"{",
                    b"}",
                    b'"',
                    b"\\",
                    b"\xff",
                    b"\xed\xa0\x80",
                    b"0",
                    b"null",
                    b" ",
                    b"\x01",
                    b"\\ud800",
                    b"\\u0041",
                    b"BOOKMARK",
                    b"ERROR",
                ]
            )
        )
        line[position : position + data.draw(st.integers(0, 2))] = damage
    body = bytes(line)
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        assume("infinity" not in str(exc))
    check_line(body)


# -- realistic pages and lines -----------------------------------------------------------------


def test_podgen_page_of_500() -> None:
    encoder = PodEncoder(list_item=True)
    page = list_body([encoder.encode(i) for i in range(500)], 1000, continue_token="t", remaining=7)
    check_page(page)
    check_page(page, FieldSet())
    result = WireDecoder().split_list(page)
    assert (result.resource_version, result.continue_token, result.remaining_item_count) == (
        "1000",
        "t",
        7,
    )
    # One shared namespace string for all objects.
    assert len({id(w.namespace) for w in result.items}) == 1


@pytest.mark.parametrize("event_type", ["ADDED", "MODIFIED", "DELETED"])
def test_podgen_lines(event_type: str) -> None:
    line = watch_line(event_type, PodEncoder().encode(5)).rstrip(b"\n")
    check_line(line)
    event = WireDecoder().decode_line(line)
    assert event.object is not None and event.object.decode() == make_pod(5)


# -- hostile and odd input -------------------------------------------------------------------------


def pod(name: Any = "a", **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": "5", **meta},
        "spec": {"nodeName": "n1"},
    }


HOSTILE_ITEMS = {
    "no metadata": {"spec": {}},
    "metadata null": {"metadata": None},
    "metadata list": {"metadata": []},
    "no name": {"metadata": {"namespace": "ns"}},
    "empty name": pod(""),
    "int name": pod(7),
    "int namespace": pod(namespace=3),
    "null namespace": pod(namespace=None),  # valid: cluster-scoped key
    "int rv": pod(resourceVersion=30),
    "null rv": pod(resourceVersion=None),  # valid: rv ""
    "int uid": pod(uid=5),  # valid: uid hashes like an absent one
    "labels list": pod(labels=["a"]),  # valid: labels unusable
    "labels with int values": pod(labels={"a": 1}),
    "spec list": {**pod(), "spec": [1]},
    "string item": "a string",
    "int item": 5,
    "list item": [1, 2],
    "null item": None,
}


@pytest.mark.parametrize("case", HOSTILE_ITEMS)
def test_hostile_item_in_a_list(case: str) -> None:
    body = {
        "kind": "List",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "9"},
        "items": [pod("first"), HOSTILE_ITEMS[case], pod("last")],
    }
    check_page(orjson.dumps(body))
    result = WireDecoder(FIELDS).split_list(orjson.dumps(body))
    expected_valid = object_problem(HOSTILE_ITEMS[case]) is None
    assert len(result.items) == 2 + expected_valid
    assert [i.position for i in result.invalid] == ([] if expected_valid else [1])


@pytest.mark.parametrize("case", HOSTILE_ITEMS)
@pytest.mark.parametrize("event_type", ["ADDED", "DELETED", "BOOKMARK"])
def test_hostile_object_on_the_watch(case: str, event_type: str) -> None:
    check_line(orjson.dumps({"type": event_type, "object": HOSTILE_ITEMS[case]}))


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"", "undecodable response"),
        (b"<html>502</html>", "undecodable response"),
        (b'{"items":[', "undecodable response"),
        (b"[]", "unexpected response"),
        (b'"x"', "unexpected response"),
        (b'{"items":5}', "unexpected response"),
        (b'{"items":{"a":1}}', "unexpected response"),
        (b'{"items":[],"metadata":[1]}', "unexpected response"),
        (b'{"items":[{"metadata":{"name":"\xff"}}]}', "undecodable response"),
        (b'{"items":[{"metadata":{"name":"a"},"x":"\xff"}]}', "undecodable response"),
        (b'{"items":[{"metadata":{"name":"a"},"x":"\xed\xa0\x80"}]}', "undecodable response"),
        (b'{"items":[{"metadata":{"name":"a"},"x":"\\ud800"}]}', "undecodable response"),
        (b'\xef\xbb\xbf{"items":[]}', "undecodable response"),
        (b'{"items":[{"metadata":{"name":"a"},"x":NaN}]}', "undecodable response"),
    ],
)
def test_bodies_refused_as_today(body: bytes, words: str) -> None:
    with pytest.raises(UndecodableBodyError, match=words):
        WireDecoder().split_list(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"items":null}',
        b'{"items":false}',
        b"{}",
        b'{"metadata":null,"items":[]}',
        b'{"metadata":[],"items":[]}',  # falsy: read as {} today
        b'{"metadata":{"resourceVersion":12,"continue":5,"remainingItemCount":"x"}}',
        b'{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"a"}}]}',
        b'{"kind":"PodList","items":[{"kind":null,"metadata":{"name":"a"}}]}',
        b'{"apiVersion":"v1","items":[{"metadata":{"name":"a"},"apiVersion":"v2"}]}',
        b'{"kind":"List","apiVersion":"","items":[{"metadata":{"name":"a"}}]}',
        b'{"kind":"Pod\\u004cist","items":[{"metadata":{"name":"a"}}]}',
        b'{"kind":"PodList","items":[ {"metadata":{"name":"a"} } , {"metadata":{"name":"b"}}\n]}',
        # escaped keys and names, duplicates (the last wins in both parsers)
        b'{"items":[{"metad\\u0061ta":{"na\\u006de":"\\u00e9\\ud83d\\ude00\\"\\\\/x"}}]}',
        b'{"items":[{"metadata":{"name":"a","name":"b"}}]}',
        b'{"items":[{"metadata":{"name":"a"},"metadata":{"name":"b","namespace":"c"}}]}',
        b'{"items":[{"metadata":{"name":"a"},"metadata":5}]}',
        b'{"items":[{"metadata":{"name":"a"}}],"items":[{"metadata":{"name":"z"}}]}',
        b'{"items":[{"metadata":{"name":"a","labels":{"k":"v","k":"w"}}}]}',
        # big numbers: orjson gives floats for them, the slice keeps their text
        b'{"items":[{"metadata":{"name":"a","generation":123456789012345678901234567890}}]}',
    ],
)
def test_odd_bodies_as_today(body: bytes) -> None:
    check_page(body)


def test_unicode_names_keep_their_exact_bytes() -> None:
    line = (
        b'{"type":"ADDED","object":{"metadata":'
        b'{"name":"caf\\u00e9-\\ud83d\\ude00","namespace":"n\\/s"}}}'
    )
    event = WireDecoder().decode_line(line)
    assert event.object is not None
    assert event.object.key == "n/s/caf\u00e9-\U0001f600"
    assert event.object.data == line[25:-1]  # escapes kept, not re-encoded
    check_line(line)


@pytest.mark.parametrize("levels", [300, 700, 990])
def test_deep_nesting(levels: int) -> None:
    """orjson decodes 1024 levels but encodes only 255 (today's compact cache refuses list
    items deeper than that); msgspec stops near the interpreter's recursion limit. Deep
    list items are stored from their slices when msgspec reaches their end, else re-encoded
    by the stdlib, else reported as invalid; watch objects always keep their slice."""
    deep = b"[" * levels + b"]" * levels
    body = (
        b'{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"},"x":'
        + deep
        + b"}]}"
    )
    orjson.loads(body)  # orjson takes it
    with pytest.raises(TypeError):
        orjson.dumps(orjson.loads(body))  # but cannot write it back
    check_page(body)
    check_line(b'{"type":"ADDED","object":{"metadata":{"name":"a"},"x":' + deep + b"}}")


def test_number_beyond_float_range_is_the_documented_divergence() -> None:
    body = b'{"items":[{"metadata":{"name":"a"},"spec":{"n":1e400}}]}'
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(body)  # today: the whole page is refused
    (wire,) = WireDecoder().split_list(body).items  # here: the object is accepted
    assert loads(wire.data) == {"metadata": {"name": "a"}, "spec": {"n": float("inf")}}
    assert decode_many([wire.data]) == [wire.decode()]


def test_huge_object() -> None:
    blob = "y" * (5 * 2**20)
    item = {
        "metadata": {"name": "big", "namespace": "d", "resourceVersion": "3"},
        "data": {"b": blob},
    }
    check_page(orjson.dumps({"kind": "ConfigMapList", "apiVersion": "v1", "items": [item]}))
    check_line(orjson.dumps({"type": "MODIFIED", "object": item}))


def test_bookmark_error_and_unknown_events_come_decoded() -> None:
    decoder = WireDecoder()
    bookmark = {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "12", "annotations": {"k8s.io/initial-events-end": "true"}},
    }
    event = decoder.decode_line(orjson.dumps({"type": "BOOKMARK", "object": bookmark}))
    assert (event.type, event.object, event.document) == ("BOOKMARK", None, bookmark)
    status = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}
    assert decoder.decode_line(orjson.dumps({"type": "ERROR", "object": status})) == WireEvent(
        "ERROR", None, status
    )
    odd = orjson.dumps({"type": "RENAMED", "object": pod()})
    assert decoder.decode_line(odd) == WireEvent("RENAMED", None, pod())
    for line in (
        b"not json",
        b"[1, 2]",
        b'{"type":"ADDED"}',
        b'{"type":1,"object":{}}',
        b'{"type":"ADDED","object":[]}',
    ):
        check_line(line)


# -- declared fields and views ------------------------------------------------------------------


def test_field_set_normalizes_and_unions() -> None:
    assert FieldSet.of("spec.nodeName") == FieldSet(paths=(("spec", "nodeName"),))
    assert FieldSet(paths=("a.b",)) == FieldSet.of(("a", "b"))  # type: ignore[arg-type]
    both = FieldSet.of("a.b") | FieldSet.of("c", "a.b", labels=True)
    assert both == FieldSet(labels=True, paths=(("a", "b"), ("c",)))
    assert both.index("c") == 1
    for bad in ("", "metadata", ("a", ""), 'a."b', ()):
        with pytest.raises(ValueError):
            FieldSet.of(bad)


def test_from_document() -> None:
    decoder = WireDecoder(FIELDS)
    obj = make_pod(3)
    wire = decoder.from_document(obj)
    assert wire is not None
    check_wire(wire, obj, FIELDS)
    assert decoder.from_document({"metadata": {}}) is None


def test_cachable_is_object_problem() -> None:
    for case in HOSTILE_ITEMS.values():
        assert cachable(case) == (object_problem(case) is None)


# -- the garbage collector ------------------------------------------------------------------------


def test_wire_objects_are_never_tracked() -> None:
    encoder = PodEncoder(list_item=True)
    page = list_body([encoder.encode(i) for i in range(500)], 5)
    for fields in (FieldSet(), FieldSet(labels=True)):
        decoder = WireDecoder(fields)
        decoder.split_list(page)  # warm up (struct types, caches)
        gc.collect()
        before = len(gc.get_objects())
        result = decoder.split_list(page)
        tracked = len(gc.get_objects()) - before
        assert tracked <= 3, tracked  # the page's lists, not one object per item
        assert not any(gc.is_tracked(w) for w in result.items)


def test_gc_paused_is_scoped_and_nestable() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # left as found
    finally:
        gc.enable()


def test_decode_many() -> None:
    datas = [orjson.dumps(make_pod(i)) for i in range(5)]
    assert decode_many(datas) == [make_pod(i) for i in range(5)]
    assert decode_many([]) == []
    assert gc.isenabled()
