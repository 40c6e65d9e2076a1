"""Who makes a request and what they may do: the fake's authenticator and authorizer.

A real kube-apiserver authenticates every request (``k8s.io/apiserver/pkg/authentication``:
bearer tokens, client certificates, service account tokens, anonymous), applies impersonation
(``pkg/endpoints/filters/impersonation.go``), then asks its authorizers (RBAC, webhooks...)
whether the user may do the request's verb on its resource (``pkg/endpoints/filters/
authorization.go``), answering 403 ``Forbidden`` when none allows it. The fake keeps that shape
with simple tables:

* **authentication**: the fake asks for no credentials. A bearer token registered with
  :meth:`AccessControl.add_user` is that user; a service account token the fake issued
  (``POST serviceaccounts/<name>/token``) is the service account
  (``system:serviceaccount:<ns>:<name>``, groups ``system:serviceaccounts``,
  ``system:serviceaccounts:<ns>``, ``system:authenticated``) until it expires (then 401, as a
  real server answers an expired token); any other request (an unknown token, basic auth, a
  client certificate, none at all) is made by :data:`DEFAULT_USER`, ``kubernetes-admin`` in
  ``system:masters``, the identity a kubeadm ``admin.conf`` gives;
* **impersonation**: ``Impersonate-User``/``-Group``/``-Uid``/``-Extra-*`` headers (``kubectl
  --as``) switch to that user, after the real ``impersonate`` checks;
* **authorization**: everything is allowed, except what a :class:`DenyRule` covers (a test
  that needs a refusal adds one: ``server.auth.deny(verb="create", resource="pods")``). A
  refused request is the real 403; ``SelfSubjectAccessReview`` and friends
  (:mod:`._reviews`) answer from the same rules. In-process writes (``server.objects``) are the
  server's own and are never refused.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from .._api._failure import StatusFailure
from .._api._status import status_error
from ._routing import RequestInfo

__all__ = [
    "DEFAULT_USER",
    "TOKEN_KEY_ID",
    "AccessControl",
    "Attributes",
    "DenyRule",
    "UserInfo",
    "forbidden",
    "request_attributes",
    "unauthorized",
]

#: The ``kid`` of the service account tokens the fake issues (``serviceaccounts/token``).
TOKEN_KEY_ID = "aioinformer-fake"
_AUTHENTICATED = "system:authenticated"
_SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True, slots=True)
class UserInfo:
    """A user as the authenticators find it (``user.Info``)."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)

    def as_dict(self) -> dict[str, Any]:
        """The ``UserInfo`` of ``authentication.k8s.io/v1`` (empty fields left out)."""
        out: dict[str, Any] = {"username": self.username}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in sorted(self.extra.items())}
        return out


#: Who a request without credentials the fake knows is made by.
DEFAULT_USER = UserInfo("kubernetes-admin", groups=("system:masters", _AUTHENTICATED))


def unauthorized() -> StatusFailure:
    """401: what a real server answers a request whose credentials it refuses."""
    return status_error(401, "Unauthorized", "Unauthorized")


def _b64_json(part: str) -> Any:
    padded = part + "=" * (-len(part) % 4)
    return orjson.loads(base64.urlsafe_b64decode(padded))


def _service_account_user(claims: Mapping[str, Any]) -> UserInfo | None:
    subject = str(claims.get("sub") or "")
    if not subject.startswith(_SA_PREFIX) or subject.count(":") != 3:
        return None
    namespace = subject.split(":")[2]
    account = (claims.get("kubernetes.io") or {}).get("serviceaccount") or {}
    extra = {"authentication.kubernetes.io/credential-id": (f"JTI={claims.get('jti', '')}",)}
    return UserInfo(
        subject,
        uid=str(account.get("uid") or ""),
        groups=("system:serviceaccounts", f"system:serviceaccounts:{namespace}", _AUTHENTICATED),
        extra=extra,
    )


