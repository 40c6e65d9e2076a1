"""The HTTP face of the fake API server: one aiohttp handler for every path.

Each request is parsed (:mod:`.routing`), delayed by the configured latency, possibly
answered by an armed failure (:mod:`.faults`), then served: discovery, CRUD, LIST or WATCH.
Every answer is logged in the request log; every failure is a ``Status``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import orjson
from aiohttp import web

from . import discovery, openapi, status
from ._collections import delete_collection
from ._failure import StatusFailure
from ._managed import manager_from_user_agent
from ._schema import schemas
from ._shard import ShardingGate
from ._writes import accepted_patch_types
from .faults import RequestFaults
from .listing import ListRequest, compile_matcher, list_document, shard_filter, with_shard
from .patch import patch_type_of
from .request_log import RequestLog, RequestRecord
from .resources import ResourceInfo, ResourceRegistry
from .routing import RequestInfo, parse_request, truthy
from .storage import Storage
from .watch import WatchHub

__all__ = ["ApiHandler", "json_response"]

logger = logging.getLogger(__name__)

#: Serves ``/_fake/...``; None disables the admin API.
AdminHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_JSON = "application/json"


def json_response(
    body: Any, status_code: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    """An ``application/json`` answer encoded with orjson."""
    return web.Response(
        body=orjson.dumps(body), status=status_code, content_type=_JSON, headers=headers
    )


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


def _force(query: Mapping[str, str]) -> bool | None:
    raw = query.get("force")
    if raw is None:
        return None
    if raw.lower() in ("true", "1"):
        return True
    if raw.lower() in ("false", "0"):
        return False
    raise status.bad_request(f'strconv.ParseBool: parsing "{raw}": invalid syntax')


def _version_info() -> dict[str, Any]:
    """``/version``: the Kubernetes release whose schemas the fake serves."""
    served = schemas()
    major, minor, _ = served.version
    return {
        **discovery.version_info(),
        "major": str(major),
        "minor": str(minor),
        "gitVersion": f"{served.git_version}-aioinformer-fake",
    }


def _not_found_path() -> StatusFailure:
    return status.status_error(404, "NotFound", "the server could not find the requested resource")


async def _json_body(request: web.Request) -> Any:
    raw = await request.read()
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        if patch_type_of(request.content_type) == "apply":
            import yaml

            try:
                return yaml.safe_load(raw)
            except yaml.YAMLError as exc:
                raise status.bad_request(f"error decoding YAML: {exc}") from None
        raise status.bad_request("the request body is not valid JSON") from None


class ApiHandler:
    """The aiohttp request handler of one fake API server."""

    def __init__(
        self,
        *,
        registry: ResourceRegistry,
        storage: Storage,
        hub: WatchHub,
        faults: RequestFaults,
        log: RequestLog,
        admin: AdminHandler | None,
        sharding: ShardingGate | None = None,
    ) -> None:
        self._sharding = sharding
        self._registry = registry
        self._storage = storage
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
        if info.subresource and info.subresource not in res.subresources:
            raise _not_found_path()
        if info.subresource and info.verb not in ("get", "update", "patch"):
            raise status.status_error(405, message=f"{info.verb} is not allowed on status")
        verb = info.verb
        if verb == "":
            raise status.status_error(405, message=f"{request.method} is not supported here")
        if verb not in res.verbs and not info.subresource:
            raise status.status_error(
                405, message="the server does not allow this method on the requested resource"
            )
        if verb in ("get", "update", "patch", "delete") and res.namespaced and not info.namespace:
            raise _not_found_path()
        if verb == "create" and res.namespaced and not info.namespace:
            raise status.status_error(405, message="create needs a namespace in the path")
        if verb == "get":
            return json_response(self._storage.get(res, info.name, info.namespace))
        if verb == "list":
            matcher = compile_matcher(res, query)
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
            return json_response(doc)
        if verb == "watch":
            return await self._watch(request, info, res, query, record)
        if verb == "create":
            body = await _json_body(request)
            created = self._storage.create(
                res, body, namespace=info.namespace, field_manager=_field_manager(request, query)
            )
            return json_response(created, 201)
        if verb == "update":
            body = await _json_body(request)
            updated = self._storage.update(
                res,
                body,
                name=info.name,
                namespace=info.namespace,
                subresource=info.subresource,
                field_manager=_field_manager(request, query),
            )
            return json_response(updated)
        if verb == "patch":
            return await self._patch(request, info, res, query)
        if verb == "delete":
            return await self._delete(request, info, res)
        matcher = compile_matcher(res, query)
        shard = shard_filter(query, self._sharding)
        deleted = delete_collection(
            self._storage, res, namespace=info.namespace, matcher=with_shard(matcher, shard)
        )
        doc = {
            "kind": res.list_kind,
            "apiVersion": res.api_version,
            "metadata": {"resourceVersion": str(self._storage.resource_version)},
            "items": deleted,
        }
        return json_response(doc)

    def _discovery(self, request: web.Request, info: RequestInfo) -> web.StreamResponse:
        path = request.path.rstrip("/")
        if path == "/version":
            return json_response(_version_info())
        if path == "/api":
            return json_response(discovery.api_versions(request.host))
        if path == "/apis":
            return json_response(discovery.api_group_list(self._registry))
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok")
        if path == "/openapi/v3":
            return json_response(openapi.openapi_v3_root(self._registry))
        if path.startswith("/openapi/v3/"):
            document = openapi.openapi_v3_document(
                self._registry, path.removeprefix("/openapi/v3/")
            )
            if document is not None:
                return json_response(document)
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
        body = await _json_body(request)
        existed = info.name and self._exists(res, info)
        if patch_type == "apply":
            manager = query.get("fieldManager", "")
        else:
            manager = _field_manager(request, query)
        patched = self._storage.patch(
            res,
            body,
            name=info.name,
            namespace=info.namespace,
            patch_type=patch_type,
            subresource=info.subresource,
            field_manager=manager,
            force=_force(query),
        )
        return json_response(patched, 200 if existed or patch_type != "apply" else 201)

    def _exists(self, res: ResourceInfo, info: RequestInfo) -> bool:
        try:
            self._storage.get(res, info.name, info.namespace)
        except StatusFailure:
            return False
        return True

    async def _delete(
        self, request: web.Request, info: RequestInfo, res: ResourceInfo
    ) -> web.StreamResponse:
        options = await _json_body(request) if request.can_read_body else None
        preconditions = None
        if isinstance(options, dict) and isinstance(options.get("preconditions"), dict):
            preconditions = options["preconditions"]
        obj, gone = self._storage.delete(
            res, name=info.name, namespace=info.namespace, preconditions=preconditions
        )
        if not gone or res.delete_returns_object:
            return json_response(obj)
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
        match = query.get("resourceVersionMatch", "")
        if send_initial:
            if match != "NotOlderThan":
                raise _invalid_watch(
                    "resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
                    "resourceVersionMatch to NotOlderThan"
                )
            if not allow_bookmarks:
                raise _invalid_watch(
                    "allowWatchBookmarks: Forbidden: sendInitialEvents requires "
                    "allowWatchBookmarks=true"
                )
        elif match:
            raise _invalid_watch(
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch "
                "unless sendInitialEvents is provided"
            )
        timeout: float | None = None
        if query.get("timeoutSeconds"):
            try:
                timeout = float(query["timeoutSeconds"])
            except ValueError:
                raise status.bad_request("invalid timeoutSeconds") from None
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


def _invalid_watch(why: str) -> StatusFailure:
    return status.status_error(422, "Invalid", f'ListOptions.meta.k8s.io "" is invalid: {why}')
