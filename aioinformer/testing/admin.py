"""The fault-injection HTTP API of a fake API server (``admin_api=True``; on in the CLI).

Every endpoint lives under ``/_fake/`` and answers JSON. ``POST`` bodies are JSON objects;
an empty body means "no arguments". ``resource`` (optional everywhere it appears) takes the
same spellings as the in-process API (``"pods"``, ``"apps/v1/deployments"``, ...).

==========================================  =================================================
``POST /_fake/drop-watches``                ``{"resource"?}`` → ``{"dropped": n}``
``POST /_fake/stall-watches``               ``{"resource"?}`` → ``{"stalled": n}``
``POST /_fake/fail-next``                   ``{"n", "status", "retryAfter"?, "verb"?,
                                            "resource"?, "message"?}``
``POST /_fake/compact``                     ``{"resourceVersion"?}``
``POST /_fake/inject-malformed-line``       ``{"resource"?}``
``POST /_fake/inject-raw-line``             ``{"line", "resource"?}`` (``line`` is text)
``POST /_fake/inject-watch-error``          ``{"code", "reason", "message"?, "resource"?}``
                                            → ``{"ended": n}``
``POST /_fake/restart``                     drops every other connection; this one closes
                                            after the answer
``POST /_fake/latency``                     ``{"seconds"}``
``POST /_fake/sharding``                    ``{"enabled"}``: the ``ShardedListAndWatch`` gate
                                            → ``{"shardedListAndWatch": enabled}``
``GET /_fake/requests``                     the request log, a JSON list
``GET /_fake/state``                        ``{"resourceVersion", "activeWatches"}``
==========================================  =================================================

Errors are ``Status`` objects (400 for a bad body, 404 for an unknown endpoint).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from . import status

if TYPE_CHECKING:
    from .server import FakeApiServer

__all__ = ["AdminApi"]


def _answer(body: Any) -> web.Response:
    return web.Response(body=orjson.dumps(body), content_type="application/json")


class AdminApi:
    """Serves ``/_fake/...`` for one server."""

    def __init__(self, server: FakeApiServer) -> None:
        self._server = server

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one admin request."""
        action = request.path.removeprefix("/_fake/").strip("/")
        server = self._server
        if request.method == "GET":
            if action == "requests":
                return _answer([dataclasses.asdict(r) for r in server.requests])
            if action == "state":
                return _answer(
                    {
                        "resourceVersion": server.resource_version,
                        "activeWatches": server.active_watches(),
                    }
                )
            raise status.status_error(404, message=f"no admin endpoint GET {request.path}")
        if request.method != "POST":
            raise status.status_error(405, message="admin endpoints take POST")
        args = await self._arguments(request)
        resource = args.get("resource")
        try:
            if action == "drop-watches":
                return _answer({"dropped": server.drop_watches(resource)})
            if action == "stall-watches":
                return _answer({"stalled": server.stall_watches(resource)})
            if action == "fail-next":
                server.fail_next(
                    int(args["n"]),
                    int(args["status"]),
                    retry_after=args.get("retryAfter"),
                    verb=args.get("verb"),
                    resource=resource,
                    message=str(args.get("message") or ""),
                )
            elif action == "compact":
                server.compact(args.get("resourceVersion"))
            elif action == "inject-malformed-line":
                server.inject_malformed_line(resource)
            elif action == "inject-raw-line":
                server.inject_raw_line(str(args["line"]).encode(), resource)
            elif action == "inject-watch-error":
                ended = server.inject_watch_error(
                    int(args["code"]),
                    str(args["reason"]),
                    str(args.get("message") or ""),
                    resource=resource,
                )
                return _answer({"ended": ended})
            elif action == "restart":
                server._restart(exclude=request.transport)
                response = _answer({"ok": True})
                response.force_close()
                return response
            elif action == "latency":
                server.set_latency(float(args["seconds"]))
            elif action == "sharding":
                enabled = args["enabled"]
                if not isinstance(enabled, bool):
                    raise TypeError(f"enabled must be true or false, not {enabled!r}")
                server.set_sharded_list_and_watch(enabled)
                return _answer({"shardedListAndWatch": enabled})
            else:
                raise status.status_error(404, message=f"no admin endpoint POST {request.path}")
        except (KeyError, TypeError, ValueError) as exc:
            raise status.bad_request(f"bad arguments for {action}: {exc!r}") from None
        return _answer({"ok": True})

    async def _arguments(self, request: web.Request) -> dict[str, Any]:
        raw = await request.read()
        if not raw.strip():
            return {}
        try:
            args = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise status.bad_request("admin request bodies are JSON objects") from None
        if not isinstance(args, dict):
            raise status.bad_request("admin request bodies are JSON objects")
        return args
