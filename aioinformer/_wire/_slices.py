"""Wire slices: LIST pages and watch lines cut into per-object JSON bytes, plus the few
metadata fields an informer needs; the objects themselves are not decoded here.

Why: a decoded 2.5 KB Pod is ~33 dicts and lists that CPython's cyclic collector tracks, and
decoding it costs as much as everything else an informer does with it. An informer only
needs the key, the resourceVersion, the uid (shard filter) and what its declared indexers
read (:class:`FieldSet`). So each object travels as a :class:`WireObject`: its exact JSON
``bytes`` and those fields, in a ``msgspec.Struct`` with ``gc=False`` (never tracked by the
collector: it holds only ``bytes``, ``str`` and, when declared, decoded leaf values, and can
never be part of a reference cycle). :meth:`WireObject.decode` gives the plain dict when
someone asks.

How:

* a LIST body is decoded by msgspec into its envelope with ``items: list[msgspec.Raw]`` (a
  validating skip over each item, no Python object per item), then each item's ``Raw`` is
  decoded again by a reused decoder of a *head* struct holding only the declared fields
  (everything else is skipped, still validated) and copied out once as ``bytes`` (a kept
  ``Raw`` would keep its whole page alive);
* a watch line of the API server's shape ``{"type":"T","object":S}`` is sliced without
  parsing and only ``S`` is decoded, into the head struct: if ``S`` decodes as one JSON
  object, the line is exactly ``{"type":"T","object":S}`` (the argument of
  :mod:`aioinformer._wire._framing`).

Exactness: ``data`` is a verbatim slice of the wire (escapes, key order, number spelling
kept), so ``orjson.loads(data)`` equals the object the whole page or line decodes to, with one
addition: list items of built-in types come without ``kind`` and ``apiVersion``; they are
appended to the slice (``…,"kind":"Pod","apiVersion":"v1"}``) exactly when
:func:`~aioinformer._listwatch.list_result_from_body` adds them to a decoded item, so the
decoded dict is the same, key order included.

Anything off this fast path takes the slow path, which is the dict path's code: the page or
line is decoded whole with orjson and judged by the same rules
(:func:`~aioinformer._listwatch.list_result_from_body`,
:func:`~aioinformer._wire._framing.decode_event`,
:func:`~aioinformer._objects.object_problem`), and cachable objects are encoded again. msgspec
is stricter than orjson in one respect (nesting deeper than the interpreter's recursion budget,
~900 levels), which only sends such input to the slow path, and laxer in two: it does not
check UTF-8 inside the strings it skips (checked here: ``isascii()``, else a strict decode),
and it does not range-check the numbers it skips. So an object holding a number beyond float
range (``1e400``: no API server can send one, Go's encoder cannot write it) is cached here,
where orjson refuses the whole page; :func:`loads` then decodes it with the standard library
(``inf``). That is the one accepted divergence.
"""

from __future__ import annotations

import gc
import inspect
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, TypeAlias

import msgspec
import orjson

from .._listwatch import ListResult, WatchEvent, _list_item_defaults, list_page_metadata
from .._objects import object_problem
from ._framing import decode_event

__all__ = [
    "MISSING",
    "FieldSet",
    "Path",
    "InvalidItem",
    "UndecodableBodyError",
    "WireDecoder",
    "WireEvent",
    "WireObject",
    "WirePage",
    "cachable",
    "decode_many",
    "encode",
    "field_path",
    "gc_paused",
    "loads",
    "takes_decoder",
    "value_at",
]

#: The value of a declared path the object does not have (``msgspec.UNSET``; falsy).
MISSING: Final = msgspec.UNSET

#: A path into an object: its keys from the top, e.g. ``("spec", "nodeName")``.
Path: TypeAlias = tuple[str, ...]

_orjson_loads = orjson.loads
_orjson_dumps = orjson.dumps
_JSONDecodeError = orjson.JSONDecodeError
# What msgspec raises for input it refuses: DecodeError and ValidationError are ValueErrors
# (so is UnicodeDecodeError); deep nesting raises RecursionError.
_REFUSED = (ValueError, RecursionError)


