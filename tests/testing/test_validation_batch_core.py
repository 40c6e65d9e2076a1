"""Per-kind validation of Jobs, CronJobs, Services, ConfigMaps, Secrets and Namespaces.

As in ``test_validation_kinds``: a valid defaulted object, one thing broken, the errors the
kind's ``Validate`` function (kubernetes ``pkg/apis/{batch,core}/validation``) reports.
"""

from __future__ import annotations

from typing import Any

import pytest

from aioinformer.testing._apiserver._registry._defaults import apply_defaults
from aioinformer.testing._apiserver._registry._strategy import prepare_create

from .test_validation_kinds import change, errors_of

Obj = dict[str, Any]


def job(restart: str = "Never") -> Obj:
    obj: Obj = {
        "metadata": {"name": "pi", "namespace": "default", "uid": "u-1"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": restart, "containers": [{"name": "pi", "image": "perl"}]}
            }
        },
    }
    apply_defaults("batch", "v1", "Job", obj)
    prepare_create("batch", "Job", obj)
    return obj


def test_jobs() -> None:
    """``ValidateJob``: the generated selector and labels (``validateGeneratedSelector``), a
    template restart policy of OnFailure or Never — the defaulted ``Always`` is reported as
    missing (``Required value: valid values: "OnFailure", "Never"``) — and non-negative
    counts (kubernetes ``pkg/apis/batch/validation``)."""
    assert errors_of("batch", "Job", job()) == []
    assert errors_of("batch", "Job", job(restart="")) == [
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    ]
    assert errors_of("batch", "Job", change(job(), "spec.backoffLimit", -1)) == [
        "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"
    ]
    wrong = change(
        job(), "spec.selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": "other"}}
    )
    assert errors_of("batch", "Job", wrong) == [
        "spec.selector: Invalid value: "
        '{"matchLabels":{"batch.kubernetes.io/controller-uid":"other"}}: '
        "`selector` not auto-generated",
        'spec.template.metadata.labels: Invalid value: {"batch.kubernetes.io/controller-uid":"u-1",'
        '"batch.kubernetes.io/job-name":"pi","controller-uid":"u-1","job-name":"pi"}: `selector` '
        "does not match template `labels`",
    ]


def cron_job(schedule: str) -> Obj:
    obj: Obj = {
        "metadata": {"name": "tick", "namespace": "default"},
        "spec": {
            "schedule": schedule,
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "containers": [{"name": "c", "image": "busybox"}],
                        }
                    }
                }
            },
        },
    }
    apply_defaults("batch", "v1", "CronJob", obj)
    return obj


@pytest.mark.parametrize(
    ("schedule", "problem"),
    [
        ("*/5 * * * *", ""),
        ("@hourly", ""),
        ("0 0 * jan-mar mon", ""),
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("@sometimes", "unrecognized descriptor: @sometimes"),
    ],
)
def test_cron_job_schedules(schedule: str, problem: str) -> None:
    """``validateScheduleFormat`` reports robfig/cron v3 ``ParseStandard``'s error after
    ``spec.schedule: Invalid value: "<schedule>"``."""
    errors = errors_of("batch", "CronJob", cron_job(schedule))
    expected = (
        [f"spec.schedule: Invalid value: {schedule!r}: {problem}".replace("'", '"')]
        if problem
        else []
    )
    assert errors == expected


def test_cron_job_names_and_time_zones() -> None:
    """A CronJob name is at most 52 characters (``ValidateCronJobCreate``); ``timeZone`` must
    be a known IANA zone (``validateTimeZone``)."""
    long_name = change(cron_job("@daily"), "metadata.name", "a" * 53)
    assert errors_of("batch", "CronJob", long_name) == [
        f'metadata.name: Invalid value: "{"a" * 53}": must be no more than 52 characters'
    ]
    zoned = change(cron_job("@daily"), "spec.timeZone", "Mars/Olympus")
    assert errors_of("batch", "CronJob", zoned) == [
        'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'
    ]


def service(**spec: Any) -> Obj:
    obj: Obj = {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"ports": [{"port": 80}], **spec},
    }
    apply_defaults("", "v1", "Service", obj)
    return obj


def test_services() -> None:
    """``ValidateService``: DNS-1035 names, ports (names required when several), type and
    session affinity values, node ports only for NodePort/LoadBalancer, ExternalName needs an
    external name (kubernetes ``pkg/apis/core/validation``)."""
    assert errors_of("", "Service", service()) == []
    assert errors_of("", "Service", change(service(), "metadata.name", "1web"))[0].startswith(
        'metadata.name: Invalid value: "1web": a DNS-1035 label must consist of'
    )
    assert errors_of("", "Service", service(type="Internal")) == [
        'spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", '
        '"LoadBalancer", "NodePort"'
    ]
    two = service(ports=[{"port": 80}, {"port": 81}])
    assert errors_of("", "Service", two) == [
        "spec.ports[0].name: Required value",
        "spec.ports[1].name: Required value",
    ]
    assert errors_of("", "Service", service(ports=[])) == ["spec.ports: Required value"]
    node_port = service(ports=[{"port": 80, "nodePort": 30080}])
    assert errors_of("", "Service", node_port) == [
        "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"
    ]
    assert errors_of("", "Service", service(type="ExternalName", ports=[])) == [
        "spec.externalName: Required value"
    ]


def test_config_maps_secrets_and_namespaces() -> None:
    """``ValidateConfigMap``/``ValidateSecret``: keys are config keys, 1 MiB in total, typed
    Secrets need their keys; ``ValidateNamespace``: DNS-label names, standard or qualified
    finalizer names (kubernetes ``pkg/apis/core/validation``)."""
    config_map: Obj = {
        "metadata": {"name": "c", "namespace": "d"},
        "data": {"a b": "1", "k": "x" * 1048577},
    }
    assert errors_of("", "ConfigMap", config_map) == [
        'data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric '
        "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used "
        "for validation is '[-._a-zA-Z0-9]+')",
        ": Too long: may not be more than 1048576 bytes",
    ]
    tls: Obj = {
        "metadata": {"name": "s", "namespace": "d"},
        "type": "kubernetes.io/tls",
        "data": {"tls.crt": ""},
    }
    assert errors_of("", "Secret", tls) == ["data[tls.key]: Required value"]
    namespace: Obj = {"metadata": {"name": "team.a"}, "spec": {"finalizers": ["custom"]}}
    assert errors_of("", "Namespace", namespace, namespaced=False) == [
        'metadata.name: Invalid value: "team.a": must not contain dots',
        'spec.finalizers: Invalid value: "custom": name is neither a standard finalizer name nor '
        "is it fully qualified",
    ]
