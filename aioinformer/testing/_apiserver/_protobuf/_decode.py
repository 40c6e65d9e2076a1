"""``application/vnd.kubernetes.protobuf`` request bodies, decoded as a real API server does.

kubectl's typed commands (``kubectl create namespace|configmap|secret|deployment|service|
job|cronjob|quota|role|…``, ``create token``) send their object as protobuf: the magic
``k8s\\0``, then a ``runtime.Unknown`` envelope (``typeMeta`` apiVersion/kind, ``raw`` the
object's own encoding per ``generated.proto``, ``contentEncoding``, ``contentType``). The
real server (``k8s.io/apimachinery/pkg/runtime/serializer/protobuf``, ``Serializer.Decode``)
fills a missing kind or version from the endpoint, unmarshals ``raw`` into the Go type and
stores it; :func:`decode_protobuf_object` returns the JSON of that Go object, so the
request can go on as if it had been sent as JSON.

Custom resources cannot be protobuf: the real decoder fails on ``Unstructured`` and the
create/update handler answers 400 (``transformDecodeError``). A built-in kind this module
has no table for is the fake's limitation: 415, naming ``application/json``.
"""

from __future__ import annotations

from typing import Any, Literal

from .._api._failure import StatusFailure
from .._api._status import bad_request, status_error
from . import _apis, _core  # noqa: F401  (they register the tables)
from ._wire import MESSAGES, ProtobufError, decode_message, iter_fields

__all__ = [
    "JSON",
    "PROTOBUF",
    "YAML",
    "body_format",
    "decode_protobuf_object",
    "decodable_kinds",
]

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
#: What a built-in resource accepts for create and update bodies, in the real order
#: (the codec factory's serializers: JSON, YAML, protobuf; CBOR only behind a feature gate).
_ACCEPTED = (JSON, YAML, PROTOBUF)
_MAGIC = b"k8s\x00"

_GROUPS = {
    "core": "",
    "apps": "apps",
    "batch": "batch",
    "rbac": "rbac.authorization.k8s.io",
    "networking": "networking.k8s.io",
    "policy": "policy",
    "scheduling": "scheduling.k8s.io",
    "authn": "authentication.k8s.io",
    "as1": "autoscaling",
    "as2": "autoscaling",
    "coordination": "coordination.k8s.io",
    "events": "events.k8s.io",
}
#: The kinds a body may carry (the tables hold their whole closure).
_ROOTS = {
    "core": "Namespace ConfigMap Secret Service ServiceAccount ResourceQuota Pod Event Binding",
    "apps": "Deployment StatefulSet DaemonSet ReplicaSet",
    "batch": "Job CronJob",
    "rbac": "Role ClusterRole RoleBinding ClusterRoleBinding",
    "networking": "Ingress",
    "policy": "PodDisruptionBudget Eviction",
    "scheduling": "PriorityClass",
    "authn": "TokenRequest",
    "as1": "HorizontalPodAutoscaler Scale",
    "as2": "HorizontalPodAutoscaler",
    "coordination": "Lease",
    "events": "Event",
}


def _kinds() -> dict[tuple[str, str, str], str]:
    kinds: dict[tuple[str, str, str], str] = {}
    for package, names in _ROOTS.items():
        version = "v2" if package == "as2" else "v1"
        for kind in names.split():
            assert f"{package}.{kind}" in MESSAGES, kind
            kinds[(_GROUPS[package], version, kind)] = f"{package}.{kind}"
    return kinds


_KINDS = _kinds()


def decodable_kinds() -> list[tuple[str, str, str]]:
    """``(group, version, kind)`` of every kind whose protobuf body this module decodes."""
    return sorted(_KINDS)


def _media_type(header: str | None) -> str:
    return (header or "").split(";", 1)[0].strip().lower()


def body_format(content_type: str | None) -> Literal["json", "yaml", "protobuf"]:
    """How to read a create or update body, from its ``Content-Type``.

    No header means JSON (the first serializer). Anything else is the real 415
    (``negotiation.NegotiateInputSerializerForMediaType``, ``errUnsupportedMediaType``).
    """
    media = _media_type(content_type) or JSON
    if media == JSON:
        return "json"
    if media == YAML:
        return "yaml"
    if media == PROTOBUF:
        return "protobuf"
    raise _unsupported(_ACCEPTED)


