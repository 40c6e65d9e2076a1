"""Bodies decoded into built-in kinds as the API server's Go types decode and encode them."""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing._apiserver._schema._decode import DecodeError, decode_object
from aioinformer.testing._apiserver._schema._quantity import (
    QuantityError,
    canonical,
    parse_quantity,
)
from aioinformer.testing._apiserver._schema._scalars import ScalarError, check_base64, parse_time


def deployment(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            deployment({"replicas": "3"}),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of "
            "type int32",
        ),
        (
            deployment({"replicas": 1.5}),
            "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas "
            "of type int32",
        ),
        (
            deployment({"replicas": 2**31}),
            "json: cannot unmarshal number 2147483648 into Go struct field "
            "DeploymentSpec.spec.replicas of type int32",
        ),
        (
            deployment({"template": {"spec": {"containers": [{"name": 5}]}}}),
            "json: cannot unmarshal number into Go struct field "
            "Container.spec.template.spec.containers.name of type string",
        ),
        (
            deployment({"template": {"spec": {"containers": "app"}}}),
            "json: cannot unmarshal string into Go struct field "
            "PodSpec.spec.template.spec.containers of type []v1.Container",
        ),
        (
            deployment({"template": {"spec": {"restartPolicy": 1}}}),
            "json: cannot unmarshal number into Go struct field "
            "PodSpec.spec.template.spec.restartPolicy of type v1.RestartPolicy",
        ),
        (
            deployment({"paused": "yes"}),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of "
            "type bool",
        ),
        (
            {"metadata": {"labels": {"a": 5}}},
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of "
            "type string",
        ),
        (
            deployment("x"),  # type: ignore[arg-type]
            "json: cannot unmarshal string into Go struct field Deployment.spec of type "
            "v1.DeploymentSpec",
        ),
        (
            deployment({"strategy": {"rollingUpdate": {"maxSurge": True}}}),
            "json: cannot unmarshal bool into Go struct field "
            "RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32",
        ),
        (
            {"metadata": {"creationTimestamp": "yesterday"}},
            'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" '
            'as "2006"',
        ),
        (
            deployment(
                {"template": {"spec": {"containers": [{"resources": {"limits": {"cpu": "lots"}}}]}}}
            ),
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
    ],
)
def test_type_errors_carry_gos_message(body: dict[str, Any], message: str) -> None:
    """``encoding/json``'s ``UnmarshalTypeError`` names the innermost Go struct, the JSON
    path without list indices and the Go type (a pointer's element type, named string types
    with their package); int-or-string decodes into an int32; times and quantities report
    their parsers' errors (sigs.k8s.io/json, apimachinery ``intstr``, ``resource.Quantity``,
    ``metav1.Time``)."""
    with pytest.raises(DecodeError) as caught:
        decode_object("apps", "v1", "Deployment", body, strict=True)
    assert str(caught.value) == message


def test_unknown_fields_are_pruned_and_reported_with_their_paths() -> None:
    """Undeclared fields are dropped; the strict decoder reports them as ``spec.replica`` or
    ``spec.template.spec.containers[0].imagePullPolicyy`` (sigs.k8s.io/json strict paths)."""
    body = deployment(
        {
            "replica": 3,
            "template": {"spec": {"containers": [{"name": "a", "imagePullPolicyy": "Never"}]}},
        }
    )
    body["extra"] = {"x": 1}
    decoded = decode_object("apps", "v1", "Deployment", body, strict=True)
    assert decoded.unknown == [
        "spec.replica",
        "spec.template.spec.containers[0].imagePullPolicyy",
        "extra",
    ]
    assert "replica" not in decoded.obj["spec"] and "extra" not in decoded.obj
    assert decode_object("apps", "v1", "Deployment", body, strict=False).unknown == []


def test_output_is_what_go_encodes() -> None:
    """The Go round trip: ``null`` and zero ``omitempty`` values vanish (``paused: false``,
    empty labels), plain structs appear (``resources: {}``, ``status: {}``), fields without
    ``omitempty`` appear with their zero value (a StatefulSet's ``serviceName``, its status
    counters, a Service's ``status.loadBalancer``), pointers keep zeros (``replicas: 0``)."""
    body = deployment(
        {
            "paused": False,
            "replicas": 0,
            "minReadySeconds": 0,
            "template": {"metadata": {"labels": {}}, "spec": {"containers": [{"name": "a"}]}},
        }
    )
    body["metadata"]["annotations"] = None
    obj = decode_object("apps", "v1", "Deployment", body, strict=True).obj
    assert obj["spec"]["replicas"] == 0
    assert "paused" not in obj["spec"] and "minReadySeconds" not in obj["spec"]
    assert obj["spec"]["template"]["metadata"] == {}
    assert obj["spec"]["template"]["spec"]["containers"] == [{"name": "a", "resources": {}}]
    assert obj["status"] == {} and obj["metadata"] == {"name": "web"}
    sts = decode_object("apps", "v1", "StatefulSet", {"spec": {}}, strict=False).obj
    assert sts["spec"]["serviceName"] == "" and sts["spec"]["selector"] is None
    assert sts["status"] == {"replicas": 0, "availableReplicas": 0}
    service = decode_object("", "v1", "Service", {"spec": {}}, strict=False).obj
    assert service["status"] == {"loadBalancer": {}}


def test_null_map_values_and_list_items_decode_to_zero_values() -> None:
    """``null`` inside a map or list becomes the element type's zero value (Go's decoder)."""
    obj = decode_object("", "v1", "ConfigMap", {"data": {"a": None}}, strict=False).obj
    assert obj["data"] == {"a": ""}


def test_times_and_quantities_are_printed_canonically() -> None:
    """``metav1.Time`` prints UTC at second precision; quantities print in canonical form
    (``0.5`` → ``500m``, ``1024Mi`` → ``1Gi``, ``1500`` stays)."""
    meta = {"creationTimestamp": "2026-01-02T03:04:05.678+02:00"}
    obj = decode_object("", "v1", "ConfigMap", {"metadata": meta}, strict=False).obj
    assert obj["metadata"]["creationTimestamp"] == "2026-01-02T01:04:05Z"
    assert [canonical(*parse_quantity(q)) for q in ("0.5", "1024Mi", "1500", "1e3", "0.5Ki")] == [
        "500m",
        "1Gi",
        "1500",
        "1e3",
        "512",
    ]
    with pytest.raises(QuantityError, match="unable to parse quantity's suffix"):
        parse_quantity("5Ki3")


@pytest.mark.parametrize(
    ("text", "offset"),
    [("YWJj", None), ("YWI=", None), ("abc", 0), ("abcde", 4), ("ab!c", 2), ("a===", 1)],
)
def test_base64_errors_report_gos_offsets(text: str, offset: int | None) -> None:
    """``[]byte`` fields (Secret ``data``) decode with ``base64.StdEncoding``:
    ``illegal base64 data at input byte N`` with Go's offsets."""
    if offset is None:
        check_base64(text)
    else:
        with pytest.raises(ScalarError, match=f"^illegal base64 data at input byte {offset}$"):
            check_base64(text)


def test_time_range_errors() -> None:
    """``time.Parse`` reports out-of-range fields after the value."""
    with pytest.raises(
        ScalarError, match=r'^parsing time "2026-13-01T00:00:00Z": month out of range$'
    ):
        parse_time("2026-13-01T00:00:00Z")