# -- errors -----------------------------------------------------------------------------------


class UndecodableBodyError(ValueError):
    """A LIST response body that is not JSON, or not a list object (the transport raises it
    as ``TransportError(f"{what}: {error}")``, as today)."""


# -- plain decoding ---------------------------------------------------------------------------


def loads(data: bytes) -> Any:
    """Decode JSON bytes that a :class:`WireDecoder` accepted: ``orjson.loads``, or the stdlib
    for the one input msgspec accepts and orjson refuses (a number beyond float range)."""
    try:
        return _orjson_loads(data)
    except _JSONDecodeError:
        return json.loads(data)


def encode(obj: Any) -> bytes:
    """The JSON of ``obj`` as an exact-size ``bytes`` (orjson's output buffer is ~3x larger).

    :raises TypeError: (``orjson.JSONEncodeError``) for what orjson cannot encode, such as
        nesting deeper than 255 levels (orjson *decodes* up to 1024).
    """
    return bytes(memoryview(_orjson_dumps(obj)))


def _encode_decoded(document: Any) -> bytes | None:
    """The JSON of a document orjson decoded: orjson's, else the stdlib's (deep nesting),
    else None (nested beyond the interpreter's recursion budget)."""
    try:
        return encode(document)
    except TypeError:
        pass
    try:
        return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
    except (RecursionError, ValueError):
        return None


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic collector for a block that only *creates* objects (a bulk decode).

    Scoped and nestable: the collector is enabled again on exit only if it was enabled on
    entry, so no process-wide switch is ever left on. The block must not await (another task
    would run with the collector off) and must be bounded (no user code inside).

    The allocations made inside still count towards the youngest generation: the first
    allocation after the block runs one young collection over the containers the block made
    that are still alive (once, not once per threshold as without the pause). A block whose
    results are dropped before it ends (an internal re-index) leaves nothing to scan at all.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def decode_many(datas: Iterable[bytes]) -> list[Any]:
    """``[loads(d) for d in datas]`` with the collector paused (:func:`gc_paused`): the bulk
    reads (``list()``, ``by_index()``, a namespace listing) at the decode floor."""
    with gc_paused():
        try:
            return [_orjson_loads(data) for data in datas]
        except _JSONDecodeError:
            pass
        return [loads(data) for data in datas]


def takes_decoder(lister_watcher: object) -> bool:
    """Whether ``lister_watcher``'s ``list`` and ``watch`` take a ``decoder=`` keyword (and
    then return pages and streams of carriers in wire form, as
    :class:`~aioinformer.lowlevel.KubeListerWatcher` does). The public
    :class:`~aioinformer.lowlevel.ListerWatcher` protocol has no such keyword: a
    lister-watcher without it returns dicts, which the reflector turns into carriers."""
    for name in ("list", "watch"):
        method = getattr(lister_watcher, name, None)
        try:
            parameters = inspect.signature(method).parameters  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
        decoder = parameters.get("decoder")
        if decoder is None or decoder.kind is not inspect.Parameter.KEYWORD_ONLY:
            return False
    return True


# -- what an informer reads -------------------------------------------------------------------

_BUILTIN_META: Final = {
    "name": "name",
    "namespace": "namespace",
    "resourceVersion": "resource_version",
    "uid": "uid",
}
_FORBIDDEN_KEY_CHARS: Final = frozenset('\\"') | frozenset(chr(c) for c in range(32))


def field_path(path: str | Sequence[str]) -> Path:
    """``path`` as a tuple of keys (a dotted string is split at its dots).

    :raises ValueError: for an empty path or key, the whole ``metadata``, or a key with a
        quote, backslash or control character.
    """
    parts = tuple(path.split(".")) if isinstance(path, str) else tuple(path)
    if not parts or not all(isinstance(part, str) and part for part in parts):
        raise ValueError(f"not a field path: {path!r}")
    if parts == ("metadata",):
        raise ValueError("declare the metadata fields needed, not the whole metadata")
    for part in parts:
        if _FORBIDDEN_KEY_CHARS.intersection(part):
            raise ValueError(f"field path {path!r} has a key with a quote, backslash or control")
    return parts


