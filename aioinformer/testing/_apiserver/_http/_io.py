"""The wire side of a request: write options, bodies, ``Warning`` headers and the answer's
conversion (``Table``, ``PartialObjectMetadata``).

* options come from the query (``dryRun`` may repeat; a DELETE may carry them in its
  ``DeleteOptions`` body too);
* create and update bodies are JSON, YAML or protobuf by their ``Content-Type``
  (:func:`~._protobuf._decode.body_format`: anything else is 415); PATCH bodies are JSON (YAML for
  apply);
* every ``Warning`` text is its own ``Warning: 299 - "…"`` header;
* an ``Accept`` asking ``as=Table`` or ``as=PartialObjectMetadata[List]`` converts the
  answer (:mod:`._tables._table`); a watch converts each event's object, the first Table carrying
  the column definitions (apiserver ``handlers/response.go``, ``watchEmbeddedEncoder``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson
from aiohttp import web
from multidict import CIMultiDict, MultiMapping

from .._api import _status as status
from .._api._failure import StatusFailure
from .._api._resources import ResourceInfo
from .._apply._patch import patch_type_of
from .._protobuf._decode import body_format, decode_protobuf_object
from .._registry._deletion import DeleteOptions
from .._registry._rest_types import ResourceStrategy, WriteOptions
from .._registry._writerules import kind_of
from .._tables._table import Target, include_object, negotiate, to_partial, to_table
from .._validation._fieldvalidation import warning_header

__all__ = [
    "Output",
    "delete_options",
    "json_response",
    "object_body",
    "patch_body",
    "write_options",
]

_JSON = "application/json"


def json_response(
    body: Any,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    *,
    warnings: Iterable[str] = (),
) -> web.Response:
    """An ``application/json`` answer encoded with orjson, one ``Warning`` header per text."""
    all_headers: CIMultiDict[str] = CIMultiDict(headers or {})
    for text in warnings:
        all_headers.add("Warning", warning_header(text))
    return web.Response(
        body=orjson.dumps(body), status=status_code, content_type=_JSON, headers=all_headers
    )


def _force(query: MultiMapping[str]) -> bool | None:
    raw = query.get("force")
    if raw is None:
        return None
    if raw.lower() in ("true", "1", "t"):
        return True
    if raw.lower() in ("false", "0", "f"):
        return False
    raise status.bad_request(f'strconv.ParseBool: parsing "{raw}": invalid syntax')


def write_options(
    query: MultiMapping[str], *, field_manager: str, raw: bytes | None = None
) -> WriteOptions:
    """The options of a create, update or patch request."""
    return WriteOptions(
        field_manager=field_manager,
        field_validation=query.get("fieldValidation", ""),
        dry_run=tuple(query.getall("dryRun", ())),
        force=_force(query),
        raw=raw,
    )


def _yaml(raw: bytes) -> Any:
    import yaml

    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise status.bad_request(f"error decoding YAML: {exc}") from None


def _json(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise status.bad_request("the request body is not valid JSON") from None


async def object_body(request: web.Request, info: ResourceInfo) -> tuple[Any, bytes | None]:
    """A create or update body as a JSON value, and the raw JSON (to find duplicate fields).

    :raises StatusFailure: 415 for a content type the server does not read, 400 for bytes
        it cannot decode.
    """
    form = body_format(request.headers.get("Content-Type"))
    raw = await request.read()
    if form == "protobuf":
        custom = not kind_of(info).builtin
        obj = decode_protobuf_object(
            raw, api_version=info.api_version, kind=info.kind, custom=custom
        )
        return obj, None
    if not raw:
        return None, None
    if form == "yaml":
        return _yaml(raw), None
    return _json(raw), raw


async def patch_body(request: web.Request) -> Any:
    """A PATCH body: JSON, or YAML for an apply patch."""
    raw = await request.read()
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        if patch_type_of(request.content_type) == "apply":
            return _yaml(raw)
        raise status.bad_request("the request body is not valid JSON") from None


async def delete_options(
    request: web.Request, info: ResourceInfo, query: MultiMapping[str]
) -> DeleteOptions:
    """A DELETE's options: the ``DeleteOptions`` body, else the query."""
    body: Any = None
    if request.can_read_body:
        form = body_format(request.headers.get("Content-Type"))
        raw = await request.read()
        if raw and form == "protobuf":
            body = decode_protobuf_object(raw, api_version=info.api_version, kind="DeleteOptions")
        elif raw:
            body = _yaml(raw) if form == "yaml" else _json(raw)
    return DeleteOptions.parse(body, {key: query.getall(key) for key in set(query)})


class Output:
    """What the ``Accept`` header asks the answer to become (``strategy``: the resource's, which
    reads stored objects in the requested version).

    :raises StatusFailure: 406 for an ``Accept`` the server cannot serve, 400 for a bad
        ``includeObject``.
    """

    def __init__(
        self,
        request: web.Request,
        info: ResourceInfo,
        query: Mapping[str, str],
        strategy: ResourceStrategy,
    ):
        self.info = info
        self._strategy = strategy
        self.target: Target | None = negotiate(request.headers.get("Accept"))
        self.include = include_object(query) if self._table else ""

    @property
    def _table(self) -> bool:
        return self.target is not None and self.target.kind == "Table"

    def convert(
        self, result: Mapping[str, Any], *, no_headers: bool = False, stored: bool = True
    ) -> Any:
        """The answer for ``result`` (an object, or a list with ``items``); a ``Status`` is
        never converted. ``stored``: ``result`` holds stored objects (a custom resource's
        are read in the requested version; a bookmark is not)."""
        if stored:
            result = self._strategy.view_result(self.info, result)
        target = self.target
        if target is None or result.get("kind") == "Status":
            return result
        if target.kind != "Table":
            return to_partial(result, target)
        custom = not kind_of(self.info).builtin
        served = self.info.custom
        columns = served.version(self.info.version).columns if served is not None else ()
        return to_table(
            result,
            api_version=self.info.api_version,
            kind=self.info.kind,
            version=target.version,
            include=self.include,
            no_headers=no_headers,
            printer_columns=columns if custom else None,
        )

    def watch_converter(self) -> Callable[[bytes], bytes] | None:
        """A function converting each encoded watch line, or None when nothing changes:
        ``ERROR`` events keep their ``Status``, an object that cannot be converted is sent
        as it is (as ``watchEmbeddedEncoder`` does), the column definitions come once."""
        if self.target is None and self.info.custom is None:
            return None
        headers_sent = False

        def convert(line: bytes) -> bytes:
            nonlocal headers_sent
            event = orjson.loads(line)
            obj = event.get("object")
            kind = event.get("type")
            if kind == "ERROR" or not isinstance(obj, dict):
                return line
            if kind == "BOOKMARK" and self.target is None:
                return line
            try:
                event["object"] = self.convert(
                    obj, no_headers=headers_sent, stored=kind != "BOOKMARK"
                )
            except StatusFailure:
                return line
            headers_sent = True
            return orjson.dumps(event) + b"\n"

        return convert
