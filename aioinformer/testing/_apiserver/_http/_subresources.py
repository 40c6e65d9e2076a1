"""The connect-style subresources: ``pods/log``, ``pods/eviction``, ``serviceaccounts/token``.

* ``pods/log`` (``GET``): :mod:`.._registry._podlog`.
* ``pods/eviction`` (``POST`` a ``policy/v1`` Eviction; ``pkg/registry/core/pod/storage/
  eviction.go``): the name must match the URL's (400), the pod must exist (404); the pod is
  deleted with the Eviction's ``deleteOptions`` (a scheduled pod gets its grace period) and
  the answer is ``201`` with a ``Status`` Success. PodDisruptionBudgets are not served by
  the fake, so none is checked.
* ``serviceaccounts/token`` (``POST`` an ``authentication.k8s.io/v1`` TokenRequest;
  ``pkg/registry/core/serviceaccount/storage/token.go``): ``spec.expirationSeconds``
  defaults to 3600 and must be at least 600 (422); ``spec.audiences`` defaults to the
  server's (``https://kubernetes.default.svc.cluster.local``); the answer (201) carries a
  JWT-shaped, unsigned token with the claims a real one has and ``expirationTimestamp``.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from .._api import _status as status
from .._api._failure import StatusFailure
from .._api._resources import ResourceInfo
from .._protobuf._decode import body_format, decode_protobuf_object
from .._registry._deletion import DeleteOptions
from .._registry._object_rules import now
from .._registry._podlog import LogOptions
from .._validation._fielderrors import invalid, invalid_failure
from ._io import json_response

if TYPE_CHECKING:
    from .._registry._rest import RestStorage

__all__ = [
    "CONNECT_SUBRESOURCES",
    "aggregated_entries",
    "discovery_entries",
    "serve_subresource",
]

#: (group, plural, subresource) → the discovery entry's group, version, kind and verbs.
CONNECT_SUBRESOURCES: dict[tuple[str, str, str], tuple[str, str, str, tuple[str, ...]]] = {
    ("", "pods", "log"): ("", "", "Pod", ("get",)),
    ("", "pods", "eviction"): ("policy", "v1", "Eviction", ("create",)),
    ("", "serviceaccounts", "token"): ("authentication.k8s.io", "v1", "TokenRequest", ("create",)),
}

#: The API server's default ``--api-audiences`` (its service account issuer).
AUDIENCE = "https://kubernetes.default.svc.cluster.local"


def discovery_entries(info: ResourceInfo) -> list[dict[str, Any]]:
    """The discovery entries of a resource's connect-style subresources."""
    out: list[dict[str, Any]] = []
    for (group, plural, sub), (g, v, kind, verbs) in CONNECT_SUBRESOURCES.items():
        if (info.group, info.plural, info.version) != (group, plural, "v1"):
            continue
        entry: dict[str, Any] = {
            "name": f"{plural}/{sub}",
            "singularName": "",
            "namespaced": info.namespaced,
        }
        if g:
            entry.update(group=g, version=v)
        entry.update(kind=kind, verbs=list(verbs))
        out.append(entry)
    return out


def aggregated_entries(info: ResourceInfo) -> list[dict[str, Any]]:
    """The same subresources as aggregated discovery (``apidiscovery.k8s.io/v2``) lists
    them."""
    return [
        {
            "subresource": entry["name"].partition("/")[2],
            "responseKind": {
                "group": entry.get("group", ""),
                "version": entry.get("version", info.version if entry["kind"] == info.kind else ""),
                "kind": entry["kind"],
            },
            "verbs": entry["verbs"],
        }
        for entry in discovery_entries(info)
    ]


def _method_not_allowed(verb: str, sub: str) -> StatusFailure:
    return status.status_error(405, message=f"{verb} is not allowed on {sub}")


async def serve_subresource(
    rest: RestStorage,
    request: web.Request,
    info: ResourceInfo,
    *,
    subresource: str,
    verb: str,
    name: str,
    namespace: str,
) -> web.StreamResponse:
    """Answer a request for one of :data:`CONNECT_SUBRESOURCES`."""
    wanted = CONNECT_SUBRESOURCES[(info.group, info.plural, subresource)]
    verb = {"GET": "get", "POST": "create"}.get(request.method, verb or request.method)
    if verb not in wanted[3]:
        raise _method_not_allowed(verb, subresource)
    ns = namespace or "default"
    target = rest.storage.get(info, name, ns)
    if subresource == "log":
        return await _log(rest, request, target, ns)
    body = await _body(request, wanted)
    if subresource == "eviction":
        return _evict(rest, info, target, body, ns)
    return _token(target, body)