@dataclass(frozen=True, slots=True)
class FieldSet:
    """The fields an informer reads from every object, beyond the ones always decoded
    (``metadata.name``, ``namespace``, ``resourceVersion``, ``uid``).

    :param uid: keep ``metadata.uid`` in each carrier (a shard filter hashes it); without it
        the uid is still checked, not kept (saves ~90 bytes per cached object).
    :param labels: decode ``metadata.labels`` (label selectors, label indexers).
    :param paths: more fields, each a dotted string (``"spec.nodeName"``) or a tuple of keys
        (``("metadata", "annotations", "example.com/owner")``, for keys with dots). Their
        values come in :attr:`WireObject.extras`, in this order (:data:`MISSING` when absent).
    """

    labels: bool = False
    paths: tuple[Path, ...] = ()
    uid: bool = True

    @classmethod
    def of(cls, *paths: str | Sequence[str], labels: bool = False, uid: bool = True) -> FieldSet:
        """A field set from paths given as dotted strings or tuples of keys."""
        return cls(labels=labels, paths=tuple(dict.fromkeys(field_path(p) for p in paths)), uid=uid)

    def __post_init__(self) -> None:
        normalized = tuple(dict.fromkeys(field_path(p) for p in self.paths))
        if normalized != self.paths:
            object.__setattr__(self, "paths", normalized)

    def __or__(self, other: FieldSet) -> FieldSet:
        """Both sets' fields (this one's paths first)."""
        return FieldSet(
            labels=self.labels or other.labels,
            paths=tuple(dict.fromkeys((*self.paths, *other.paths))),
            uid=self.uid or other.uid,
        )

    def index(self, path: str | Sequence[str]) -> int:
        """The position of ``path``'s value in :attr:`WireObject.extras`."""
        return self.paths.index(field_path(path))


# -- the carrier --------------------------------------------------------------------------------


class WireObject(msgspec.Struct, gc=False, frozen=True):
    """One object as its exact JSON and the metadata an informer needs.

    Never tracked by the cyclic GC (``gc=False``): it must never be part of a reference
    cycle, which holds as long as nobody stores it inside its own ``labels`` or ``extras``.

    :ivar data: the object's JSON, exactly as sent (list items: plus ``kind``/``apiVersion``).
    :ivar key: ``"namespace/name"``, or ``"name"`` for a cluster-scoped object.
    :ivar namespace: ``metadata.namespace`` (``""`` when absent or null).
    :ivar resource_version: ``metadata.resourceVersion`` (``""`` when absent or null).
    :ivar uid: ``metadata.uid`` when a string, else ``""`` (hashes like an absent uid); kept
        only when the decoder's :attr:`FieldSet.uid` says so (a sharded informer), else
        ``""``.
    :ivar labels: ``metadata.labels`` when declared and an object, else None.
    :ivar extras: the declared paths' values (:attr:`FieldSet.paths` order), MISSING when absent.
    """

    data: bytes
    key: str
    namespace: str
    resource_version: str
    uid: str
    labels: Any = None
    extras: tuple[Any, ...] = ()

    @property
    def name(self) -> str:
        """``metadata.name`` (never empty): the key without its namespace."""
        namespace = self.namespace
        return self.key[len(namespace) + 1 :] if namespace else self.key

    def decode(self) -> Any:
        """A fresh dict of the whole object (decoded now; the caller owns it)."""
        return loads(self.data)

    def __repr__(self) -> str:
        return (
            f"WireObject(key={self.key!r}, resource_version={self.resource_version!r},"
            f" {len(self.data)} bytes)"
        )