def _unsupported(accepted: tuple[str, ...], note: str = "") -> StatusFailure:
    message = (
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted)
    )
    return status_error(415, "UnsupportedMediaType", message + note)


def _split(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _envelope(body: bytes, into: str) -> tuple[str, str, bytes]:
    """``(apiVersion, kind, raw)`` of the ``runtime.Unknown`` after the magic."""
    if not body:
        raise _unrecognized(into, "empty data", body)
    if not body.startswith(_MAGIC):
        reason = "provided data does not appear to be a protobuf message, expected prefix "
        raise _unrecognized(into, reason + "[107 56 115 0]", body)
    if len(body) == len(_MAGIC):
        raise _unrecognized(into, "empty body", body)
    api_version = kind = ""
    raw = b""
    try:
        for number, _, value in iter_fields(body[len(_MAGIC) :]):
            if number == 1 and isinstance(value, bytes):
                for field, _, text in iter_fields(value):
                    if field == 1 and isinstance(text, bytes):
                        api_version = text.decode()
                    elif field == 2 and isinstance(text, bytes):
                        kind = text.decode()
            elif number == 2 and isinstance(value, bytes):
                raw = value
    except (ProtobufError, UnicodeDecodeError) as exc:
        raise _unrecognized(into, str(exc), body) from None
    return api_version, kind, raw


def _unrecognized(into: str, why: str, body: bytes) -> StatusFailure:
    """``transformDecodeError`` when the decoder could not tell the kind."""
    if not body:
        summary = "<empty>"
    elif body[:1] == b"{":
        summary = body[:30].decode(errors="replace") + (" ..." if len(body) > 30 else "")
    else:
        summary = body[:30].hex() + (" ..." if len(body) > 30 else "")
    return bad_request(
        f"the object provided is unrecognized (must be of type {into}): {why} ({summary})"
    )


def decode_protobuf_object(
    body: bytes, *, api_version: str, kind: str, custom: bool = False
) -> dict[str, Any]:
    """The object a protobuf request body carries, as the JSON dict a real server stores.

    :param body: the request body (``k8s\\0`` + ``runtime.Unknown``).
    :param api_version: the endpoint's API version (``"apps/v1"``), the default for an
        envelope without one.
    :param kind: the endpoint's kind (``"Deployment"``; for a subresource its body kind,
        e.g. ``"TokenRequest"``), the default for an envelope without one.
    :param custom: whether the endpoint serves a custom resource (never protobuf).
    :returns: ``{"kind", "apiVersion", "metadata", …}`` as the Go object's JSON (see
        :mod:`._protobuf._wire`), before defaulting and validation.
    :raises StatusFailure: 400 for bytes a real server rejects (with its message), 400 for a
        custom resource, 415 for a built-in kind the fake has no table for.
    """
    sent_version, sent_kind, raw = _envelope(body, kind)
    if not sent_kind:
        sent_kind = kind
    if not _split(sent_version)[1]:
        sent_version = api_version
    group, version = _split(sent_version)
    prefix = f'{sent_kind} in version "{version}" cannot be handled as a {kind}: '
    if custom:
        raise bad_request(
            prefix + "object *unstructured.Unstructured does not implement the protobuf "
            "marshalling interface and cannot be encoded to a protobuf message"
        )
    message = _KINDS.get((group, version, sent_kind))
    if sent_kind == "DeleteOptions":  # registered in every group version (AddToGroupVersion)
        message = "meta.DeleteOptions"
    if message is None:
        raise _unsupported(
            (JSON, YAML),
            f" (aioinformer's fake API server cannot decode {PROTOBUF} bodies of "
            f"{sent_version} {sent_kind}; send it as {JSON})",
        )
    try:
        decoded = decode_message(message, raw)
    except ProtobufError as exc:
        raise bad_request(prefix + str(exc)) from None
    return {"kind": sent_kind, "apiVersion": sent_version, **decoded}
