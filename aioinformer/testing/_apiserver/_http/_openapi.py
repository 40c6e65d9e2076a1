"""The OpenAPI documents a real API server publishes: ``/openapi/v3`` and ``/openapi/v2``.

kubectl 1.32 reads ``/openapi/v3`` (the discovery of group versions, each with a
``serverRelativeURL`` carrying a ``hash``), then ``/openapi/v3/apis/<group>/<version>``:

* ``explain`` finds the kind's schema among ``components.schemas`` by its
  ``x-kubernetes-group-version-kind`` and walks ``properties`` (``$ref``/``allOf``);
* ``create``/``apply``/``patch`` look for the kind's PATCH operation declaring the
  ``fieldValidation`` query parameter (cli-runtime ``query_param_verifier_v3.go``): found,
  they leave validation to the server;
* client-side ``apply`` reads ``x-kubernetes-patch-strategy``/``-merge-key`` from the
  schema to build its strategic merge patch.

``/openapi/v2`` is served as JSON (real servers also serve it as protobuf, which is what
kubectl asks for: :func:`v2_acceptable` says when to answer 406 instead, which kubectl
takes as "no v2 document", as it did before). Documents are built once per set of served
resources by :class:`OpenAPIDocuments`, which answers with ready JSON bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ._openapi_schema import META, closure, custom_list, custom_name, named, reference, root_name

__all__ = ["Endpoint", "OpenAPIDocuments", "v2_acceptable"]

_MEDIA = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)
_WRITE_PARAMETERS = ("dryRun", "fieldManager", "fieldValidation")
_SCALE = "io.k8s.api.autoscaling.v1.Scale"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One served resource, as the documents describe it.

    :param subresources: the ones it serves (``status``, ``scale``).
    :param verbs: the verbs it serves (the reviews of authorization.k8s.io: ``create`` only).
    :param schema: a custom resource's ``openAPIV3Schema`` (its CRD version's), None for
        a built-in kind (its schema comes from the Kubernetes definitions).
    """

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    subresources: tuple[str, ...] = ()
    custom: bool = False
    schema: Mapping[str, Any] | None = None
    verbs: tuple[str, ...] = (
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    )

    @property
    def gv_path(self) -> str:
        """``api/v1`` or ``apis/<group>/<version>``."""
        return f"apis/{self.group}/{self.version}" if self.group else f"api/{self.version}"

    def schema_name(self, kind: str = "") -> str | None:
        """The name of the kind's schema (or of ``kind`` in the same group version)."""
        kind = kind or self.kind
        if self.custom:
            return custom_name(self.group, self.version, kind)
        return root_name(self.group, self.version, kind)


def _friendly(group: str, version: str) -> tuple[str, str]:
    """The group version in operation ids and tags: ``AppsV1``/``apps_v1``,
    ``RbacAuthorizationV1``/``rbacAuthorization_v1``, ``CoreV1``/``core_v1``."""
    parts = (group.removesuffix(".k8s.io") or "core").replace("-", ".").split(".")
    camel = "".join(p[:1].upper() + p[1:] for p in parts)
    tag = parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    return f"{camel}{version[:1].upper()}{version[1:]}", f"{tag}_{version}"


def _parameter(name: str, where: str = "query", kind: str = "string") -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "in": where}
    if where == "path":
        param["required"] = True
    param["schema"] = {"type": kind, "uniqueItems": True}
    return param