class InvalidItem(NamedTuple):
    """A list item that cannot be cached (the reflector reports it with today's words:
    ``object_problem(document)``, ``key_hint(document)``; when ``cachable(document)`` holds,
    the item was nested too deeply to be stored: "cannot be stored").

    :ivar position: its index in the page's ``items``.
    :ivar document: the item, decoded (any JSON value).
    """

    position: int
    document: Any


class WirePage(NamedTuple):
    """One LIST page (``ListResult``'s fields, items as :class:`WireObject`).

    :ivar items: the cachable items, in order (duplicate keys are the reflector's business:
        they may span pages).
    :ivar invalid: the others, with their positions.
    """

    items: list[WireObject]
    invalid: list[InvalidItem]
    resource_version: str
    continue_token: Any = None
    remaining_item_count: int | None = None
    shard_info: str | None = None


class WireEvent(msgspec.Struct, gc=False, frozen=True):
    """One watch line (a ``msgspec.Struct``: made in C, 4x faster than a NamedTuple).

    :ivar type: the event type as sent (``"ADDED"``, ..., or an unknown string).
    :ivar object: the object for ADDED/MODIFIED/DELETED when it is cachable, else None.
    :ivar document: otherwise the decoded object: for BOOKMARK and ERROR (a Status), for
        unknown types, and for an object that cannot be cached (today's checks report it;
        when ``cachable(document)`` holds, it was nested too deeply to be stored).
    """

    type: str
    object: WireObject | None
    document: Any = None


# -- validity (the reflector's rules) ---------------------------------------------------------


def cachable(obj: Any) -> bool:
    """Whether the reflector can cache ``obj`` (:func:`~aioinformer._objects.object_problem`
    finds nothing wrong)."""
    return object_problem(obj) is None


def value_at(obj: Any, path: Path) -> Any:
    """The value at ``path`` in a decoded object, :data:`MISSING` when absent."""
    for part in path:
        if obj.__class__ is not dict and not isinstance(obj, dict):
            return MISSING
        obj = obj.get(part, MISSING)
        if obj is MISSING:
            return MISSING
    return obj


# -- msgspec types ------------------------------------------------------------------------------


class _Page(msgspec.Struct, gc=False):
    kind: Any = None
    apiVersion: Any = None
    metadata: Any = None
    items: list[msgspec.Raw] | None = None


_Extractor: TypeAlias = Callable[[Any, str, str, str, str], Any]


