"""Metadata-only lists and watches: ``PartialObjectMetadata`` content negotiation.

A metadata-only lister-watcher asks the API server for each object's ``metadata`` alone, as
client-go's metadata client does (``k8s.io/client-go/metadata``): lists send
``Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json``
and watches ``...;as=PartialObjectMetadata;...``. A server that serves the transformation
answers ``PartialObjectMetadataList`` (items ``{"kind": "PartialObjectMetadata",
"apiVersion": "meta.k8s.io/v1", "metadata": {...}}``); the objects never cross the wire in
full, so a metadata-only informer of Secrets holds no ``data``.

A server that does not serve it either answers the plain ``application/json`` clause with
whole objects (client-go then decodes those into ``PartialObjectMetadata``, dropping all but
the metadata), or refuses the header with 406 Not Acceptable. Both fall back to whole objects
on the wire, with one WARNING per lister-watcher: bodies and watch lines of another kind are
cut down to the same ``PartialObjectMetadata`` form before anything decodes them, and after a
406 the requests ask for plain JSON. What the informer caches is the same either way.

Checking a body costs a prefix test when the server put ``kind`` first (kube-apiserver does);
only other bodies are decoded to look.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

import orjson

from ..errors import ApiError, TransportError

__all__ = [
    "LIST_ACCEPT",
    "PARTIAL",
    "PARTIAL_LIST",
    "WATCH_ACCEPT",
    "MetadataNegotiation",
    "partial_object",
]

logger = logging.getLogger(__name__)

PARTIAL = "PartialObjectMetadata"
PARTIAL_LIST = "PartialObjectMetadataList"
_META_V1 = "meta.k8s.io/v1"
_JSON = "application/json"

#: The ``Accept`` of a metadata-only LIST (client-go's, without its protobuf clause).
LIST_ACCEPT = f"{_JSON};as={PARTIAL_LIST};g=meta.k8s.io;v=v1,{_JSON}"
#: The ``Accept`` of a metadata-only WATCH (each event's object is one ``PartialObjectMetadata``).
WATCH_ACCEPT = f"{_JSON};as={PARTIAL};g=meta.k8s.io;v=v1,{_JSON}"

#: A list body that starts with its kind (as kube-apiserver encodes it).
_LIST_PREFIX = b'{"kind":"PartialObjectMetadataList"'
#: A watch line whose object starts with its kind: ``PartialObjectMetadata`` (or a Status).
_LINE_PREFIX = re.compile(
    rb'\{"type":"[A-Z]+","object":\{"kind":"(?:PartialObjectMetadata|Status)","apiVersion":"'
)


def partial_object(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``meta.AsPartialObjectMetadata``: an object cut down to its ``metadata``."""
    metadata = obj.get("metadata")
    return {
        "kind": PARTIAL,
        "apiVersion": _META_V1,
        "metadata": dict(metadata) if isinstance(metadata, Mapping) else {},
    }


def _list_meta(body: Mapping[str, Any]) -> dict[str, Any]:
    metadata = body.get("metadata")
    if not isinstance(metadata, Mapping):
        return {}
    keep = ("resourceVersion", "continue", "remainingItemCount")
    return {key: metadata[key] for key in keep if key in metadata}


class MetadataNegotiation:
    """The metadata-only requests of one lister-watcher, and what its server answered.

    :param what: names the resource in the WARNING (``v1/secrets``).
    """

    def __init__(self, what: str) -> None:
        self._what = what
        #: Whether the server refused the metadata ``Accept`` (406): requests ask for plain
        #: JSON from then on.
        self.refused = False
        self._warned = False

    @property
    def list_accept(self) -> str:
        """The ``Accept`` header of the next LIST."""
        return _JSON if self.refused else LIST_ACCEPT

    @property
    def watch_accept(self) -> str:
        """The ``Accept`` header of the next WATCH."""
        return _JSON if self.refused else WATCH_ACCEPT

    def refusal(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the server refusing the metadata ``Accept`` (406) — then
        requests ask for plain JSON from now on, and the caller sends its request again."""
        if self.refused or not (isinstance(exc, ApiError) and exc.code == 406):
            return False
        self.refused = True
        self._fall_back(f"it answered 406 Not Acceptable ({exc.message or exc.reason})")
        return True

    def _fall_back(self, why: str) -> None:
        if not self._warned:
            self._warned = True
            logger.warning(
                "%s: the server does not serve metadata-only (PartialObjectMetadata) answers: "
                "%s; reading whole objects and keeping their metadata",
                self._what,
                why,
            )

    def list_body(self, body: bytes) -> bytes:
        """A LIST answer as a ``PartialObjectMetadataList`` (re-encoded when the server sent
        whole objects).

        :raises TransportError: for a body that is not a JSON list.
        """
        if body.startswith(_LIST_PREFIX):
            return body
        try:
            decoded = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise TransportError(f"list of {self._what}: undecodable response ({exc})") from exc
        if not isinstance(decoded, dict) or not isinstance(decoded.get("items"), list):
            return body  # not a list: the caller reports it
        if decoded.get("kind") == PARTIAL_LIST:
            return body
        self._fall_back(f"a list came back as {decoded.get('kind') or 'an unnamed kind'}")
        items = [partial_object(i) for i in decoded["items"] if isinstance(i, Mapping)]
        cut = {
            "kind": PARTIAL_LIST,
            "apiVersion": _META_V1,
            "metadata": _list_meta(decoded),
            "items": items,
        }
        return orjson.dumps(cut)

    def watch_line(self, line: bytes) -> bytes:
        """A watch line whose object is a ``PartialObjectMetadata`` (re-encoded when the
        server sent a whole object); ``ERROR`` events and lines that are not events pass
        unchanged (the stream reports those)."""
        if _LINE_PREFIX.match(line):
            return line
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            return line
        if not isinstance(event, dict) or event.get("type") == "ERROR":
            return line
        obj = event.get("object")
        if not isinstance(obj, Mapping) or obj.get("kind") in (PARTIAL, "Status"):
            return line
        self._fall_back(f"a watch event carried a whole {obj.get('kind') or 'object'}")
        return orjson.dumps({"type": event.get("type"), "object": partial_object(obj)})