async def _body(request: web.Request, wanted: tuple[str, str, str, tuple[str, ...]]) -> Any:
    """The posted object: protobuf (typed clients) or JSON.

    :raises StatusFailure: 400 for bytes that do not decode.
    """
    raw = await request.read()
    if not raw:
        return None
    if body_format(request.headers.get("Content-Type")) == "protobuf":
        return decode_protobuf_object(raw, api_version=f"{wanted[0]}/{wanted[1]}", kind=wanted[2])
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise status.bad_request("the request body is not valid JSON") from None


async def _log(
    rest: RestStorage, request: web.Request, pod: Mapping[str, Any], ns: str
) -> web.StreamResponse:
    options = LogOptions.parse(request.query)
    name = str(pod["metadata"]["name"])
    node = str((pod.get("spec") or {}).get("nodeName") or "")
    nodes = rest.registry.resolve("v1/nodes")
    found = rest.kubelet is not None or node in rest.storage.objects(nodes)
    container = rest.pod_logs.check(pod, options, node_found=found)
    if container is None:
        return web.Response(status=204)
    if not options.follow:
        body = rest.pod_logs.text(ns, name, container, options)
        return web.Response(body=body, content_type="text/plain")
    response = web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    try:
        await rest.pod_logs.follow(ns, name, container, options, response.write)
    except ConnectionError:
        pass  # the client left
    return response


def _evict(
    rest: RestStorage, info: ResourceInfo, pod: Mapping[str, Any], body: Any, ns: str
) -> web.StreamResponse:
    name = str(pod["metadata"]["name"])
    eviction = body if isinstance(body, dict) else {}
    in_body = str((eviction.get("metadata") or {}).get("name") or "")
    if in_body != name:
        raise status.bad_request("name in URL does not match name in Eviction object")
    options = DeleteOptions.parse(eviction.get("deleteOptions") or {}, {})
    rest.delete(info, name=name, namespace=ns, options=options)
    done = status.success_status()
    done["code"] = 201
    return json_response(done, 201)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _token(account: Mapping[str, Any], body: Any) -> web.StreamResponse:
    meta = account["metadata"]
    name, ns = str(meta["name"]), str(meta.get("namespace") or "")
    request = body if isinstance(body, dict) else {}
    spec = dict(request.get("spec") or {})
    seconds = spec.get("expirationSeconds")
    seconds = 3600 if seconds is None else seconds
    if not isinstance(seconds, int) or seconds < 600 or seconds > 2**32:
        detail = (
            "may not specify a duration less than 10 minutes"
            if isinstance(seconds, int) and seconds < 600
            else "may not specify a duration larger than 2^32 seconds"
        )
        error = invalid("spec.expirationSeconds", seconds, detail)
        raise invalid_failure("authentication.k8s.io", "TokenRequest", name, [error])
    audiences = spec.get("audiences") or [AUDIENCE]
    issued = int(time.time())
    claims = {
        "aud": audiences,
        "exp": issued + seconds,
        "iat": issued,
        "iss": AUDIENCE,
        "jti": str(uuid.uuid4()),
        "kubernetes.io": {
            "namespace": ns,
            "serviceaccount": {"name": name, "uid": meta.get("uid")},
        },
        "nbf": issued,
        "sub": f"system:serviceaccount:{ns}:{name}",
    }
    header = {"alg": "RS256", "kid": "aioinformer-fake"}
    token = ".".join(
        (_b64(orjson.dumps(header)), _b64(orjson.dumps(claims)), _b64(uuid.uuid4().bytes * 8))
    )
    expires = datetime.fromtimestamp(issued + seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    answer = {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": now()},
        "spec": {
            "audiences": audiences,
            "expirationSeconds": seconds,
            "boundObjectRef": spec.get("boundObjectRef"),
        },
        "status": {"token": token, "expirationTimestamp": expires},
    }
    return json_response(answer, 201)