class _Builder:
    """The paths of one group version, in the v2 or the v3 form."""

    def __init__(self, *, v3: bool) -> None:
        self.v3 = v3
        self.paths: dict[str, Any] = {}
        self.roots: set[str] = {f"{META}.Status", f"{META}.DeleteOptions", f"{META}.Patch"}
        #: The resource described now is a custom one (no strategic merge patch).
        self.custom = False

    def _schema(self, name: str) -> dict[str, Any]:
        self.roots.add(name)
        return {"$ref": reference(name, v3=self.v3)}

    def _body(self, name: str, patch: bool = False) -> dict[str, Any]:
        schema = self._schema(f"{META}.Patch" if patch else name)
        if not self.v3:
            return {"name": "body", "in": "body", "required": True, "schema": schema}
        media: tuple[str, ...] = _PATCH_TYPES if patch else ("*/*",)
        if self.custom:
            media = tuple(m for m in media if "strategic" not in m)
        return {"content": {m: {"schema": schema} for m in media}, "required": True}

    def _responses(self, name: str, created: bool) -> dict[str, Any]:
        codes = {"200": "OK", "201": "Created"} if created else {"200": "OK"}
        out: dict[str, Any] = {}
        for code, text in codes.items():
            schema = self._schema(name)
            if self.v3:
                out[code] = {
                    "content": {m: {"schema": schema} for m in _MEDIA},
                    "description": text,
                }
            else:
                out[code] = {"description": text, "schema": schema}
        out["401"] = {"description": "Unauthorized"}
        return out

    def operation(
        self,
        path: str,
        method: str,
        action: str,
        op_id: str,
        *,
        gvk: Mapping[str, str],
        response: str,
        tag: str,
        body: str = "",
    ) -> None:
        """One operation (``x-kubernetes-action``, ``x-kubernetes-group-version-kind``)."""
        parameters = [_parameter(p) for p in _WRITE_PARAMETERS] if body else []
        if method == "patch":
            parameters.append(_parameter("force", kind="boolean"))
        op: dict[str, Any] = {"operationId": op_id}
        if body and not self.v3:
            parameters.append(self._body(body, method == "patch"))
        elif body:
            op["requestBody"] = self._body(body, method == "patch")
        if parameters:
            op["parameters"] = parameters
        op["responses"] = self._responses(response, method in ("post", "put", "patch"))
        op["tags"] = [tag]
        op["x-kubernetes-action"] = action
        op["x-kubernetes-group-version-kind"] = dict(gvk)
        item = self.paths.setdefault(path, {})
        item[method] = op
        names = [p for p in ("name", "namespace") if "{" + p + "}" in path]
        item["parameters"] = [*(_parameter(p, "path") for p in names), _parameter("pretty")]

    def resource(self, endpoint: Endpoint) -> None:
        """Every path of one resource (collection, object, all namespaces, subresources)."""
        kind_schema = endpoint.schema_name()
        if kind_schema is None:
            return
        list_schema = endpoint.schema_name(f"{endpoint.kind}List") or kind_schema
        self.custom = endpoint.custom
        camel, tag = _friendly(endpoint.group, endpoint.version)
        scoped = "Namespaced" if endpoint.namespaced else ""
        name = f"{camel}{scoped}{endpoint.kind}"
        gvk = {"group": endpoint.group, "kind": endpoint.kind, "version": endpoint.version}
        base = "/" + endpoint.gv_path
        collection = f"{base}/namespaces/{{namespace}}/{endpoint.plural}" if scoped else ""
        collection = collection or f"{base}/{endpoint.plural}"
        item = f"{collection}/{{name}}"
        status = f"{META}.Status"
        verbs = set(endpoint.verbs)
        op = self.operation
        if "list" in verbs:
            op(collection, "get", "list", f"list{name}", gvk=gvk, response=list_schema, tag=tag)
        op(collection, "post", "post", f"create{name}", gvk=gvk, response=kind_schema, tag=tag,
           body=kind_schema)  # fmt: skip
        if verbs == {"create"}:
            return  # a review: POST only, nothing stored
        if "deletecollection" in verbs:
            op(collection, "delete", "deletecollection", f"deletecollection{name}", gvk=gvk,
               response=status, tag=tag)  # fmt: skip
        op(item, "get", "get", f"read{name}", gvk=gvk, response=kind_schema, tag=tag)
        op(item, "put", "put", f"replace{name}", gvk=gvk, response=kind_schema, tag=tag,
           body=kind_schema)  # fmt: skip
        op(item, "patch", "patch", f"patch{name}", gvk=gvk, response=kind_schema, tag=tag,
           body=kind_schema)  # fmt: skip
        op(item, "delete", "delete", f"delete{name}", gvk=gvk, response=status, tag=tag)
        if endpoint.namespaced:
            every = f"{base}/{endpoint.plural}"
            op(every, "get", "list", f"list{camel}{endpoint.kind}ForAllNamespaces", gvk=gvk,
               response=list_schema, tag=tag)  # fmt: skip
        for sub in endpoint.subresources:
            if sub == "scale":
                sub_gvk, sub_schema = (
                    {"group": "autoscaling", "kind": "Scale", "version": "v1"},
                    _SCALE,
                )
            elif sub == "status":
                sub_gvk, sub_schema = gvk, kind_schema
            else:
                continue
            path, suffix = f"{item}/{sub}", sub.capitalize()
            for method, verb in (("get", "read"), ("put", "replace"), ("patch", "patch")):
                body = "" if method == "get" else sub_schema
                op(path, method, method, f"{verb}{name}{suffix}", gvk=sub_gvk,
                   response=sub_schema, tag=tag, body=body)  # fmt: skip