def _head_types(fields: FieldSet) -> tuple[type, type, list[_Extractor]]:
    """The head structs (list item, watch object) for ``fields``, and one extractor per path.

    A declared path becomes nested structs down to a leaf decoded as ``Any``; a path running
    through another declared path's leaf is read from that leaf's value. The metadata struct
    always has the four built-in fields (typed ``str``: any other type fails the fast path,
    and the slow path judges the object as today).
    """
    tree: dict[str, Any] = {}
    leaf = None
    for path in fields.paths:
        node = tree
        for part in path[:-1]:
            child = node.get(part, {})
            if child is leaf:
                break
            node = node.setdefault(part, child)
        else:
            node[path[-1]] = leaf
    meta_tree = tree.pop("metadata", {})
    counter = iter(range(1_000_000))

    def struct(name: str, node: dict[str, Any], extra: list[tuple[str, Any, Any]]) -> Any:
        specs: list[tuple[str, Any, Any]] = list(extra)
        attrs: dict[str, tuple[str, Any]] = {}
        for key, child in node.items():
            attr = f"f{next(counter)}"
            if child is leaf:
                specs.append((attr, Any, msgspec.field(default=MISSING, name=key)))
                attrs[key] = (attr, None)
            else:
                sub, sub_attrs = struct(f"{name}_{attr}", child, [])
                specs.append((attr, sub | None, msgspec.field(default=None, name=key)))
                attrs[key] = (attr, sub_attrs)
        return msgspec.defstruct(name, specs, gc=False), attrs

    builtin_meta: list[tuple[str, Any, Any]] = [
        ("name", str, ""),
        ("namespace", str, ""),
        ("resource_version", str, msgspec.field(default="", name="resourceVersion")),
        ("uid", str, ""),
    ]
    if fields.labels:
        builtin_meta.append(("labels", dict[str, str] | None, None))
    meta_free = {k: v for k, v in meta_tree.items() if k not in _BUILTIN_META}
    if fields.labels:
        meta_free.pop("labels", None)
    meta_type, meta_attrs = struct("_Meta", meta_free, builtin_meta)
    top_type, top_attrs = struct("_Object", tree, [("metadata", meta_type | None, None)])
    item_type = msgspec.defstruct(
        "_Item",
        [("kind", Any, MISSING), ("apiVersion", Any, MISSING)],
        bases=(top_type,),
        gc=False,
    )

    def extractor(path: Path) -> _Extractor:
        if path[0] == "metadata" and len(path) >= 2:
            key = path[1]
            if key in _BUILTIN_META:
                index = ("name", "namespace", "resourceVersion", "uid").index(key)
                rest = path[2:]

                def builtin(head: Any, name: str, ns: str, rv: str, uid: str) -> Any:
                    value = (name, ns, rv, uid)[index]
                    return value_at(value, rest) if rest else value

                return builtin
            if key == "labels" and fields.labels:
                rest = path[2:]

                def labels(head: Any, name: str, ns: str, rv: str, uid: str) -> Any:
                    value = head.metadata.labels
                    value = MISSING if value is None else value
                    return value_at(value, rest) if rest and value is not MISSING else value

                return labels
            steps, attrs, rest = ["metadata"], meta_attrs, path[1:]
        else:
            steps, attrs, rest = [], top_attrs, path
        leaf_reached = False
        while rest:
            attr, sub = attrs[rest[0]]
            steps.append(attr)
            rest = rest[1:]
            if sub is None:
                leaf_reached = True
                break
            attrs = sub
        # Struct levels: None there is a JSON null (the path is missing); the leaf's value is
        # the value, null included.
        chain = tuple(steps[:-1]) if leaf_reached else tuple(steps)
        last = steps[-1] if leaf_reached else None
        tail = tuple(rest)

        def extract(head: Any, name: str, ns: str, rv: str, uid: str) -> Any:
            value = head
            for attr in chain:
                value = getattr(value, attr)
                if value is None:
                    return MISSING
            if last is None:
                return value
            value = getattr(value, last)
            return value_at(value, tail) if tail and value is not MISSING else value

        return extract

    return item_type, top_type, [extractor(path) for path in fields.paths]


# -- the decoder ----------------------------------------------------------------------------------

_HEAD: Final = b'{"type":"'
_OBJECT: Final = b'","object":'
_CLOSE: Final = ord("}")
_CR: Final = ord("\r")
_CHANGE_TYPES: Final = {b"ADDED": "ADDED", b"MODIFIED": "MODIFIED", b"DELETED": "DELETED"}
_CHANGES: Final = frozenset(_CHANGE_TYPES.values())
#: At most this many distinct namespace strings are shared between objects.
_NAMESPACE_CANON_LIMIT: Final = 100_000


