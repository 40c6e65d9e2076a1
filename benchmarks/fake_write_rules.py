"""Cost of the fake API server's write rules for one object: decode (strict, with the
duplicate-key scan), defaults, create preparation and validation, and the read back.

    python benchmarks/fake_write_rules.py [--rounds N]

Prints microseconds per create for a Pod and a Deployment (the manifests of the Kubernetes
docs, with a few more fields), split by step, and the cost of a plain ``orjson`` round trip
of the same body as the baseline.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable
from typing import Any

import orjson

from aioinformer.testing._apiserver._registry._defaults import apply_defaults
from aioinformer.testing._apiserver._registry._defaults_pod import admit_pod
from aioinformer.testing._apiserver._registry._strategy import begin_create, prepare_create
from aioinformer.testing._apiserver._registry._writerules import (
    Kind,
    before_create,
    decode,
    stored_form,
)
from aioinformer.testing._apiserver._schema._decode import decode_object
from aioinformer.testing._apiserver._validation._fieldvalidation import duplicate_fields
from aioinformer.testing._apiserver._validation._kinds import validate_create

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "api", "namespace": "default", "labels": {"app": "api", "tier": "web"}},
    "spec": {
        "containers": [
            {
                "name": "api",
                "image": "registry.example.com/api:1.4",
                "ports": [{"containerPort": 8080, "name": "http"}],
                "env": [{"name": "MODE", "value": "prod"}, {"name": "LEVEL", "value": "info"}],
                "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
                "volumeMounts": [{"name": "config", "mountPath": "/etc/api"}],
            }
        ],
        "volumes": [{"name": "config", "configMap": {"name": "api"}}],
    },
}
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "api", "namespace": "default", "labels": {"app": "api"}},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "api"}},
        "template": {"metadata": {"labels": {"app": "api", "tier": "web"}}, "spec": POD["spec"]},
    },
}


def per_call(rounds: int, run: Callable[[], object]) -> float:
    """Microseconds per call (best of three batches)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(rounds):
            run()
        best = min(best, (time.perf_counter() - start) / rounds)
    return best * 1e6


def per_item(rounds: int, make: Callable[[], Any], run: Callable[[Any], object]) -> float:
    """Microseconds per call of ``run`` on fresh inputs made beforehand (best of three)."""
    best = float("inf")
    for _ in range(3):
        items = [make() for _ in range(rounds)]
        start = time.perf_counter()
        for item in items:
            run(item)
        best = min(best, (time.perf_counter() - start) / rounds)
    return best * 1e6


def measure(kind: Kind, body: dict[str, Any], rounds: int) -> dict[str, float]:
    raw = orjson.dumps(body)
    group, version, name = kind.group, kind.version, kind.kind
    decoded = decode_object(group, version, name, body, strict=True).obj
    defaulted = copy.deepcopy(decoded)
    apply_defaults(group, version, name, defaulted)
    admitted = copy.deepcopy(defaulted)
    begin_create(admitted, uid="u", now="2026-01-01T00:00:00Z")
    if name == "Pod":
        admit_pod(admitted)
    prepare_create(group, name, admitted)

    def full() -> None:
        obj, _ = decode(kind, orjson.loads(raw), raw=raw, directive="Warn")
        before_create(kind, obj, uid="u", now="2026-01-01T00:00:00Z")

    return {
        "orjson loads+dumps (baseline)": per_call(rounds, lambda: orjson.dumps(orjson.loads(raw))),
        "duplicate-key scan": per_call(rounds, lambda: duplicate_fields(raw)),
        "decode (strict, Go encoding)": per_item(
            rounds,
            lambda: orjson.loads(raw),
            lambda b: decode_object(group, version, name, b, strict=True),
        ),
        "defaults": per_item(
            rounds,
            lambda: copy.deepcopy(decoded),
            lambda o: apply_defaults(group, version, name, o),
        ),
        "validation": per_call(
            rounds, lambda: validate_create(group, name, admitted, namespaced=kind.namespaced)
        ),
        "read back (stored_form)": per_item(
            rounds, lambda: copy.deepcopy(admitted), lambda o: stored_form(kind, o)
        ),
        "whole create (decode..validate..read back)": per_call(rounds, full),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    rounds = parser.parse_args().rounds
    for kind, body in (
        (Kind("", "v1", "Pod", True), POD),
        (Kind("apps", "v1", "Deployment", True), DEPLOYMENT),
    ):
        before_create(
            kind, decode(kind, copy.deepcopy(body))[0], uid="u", now="2026-01-01T00:00:00Z"
        )
        print(f"{kind.kind} ({len(orjson.dumps(body))} bytes):")
        for step, micros in measure(kind, body, rounds).items():
            print(f"  {step:45} {micros:8.1f} µs")


if __name__ == "__main__":
    main()
