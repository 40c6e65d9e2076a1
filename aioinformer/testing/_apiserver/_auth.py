"""``server.auth``: who the fake API server's clients are and what it refuses them.

The fake allows every request, as a cluster-admin would be allowed, until a test says
otherwise. See :mod:`._http._auth` for how a request's user is found.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ._api._failure import StatusFailure
from ._api._resources import ResourceRegistry
from ._api._status import status_error
from ._boundary import client_errors
from ._http._auth import AccessControl, DenyRule

__all__ = ["DenyRule", "ServerAuth"]


def _split(spelling: str, registry: ResourceRegistry) -> tuple[str | None, str, str | None]:
    """``(group, plural, subresource)`` of a resource spelling: any spelling the server
    resolves (``"deploy"``, ``"deployments.apps"``), else ``plural[.group]`` as RBAC names a
    resource; ``/sub`` names a subresource (``"pods/log"``)."""
    name, _, subresource = spelling.partition("/")
    try:
        info = registry.resolve(name)
    except StatusFailure:  # a resource not served: taken as written
        plural, _, group = name.partition(".")
        return (group if "." in name else None), plural, subresource or None
    return info.group, info.plural, subresource or None


class ServerAuth:
    """Users and refusals of one fake API server (``server.auth``).

    * Without credentials it knows, a request is made by ``kubernetes-admin`` (groups
      ``system:masters`` and ``system:authenticated``); :meth:`add_user` registers a bearer
      token for another user; a service account token the server issued
      (``POST serviceaccounts/<name>/token``, ``kubectl create token``) is that service
      account; ``kubectl --as`` impersonates.
    * Every request is allowed until :meth:`deny` adds a rule: a request it covers is answered
      403 ``Forbidden`` with the real message, and ``SelfSubjectAccessReview`` /
      ``SubjectAccessReview`` (``kubectl auth can-i``) answer ``allowed: false``.
      :meth:`allow_all` removes the rules.
    * Writes through ``server.objects`` are the server's own and are never refused.

    On a server with ``admin_api=True`` (the standalone one) the same is reachable over HTTP:
    ``POST /_fake/deny``, ``/_fake/allow-all`` and ``/_fake/add-user``.
    """

    def __init__(self, access: AccessControl, registry: ResourceRegistry) -> None:
        self._access = access
        self._registry = registry

    @property
    def rules(self) -> list[DenyRule]:
        """The deny rules in force, oldest first."""
        return list(self._access.rules)

    def add_user(
        self,
        username: str,
        *,
        token: str,
        groups: Iterable[str] = (),
        uid: str = "",
        extra: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        """Make requests with ``Authorization: Bearer <token>`` come from ``username``.

        :param groups: the user's groups (``system:authenticated`` is added, as every
            authenticator does).
        :param uid: the user's uid; ``extra``: its extra attributes.
        :raises ValueError: for an empty username or token.
        """
        self._access.add_user(username, token=token, groups=groups, uid=uid, extra=extra)

    @client_errors
    def deny(
        self,
        *,
        verb: str | Iterable[str] | None = None,
        resource: str | Iterable[str] | None = None,
        namespace: str | None = None,
        name: str | None = None,
        path: str | None = None,
        user: str | Iterable[str] | None = None,
        reason: str = "",
    ) -> DenyRule:
        """Refuse the requests the arguments describe (each None: any).

        :param verb: ``get``, ``list``, ``watch``, ``create``, ``update``, ``patch``,
            ``delete``, ``deletecollection``, ``impersonate``... (for a path: the lower-cased
            HTTP method).
        :param resource: a resource in any spelling the server takes (``"pods"``,
            ``"deploy"``, ``"deployments.apps"``), or ``plural.group`` of one it does not
            serve; ``"pods/log"`` names a subresource. Several spellings must name one group.
        :param namespace: the namespace of the request (a cluster-scoped one has none).
        :param name: the object's name.
        :param path: a non-resource URL (``"/metrics"``; a trailing ``*`` is a prefix); a rule
            with neither ``resource`` nor ``path`` covers paths too.
        :param user: user names or group names the rule is for.
        :param reason: the reason reviews and the 403 message give (default none, as RBAC).
        :returns: the rule (remove it with :meth:`remove`).
        :raises BadRequestError: when the resources name different groups.
        """
        group: str | None = None
        resources: set[str] | None = None
        subresource: str | None = None
        if resource is not None:
            spellings = [resource] if isinstance(resource, str) else list(resource)
            parsed = [_split(s, self._registry) for s in spellings]
            groups = {g for g, _, _ in parsed}
            if len(groups) > 1:
                raise status_error(400, message=f"resources of different groups: {spellings}")
            group = groups.pop() if groups else None
            resources = {plural for _, plural, _ in parsed}
            subresource = next((sub for _, _, sub in parsed if sub), None)
        return self._access.deny(
            verb=verb,
            resource=resources,
            group=group,
            subresource=subresource,
            namespace=namespace,
            name=name,
            path=path,
            user=user,
            reason=reason,
        )

    def remove(self, rule: DenyRule) -> None:
        """Stop refusing what ``rule`` covers (nothing happens for a rule not in force)."""
        if rule in self._access.rules:
            self._access.rules.remove(rule)

    def allow_all(self) -> None:
        """Remove every deny rule (registered users stay)."""
        self._access.rules.clear()
