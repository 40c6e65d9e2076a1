"""Protobuf request bodies decoded as a real API server decodes them.

kubectl's typed commands send ``application/vnd.kubernetes.protobuf``; the oracle for each
command is kubectl itself: ``--dry-run=client -o json`` prints ``encoding/json`` of the very
Go object the command then sends as protobuf, so the decoded body must equal that JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from aioinformer.testing._apiserver._api._failure import StatusFailure
from aioinformer.testing._apiserver._protobuf._decode import (
    PROTOBUF,
    body_format,
    decodable_kinds,
    decode_protobuf_object,
)
from aioinformer.testing._apiserver._protobuf._wire import (
    ProtobufError,
    decode_message,
    iter_fields,
)
from aioinformer.testing._apiserver._tables._table import negotiate

from .tiny_server import (
    KUBECTL,
    NO_KUBECTL,
    Kubectl,
    Recorded,
    TinyServer,
    discovery,
    status,
)

# --- a minimal encoder, so tests can build bodies kubectl never sends


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def v(number: int, value: int) -> bytes:
    """A varint field."""
    return _varint(number << 3) + _varint(value)


def b(number: int, value: bytes | str) -> bytes:
    """A length-delimited field."""
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """``k8s\\0`` + ``runtime.Unknown`` (apimachinery ``pkg/runtime/generated.proto``)."""
    return b"k8s\x00" + b(1, b(1, api_version) + b(2, kind)) + b(2, raw)


# --- the wire format


def test_varints_are_read_as_go_ints() -> None:
    """Protobuf encoding spec: base-128 varints; Go writes a negative int32 sign-extended to
    ten bytes, and ``int64`` fields read back negative (gogo ``Unmarshal``)."""
    meta = v(7, 300) + v(10, -5)  # generation, deletionGracePeriodSeconds
    decoded = decode_message("meta.ObjectMeta", meta)
    assert decoded == {"generation": 300, "deletionGracePeriodSeconds": -5}
    assert len(v(1, -1)) == 11


def test_unknown_fields_are_skipped_and_bad_bytes_rejected() -> None:
    """gogo's generated ``Unmarshal`` skips unknown field numbers (a newer client's fields)
    and fails on truncated data (``io.ErrUnexpectedEOF``) or a wrong wire type."""
    assert decode_message("meta.ObjectMeta", b(1, "x") + b(99, "new") + v(98, 1)) == {"name": "x"}
    with pytest.raises(ProtobufError, match="unexpected EOF"):
        decode_message("meta.ObjectMeta", b(1, "abc")[:-1])
    with pytest.raises(ProtobufError, match="wrong wireType = 0 for field name"):
        decode_message("meta.ObjectMeta", v(1, 3))
    assert list(iter_fields(b(2, "x"))) == [(2, 2, b"x")]


def test_packed_repeated_scalars_are_accepted() -> None:
    """proto2 parsers accept a packed encoding of a repeated scalar
    (``PodSecurityContext.supplementalGroups`` is ``repeated int64``)."""
    packed = b(4, _varint(1) + _varint(2))
    assert decode_message("core.PodSecurityContext", packed) == {"supplementalGroups": [1, 2]}
    assert decode_message("core.PodSecurityContext", v(4, 1) + v(4, 2)) == {
        "supplementalGroups": [1, 2]
    }


def test_go_json_rules_for_absent_zero_and_pointer_fields() -> None:
    """``encoding/json`` of the decoded Go struct: a pointer present on the wire is written even
    when zero (``replicas: 0``) and one without ``omitempty`` is ``null`` when absent
    (``selector``), a non-pointer struct is always written (``strategy: {}``,
    ``status: {}``), a field without ``omitempty`` is written when absent (``containers:
    null``, ``name: ""``), an ``omitempty`` zero is left out (k8s.io/api ``apps/v1/types.go``,
    ``core/v1/types.go``)."""
    spec = v(1, 0) + b(3, b(2, b(2, b(2, "img"))))  # replicas 0; template.spec.containers[0]
    decoded = decode_message("apps.Deployment", b(1, b(1, "web")) + b(2, spec))
    assert decoded == {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 0,
            "selector": None,
            "template": {
                "metadata": {},
                "spec": {"containers": [{"name": "", "image": "img", "resources": {}}]},
            },
            "strategy": {},
        },
        "status": {},
    }
    assert decode_message("apps.DeploymentSpec", b"")["template"]["spec"] == {"containers": None}


def test_special_types() -> None:
    """``metav1.Time`` keeps seconds only and prints RFC 3339 (``time_proto.go``,
    ``Time.MarshalJSON``), ``MicroTime`` six fractional digits, ``IntOrString`` its int or
    string by ``type``, ``Quantity`` its string, ``[]byte`` base64, ``FieldsV1`` its JSON."""
    stamp = b(9, v(1, 1_700_000_000) + v(2, 999))
    managed = b(17, b(1, "kubectl") + b(6, "FieldsV1") + b(7, b(1, b'{"f:data":{}}')))
    assert decode_message("meta.ObjectMeta", stamp + managed) == {
        "deletionTimestamp": "2023-11-14T22:13:20Z",
        "managedFields": [
            {"manager": "kubectl", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}}}
        ],
    }
    event_time = b(10, v(1, 1_700_000_000) + v(2, 123_456_789))
    assert decode_message("core.Event", event_time)["eventTime"] == "2023-11-14T22:13:20.123456Z"
    assert decode_message("core.Event", b"")["eventTime"] is None
    port = b(1, v(1, 1) + b(3, "http"))  # IntOrString type 1 (String)
    assert decode_message("networking.ServiceBackendPort", v(2, 80)) == {"number": 80}
    assert decode_message("core.HTTPGetAction", b(2, port[2:])) == {"port": "http"}
    hard = b(1, b(1, "cpu") + b(2, b(1, "500m")))
    assert decode_message("core.ResourceQuotaSpec", hard) == {"hard": {"cpu": "500m"}}
    assert decode_message("core.Secret", b(2, b(1, "k") + b(2, b"\xff"))) == {
        "metadata": {},
        "data": {"k": "/w=="},
    }


# --- the envelope and the server's decisions


def test_envelope_kind_and_defaults() -> None:
    """``protobuf.Serializer.Decode``: the envelope's typeMeta names the object; a missing kind
    or version comes from the endpoint (``copyKindDefaults``). JSON puts kind first."""
    body = envelope("v1", "ConfigMap", b(1, b(1, "c")) + b(2, b(1, "a") + b(2, "b")))
    assert decode_protobuf_object(body, api_version="v1", kind="ConfigMap") == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "c"},
        "data": {"a": "b"},
    }
    bare = b"k8s\x00" + b(2, b(1, b(1, "n")))
    decoded = decode_protobuf_object(bare, api_version="v1", kind="Namespace")
    assert list(decoded)[:2] == ["kind", "apiVersion"]
    assert decoded["kind"] == "Namespace" and decoded["metadata"] == {"name": "n"}


def test_delete_options_in_any_group_version() -> None:
    """apimachinery ``AddToGroupVersion`` registers DeleteOptions in every group version, so
    a typed client's delete body decodes whatever apiVersion its envelope names; the
    ``propagationPolicy`` pointer is written when present."""
    body = envelope("apps/v1", "DeleteOptions", v(1, 0) + b(4, "Foreground"))
    decoded = decode_protobuf_object(body, api_version="apps/v1", kind="DeleteOptions")
    assert decoded == {
        "kind": "DeleteOptions",
        "apiVersion": "apps/v1",
        "gracePeriodSeconds": 0,
        "propagationPolicy": "Foreground",
    }


def _error(call: Callable[[], object]) -> StatusFailure:
    with pytest.raises(StatusFailure) as caught:
        call()
    return caught.value


def test_errors_a_real_server_answers() -> None:
    """Create/update handlers turn decode failures into 400 via ``transformDecodeError``
    (k8s.io/apiserver ``pkg/endpoints/handlers/rest.go``): before the kind is known "the
    object provided is unrecognized (must be of type …): … (<hex of 30 bytes>)", after it
    "<Kind> in version "<v>" cannot be handled as a <Kind>: …". A custom resource is
    ``Unstructured``, which protobuf cannot fill (``errNotMarshalable``)."""
    err = _error(lambda: decode_protobuf_object(b"{}", api_version="v1", kind="Pod"))
    assert err.code == 400 and err.reason == "BadRequest"
    assert err.message == (
        "the object provided is unrecognized (must be of type Pod): provided data does not "
        "appear to be a protobuf message, expected prefix [107 56 115 0] ({})"
    )
    err = _error(lambda: decode_protobuf_object(b"k8s\x00", api_version="v1", kind="Pod"))
    assert err.message.endswith("(must be of type Pod): empty body (6b387300)")
    broken = envelope("v1", "Pod", b(1, b"\x0a\x05ab"))
    err = _error(lambda: decode_protobuf_object(broken, api_version="v1", kind="Pod"))
    assert err.message == 'Pod in version "v1" cannot be handled as a Pod: unexpected EOF'
    widget = envelope("example.com/v1", "Widget", b(1, b(1, "w")))
    err = _error(
        lambda: decode_protobuf_object(
            widget, api_version="example.com/v1", kind="Widget", custom=True
        )
    )
    assert err.code == 400
    assert err.message.startswith('Widget in version "v1" cannot be handled as a Widget: ')
    assert "*unstructured.Unstructured does not implement the protobuf" in err.message


def test_kinds_without_a_table_are_415_naming_json() -> None:
    """The fake's own limit, answered as the real 415 (``errUnsupportedMediaType``) with
    what it does accept, so the client learns to send JSON."""
    body = envelope("v1", "PersistentVolume", b(1, b(1, "pv")))
    err = _error(lambda: decode_protobuf_object(body, api_version="v1", kind="PersistentVolume"))
    assert err.code == 415 and err.reason == "UnsupportedMediaType"
    assert err.message.startswith(
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml ("
    )
    assert "v1 PersistentVolume" in err.message and "send it as application/json" in err.message
    assert ("apps", "v1", "Deployment") in decodable_kinds()


def test_content_types_for_bodies() -> None:
    """``NegotiateInputSerializerForMediaType``: parameters are ignored, no Content-Type means
    JSON, an unknown type is 415 listing JSON, YAML and protobuf (the codec factory order)."""
    assert body_format(None) == "json"
    assert body_format("application/json; charset=utf-8") == "json"
    assert body_format("application/yaml") == "yaml"
    assert body_format(PROTOBUF) == "protobuf"
    err = _error(lambda: body_format("text/plain"))
    assert err.code == 415
    assert err.message == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )


def test_json_answers_satisfy_kubectl_accept() -> None:
    """kubectl's typed client sends ``Accept: application/vnd.kubernetes.protobuf,
    application/json``: the fake answers JSON, which client-go decodes by the answer's
    Content-Type (the kubectl tests below see kubectl take it). Protobuf alone is 406
    ``errNotAcceptable`` (``negotiation.NegotiateOutputMediaType``)."""
    assert negotiate(f"{PROTOBUF},application/json") is None
    with pytest.raises(StatusFailure) as caught:
        negotiate(PROTOBUF)
    assert caught.value.code == 406 and caught.value.reason == "NotAcceptable"


# --- kubectl 1.32 against a tiny server that decodes its bodies


def _strip_null_creation(value: Any) -> Any:
    """kubectl 1.32's JSON has ``creationTimestamp: null``; 1.37's ``omitzero`` (apimachinery
    ``ObjectMeta``) leaves it out, and the fake serves 1.37."""
    if isinstance(value, dict):
        return {
            k: _strip_null_creation(x)
            for k, x in value.items()
            if not (k == "creationTimestamp" and x is None)
        }
    if isinstance(value, list):
        return [_strip_null_creation(x) for x in value]
    return value


async def _decode_and_answer(request: web.Request, body: bytes) -> web.StreamResponse:
    """Decode a protobuf create and answer the object as JSON (201), as the fake will."""
    if request.method != "POST" or request.content_type != PROTOBUF:
        return discovery(request) or status(
            404, "NotFound", "the server could not find the requested resource"
        )
    try:
        obj = decode_protobuf_object(body, api_version="v1", kind="Unknown")
    except StatusFailure as exc:
        return web.json_response(exc.status, status=exc.code)
    if obj["kind"] == "TokenRequest":
        obj["status"] = {"token": "tok3n", "expirationTimestamp": "2030-01-01T00:00:00Z"}
    return web.json_response(obj, status=201)


CREATES = [
    ["namespace", "demo"],
    ["configmap", "c", "--from-literal=a=b", "--from-literal=n=1", "-n", "ns"],
    ["secret", "generic", "s", "--from-literal=k=v", "--type=Opaque"],
    ["secret", "docker-registry", "d", "--docker-username=u", "--docker-password=p"],
    ["deployment", "web", "--image=nginx:1", "--port=80", "--replicas=0"],
    ["deployment", "two", "--image=nginx", "--image=redis"],
    ["deployment", "cmd", "--image=nginx", "--", "sleep", "5"],
    ["service", "clusterip", "svc", "--tcp=80:8080", "--tcp=443:https"],
    ["service", "clusterip", "headless", "--clusterip=None"],
    ["service", "nodeport", "np", "--tcp=80:8080", "--node-port=30001"],
    ["service", "loadbalancer", "lb", "--tcp=80"],
    ["service", "externalname", "en", "--external-name=x.com"],
    ["serviceaccount", "sa"],
    ["job", "j", "--image=busybox", "--", "echo", "hi"],
    ["cronjob", "cj", "--image=busybox", "--schedule=*/1 * * * *", "--", "date"],
    ["quota", "q", "--hard=cpu=1,memory=1G,pods=2", "--scopes=BestEffort"],
    ["priorityclass", "pc", "--value=1000", "--global-default", "--preemption-policy=Never"],
    ["poddisruptionbudget", "pdb", "--selector=app=x", "--min-available=50%"],
    ["poddisruptionbudget", "pdb2", "--selector=app=x", "--max-unavailable=1"],
    ["role", "r", "--verb=get,list", "--resource=pods,deployments.apps", "--resource-name=x"],
    ["clusterrole", "cr", "--verb=get", "--non-resource-url=/logs/*"],
    ["clusterrole", "agg", "--aggregation-rule=a=b"],
    ["rolebinding", "rb", "--role=r", "--user=u", "--serviceaccount=ns:sa", "--group=g"],
    ["clusterrolebinding", "crb", "--clusterrole=cr", "--group=g"],
    [
        "ingress",
        "ing",
        "--rule=foo.com/bar=svc:80",
        "--rule=x.com/*=svc2:http,tls=cert",
        "--class=nginx",
        "--annotation=a=b",
        "--default-backend=defsvc:8080",
    ],
]


@pytest.mark.skipif(KUBECTL is None, reason=NO_KUBECTL)
@pytest.mark.parametrize("args", CREATES, ids=lambda a: "-".join(a[:2]))
async def test_kubectl_create_bodies_decode_to_the_objects_kubectl_built(
    args: list[str], tmp_path: Path
) -> None:
    """kubectl 1.32 ``create <kind>`` (``staging/src/k8s.io/kubectl/pkg/cmd/create``) builds a
    typed object and POSTs it with its protobuf clientset; decoded, the body equals the JSON
    kubectl prints for ``--dry-run=client -o json``, and kubectl takes the JSON answer."""
    async with TinyServer(_decode_and_answer) as server:
        kubectl = Kubectl(server.url, tmp_path)
        cut = args.index("--") if "--" in args else len(args)
        dry_run = [*args[:cut], "--dry-run=client", "-o", "json", *args[cut:]]
        expected = json.loads(await kubectl.out("create", *dry_run))
        printed = await kubectl.out("create", *args)
    posts = [r for r in server.requests if r.method == "POST"]
    assert len(posts) == 1 and posts[0].content_type == PROTOBUF
    assert posts[0].accept == f"{PROTOBUF},application/json"
    assert posts[0].body.startswith(b"k8s\x00")
    decoded = decode_protobuf_object(posts[0].body, api_version="v1", kind="Unknown")
    assert decoded == _strip_null_creation(expected)
    assert printed.strip().endswith("created")


@pytest.mark.skipif(KUBECTL is None, reason=NO_KUBECTL)
async def test_kubectl_binary_configmap_and_token(tmp_path: Path) -> None:
    """``--from-file`` with bytes that are not UTF-8 lands in ``binaryData`` (base64);
    ``kubectl create token`` POSTs a TokenRequest (``serviceaccounts/<name>/token``) whose
    nil pointers are ``null`` (no ``omitempty`` in ``authentication/v1``) and prints the
    token of the JSON answer."""
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x00\xff\xfe")
    async with TinyServer(_decode_and_answer) as server:
        kubectl = Kubectl(server.url, tmp_path)
        await kubectl.out("create", "configmap", "bin", f"--from-file={blob}")
        token = await kubectl.out("create", "token", "sa", "--audience=a", "--duration=10m")
    assert token.strip() == "tok3n"
    configmap, request = (_decoded(r) for r in server.requests if r.method == "POST")
    assert configmap["binaryData"] == {"blob.bin": "AP/+"}
    assert request == {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {},
        "spec": {"audiences": ["a"], "expirationSeconds": 600, "boundObjectRef": None},
        "status": {"token": "", "expirationTimestamp": None},
    }


STORED = {
    "/apis/apps/v1/namespaces/default/deployments/web": {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {}},
    },
    "/apis/batch/v1/namespaces/default/cronjobs/nightly": {
        "kind": "CronJob",
        "apiVersion": "batch/v1",
        "metadata": {"name": "nightly", "namespace": "default", "uid": "u-1"},
        "spec": {
            "schedule": "@daily",
            "jobTemplate": {
                "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}
            },
        },
    },
}


async def _with_stored(request: web.Request, body: bytes) -> web.StreamResponse:
    if request.method == "GET" and request.path in STORED:
        return web.json_response(STORED[request.path])
    return await _decode_and_answer(request, body)


@pytest.mark.skipif(KUBECTL is None, reason=NO_KUBECTL)
@pytest.mark.parametrize(
    "args",
    [
        ["autoscale", "deployment", "web", "--min=1", "--max=3", "--cpu-percent=50"],
        ["create", "job", "manual", "--from=cronjob/nightly"],
    ],
    ids=["autoscale", "job-from-cronjob"],
)
async def test_kubectl_commands_that_read_first(args: list[str], tmp_path: Path) -> None:
    """``kubectl autoscale`` (an autoscaling/v1 HorizontalPodAutoscaler) and ``create job
    --from=cronjob/…`` (a Job with an ownerReference and an annotation) read the object
    first, then POST protobuf; decoded, the body equals kubectl's ``--dry-run=client``."""
    async with TinyServer(_with_stored) as server:
        kubectl = Kubectl(server.url, tmp_path)
        expected = json.loads(await kubectl.out(*args, "--dry-run=client", "-o", "json"))
        await kubectl.out(*args)
    (post,) = (r for r in server.requests if r.method == "POST")
    assert post.content_type == PROTOBUF
    assert _decoded(post) == _strip_null_creation(expected)


def _decoded(recorded: Recorded) -> dict[str, Any]:
    return decode_protobuf_object(recorded.body, api_version="v1", kind="Unknown")


@pytest.mark.skipif(KUBECTL is None, reason=NO_KUBECTL)
async def test_kubectl_shows_the_415_for_kinds_without_a_table(tmp_path: Path) -> None:
    """What a user sees when the fake cannot decode a kind: kubectl prints the Status
    message, which names application/json."""

    async def refuse(request: web.Request, body: bytes) -> web.StreamResponse:
        err = _error(
            lambda: decode_protobuf_object(
                envelope("v1", "PersistentVolume", b""), api_version="v1", kind="PV"
            )
        )
        return web.json_response(err.status, status=err.code)

    async with TinyServer(refuse) as server:
        done = await Kubectl(server.url, tmp_path).run("create", "namespace", "x", check=False)
    assert done.returncode != 0
    assert b"UnsupportedMediaType" in done.stderr and b"application/json" in done.stderr
