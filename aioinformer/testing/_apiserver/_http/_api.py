"""The HTTP face of the fake API server: one aiohttp handler for every path.

Each request is parsed (:mod:`._routing`), delayed by the configured latency, possibly
answered by an armed failure (:mod:`._faults`), then served: discovery, CRUD, LIST or WATCH.
Every answer is logged in the request log; every failure is a ``Status``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import orjson
from aiohttp import web

from .._api import _status as status
from .._api._failure import StatusFailure
from .._api._resources import ResourceInfo, ResourceRegistry
from .._apply._managed import manager_from_user_agent
from .._apply._patch import patch_type_of
from .._apply._writes import accepted_patch_types
from .._registry._collections import delete_collection
from .._registry._listing import (
    ListRequest,
    compile_matcher,
    list_document,
    shard_filter,
    with_shard,
)
from .._registry._rest import RestStorage
from .._registry._scale import get_scale
from .._registry._watch import WatchHub
from .._selectors._shard import ShardingGate
from . import _discovery as discovery
from ._discovery_aggregated import aggregated_media_type, api_discovery, apis_discovery
from ._io import (
    Output,
    delete_options,
    json_response,
    object_body,
    patch_body,
    write_options,
)
from ._listoptions import MIN_REQUEST_TIMEOUT, server_watch_timeout, validate_list_options
from ._openapi import v2_acceptable
from ._openapi_served import ServedDocuments
from ._request_faults import RequestFaults
from ._request_log import RequestLog, RequestRecord
from ._routing import RequestInfo, parse_request, truthy
from ._subresources import CONNECT_SUBRESOURCES, serve_subresource

__all__ = ["ApiHandler", "json_response"]

logger = logging.getLogger(__name__)

#: Serves ``/_fake/...``; None disables the admin API.
AdminHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_JSON = "application/json"


def error_response(failure: StatusFailure) -> web.Response:
    """The ``Status`` answer for a failure (with ``Retry-After`` when it has one)."""
    headers = {}
    if failure.retry_after is not None:
        headers["Retry-After"] = str(max(1, round(failure.retry_after)))
    return json_response(failure.status, failure.code, headers)


def _field_manager(request: web.Request, query: Mapping[str, str]) -> str:
    """``fieldManager``, else what the real server derives from the ``User-Agent``."""
    return query.get("fieldManager") or manager_from_user_agent(
        request.headers.get("User-Agent", "")
    )


def _not_found_path() -> StatusFailure:
    return status.status_error(404, "NotFound", "the server could not find the requested resource")


def _json_bytes(body: bytes) -> web.Response:
    return web.Response(body=body, content_type=_JSON)


class ApiHandler:
    """The aiohttp request handler of one fake API server."""

    def __init__(
        self,
        *,
        registry: ResourceRegistry,
        rest: RestStorage,
        hub: WatchHub,
        faults: RequestFaults,
        log: RequestLog,
        admin: AdminHandler | None,
        sharding: ShardingGate | None = None,
        min_request_timeout: float = MIN_REQUEST_TIMEOUT,
    ) -> None:
        self._min_request_timeout = min_request_timeout
        self._sharding = sharding
        self._registry = registry
        self._rest = rest
        self._storage = rest.storage
        self._openapi = ServedDocuments(registry)
        self._hub = hub
        self._faults = faults
        self._log = log
        self._admin = admin

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one request."""
        query = dict(request.query)
        info = parse_request(request.method, request.path, query)
        logged = False

        def record(code: int) -> None:
            nonlocal logged
            logged = True
            self._log.append(
                RequestRecord(
                    method=request.method,
                    path=request.path,
                    query=query,
                    verb=info.verb,
                    group=info.group,
                    version=info.version,
                    resource=info.resource,
                    subresource=info.subresource,
                    namespace=info.namespace,
                    name=info.name,
                    status=code,
                )
            )

        response: web.StreamResponse
        try:
            if info.verb == "admin":
                if self._admin is None:
                    raise _not_found_path()
                response = await self._admin(request)
            else:
                if self._faults.latency > 0:
                    await asyncio.sleep(self._faults.latency)
                injected = self._faults.take(info)
                if injected is not None:
                    raise injected
                response = await self._serve(request, info, query, record)
        except StatusFailure as failure:
            response = error_response(failure)
        except Exception:
            logger.exception("fake API server failed on %s %s", request.method, request.path)
            response = error_response(status.status_error(500, message="fake API server bug"))
        if not logged:
            record(response.status)
        return response

    async def _serve(
        self,
        request: web.Request,
        info: RequestInfo,
        query: dict[str, str],
        record: Callable[[int], None],
    ) -> web.StreamResponse:
        if info.verb == "discovery":
            return self._discovery(request, info)
        if not info.is_resource:
            raise _not_found_path()
        res = self._registry.lookup(info.group, info.version, info.resource)
        if res is None or (info.namespace and not res.namespaced):
            raise _not_found_path()
        if (res.group, res.plural, info.subresource) in CONNECT_SUBRESOURCES:
            return await serve_subresource(
                self._rest,
                request,
                res,
                subresource=info.subresource,
                verb=info.verb,
                name=info.name,
                namespace=info.namespace,
            )
        if info.subresource and info.subresource not in res.subresources:
            raise _not_found_path()
        if info.subresource and info.verb not in ("get", "update", "patch"):
            raise status.status_error(405, message=f"{info.verb} is not allowed on status")
        verb = info.verb
        if verb == "":
            raise status.status_error(405, message=f"{request.method} is not supported here")
        if verb not in res.verbs and not info.subresource and res.custom is None:
            raise status.status_error(
                405, message="the server does not allow this method on the requested resource"
            )
        if verb in ("get", "update", "patch", "delete") and res.namespaced and not info.namespace:
            raise _not_found_path()
        if verb == "create" and res.namespaced and not info.namespace:
            raise status.status_error(405, message="create needs a namespace in the path")
        if verb in ("create", "update"):
            return await self._write(request, info, res, query)
        if verb == "patch":
            return await self._patch(request, info, res, query)
        if verb == "delete":
            return await self._delete(request, info, res)
        output = Output(request, res, query, self._rest.strategy(res))
        if verb == "get" and info.subresource == "scale":
            return json_response(get_scale(self._rest, res, info.name, info.namespace))
        if verb == "get":
            return json_response(output.convert(self._storage.get(res, info.name, info.namespace)))
        if verb == "watch":
            return await self._watch(request, info, res, query, record, output)
        matcher = compile_matcher(res, query)
        if verb == "list":
            validate_list_options(query, watch=False)
            list_request = ListRequest.from_query(query)
            shard = shard_filter(query, self._sharding)  # in the registry: after 400s and 422s
            doc = list_document(
                self._storage,
                res,
                namespace=info.namespace,
                matcher=with_shard(matcher, shard),
                request=list_request,
                shard=shard,
            )
            return json_response(output.convert(doc))
        shard = shard_filter(query, self._sharding)
        deleted = delete_collection(
            self._rest,
            res,
            namespace=info.namespace,
            matcher=with_shard(matcher, shard),
            options=await delete_options(request, res, request.query),
        )
        doc = {
            "kind": res.list_kind,
            "apiVersion": res.api_version,
            "metadata": {"resourceVersion": str(self._storage.resource_version)},
            "items": deleted,
        }
        return json_response(output.convert(doc))

    async def _write(
        self, request: web.Request, info: RequestInfo, res: ResourceInfo, query: dict[str, str]
    ) -> web.StreamResponse:
        """POST and PUT."""
        output = Output(request, res, query, self._rest.strategy(res))
        body, raw = await object_body(request, res)
        options = write_options(
            request.query, field_manager=_field_manager(request, query), raw=raw
        )
        if info.verb == "create":
            written = self._rest.create(res, body, namespace=info.namespace, options=options)
            code = 201
        else:
            written = self._rest.update(
                res,
                body,
                name=info.name,
                namespace=info.namespace,
                subresource=info.subresource,
                options=options,
            )
            code = 200
        return json_response(output.convert(written.obj), code, warnings=written.warnings)

    def _discovery(self, request: web.Request, info: RequestInfo) -> web.StreamResponse:
        path = request.path.rstrip("/")
        if path == "/version":
            return json_response(discovery.version_info())
        if path in ("/api", "/apis"):
            media = aggregated_media_type(request.headers.get("Accept"))
            if media is not None:
                build = api_discovery if path == "/api" else apis_discovery
                body = orjson.dumps(build(self._registry, media))
                return web.Response(body=body, headers={"Content-Type": media})
        if path == "/api":
            return json_response(discovery.api_versions(request.host))
        if path == "/apis":
            return json_response(discovery.api_group_list(self._registry))
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok")
        documents = self._openapi.documents
        if path == "/openapi/v3":
            return _json_bytes(documents.v3_root())
        if path.startswith("/openapi/v3/"):
            document = documents.v3(path.removeprefix("/openapi/v3/"))
            if document is not None:
                return _json_bytes(document)
        if path == "/openapi/v2":
            if not v2_acceptable(request.headers.get("Accept")):
                raise status.status_error(
                    406, "NotAcceptable", "only application/json is served for /openapi/v2"
                )
            return _json_bytes(documents.v2())
        if info.group and not info.version:
            versions = self._registry.groups().get(info.group)
            if versions:
                return json_response(discovery.api_group(info.group, versions))
        elif info.version:
            doc = discovery.api_resource_list(self._registry, info.group, info.version)
            if doc is not None:
                return json_response(doc)
        raise _not_found_path()

    async def _patch(
        self, request: web.Request, info: RequestInfo, res: ResourceInfo, query: dict[str, str]
    ) -> web.StreamResponse:
        accepted = accepted_patch_types(res)
        patch_type = patch_type_of(request.content_type)
        if patch_type is None or request.content_type not in accepted:
            raise status.status_error(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types "
                f"include: {', '.join(accepted)}",
            )
        output = Output(request, res, query, self._rest.strategy(res))
        body = await patch_body(request)
        if patch_type == "apply":
            manager = query.get("fieldManager", "")
        else:
            manager = _field_manager(request, query)
        written = self._rest.patch(
            res,
            body,
            name=info.name,
            namespace=info.namespace,
            patch_type=patch_type,
            subresource=info.subresource,
            options=write_options(request.query, field_manager=manager),
        )
        code = 201 if written.created else 200
        return json_response(output.convert(written.obj), code, warnings=written.warnings)

    async def _delete(
        self, request: web.Request, info: RequestInfo, res: ResourceInfo
    ) -> web.StreamResponse:
        output = Output(request, res, dict(request.query), self._rest.strategy(res))
        options = await delete_options(request, res, request.query)
        written = self._rest.delete(res, name=info.name, namespace=info.namespace, options=options)
        obj = written.obj
        if not written.gone:  # 202 only when asked to cascade (handlers/delete.go)
            code = 202 if options.orphan_dependents is False else 200
            return json_response(output.convert(obj), code)
        if res.delete_returns_object:
            return json_response(output.convert(obj))
        details: dict[str, Any] = {"name": info.name}
        if res.group:
            details["group"] = res.group
        details.update(kind=res.plural, uid=obj["metadata"].get("uid", ""))
        return json_response(status.success_status(details))

    async def _watch(
        self,
        request: web.Request,
        info: RequestInfo,
        res: ResourceInfo,
        query: dict[str, str],
        record: Callable[[int], None],
        output: Output,
    ) -> web.StreamResponse:
        selector_query = dict(query)
        if info.name:
            name_term = f"metadata.name={info.name}"
            existing = query.get("fieldSelector", "")
            selector_query["fieldSelector"] = f"{name_term},{existing}" if existing else name_term
        matcher = compile_matcher(res, selector_query)
        raw_initial = query.get("sendInitialEvents")
        send_initial = None if raw_initial is None else truthy(raw_initial)
        allow_bookmarks = truthy(query.get("allowWatchBookmarks"))
        validate_list_options(query, watch=True)
        timeout: float | None = None
        if query.get("timeoutSeconds"):
            try:
                timeout = float(query["timeoutSeconds"])
            except ValueError:
                raise status.bad_request("invalid timeoutSeconds") from None
        else:
            timeout = server_watch_timeout(self._min_request_timeout)
        matcher = with_shard(matcher, shard_filter(query, self._sharding))
        watcher = self._hub.open(
            res,
            namespace=info.namespace,
            matcher=matcher,
            resource_version=query.get("resourceVersion", ""),
            send_initial_events=send_initial,
            allow_bookmarks=allow_bookmarks,
            timeout_seconds=timeout if timeout and timeout > 0 else None,
            transport=request.transport,
            convert=output.watch_converter(),
        )
        try:
            response = web.StreamResponse(status=200, headers={"Content-Type": _JSON})
            response.enable_chunked_encoding()
            await response.prepare(request)
            record(200)
            try:
                await watcher.serve(response)
            except ConnectionError:
                logger.debug("watch client of %s went away", res)
            return response
        finally:
            self._hub.close(watcher)