def _custom_schemas(endpoints: Iterable[Endpoint], *, v3: bool) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for e in endpoints:
        if e.custom:
            found[custom_name(e.group, e.version, e.kind)] = named(
                e.group, e.version, e.kind, e.schema, v3=v3
            )
            found[custom_name(e.group, e.version, f"{e.kind}List")] = custom_list(
                e.group, e.version, e.kind, v3=v3
            )
    return found


def _dumps(document: Mapping[str, Any]) -> bytes:
    return orjson.dumps(document, option=orjson.OPT_SORT_KEYS)


class OpenAPIDocuments:
    """The documents of one set of served resources (rebuild when it changes).

    :param endpoints: the served resources.
    :param version: the Kubernetes version for ``info.version`` (``v1.37.0``).
    """

    def __init__(self, endpoints: Iterable[Endpoint], *, version: str) -> None:
        self.endpoints = list(endpoints)
        self.version = version
        self._v3: dict[str, bytes] = {}
        self._v2: bytes | None = None
        groups: dict[str, list[Endpoint]] = {}
        for endpoint in self.endpoints:
            groups.setdefault(endpoint.gv_path, []).append(endpoint)
        self._groups = groups

    def _document(self, endpoints: list[Endpoint], *, v3: bool) -> dict[str, Any]:
        builder = _Builder(v3=v3)
        for endpoint in endpoints:
            builder.resource(endpoint)
        schemas = closure(builder.roots, _custom_schemas(endpoints, v3=v3), v3=v3)
        info = {"title": "Kubernetes", "version": self.version}
        if v3:
            return {
                "openapi": "3.0.0",
                "info": info,
                "paths": builder.paths,
                "components": {"schemas": schemas},
            }
        return {"swagger": "2.0", "info": info, "paths": builder.paths, "definitions": schemas}

    def v3(self, path: str) -> bytes | None:
        """``/openapi/v3/<path>`` (``api/v1``, ``apis/apps/v1``; the ``hash`` query parameter
        needs no check), or None when no resource is served there (404)."""
        path = path.strip("/")
        if path not in self._groups:
            return None
        if path not in self._v3:
            self._v3[path] = _dumps(self._document(self._groups[path], v3=True))
        return self._v3[path]

    def v3_root(self) -> bytes:
        """``/openapi/v3``: each group version with the URL of its document, whose ``hash`` is
        the SHA-512 of the document (upper-case hex, as the real ETag)."""
        paths = {}
        for path in sorted(self._groups):
            document = self.v3(path) or b""
            digest = hashlib.sha512(document).hexdigest().upper()
            paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
        return _dumps({"paths": paths})

    def v2(self) -> bytes:
        """``/openapi/v2`` as JSON: every served path and the definitions they use."""
        if self._v2 is None:
            self._v2 = _dumps(self._document(self.endpoints, v3=False))
        return self._v2


def v2_acceptable(accept: str | None) -> bool:
    """Whether ``/openapi/v2`` may answer JSON: kubectl asks only for the protobuf form
    (``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``) and must get 406."""
    if not accept:
        return True
    kinds = [entry.split(";", 1)[0].strip().lower() for entry in accept.split(",")]
    return any(k in ("application/json", "application/*", "*/*") for k in kinds)
