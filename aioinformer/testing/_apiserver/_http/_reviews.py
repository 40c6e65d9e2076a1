"""The review resources: ``authorization.k8s.io/v1`` and ``authentication.k8s.io/v1``.

Each is a ``rest.Creater`` and nothing else: a POST is answered (201, as every create) with the
review's ``status`` filled in, and nothing is stored. The rules, from kubernetes
``pkg/registry/authorization/*/rest.go``, ``pkg/registry/authentication/*`` and
``pkg/apis/authorization/validation/validation.go``:

* ``SelfSubjectAccessReview``: exactly one of ``spec.resourceAttributes`` and
  ``spec.nonResourceAttributes`` (422), metadata empty but for ``managedFields`` (422); the
  request's own user is checked; ``status`` is ``allowed`` and the refusal's ``reason``
  (``ResourceAttributesFrom``: an empty ``version`` is ``*``). The answer is the request object
  (its ``managedFields`` included) with the status;
* ``SubjectAccessReview`` / ``LocalSubjectAccessReview``: the same for the user, groups, uid
  and extra of the spec (one of user or groups is required); a local one is namespaced, its
  ``spec.resourceAttributes.namespace`` must be the object's namespace and it takes no
  non-resource attributes;
* ``SelfSubjectRulesReview``: ``spec.namespace`` is required (400 ``no namespace on request``);
  the answer is a new object listing what the user may do. The fake allows everything not
  denied, which is ``*`` on everything; with a :class:`~._auth.DenyRule` for the user the list
  is ``incomplete`` (a refusal is not a rule RBAC can list);
* ``SelfSubjectReview`` (``kubectl auth whoami``): a new object with ``creationTimestamp`` and
  ``status.userInfo`` of the request's user;
* ``TokenReview``: cluster-scoped, ``spec.token`` required (400); ``status.authenticated`` and
  the user when the token is one the fake knows (:meth:`~._auth.AccessControl.review_token`),
  ``audiences`` the requested ones or the server's.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from .._api import _status as status
from .._api._resources import ResourceInfo
from .._apply._writes import managed_fields_after_update
from .._registry._object_rules import check_body, namespace_for, set_managed_fields
from .._registry._rest import RestStorage
from .._registry._rest_types import WriteOptions
from .._validation._fielderrors import FieldError, invalid, invalid_failure
from ._auth import AccessControl, Attributes, UserInfo
from ._subresources import AUDIENCE

__all__ = ["create_review"]

_AUTHORIZATION = "authorization.k8s.io"


def _invalid(kind: str, errors: list[FieldError]) -> None:
    if errors:
        raise invalid_failure(_AUTHORIZATION, kind, "", errors)


def _spec_errors(spec: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateSelfSubjectAccessReviewSpec`` (and the common part of the others)."""
    resource, other = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and other is not None:
        return [
            invalid(
                "spec.nonResourceAttributes",
                other,
                "cannot be specified in combination with resourceAttributes",
            )
        ]
    if resource is None and other is None:
        return [
            invalid(
                "spec.resourceAttributes",
                "null",  # a nil pointer, as field.ErrorBody prints it
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        ]
    return []


def _meta_errors(meta: Mapping[str, Any], *, local: bool = False) -> list[FieldError]:
    """Metadata must be empty (``managedFields`` aside; a local review keeps its namespace)."""
    rest = {k: v for k, v in meta.items() if k != "managedFields" and v not in (None, "", {}, [])}
    if local:
        rest.pop("namespace", None)
    if not rest:
        return []
    detail = "must be empty except for namespace" if local else "must be empty"
    return [invalid("metadata", dict(meta), detail)]


def _attributes(user: UserInfo, spec: Mapping[str, Any]) -> Attributes:
    """``ResourceAttributesFrom`` / ``NonResourceAttributesFrom``."""
    resource = spec.get("resourceAttributes")
    if isinstance(resource, Mapping):
        return Attributes(
            user,
            str(resource.get("verb") or ""),
            True,
            namespace=str(resource.get("namespace") or ""),
            group=str(resource.get("group") or ""),
            version=str(resource.get("version") or "*"),
            resource=str(resource.get("resource") or ""),
            subresource=str(resource.get("subresource") or ""),
            name=str(resource.get("name") or ""),
        )
    other = spec.get("nonResourceAttributes") or {}
    return Attributes(user, str(other.get("verb") or ""), False, path=str(other.get("path") or ""))


def _spec_user(spec: Mapping[str, Any]) -> UserInfo:
    """``AuthorizationAttributesFrom``: the user a (local) subject access review asks about."""
    extra = spec.get("extra") or {}
    return UserInfo(
        str(spec.get("user") or ""),
        uid=str(spec.get("uid") or ""),
        groups=tuple(str(g) for g in spec.get("groups") or ()),
        extra={str(k): tuple(v or ()) for k, v in extra.items()},
    )


def _decision(access: AccessControl, attributes: Attributes) -> dict[str, Any]:
    """``SubjectAccessReviewStatus``: ``denied`` is left out, as the RBAC authorizer never
    says Deny (it has no opinion, and the request is not allowed)."""
    allowed, reason = access.authorize(attributes)
    decided: dict[str, Any] = {"allowed": allowed}
    if reason:
        decided["reason"] = reason
    return decided


def _rules(access: AccessControl, user: UserInfo) -> dict[str, Any]:
    """``SubjectRulesReviewStatus`` for the fake's allow-all authorizer."""
    answer: dict[str, Any] = {
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
        "incomplete": False,
    }
    if access.denies_any(user):
        answer["incomplete"] = True
        answer["evaluationError"] = (
            "the fake API server refuses some requests of this user with deny rules, "
            "which cannot be listed as rules"
        )
    return answer


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def create_review(
    access: AccessControl,
    rest: RestStorage,
    info: ResourceInfo,
    body: Any,
    *,
    user: UserInfo,
    namespace: str,
    options: WriteOptions,
) -> tuple[dict[str, Any], list[str]]:
    """Answer the POST of a review: the object to send (with 201) and the warnings.

    :raises StatusFailure: 400 (body, missing token or namespace), 422 (invalid).
    """
    options.check("CreateOptions")
    meta = check_body(info, body)
    if info.namespaced:
        namespace_for(info, meta, namespace)
    obj, warnings = rest.strategy(info).decode(
        info, {**body, "metadata": meta}, options, operation="create", raw=options.raw
    )
    obj.setdefault("apiVersion", info.api_version)
    obj.setdefault("kind", info.kind)
    meta = obj.setdefault("metadata", {})
    found = obj.get("spec")
    spec: dict[str, Any] = found if isinstance(found, dict) else {}
    kind = info.kind
    if kind in ("SelfSubjectReview", "SelfSubjectRulesReview"):
        return _fresh(access, info, spec, user), warnings
    if kind == "TokenReview" and not spec.get("token"):
        raise status.bad_request("token is required for TokenReview in authentication")
    set_managed_fields(
        meta, managed_fields_after_update(info, None, obj, manager=options.field_manager)
    )
    if kind == "SelfSubjectAccessReview":
        _invalid(kind, _spec_errors(spec) + _meta_errors(meta))
        obj["status"] = _decision(access, _attributes(user, spec))
    elif kind == "SubjectAccessReview":
        errors = _spec_errors(spec) + _subject_errors(spec) + _meta_errors(meta)
        _invalid(kind, errors)
        obj["status"] = _decision(access, _attributes(_spec_user(spec), spec))
    elif kind == "LocalSubjectAccessReview":
        _invalid(kind, _local_errors(spec, meta))
        obj["status"] = _decision(access, _attributes(_spec_user(spec), spec))
    else:
        obj["status"] = _token_status(access, spec)
    return obj, warnings


def _subject_errors(spec: Mapping[str, Any]) -> list[FieldError]:
    if spec.get("user") or spec.get("groups"):
        return []
    return [invalid("spec.user", str(spec.get("user") or ""), "at least one of user or group must "
                    "be specified")]  # fmt: skip


def _local_errors(spec: Mapping[str, Any], meta: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateLocalSubjectAccessReview``."""
    errors = _spec_errors(spec) + _subject_errors(spec) + _meta_errors(meta, local=True)
    resource = spec.get("resourceAttributes")
    namespace = str(meta.get("namespace") or "")
    if isinstance(resource, Mapping) and str(resource.get("namespace") or "") != namespace:
        errors.append(
            invalid(
                "spec.resourceAttributes.namespace",
                str(resource.get("namespace") or ""),
                "must match metadata.namespace",
            )
        )
    if spec.get("nonResourceAttributes") is not None:
        errors.append(
            invalid(
                "spec.nonResourceAttributes",
                spec["nonResourceAttributes"],
                "disallowed on this kind of request",
            )
        )
    return errors


def _fresh(
    access: AccessControl, info: ResourceInfo, spec: Mapping[str, Any], user: UserInfo
) -> dict[str, Any]:
    """The new object a ``SelfSubjectReview`` or ``SelfSubjectRulesReview`` answers."""
    head = {"kind": info.kind, "apiVersion": info.api_version}
    if info.kind == "SelfSubjectReview":
        return {
            **head,
            "metadata": {"creationTimestamp": _now()},
            "status": {"userInfo": user.as_dict()},
        }
    if not spec.get("namespace"):
        raise status.bad_request("no namespace on request")
    return {**head, "metadata": {}, "spec": {}, "status": _rules(access, user)}


def _token_status(access: AccessControl, spec: Mapping[str, Any]) -> dict[str, Any]:
    """``TokenReviewStatus``: the user is always there (an empty struct when the token does
    not authenticate)."""
    found = access.review_token(str(spec.get("token")))
    if found is None:
        return {"user": {}}
    audiences = list(spec.get("audiences") or [AUDIENCE])
    return {"authenticated": True, "user": found.as_dict(), "audiences": audiences}
