"""``aioinformer.testing``: a protocol-faithful fake Kubernetes API server for tests.

:class:`FakeApiServer` is an aiohttp server on 127.0.0.1 that speaks the real Kubernetes
REST protocol (discovery, CRUD, LIST with selectors and pagination, WATCH with resource
versions, bookmarks and 410 Gone) with fault injection, so the real client stack is tested
over real HTTP. Its entry points are ``server.objects`` (:class:`ServerObjects`),
``server.faults`` (:class:`ServerFaults`) and ``server.requests`` (:class:`ServerRequests`).
The pytest fixture ``fake_apiserver`` is registered automatically (see
:mod:`aioinformer.testing.pytest_plugin`); ``aioinformer fake-apiserver`` runs it standalone.

Its write side follows a real kube-apiserver of the release whose published schemas it serves
(``/version``): bodies are decoded as the Go types decode them (unknown fields pruned and
reported by ``fieldValidation``), defaulted, validated (422 ``Invalid``), and stored with the
kinds' status and generation rules; ``dryRun=All`` stores nothing; strategic merge patch and
server-side apply follow the schemas; CRDs' CEL validation rules are compiled and evaluated;
protobuf request bodies, server-side Tables and the OpenAPI documents serve kubectl. See
:mod:`._apiserver._registry._rest` for the steps of one write. What a cluster's controllers do
after a write — garbage collection, emptying a deleted namespace and, when asked for, a
kubelet running scheduled pods — happens after the write, as on a cluster
(``await server.objects.wait_idle()`` waits for the first two).

The test doubles :class:`MemorySource`, :class:`ScriptedListerWatcher` and :class:`FakeClock` need
no HTTP. Every name here is imported when first used, so that importing this package (which the
pytest plugin does in every pytest run) loads neither the fake server nor aiohttp.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .._exports import publish as _publish

if TYPE_CHECKING:
    from ._apiserver._api._resources import BUILTIN_RESOURCES as BUILTIN_RESOURCES
    from ._apiserver._api._resources import ResourceInfo as ResourceInfo
    from ._apiserver._faults import ServerFaults as ServerFaults
    from ._apiserver._manifests import load_manifests as load_manifests
    from ._apiserver._objects import ServerObjects as ServerObjects
    from ._apiserver._request_log import RequestRecord as RequestRecord
    from ._apiserver._request_log import ServerRequests as ServerRequests
    from ._apiserver._server import FakeApiServer as FakeApiServer
    from ._apiserver._server import FakeApiServerStatistics as FakeApiServerStatistics
    from ._doubles._clock import FakeClock as FakeClock
    from ._doubles._memory import MemorySource as MemorySource
    from ._doubles._scripted import ScriptedListerWatcher as ScriptedListerWatcher
    from ._doubles._scripted import ScriptedWatchStream as ScriptedWatchStream

__all__ = [
    "BUILTIN_RESOURCES",
    "FakeApiServer",
    "FakeApiServerStatistics",
    "FakeClock",
    "MemorySource",
    "RequestRecord",
    "ResourceInfo",
    "ScriptedListerWatcher",
    "ScriptedWatchStream",
    "ServerFaults",
    "ServerObjects",
    "ServerRequests",
    "load_manifests",
]

#: Where each name lives (relative to this package).
_HOMES = {
    "BUILTIN_RESOURCES": "._apiserver._api._resources",
    "ResourceInfo": "._apiserver._api._resources",
    "ServerFaults": "._apiserver._faults",
    "load_manifests": "._apiserver._manifests",
    "ServerObjects": "._apiserver._objects",
    "RequestRecord": "._apiserver._request_log",
    "ServerRequests": "._apiserver._request_log",
    "FakeApiServer": "._apiserver._server",
    "FakeApiServerStatistics": "._apiserver._server",
    "FakeClock": "._doubles._clock",
    "MemorySource": "._doubles._memory",
    "ScriptedListerWatcher": "._doubles._scripted",
    "ScriptedWatchStream": "._doubles._scripted",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first use (then it is an ordinary attribute)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    _publish(__name__, [name], globals())
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