class WireDecoder:
    """Splits LIST pages and watch lines into :class:`WireObject` s for one informer.

    Build one per informer (its decoders and structs are made once, for ``fields``) and use it
    from one thread at a time.

    :param fields: what to decode besides the built-in metadata fields.
    """

    __slots__ = (
        "_extractors",
        "_item",
        "_namespaces",
        "_object",
        "_page",
        "_uid",
        "fields",
    )

    def __init__(self, fields: FieldSet = FieldSet()) -> None:
        self._page = msgspec.json.Decoder(_Page)
        # One shared str per namespace (saves ~55 bytes per object).
        self._namespaces: dict[str, str] = {}
        self.set_fields(fields)

    def set_fields(self, fields: FieldSet) -> None:
        """Decode ``fields`` from now on (objects decoded before keep their extras: a cache
        that reads a path beyond an object's extras decodes that object instead)."""
        self.fields = fields
        self._uid = fields.uid
        item_type, object_type, self._extractors = _head_types(fields)
        self._item: msgspec.json.Decoder[Any] = msgspec.json.Decoder(item_type)
        self._object: msgspec.json.Decoder[Any] = msgspec.json.Decoder(object_type)

    def __repr__(self) -> str:
        return f"<WireDecoder labels={self.fields.labels} paths={list(self.fields.paths)}>"

    # -- LIST ----------------------------------------------------------------------------------

    def split_list(self, body: bytes) -> WirePage:
        """One LIST response body, split.

        :raises UndecodableBodyError: when the body is not JSON (``"undecodable response
            (…)"``) or not a list object (``"unexpected response (…)"``), as today.
        """
        if not (body.isascii() or _utf8(body)):
            return self._split_slow(body)  # orjson refuses it too, in its own words
        try:
            page = self._page.decode(body)
        except _REFUSED:
            return self._split_slow(body)
        metadata = page.metadata
        if metadata is None:
            metadata = {}
        elif metadata.__class__ is not dict or _beyond_64_bits(metadata):
            return self._split_slow(body)  # (orjson reads such an integer as a float)
        raws = page.items or ()
        kind = page.kind
        item_kind = kind[:-4] if kind.__class__ is str and kind.endswith("List") else None
        api_version = page.apiVersion if page.apiVersion.__class__ is str else None
        suffixes = _suffixes(item_kind, api_version)
        items: list[WireObject] = []
        invalid: list[InvalidItem] = []
        append = items.append
        decode = self._item.decode
        wire = self._wire
        for position, raw in enumerate(raws):
            try:
                head = decode(raw)
            except _REFUSED:
                head = None
            meta = None if head is None else head.metadata
            if meta is None or not meta.name:
                self._item_slow(raw, position, suffixes, items, invalid)
                continue
            if suffixes is None:
                data = bytes(raw)
            else:
                suffix = suffixes[(head.kind is MISSING) + 2 * (head.apiVersion is MISSING)]
                data = bytes(raw) if suffix is None else b"".join((memoryview(raw)[:-1], suffix))
            append(wire(data, meta, head))
        return _page_result(items, invalid, metadata)

    def _item_slow(
        self,
        raw: msgspec.Raw,
        position: int,
        suffixes: tuple[bytes | None, ...] | None,
        items: list[WireObject],
        invalid: list[InvalidItem],
    ) -> None:
        """An item off the fast path: judged on its orjson decode, as today."""
        try:
            document = _orjson_loads(bytes(raw))
        except _JSONDecodeError as exc:  # beyond float range: orjson refuses the page
            raise UndecodableBodyError(f"undecodable response ({exc})") from exc
        if not cachable(document):
            invalid.append(InvalidItem(position, document))
            return
        data = bytes(raw)
        if suffixes is not None:
            suffix = suffixes[("kind" not in document) + 2 * ("apiVersion" not in document)]
            if suffix is not None:
                data = data[:-1] + suffix
        items.append(self._from_valid(document, data))

    def _split_slow(self, body: bytes) -> WirePage:
        """Today's path: the whole body decoded by orjson (collector paused), judged by
        ``list_result_from_body``'s rules; items re-encoded."""
        with gc_paused():
            try:
                decoded = _orjson_loads(body)
            except _JSONDecodeError as exc:
                raise UndecodableBodyError(f"undecodable response ({exc})") from exc
            if not isinstance(decoded, dict):
                raise UndecodableBodyError("unexpected response (response is not a list object)")
            documents = decoded.get("items") or []
            if not isinstance(documents, list):
                raise UndecodableBodyError("unexpected response (response is not a list object)")
            metadata = decoded.get("metadata") or {}
            if not isinstance(metadata, dict):
                raise UndecodableBodyError("unexpected response (list metadata is not an object)")
            kind, api_version = _list_item_defaults(decoded)
            items: list[WireObject] = []
            invalid: list[InvalidItem] = []
            for position, document in enumerate(documents):
                if not cachable(document):
                    invalid.append(InvalidItem(position, document))
                    continue
                filled = document
                if (kind and "kind" not in document) or (
                    api_version and "apiVersion" not in document
                ):
                    filled = dict(document)  # the invalid item keeps the server's form
                    if kind and "kind" not in filled:
                        filled["kind"] = kind
                    if api_version and "apiVersion" not in filled:
                        filled["apiVersion"] = api_version
                data = _encode_decoded(filled)
                if data is None:
                    invalid.append(InvalidItem(position, document))
                    continue
                items.append(self._from_valid(filled, data))
        return _page_result(items, invalid, metadata)

    # -- WATCH -------------------------------------------------------------------------------------

    def decode_line(self, line: bytes) -> WireEvent:
        """One watch line (a trailing ``\\r`` is fine).

        :raises MalformedWatchEventError: as ``_framing.decode_event`` raises
            ``MalformedWatchEventError``, with the same reasons.
        """
        return self.decode_span(line, 0, len(line))

    def decode_span(self, buffer: bytes, start: int, end: int) -> WireEvent:
        """The line ``buffer[start:end]`` (a framer's chunk and a line's bounds in it): the
        object is copied out of ``buffer`` once, with no copy of the line first.

        :raises MalformedWatchEventError: as :meth:`decode_line`.
        """
        if buffer.startswith(_HEAD, start):
            quote = buffer.find(b'"', start + 9, start + 20)  # BOOKMARK, the longest, ends at 17
            event_type = _CHANGE_TYPES.get(buffer[start + 9 : quote]) if quote > 0 else None
            if event_type is not None and buffer.startswith(_OBJECT, quote):
                last = end - 1
                if buffer[last] == _CR:
                    last -= 1
                if buffer[last] == _CLOSE:
                    raw = buffer[quote + 11 : last]
                    if raw.isascii() or _utf8(raw):
                        try:
                            head = self._object.decode(raw)
                        except _REFUSED:
                            head = None
                        else:
                            meta = head.metadata
                            if meta is not None and meta.name:
                                return WireEvent(event_type, self._wire(raw, meta, head))
        return self._line_slow(buffer[start:end] if start or end != len(buffer) else buffer)

    def _wire(self, data: bytes, meta: Any, head: Any) -> WireObject:
        """The carrier of a fast-path object (``head``: its decoded head, for extras)."""
        name = meta.name
        ns = meta.namespace
        if ns:
            ns = self._namespaces.get(ns) or _canon(self._namespaces, ns)
            key = f"{ns}/{name}"
        else:
            key = name
        uid = meta.uid if self._uid else ""
        extractors = self._extractors
        if extractors:
            rv = meta.resource_version
            extras = tuple([get(head, name, ns, rv, meta.uid) for get in extractors])
            labels = meta.labels if self.fields.labels else None
            return WireObject(data, key, ns, rv, uid, labels, extras)
        if self.fields.labels:
            return WireObject(data, key, ns, meta.resource_version, uid, meta.labels)
        return WireObject(data, key, ns, meta.resource_version, uid)

    def _line_slow(self, line: bytes) -> WireEvent:
        """The dict path's :func:`~aioinformer._wire._framing.decode_event`, then its checks
        of the object."""
        return self.event_from(decode_event(line))

    # -- from decoded objects ----------------------------------------------------------------

    def page_from_result(self, result: ListResult) -> WirePage:
        """A page of decoded items (a lister-watcher that returns dicts) as carriers: one
        encode per item; an item that cannot be cached is an :class:`InvalidItem`."""
        items: list[WireObject] = []
        invalid: list[InvalidItem] = []
        for position, document in enumerate(result.items):
            wire = None
            if cachable(document):
                data = _encode_decoded(document)
                if data is not None:
                    wire = self._from_valid(document, data)
            if wire is None:
                invalid.append(InvalidItem(position, document))
            else:
                items.append(wire)
        return WirePage(
            items,
            invalid,
            result.resource_version,
            result.continue_token,
            result.remaining_item_count,
            result.shard_info,
        )

    def event_from(self, event: WatchEvent) -> WireEvent:
        """A decoded watch event (a stream that yields dicts) as a :class:`WireEvent`: the
        object as a carrier (its ``raw`` slice when the stream kept it, else encoded) when
        the event changes the store and the object can be cached."""
        document = event.object
        if event.type in _CHANGES and cachable(document):
            data = event.raw if event.raw is not None else _encode_decoded(document)
            if data is not None:
                return WireEvent(event.type, self._from_valid(document, data))
        return WireEvent(event.type, None, document)

    def from_document(self, document: Any, data: bytes | None = None) -> WireObject | None:
        """The carrier of an already decoded object (a transform's output, a test's object),
        None when it cannot be cached. ``data`` must be its JSON if given (else encoded)."""
        if not cachable(document):
            return None
        return self._from_valid(document, encode(document) if data is None else data)

    def _from_valid(self, document: dict[str, Any], data: bytes) -> WireObject:
        metadata = document["metadata"]
        name: str = metadata["name"]
        ns = metadata.get("namespace") or ""
        if ns:
            ns = self._namespaces.get(ns) or _canon(self._namespaces, ns)
        key = f"{ns}/{name}" if ns else name
        rv = metadata.get("resourceVersion") or ""
        found_uid = metadata.get("uid")
        uid = found_uid if found_uid.__class__ is str else ""
        labels = None
        if self.fields.labels:
            found = metadata.get("labels")
            labels = found if isinstance(found, dict) else None
        kept_uid = uid if self._uid else ""
        if not self.fields.paths:
            return WireObject(data, key, ns, rv, kept_uid, labels)
        extras = []
        for path in self.fields.paths:
            if path[0] == "metadata" and len(path) >= 2 and path[1] in _BUILTIN_META:
                value = {"name": name, "namespace": ns, "resourceVersion": rv, "uid": uid}[path[1]]
                extras.append(value_at(value, path[2:]) if len(path) > 2 else value)
            else:
                extras.append(value_at(document, path))
        return WireObject(data, key, ns, rv, kept_uid, labels, tuple(extras))