def _issued_token(token: str) -> tuple[UserInfo, float] | None:
    """The service account and expiry of a token the fake issued, or None for another."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        header, claims = _b64_json(parts[0]), _b64_json(parts[1])
    except (binascii.Error, ValueError, orjson.JSONDecodeError):
        return None
    if not isinstance(header, dict) or header.get("kid") != TOKEN_KEY_ID:
        return None
    if not isinstance(claims, dict):
        return None
    user = _service_account_user(claims)
    expires = claims.get("exp")
    if user is None or not isinstance(expires, int):
        return None
    return user, float(expires)


@dataclass(frozen=True, slots=True)
class Attributes:
    """What a request asks to do (``authorizer.AttributesRecord``).

    :ivar resource_request: a request for an API resource (else a path: ``/healthz``...).
    """

    user: UserInfo
    verb: str
    resource_request: bool
    namespace: str = ""
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""

    def message(self) -> str:
        """``forbiddenMessage`` (``pkg/endpoints/handlers/responsewriters/errors.go``)."""
        who = self.user.username
        if not self.resource_request:
            return f'User "{who}" cannot {self.verb} path "{self.path}"'
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        where = f'in the namespace "{self.namespace}"' if self.namespace else "at the cluster scope"
        return (
            f'User "{who}" cannot {self.verb} resource "{resource}" in API group '
            f'"{self.group}" {where}'
        )


def request_attributes(info: RequestInfo, user: UserInfo, method: str, path: str) -> Attributes:
    """The attributes of a request (``GetAuthorizerAttributes``): a resource request has its
    verb, namespace (a namespace's own name for ``namespaces/<name>``), group, version,
    resource, subresource and name; any other path is the lower-cased method on the path."""
    if not info.is_resource:
        return Attributes(user, method.lower(), False, path=path)
    verb = info.verb
    if info.subresource in ("log", "eviction", "token", "exec", "attach", "portforward"):
        verb = {"GET": "get", "POST": "create"}.get(method, verb)
    namespace = info.namespace
    if not namespace and (info.group, info.resource) == ("", "namespaces") and info.name:
        namespace = info.name
    return Attributes(
        user,
        verb,
        True,
        namespace=namespace,
        group=info.group,
        version=info.version,
        resource=info.resource,
        subresource=info.subresource,
        name=info.name,
    )


def forbidden(attributes: Attributes, reason: str) -> StatusFailure:
    """The 403 of a refused request (``responsewriters.Forbidden`` and
    ``errors.NewForbidden``: ``<resource>[.<group>] ["<name>"] is forbidden: <message>``)."""
    text = attributes.message()
    if reason:
        text = f"{text}: {reason}"
    resource = attributes.resource if attributes.resource_request else ""
    details: dict[str, Any] = {}
    if attributes.name:
        details["name"] = attributes.name
    if attributes.group and resource:
        details["group"] = attributes.group
    if resource:
        details["kind"] = resource
    if not resource:
        message = f"forbidden: {text}"
    else:
        qualified = f"{resource}.{attributes.group}" if attributes.group else resource
        named = f' "{attributes.name}"' if attributes.name else ""
        message = f"{qualified}{named} is forbidden: {text}"
    return status_error(403, "Forbidden", message, details=details)


def _one_of(wanted: frozenset[str] | None, value: str) -> bool:
    """A rule's set against a request's value: None is any; a request for ``*`` (a review
    asking about every verb or resource) meets every rule."""
    return wanted is None or value == "*" or value in wanted


@dataclass(frozen=True, slots=True)
class DenyRule:
    """A refusal: requests it covers are answered 403 and reviews say ``allowed: false``.

    Every field is a filter; None matches anything. ``resource`` is the plural and ``group``
    its API group (``""`` for the core group); ``path`` is a non-resource URL (a trailing ``*``
    matches a prefix, as in RBAC); ``users`` names users or groups.
    """

    verbs: frozenset[str] | None = None
    group: str | None = None
    resources: frozenset[str] | None = None
    subresource: str | None = None
    namespace: str | None = None
    name: str | None = None
    path: str | None = None
    users: frozenset[str] | None = None
    reason: str = ""

    def applies(self, attributes: Attributes) -> bool:
        """Whether the rule covers a request."""
        user = attributes.user
        if self.users is not None and not (self.users & {user.username, *user.groups}):
            return False
        if not _one_of(self.verbs, attributes.verb):
            return False
        if not attributes.resource_request:
            if self.path is None:
                return not self._names_resources()
            if self.path.endswith("*"):
                return attributes.path.startswith(self.path[:-1])
            return attributes.path == self.path
        if self.path is not None:
            return False
        checks = (
            (None if self.group is None else frozenset({self.group}), attributes.group),
            (self.resources, attributes.resource),
            (None if self.subresource is None else frozenset({self.subresource}),
             attributes.subresource),
            (None if self.namespace is None else frozenset({self.namespace}),
             attributes.namespace),
            (None if self.name is None else frozenset({self.name}), attributes.name),
        )  # fmt: skip
        return all(_one_of(wanted, value) for wanted, value in checks)

    def _names_resources(self) -> bool:
        return any(
            value is not None
            for value in (self.group, self.resources, self.subresource, self.namespace, self.name)
        )

    def as_dict(self) -> dict[str, Any]:
        """The rule as JSON (the admin API answers it)."""
        out: dict[str, Any] = {}
        for key in ("group", "subresource", "namespace", "name", "path"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        for key in ("verbs", "resources", "users"):
            value = getattr(self, key)
            if value is not None:
                out[key] = sorted(value)
        if self.reason:
            out["reason"] = self.reason
        return out


def _set(values: str | Iterable[str] | None) -> frozenset[str] | None:
    if values is None:
        return None
    return frozenset({values} if isinstance(values, str) else values)


class AccessControl:
    """The authenticator and the authorizer of one fake API server."""

    def __init__(self) -> None:
        self._tokens: dict[str, UserInfo] = {}
        self.rules: list[DenyRule] = []
        #: The user of requests with no credentials the fake knows.
        self.default_user = DEFAULT_USER

    # -- users -----------------------------------------------------------------------------

    def add_user(
        self,
        username: str,
        *,
        token: str,
        groups: Iterable[str] = (),
        uid: str = "",
        extra: Mapping[str, Iterable[str]] | None = None,
    ) -> UserInfo:
        """Make ``Authorization: Bearer <token>`` authenticate as ``username`` (in
        ``groups`` and ``system:authenticated``, which every authenticated user is in)."""
        if not username or not token:
            raise ValueError("a user needs a non-empty username and token")
        listed = tuple(dict.fromkeys([*groups, _AUTHENTICATED]))
        shaped = {k: tuple(v) for k, v in (extra or {}).items()}
        user = UserInfo(username, uid=uid, groups=listed, extra=shaped)
        self._tokens[token] = user
        return user

    def review_token(self, token: str) -> UserInfo | None:
        """The user a token authenticates, or None (``TokenReview``: only tokens the fake
        knows authenticate there; an expired service account token does not)."""
        known = self._tokens.get(token)
        if known is not None:
            return known
        issued = _issued_token(token)
        if issued is None or issued[1] < time.time():
            return None
        return issued[0]

    def authenticate(self, headers: Mapping[str, str]) -> UserInfo:
        """The user of a request, impersonation applied.

        :raises StatusFailure: 401 for an expired service account token the fake issued;
            403 when impersonation is refused; 400 for impersonation headers without a user.
        """
        user = self.default_user
        scheme, _, token = (headers.get("Authorization") or "").partition(" ")
        token = token.strip()
        if scheme.lower() == "bearer" and token:
            known = self._tokens.get(token)
            issued = None if known is not None else _issued_token(token)
            if known is not None:
                user = known
            elif issued is not None:
                if issued[1] < time.time():
                    raise unauthorized()
                user = issued[0]
        return self._impersonate(user, headers)

    def _impersonate(self, user: UserInfo, headers: Mapping[str, str]) -> UserInfo:
        """``WithImpersonation``: each impersonated attribute is authorized (verb
        ``impersonate``) as the real user, then the request is the impersonated user's."""
        getall = getattr(headers, "getall", None)
        groups: list[str] = list(getall("Impersonate-Group", ())) if getall else []
        if not groups and headers.get("Impersonate-Group"):
            groups = [str(headers["Impersonate-Group"])]
        name = headers.get("Impersonate-User") or ""
        uid = headers.get("Impersonate-Uid") or ""
        extra: dict[str, tuple[str, ...]] = {}
        for key in headers:
            if key.lower().startswith("impersonate-extra-"):
                values = getall(key, ()) if getall else [headers[key]]
                extra[key[len("impersonate-extra-") :].lower()] = tuple(values)
        if not name:
            if groups or uid or extra:
                raise status_error(
                    400,
                    "BadRequest",
                    "requested impersonation of groups, uid or extra without a user",
                )
            return user
        checks: list[Attributes] = []
        if name.startswith(_SA_PREFIX) and name.count(":") == 3:
            _, _, namespace, account = name.split(":")
            checks.append(
                Attributes(user, "impersonate", True, namespace, "", "", "serviceaccounts",
                           name=account)
            )  # fmt: skip
        else:
            checks.append(Attributes(user, "impersonate", True, resource="users", name=name))
        for group in groups:
            checks.append(Attributes(user, "impersonate", True, resource="groups", name=group))
        if uid:
            checks.append(
                Attributes(user, "impersonate", True, group="authentication.k8s.io",
                           resource="uids", name=uid)
            )  # fmt: skip
        for key, values in extra.items():
            for value in values:
                checks.append(
                    Attributes(user, "impersonate", True, group="authentication.k8s.io",
                               resource="userextras", subresource=key, name=value)
                )  # fmt: skip
        for check in checks:
            allowed, reason = self.authorize(check)
            if not allowed:
                raise forbidden(check, reason)
        if name.startswith(_SA_PREFIX) and name.count(":") == 3:
            namespace = name.split(":")[2]
            groups = [*groups, "system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
        if name != "system:anonymous":
            groups.append(_AUTHENTICATED)
        return UserInfo(name, uid=uid, groups=tuple(dict.fromkeys(groups)), extra=extra)

    # -- decisions -------------------------------------------------------------------------

    def deny(
        self,
        *,
        verb: str | Iterable[str] | None = None,
        resource: str | Iterable[str] | None = None,
        group: str | None = None,
        subresource: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
        path: str | None = None,
        user: str | Iterable[str] | None = None,
        reason: str = "",
    ) -> DenyRule:
        """Add a :class:`DenyRule` (see its fields) and return it."""
        rule = DenyRule(
            verbs=_set(verb),
            group=group,
            resources=_set(resource),
            subresource=subresource,
            namespace=namespace,
            name=name,
            path=path,
            users=_set(user),
            reason=reason,
        )
        self.rules.append(rule)
        return rule

    def authorize(self, attributes: Attributes) -> tuple[bool, str]:
        """``(allowed, reason)``: allowed unless a rule covers the request."""
        for rule in self.rules:
            if rule.applies(attributes):
                return False, rule.reason
        return True, ""

    def denies_any(self, user: UserInfo) -> bool:
        """Whether some rule may refuse ``user`` something (then a rules review is
        incomplete: a refusal cannot be listed as RBAC rules)."""
        return any(
            rule.users is None or bool(rule.users & {user.username, *user.groups})
            for rule in self.rules
        )
