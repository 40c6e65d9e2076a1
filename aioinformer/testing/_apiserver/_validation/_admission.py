"""Validation of ``admissionregistration.k8s.io`` webhook configurations (kubernetes
``pkg/apis/admissionregistration/validation``: the rules every configuration must meet: names,
``sideEffects``, ``admissionReviewVersions``, ``clientConfig``). The configurations are stored,
not enforced; ValidatingAdmissionPolicy and its bindings are checked against their schema and
metadata only (their CEL expressions are neither compiled nor enforced)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ._content import is_dns1123_subdomain
from ._fielderrors import FieldError, duplicate, invalid, not_supported, required
from ._meta import as_list, as_map, validate_label_selector

__all__ = [
    "validate_webhook_configuration",
]

# -- admissionregistration.k8s.io/v1 webhook configurations --------------------------------


def _fully_qualified(name: str, path: str) -> list[FieldError]:
    """``IsFullyQualifiedName``: a DNS subdomain of at least three labels."""
    if not name:
        return [required(path)]
    name = name.removesuffix(".")
    problems = is_dns1123_subdomain(name)
    if problems:
        return [invalid(path, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [
            invalid(path, name, "should be a domain with at least three segments separated by dots")
        ]
    return []


def _webhook(hook: Mapping[str, Any], path: str, names: set[str]) -> list[FieldError]:
    """``validateValidatingWebhook`` / ``validateMutatingWebhook`` (their common part)."""
    errors: list[FieldError] = []
    name = str(hook.get("name") or "")
    errors += _fully_qualified(name, f"{path}.name")
    if name and name in names:
        errors.append(duplicate(f"{path}.name", name))
    names.add(name)
    effects = hook.get("sideEffects")
    if effects is None:
        errors.append(required(f"{path}.sideEffects", "must specify one of None, NoneOnDryRun"))
    elif effects not in ("None", "NoneOnDryRun"):
        errors.append(not_supported(f"{path}.sideEffects", effects, ["None", "NoneOnDryRun"]))
    versions = as_list(hook.get("admissionReviewVersions"))
    if not versions:
        errors.append(
            required(f"{path}.admissionReviewVersions", "must specify one of v1, v1beta1")
        )
    elif not any(v in ("v1", "v1beta1") for v in versions):
        errors.append(
            invalid(
                f"{path}.admissionReviewVersions",
                versions,
                "must include at least one of v1, v1beta1",
            )
        )
    timeout = hook.get("timeoutSeconds")
    if isinstance(timeout, int) and not 1 <= timeout <= 30:
        errors.append(
            invalid(
                f"{path}.timeoutSeconds",
                timeout,
                "the timeout value must be between 1 and 30 seconds",
            )
        )
    client = as_map(hook.get("clientConfig"))
    url, service = client.get("url"), client.get("service")
    if (url is None) == (service is None):
        errors.append(required(f"{path}.clientConfig", "exactly one of url or service is required"))
    elif url is not None and urlsplit(str(url)).scheme != "https":
        scheme = urlsplit(str(url)).scheme
        errors.append(
            invalid(f"{path}.clientConfig.url", scheme, "'https' is the only allowed URL scheme")
        )
    errors += validate_label_selector(hook.get("namespaceSelector"), f"{path}.namespaceSelector")
    errors += validate_label_selector(hook.get("objectSelector"), f"{path}.objectSelector")
    return errors


def validate_webhook_configuration(obj: Mapping[str, Any]) -> list[FieldError]:
    """The webhooks of a Validating- or MutatingWebhookConfiguration: unique fully qualified
    names, ``sideEffects``, ``admissionReviewVersions``, timeouts, one client config."""
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, hook in enumerate(as_list(obj.get("webhooks"))):
        errors += _webhook(as_map(hook), f"webhooks[{i}]", names)
    return errors