def _utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8 (what orjson requires of every string; msgspec checks
    only the strings it decodes, not the ones it skips)."""
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def _canon(namespaces: dict[str, str], ns: str) -> str:
    if len(namespaces) < _NAMESPACE_CANON_LIMIT:
        namespaces[ns] = ns
    return ns


def _suffixes(kind: str | None, api_version: str | None) -> tuple[bytes | None, ...] | None:
    """What to append to an item lacking ``kind`` (index 1), ``apiVersion`` (2) or both (3);
    None when the list gives neither (items are then copied as they are)."""
    if not kind and not api_version:
        return None
    kind_member = b'"kind":' + _orjson_dumps(kind) if kind else None
    api_member = b'"apiVersion":' + _orjson_dumps(api_version) if api_version else None

    def suffix(*members: bytes | None) -> bytes | None:
        present = [m for m in members if m is not None]
        return b"," + b",".join(present) + b"}" if present else None

    return (None, suffix(kind_member), suffix(api_member), suffix(kind_member, api_member))


def _beyond_64_bits(value: Any) -> bool:
    """Whether ``value`` (msgspec's decode of JSON) holds an integer outside what orjson reads
    as one (-2**63 to 2**64-1): orjson makes it a float, msgspec a Python int."""
    if value.__class__ is int:
        return not -(2**63) <= value < 2**64
    if value.__class__ is dict:
        return any(_beyond_64_bits(item) for item in value.values())
    if value.__class__ is list:
        return any(_beyond_64_bits(item) for item in value)
    return False


def _page_result(
    items: list[WireObject], invalid: list[InvalidItem], metadata: dict[str, Any]
) -> WirePage:
    return WirePage(items, invalid, *list_page_metadata(metadata))
