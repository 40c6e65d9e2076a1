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

The admin API is for programs, not browsers: a page a developer visits must not be able to
inject faults into (or create objects in) a server on their machine. So a request that carries
an ``Origin`` header (browsers send one with every cross-origin request and every POST) is
refused with 403, as is one whose ``Host`` is a name other than ``localhost`` (DNS rebinding:
a page's own name resolved to 127.0.0.1), and a POST body must be ``application/json`` (415),
which a browser cannot send cross-origin without a preflight the server never answers.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import orjson
from aiohttp import web

from ._api import _status as status
from ._boundary import ApiError, status_failure

if TYPE_CHECKING:
    from ._faults import ServerFaults
    from ._objects import ServerObjects
    from ._request_log import ServerRequests

__all__ = ["AdminApi"]


class AdminTarget(Protocol):
    """What the admin API drives: a fake API server's faults, objects and request log."""

    @property
    def faults(self) -> ServerFaults: ...

    @property
    def objects(self) -> ServerObjects: ...

    @property
    def requests(self) -> ServerRequests: ...


#: Answers one POST: the server, the JSON arguments and the request; returns the JSON answer
#: (or a whole response). A missing or mistyped argument raises KeyError, TypeError or
#: ValueError, answered 400.
_Action = Callable[["AdminTarget", dict[str, Any], web.Request], Any]

_OK = {"ok": True}


def _answer(body: Any) -> web.Response:
    return web.Response(body=orjson.dumps(body), content_type="application/json")


def _drop_watches(server: AdminTarget, args: dict[str, Any], _: web.Request) -> Any:
    return {"dropped": server.faults.drop_watches(args.get("resource"))}


def _stall_watches(server: AdminTarget, args: dict[str, Any], _: web.Request) -> Any:
    return {"stalled": server.faults.stall_watches(args.get("resource"))}


def _fail_next(server: AdminTarget, args: dict[str, Any], _: web.Request) -> Any:
    server.faults.fail_next(
        int(args["n"]),
        int(args["status"]),
        retry_after=args.get("retryAfter"),
        verb=args.get("verb"),
        resource=args.get("resource"),
        message=str(args.get("message") or ""),
    )
    return _OK


def _compact(server: AdminTarget, args: dict[str, Any], _: web.Request) -> Any:
    server.faults.compact(args.get("resourceVersion"))
    return _OK


def _inject_malformed_line(server: AdminTarget, args: dict[str, Any], _: web.Request) -> Any:
    server.faults.inject_malformed_line(args.get("resource"))
    return _OK


def _inject_raw_line(server: AdminTarget, args: dict[str, Any], _: web.Request) -> Any:
    server.faults.inject_raw_line(str(args["line"]).encode(), args.get("resource"))
    return _OK


def _inject_watch_error(server: AdminTarget, args: dict[str, Any], _: web.Request) -> Any:
    ended = server.faults.inject_watch_error(
        int(args["code"]),
        str(args["reason"]),
        str(args.get("message") or ""),
        resource=args.get("resource"),
    )
    return {"ended": ended}


def _restart(server: AdminTarget, _: dict[str, Any], request: web.Request) -> Any:
    server.faults.restart(spare_transport=request.transport)
    response = _answer(_OK)
    response.force_close()  # the connection that asked goes too, once answered
    return response


def _latency(server: AdminTarget, args: dict[str, Any], _: web.Request) -> Any:
    server.faults.set_latency(float(args["seconds"]))
    return _OK


def _sharding(server: AdminTarget, args: dict[str, Any], _: web.Request) -> Any:
    enabled = args["enabled"]
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be true or false, not {enabled!r}")
    server.faults.set_sharded_list_and_watch(enabled)
    return {"shardedListAndWatch": enabled}


_POST: dict[str, _Action] = {
    "drop-watches": _drop_watches,
    "stall-watches": _stall_watches,
    "fail-next": _fail_next,
    "compact": _compact,
    "inject-malformed-line": _inject_malformed_line,
    "inject-raw-line": _inject_raw_line,
    "inject-watch-error": _inject_watch_error,
    "restart": _restart,
    "latency": _latency,
    "sharding": _sharding,
}


def _requests(server: AdminTarget) -> Any:
    return [dataclasses.asdict(r) for r in server.requests.records]


def _state(server: AdminTarget) -> Any:
    watches: int = server.requests.active_watches()
    return {"resourceVersion": server.objects.resource_version, "activeWatches": watches}


_GET: dict[str, Callable[[AdminTarget], Any]] = {"requests": _requests, "state": _state}


class AdminApi:
    """Serves ``/_fake/...`` for one server, through its public entry points only."""

    def __init__(self, server: AdminTarget) -> None:
        self._server = server

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one admin request.

        :raises StatusFailure: 404 for an unknown endpoint, 405 for another method, 400 for
            bad arguments, and what the server's API refuses (a resource it does not serve).
        """
        _refuse_browsers(request)
        action = request.path.removeprefix("/_fake/").strip("/")
        if request.method == "GET":
            read = _GET.get(action)
            if read is None:
                raise status.status_error(404, message=f"no admin endpoint GET {request.path}")
            return _answer(read(self._server))
        if request.method != "POST":
            raise status.status_error(405, message="admin endpoints take POST")
        act = _POST.get(action)
        if act is None:
            raise status.status_error(404, message=f"no admin endpoint POST {request.path}")
        args = await self._arguments(request)
        try:
            result = act(self._server, args, request)
        except (KeyError, TypeError, ValueError) as exc:
            raise status.bad_request(f"bad arguments for {action}: {exc!r}") from None
        except ApiError as exc:  # what the public API raises: answer its Status again
            raise status_failure(exc) from None
        return result if isinstance(result, web.StreamResponse) else _answer(result)

    async def _arguments(self, request: web.Request) -> dict[str, Any]:
        raw = await request.read()
        if not raw.strip():
            return {}
        if request.content_type != "application/json":
            raise status.status_error(
                415, message="admin request bodies are JSON (Content-Type: application/json)"
            )
        try:
            args = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise status.bad_request("admin request bodies are JSON objects") from None
        if not isinstance(args, dict):
            raise status.bad_request("admin request bodies are JSON objects")
        return args


def _refuse_browsers(request: web.Request) -> None:
    """Refuse what a web page could send (see the module documentation).

    :raises StatusFailure: 403 for a request with an ``Origin`` header or a ``Host`` that is
        a name other than ``localhost``.
    """
    if "Origin" in request.headers:
        raise status.status_error(
            403, message="the admin API does not answer browsers (the request has an Origin)"
        )
    host = request.host.rsplit(":", 1)[0] if request.host.count(":") == 1 else request.host
    host = host.removeprefix("[").split("]", 1)[0]
    if host == "localhost":
        return
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise status.status_error(
            403, message="the admin API answers only an IP address or localhost as Host"
        ) from None
