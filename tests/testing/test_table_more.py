"""Server-side Table output of PriorityClass, ResourceQuota and HorizontalPodAutoscaler.

The printers of kubernetes/kubernetes ``pkg/printers/internalversion/printers.go``.
"""

from __future__ import annotations

from .test_table import cells, meta, names


def test_priority_class_quota_and_autoscaler_printers() -> None:
    """``printPriorityClass`` (PREEMPTIONPOLICY is priority 0, filled because a server prints
    wide), ``printResourceQuota`` (``resource: used/hard``, ``limits.*`` apart) and
    ``printHorizontalPodAutoscaler`` (``formatHPAMetrics``; autoscaling/v1's CPU target is
    a cpu Resource metric)."""
    priority = {"metadata": meta("high"), "value": 1000, "preemptionPolicy": "Never"}
    assert names(priority, "scheduling.k8s.io/v1", "PriorityClass")[-1] == ("PreemptionPolicy", 0)
    assert cells(priority, "scheduling.k8s.io/v1", "PriorityClass") == [
        "high", 1000, False, "20m", "Never",
    ]  # fmt: skip
    quota = {
        "metadata": meta("q"),
        "status": {
            "hard": {"pods": "10", "limits.cpu": "2", "cpu": "1"},
            "used": {"pods": "3", "cpu": "500m"},
        },
    }
    assert cells(quota, "v1", "ResourceQuota") == [
        "q", "cpu: 500m/1, pods: 3/10", "limits.cpu: 0/2", "20m",
    ]  # fmt: skip
    v1 = {
        "metadata": meta("web"),
        "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 3,
            "targetCPUUtilizationPercentage": 50,
        },
        "status": {"currentReplicas": 2},
    }
    assert cells(v1, "autoscaling/v1", "HorizontalPodAutoscaler") == [
        "web", "Deployment/web", "cpu: <unknown>/50%", "1", 3, 2, "20m",
    ]  # fmt: skip
    metrics = [
        {"type": "Pods", "pods": {"target": {"averageValue": "1k"}}},
        {"type": "External", "external": {"target": {"value": "5"}}},
        {"type": "Resource", "resource": {"name": "memory", "target": {"averageValue": "1Gi"}}},
    ]
    v2 = {"metadata": meta("w2"), "spec": {"scaleTargetRef": {}, "metrics": metrics}}
    current = [{"type": "Pods", "pods": {"current": {"averageValue": "250"}}}]
    v2["status"] = {"currentMetrics": current}
    assert cells(v2, "autoscaling/v2", "HorizontalPodAutoscaler")[2:4] == [
        "250/1k, <unknown>/5 + 1 more...",
        "<unset>",
    ]
