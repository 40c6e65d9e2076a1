"""The ``Host`` check of a fake API server listening on a loopback address (DNS rebinding).

A web page can make a browser send requests to ``127.0.0.1``: it only needs a name of its own
that resolves there (``evil.example`` → ``127.0.0.1``, DNS rebinding). The browser then treats
the fake server as ``evil.example``'s own origin, so the page could read Secrets from it and
create objects in it. What tells such a request apart is its ``Host`` header: the page's name,
not the server's. So a server listening on a loopback address answers only requests whose
``Host`` names this machine — ``localhost``, a ``*.localhost`` name (RFC 6761 keeps them on the
loopback), an address in ``127.0.0.0/8`` or ``::1``, with or without a port — or a name the
user allowed explicitly (``FakeApiServer(allowed_hosts=...)``, ``--allowed-host``); every other
request, on every path, is answered ``403 Forbidden`` with a ``Status`` naming the refused host.
That is what ``kubectl proxy`` does (``--accept-hosts``, default ``^localhost$``,
``^127\\.0\\.0\\.1$``, ``^\\[::1\\]$``; its filter answers 403), as do the dev servers that guard
against the same attack (webpack-dev-server's "Invalid Host header", Vite's
``server.allowedHosts``). ``421 Misdirected Request`` is for a connection reused for an
authority it does not serve (HTTP/2 coalescing), which is not what happens here.

A server listening on another address was put on the network deliberately: anyone who can
reach it can use it, whatever name they use, so it keeps answering any ``Host``. A request
without ``Host`` (HTTP/1.0) cannot come from a browser and is answered.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from .._api import _status as status
from ._api import error_response

__all__ = ["host_check", "is_loopback_host", "normalize_host"]

logger = logging.getLogger(__name__)

# Refused hosts logged at WARNING (each once); later ones at DEBUG, so a flood of names
# cannot grow the set or the log without bound.
_WARN_AT_MOST = 64


def normalize_host(value: str) -> str:
    """The host part of a ``Host`` header (or a listen address) without port and brackets,
    lower-cased, without a trailing dot: ``[::1]:8001`` → ``::1``, ``Localhost.:80`` →
    ``localhost``."""
    host = value.strip()
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:  # name:port or v4:port (a bare IPv6 address has several)
        host = host.split(":", 1)[0]
    return host.lower().rstrip(".")


def is_loopback_host(host: str) -> bool:
    """Whether a normalized host names this machine only: ``localhost``, ``*.localhost``,
    ``127.0.0.0/8``, ``::1`` (and ``::ffff:127.x.y.z``)."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def host_check(listen_host: str, allowed_hosts: Iterable[str] = ()) -> Middleware | None:
    """The middleware refusing other hosts for a server listening on ``listen_host``; None
    when that is not a loopback address (the server answers any ``Host``).

    :param allowed_hosts: names (or addresses) answered besides the loopback ones, compared
        without port, case and trailing dot.
    """
    if not is_loopback_host(normalize_host(listen_host)):
        return None
    allowed = frozenset(normalize_host(name) for name in allowed_hosts)
    refused: set[str] = set()

    @web.middleware
    async def check_host(request: web.Request, handler: Handler) -> web.StreamResponse:
        header = request.headers.get("Host")
        if header is None:
            return await handler(request)
        host = normalize_host(header)
        if host in allowed or is_loopback_host(host):
            return await handler(request)
        first = host not in refused and len(refused) < _WARN_AT_MOST
        if first:
            refused.add(host)
        logger.log(
            logging.WARNING if first else logging.DEBUG,
            "refused %s %s for Host %r: this server listens on %s and answers only loopback"
            " names and the allowed hosts (DNS rebinding)",
            request.method,
            request.path,
            header,
            listen_host,
        )
        return error_response(
            status.status_error(
                403,
                message=(
                    f"host {header!r} is not allowed: this server listens on a loopback address"
                    f" and answers only localhost, 127.0.0.0/8, ::1 and the hosts allowed with"
                    f" FakeApiServer(allowed_hosts=...) or --allowed-host"
                ),
            )
        )

    return check_host
