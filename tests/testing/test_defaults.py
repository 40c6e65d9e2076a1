"""Objects as sent, and as a real server returns them after the create.

Each file in ``defaults_fixtures/`` holds one object as a client sends it and the object a
1.3x API server returns (without ``resourceVersion`` and ``managedFields``, which the storage
adds), with the sources of every difference in its header. The fake's write rules — decode,
defaults, admission, ``PrepareForCreate``, validation, the read back from storage — must turn
the one into the other exactly.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from aioinformer.testing._apiserver._registry._defaults import apply_defaults
from aioinformer.testing._apiserver._registry._strategy_service import ServiceAllocator
from aioinformer.testing._apiserver._registry._writerules import Kind, before_create, decode

FIXTURES = sorted((Path(__file__).parent / "defaults_fixtures").glob("*.yaml"))
UID = "6f4c3b1e-0000-4000-8000-000000000001"
NOW = "2026-11-23T12:00:00Z"


def load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(path.read_text())
    return document


def create(kind: Kind, sent: dict[str, Any]) -> dict[str, Any]:
    obj, warnings = decode(kind, copy.deepcopy(sent), directive="Strict")
    assert warnings == []
    before_create(kind, obj, uid=UID, now=NOW, services=ServiceAllocator(rng=random.Random(7)))
    return obj


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_created_objects_are_what_a_real_server_returns(path: Path) -> None:
    """The fixture's header names the real behaviour (kubernetes ``pkg/apis/*/v1/defaults.go``,
    ``pkg/registry/*/strategy.go``, admission plugins, the Go encoding of k8s.io/api types)."""
    fixture = load(path)
    kind = Kind(**fixture["kind"])
    assert create(kind, fixture["sent"]) == fixture["returned"]


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_defaults_are_idempotent(path: Path) -> None:
    """Defaulting runs on every decode, of requests and of stored objects alike
    (apimachinery ``runtime.Scheme.Default`` in the codec): running it again changes nothing."""
    fixture = load(path)
    kind = fixture["kind"]
    again = copy.deepcopy(fixture["returned"])
    apply_defaults(kind["group"], kind["version"], kind["kind"], again)
    assert again == fixture["returned"]


def test_services_get_a_cluster_ip_from_the_service_cidr_and_node_ports() -> None:
    """The Service REST storage allocates a cluster IP from the service CIDR (kubeadm's
    10.96.0.0/12, 10.96.0.1 being the ``kubernetes`` Service's) and, for NodePort Services, a
    node port in 30000-32767; ``externalTrafficPolicy`` defaults to Cluster for externally
    reachable Services (``SetDefaults_Service``)."""
    kind = Kind("", "v1", "Service", True)
    sent = {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"type": "NodePort", "ports": [{"port": 80}]},
    }
    obj = create(kind, sent)
    spec = obj["spec"]
    assert spec["clusterIP"].startswith("10.") and spec["clusterIPs"] == [spec["clusterIP"]]
    assert spec["clusterIP"] != "10.96.0.1"
    assert 30000 <= spec["ports"][0]["nodePort"] <= 32767
    assert spec["externalTrafficPolicy"] == "Cluster"
    assert spec["ports"][0]["targetPort"] == 80
