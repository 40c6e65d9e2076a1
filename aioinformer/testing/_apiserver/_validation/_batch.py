"""Validation of Jobs and CronJobs.

Ports of the behaviour of kubernetes ``pkg/apis/batch/validation`` (``ValidateJob``,
``validateGeneratedSelector``, ``ValidateJobSpec``/``validateJobSpec``,
``ValidateCronJobCreate``, ``validateCronJobSpec``, ``validateConcurrencyPolicy``,
``validateScheduleFormat``, ``validateTimeZone``, ``ValidateJobTemplateSpec``) on defaulted
objects whose selector the strategy generated (see :mod:`._registry._strategy`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._content import is_dns1123_label
from ._cron import schedule_error, time_zone_error
from ._fielderrors import FieldError, invalid, not_supported, required
from ._meta import as_map as _map
from ._meta import label_selector_matches, nonnegative, one_of, validate_label_selector
from ._pod import validate_pod_template

__all__ = ["validate_cron_job", "validate_job_spec", "validate_job_generated_selector"]

_MAX_INDEXED_PARALLELISM = 100_000
_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")
_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")


def validate_job_generated_selector(job: Any, *, prefixed_labels: bool = True) -> list[FieldError]:
    """``validateGeneratedSelector``: without ``manualSelector``, the template carries the
    generated labels and the selector selects them (the ``batch.kubernetes.io/`` labels are
    checked on create, and on update when the old template had them)."""
    job = _map(job)
    spec, meta = _map(job.get("spec")), _map(job.get("metadata"))
    if spec.get("manualSelector") is True or spec.get("selector") is None:
        return []
    errors: list[FieldError] = []
    uid, name = str(meta.get("uid") or ""), str(meta.get("name") or "")
    if not uid:
        errors.append(required("metadata.uid"))
    labels = _map(_map(_map(spec.get("template")).get("metadata")).get("labels"))
    expected: dict[str, str] = {}
    checks = [(_UID_LABELS[0], uid), (_NAME_LABELS[0], name)]
    if prefixed_labels:
        checks += [(_UID_LABELS[1], uid), (_NAME_LABELS[1], name)]
    for key, value in checks:
        where = f"spec.template.metadata.labels[{key}]"
        if key not in labels:
            errors.append(required(where, value))
        elif labels[key] != value:
            errors.append(invalid(where, dict(labels), f"must be '{value}'"))
        expected[key] = value
    if not label_selector_matches(spec.get("selector"), expected):
        errors.append(
            invalid("spec.selector", spec.get("selector"), "`selector` not auto-generated")
        )
    return errors


def _job_spec_body(spec: Mapping[str, Any], path: str) -> list[FieldError]:
    """``validateJobSpec``: counts, completion mode, template, restart policy."""
    errors: list[FieldError] = []
    for name in (
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ):
        errors.extend(nonnegative(spec.get(name), f"{path}.{name}"))
    mode = spec.get("completionMode")
    if mode is not None:
        if mode not in ("NonIndexed", "Indexed"):
            errors.append(not_supported(f"{path}.completionMode", mode, ["NonIndexed", "Indexed"]))
        if mode == "Indexed":
            if spec.get("completions") is None:
                errors.append(required(f"{path}.completions", "when completion mode is Indexed"))
            parallelism = spec.get("parallelism")
            if isinstance(parallelism, int) and parallelism > _MAX_INDEXED_PARALLELISM:
                errors.append(
                    invalid(
                        f"{path}.parallelism",
                        parallelism,
                        "must be less than or equal to 100000 when completion mode is Indexed",
                    )
                )
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None and replacement not in ("Failed", "TerminatingOrFailed"):
        errors.append(
            not_supported(
                f"{path}.podReplacementPolicy", replacement, ["Failed", "TerminatingOrFailed"]
            )
        )
    template = _map(spec.get("template"))
    errors.extend(validate_pod_template(template, f"{path}.template"))
    restart = _map(template.get("spec")).get("restartPolicy") or ""
    where = f"{path}.template.spec.restartPolicy"
    if restart in ("Always", ""):
        errors.append(required(where, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        errors.append(not_supported(where, restart, ["OnFailure", "Never"]))
    elif spec.get("podFailurePolicy") is not None and restart != "Never":
        errors.append(
            invalid(where, restart, 'only "Never" is supported when podFailurePolicy is specified')
        )
    return errors


def validate_job_spec(spec: Any, path: str = "spec") -> list[FieldError]:
    """``ValidateJobSpec``: the body, a selector that is set, valid and matches the template."""
    spec = _map(spec)
    errors = _job_spec_body(spec, path)
    selector = spec.get("selector")
    if selector is None:
        errors.append(required(f"{path}.selector"))
    else:
        errors.extend(validate_label_selector(selector, f"{path}.selector"))
    labels = _map(_map(spec.get("template")).get("metadata")).get("labels")
    if not label_selector_matches(selector, labels):
        errors.append(
            invalid(
                f"{path}.template.metadata.labels",
                labels,
                "`selector` does not match template `labels`",
            )
        )
    return errors


def validate_job_name(job: Any) -> list[FieldError]:
    """The Indexed-job rule of ``ValidateJob``: ``<name>-<completions-1>`` is a DNS label."""
    job = _map(job)
    spec, name = _map(job.get("spec")), str(_map(job.get("metadata")).get("name") or "")
    completions = spec.get("completions")
    if spec.get("completionMode") != "Indexed" or not isinstance(completions, int):
        return []
    if completions <= 0:
        return []
    hostname = f"{name}-{completions - 1}"
    if is_dns1123_label(hostname):
        detail = f"will not able to create pod with invalid DNS label: {hostname}"
        return [invalid("metadata.name", name, detail)]
    return []


def validate_cron_job(cron_job: Any, old: Any = None) -> list[FieldError]:
    """``validateCronJobSpec`` (and, on create, the 52-character name limit)."""
    cron_job = _map(cron_job)
    spec = _map(cron_job.get("spec"))
    old_spec = _map(_map(old).get("spec")) if old is not None else None
    path = "spec"
    errors: list[FieldError] = []
    schedule = str(spec.get("schedule") or "")
    if not schedule:
        errors.append(required(f"{path}.schedule"))
    else:
        problem = schedule_error(schedule)
        if problem:
            errors.append(invalid(f"{path}.schedule", schedule, problem))
        allow_tz = old_spec is not None and "TZ" in str(old_spec.get("schedule") or "")
        if allow_tz and "TZ" in schedule and spec.get("timeZone") is not None:
            detail = "cannot use both timeZone field and TZ or CRON_TZ in schedule"
            errors.append(invalid(f"{path}.schedule", schedule, detail))
        elif not allow_tz and "TZ" in schedule:
            detail = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
            errors.append(invalid(f"{path}.schedule", schedule, detail))
    errors.extend(
        nonnegative(spec.get("startingDeadlineSeconds"), f"{path}.startingDeadlineSeconds")
    )
    zone = spec.get("timeZone")
    if isinstance(zone, str) and (old_spec is None or old_spec.get("timeZone") != zone):
        problem = time_zone_error(zone)
        if problem:
            errors.append(invalid(f"{path}.timeZone", zone, problem))
    policies = ["Allow", "Forbid", "Replace"]
    errors.extend(one_of(spec.get("concurrencyPolicy"), f"{path}.concurrencyPolicy", policies))
    job_spec = _map(_map(spec.get("jobTemplate")).get("spec"))
    where = f"{path}.jobTemplate.spec"
    errors.extend(_job_spec_body(job_spec, where))
    if job_spec.get("selector") is not None:
        errors.append(
            invalid(
                f"{where}.selector", job_spec.get("selector"), "`selector` will be auto-generated"
            )
        )
    if job_spec.get("manualSelector") is True:
        errors.append(not_supported(f"{where}.manualSelector", True, ["nil", "false"]))
    for name in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errors.extend(nonnegative(spec.get(name), f"{path}.{name}"))
    if old is None:
        name = str(_map(cron_job.get("metadata")).get("name") or "")
        if len(name) > 52:
            errors.append(invalid("metadata.name", name, "must be no more than 52 characters"))
    return errors
