"""SharedInformerFactory: one shared informer per resource, started and stopped together."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

import anyio
import anyio.abc

from .._cache._compact import DEFAULT_CACHE_MODE, CacheMode
from .._cache._store import Indexers
from .._clock import SYSTEM_CLOCK, Clock
from .._config import WatchConfig
from .._lifecycle import DEFAULT_STOP_TIMEOUT, Service, State, check_stop_timeout
from .._listwatch import ListerWatcher, ListOptions, Resource, as_resource
from .._sharding import ShardSelector
from .._sharding._informer_filter import as_shard_selector
from .._wire._transport import KubeListerWatcher
from ..errors import LifecycleError
from ._informer import InformerStatistics, SharedIndexInformer

if TYPE_CHECKING:
    from .._wire._client import KubeClient

__all__ = [
    "FactoryStatistics",
    "ListerWatcherFactory",
    "SharedInformerFactory",
]

logger = logging.getLogger(__name__)


def _shard_or_none(selector: ShardSelector | str | None) -> ShardSelector | None:
    return None if selector is None else as_shard_selector(selector)


class ListerWatcherFactory(Protocol):
    """Makes the lister-watcher of one resource for a factory (``lister_watcher=``):
    ``functools.partial(KubeListerWatcher, client)`` by default, an in-memory one in tests
    (:class:`aioinformer.testing.MemorySource`)."""

    def __call__(
        self,
        resource: Resource,
        *,
        namespace: str | None,
        tweak_list_options: Callable[[ListOptions], ListOptions] | None,
    ) -> ListerWatcher: ...


@dataclass(frozen=True, kw_only=True, slots=True)
class FactoryStatistics:
    """A snapshot of a factory, read with :meth:`SharedInformerFactory.statistics`."""

    #: Where the factory is in its life.
    state: State
    #: Each informer's statistics, by resource (read-only).
    informers: Mapping[Resource, InformerStatistics]


class SharedInformerFactory(Service):
    """Creates and runs one :class:`~aioinformer.SharedIndexInformer` per resource.

    Use it as ``async with SharedInformerFactory(client) as factory:``: entering starts
    the informers created so far (without waiting for them to sync), :meth:`start` starts
    informers created later, and leaving the block stops them all. Or run it yourself:
    ``await tg.start(factory.run)`` returns once every informer it started with has synced.
    A factory runs once (see :mod:`aioinformer._lifecycle`).

    :param client: the :class:`~aioinformer.KubeClient` the informers list and watch through;
        the caller owns and closes it. Give this or ``lister_watcher``.
    :param lister_watcher: makes each informer's lister-watcher instead (a
        :class:`ListerWatcherFactory`; e.g. :meth:`aioinformer.testing.MemorySource.lister_watcher`
        to run a factory on objects in memory). Default None.
    :param namespace: watch one namespace only (None: all). Cluster-scoped resources ignore it.
    :param default_resync: resync period of the informers, in seconds (0: no resync).
    :param tweak_list_options: applied to every list and watch request of every informer
        (for example to add a label selector).
    :param custom_resync: resync periods per resource, overriding ``default_resync``.
    :param watch: how every informer lists and watches (page size, watch timeouts,
        streaming lists, backoff policy; each informer walks its own backoff sequence).
        Default :class:`~aioinformer.WatchConfig` ``()``.
    :param custom_watch: watch configurations per resource, overriding ``watch``.
    :param cache: how every informer keeps its cache: ``"compact"`` (the default; JSON bytes
        the garbage collector never scans, fresh dicts on every read) or ``"dict"`` (the
        decoded objects, shared with readers). See
        :class:`~aioinformer.SharedIndexInformer` for the trade-off.
    :param custom_cache: cache modes per resource, overriding ``cache``.
    :param clock: time for every informer (resync, backoff waits, deadlines). Default the
        system clock.
    :param shard_selector: every informer caches only this shard (a
        :class:`~aioinformer.ShardSelector` or its text; see the informer's
        ``shard_selector``). Default None: every object.
    :param custom_shard_selector: shard selectors per resource, overriding ``shard_selector``
        (None for a resource: unsharded).
    :param stop_timeout: the most seconds stopping may take, on ``clock``: the informers stop
        concurrently, each with this bound (see the informer's ``stop_timeout``). Default 30
        (:data:`~aioinformer._lifecycle.DEFAULT_STOP_TIMEOUT`).

    :raises InvalidShardSelectorError: for a selector text the API server would refuse.

    Each running informer holds one connection of the client's pool for its watch
    (kubernetes_asyncio's ``configuration.connection_pool_maxsize``, 100 by default).

    :raises ValueError: unless exactly one of ``client`` and ``lister_watcher`` is given.
    """

    def __init__(
        self,
        client: KubeClient | None = None,
        *,
        lister_watcher: ListerWatcherFactory | None = None,
        namespace: str | None = None,
        default_resync: float = 0.0,
        tweak_list_options: Callable[[ListOptions], ListOptions] | None = None,
        custom_resync: Mapping[Resource | str, float] | None = None,
        watch: WatchConfig = WatchConfig(),
        custom_watch: Mapping[Resource | str, WatchConfig] | None = None,
        cache: CacheMode = DEFAULT_CACHE_MODE,
        custom_cache: Mapping[Resource | str, CacheMode] | None = None,
        clock: Clock = SYSTEM_CLOCK,
        shard_selector: ShardSelector | str | None = None,
        custom_shard_selector: Mapping[Resource | str, ShardSelector | str | None] | None = None,
        stop_timeout: float = DEFAULT_STOP_TIMEOUT,
    ) -> None:
        # Stopping closes every informer concurrently, each bounded by the same timeout.
        self._stop_timeout = check_stop_timeout(stop_timeout)
        if lister_watcher is None:
            if client is None:
                raise ValueError("give a client (or a lister_watcher)")
            lister_watcher = functools.partial(KubeListerWatcher, client)
        elif client is not None:
            raise ValueError("give a client or a lister_watcher, not both")
        self._lister_watcher = lister_watcher
        self.namespace = namespace or None
        self._default_resync = default_resync
        self._tweak = tweak_list_options
        self._custom_resync = {as_resource(r): p for r, p in (custom_resync or {}).items()}
        self._watch = watch
        self._custom_watch = {as_resource(r): c for r, c in (custom_watch or {}).items()}
        self._cache = cache
        self._custom_cache = {as_resource(r): m for r, m in (custom_cache or {}).items()}
        self._clock = clock
        self._shard = _shard_or_none(shard_selector)
        self._custom_shard = {
            as_resource(r): _shard_or_none(v) for r, v in (custom_shard_selector or {}).items()
        }
        self._informers: dict[Resource, SharedIndexInformer] = {}
        # The informers the factory runs; those started before _serve began wait for it.
        self._started: set[Resource] = set()
        self._task_group: anyio.abc.TaskGroup | None = None

    def __repr__(self) -> str:
        informers, started = len(self._informers), len(self._started)
        return (
            f"<SharedInformerFactory [{self.state.value}] informers={informers} started={started}>"
        )

    @property
    def informers(self) -> dict[Resource, SharedIndexInformer]:
        """The informers created so far, by resource."""
        return dict(self._informers)

    def statistics(self) -> FactoryStatistics:
        """A snapshot of the factory and of every informer it created."""
        informers = {resource: i.statistics() for resource, i in self._informers.items()}
        return FactoryStatistics(state=self.state, informers=MappingProxyType(informers))

    def for_resource(
        self, resource: Resource | str, *, indexers: Indexers | None = None
    ) -> SharedIndexInformer:
        """The shared informer of a resource: ``"pods"``, ``"deploy"``,
        ``"deployments.apps"`` (kubectl's names of built-in resources), ``"v1/pods"``,
        ``"example.com/v1/widgets"`` (any resource) or a :class:`~aioinformer.Resource`.

        The first call creates it; later calls return the same informer, adding any index
        function whose name it does not have yet. An informer created after the factory
        started (entering it) starts at the next :meth:`start`.

        :raises ValueError: for a name that is neither (see
            :func:`~aioinformer._listwatch.resolve_builtin_resource`).
        :raises LifecycleError: for a new informer once the factory is stopping or stopped.
        """
        key = as_resource(resource)
        informer = self._informers.get(key)
        if informer is not None:
            missing = {
                name: f
                for name, f in (indexers or {}).items()
                if name not in informer.cache.index_names()
            }
            if missing:
                informer.add_indexers(missing)
            return informer
        self._require_not_stopped()
        lister_watcher = self._lister_watcher(
            key,
            namespace=self.namespace if key.namespaced else None,
            tweak_list_options=self._tweak,
        )
        informer = SharedIndexInformer(
            lister_watcher,
            resync_period=self._custom_resync.get(key, self._default_resync),
            indexers=indexers,
            name=str(key),
            watch=self._custom_watch.get(key, self._watch),
            cache=self._custom_cache.get(key, self._cache),
            clock=self._clock,
            shard_selector=self._custom_shard.get(key, self._shard),
            stop_timeout=self._stop_timeout,
        )
        self._informers[key] = informer
        return informer

    def start(self) -> None:
        """Start every informer not started yet (non-blocking): those created after the
        factory started. Entering the factory starts the informers it has already.

        :raises LifecycleError: outside ``async with factory:`` (or :meth:`run`), or once it
            is stopping.
        """
        if self.state not in (State.STARTING, State.RUNNING):
            raise LifecycleError("start() needs a running factory: use `async with factory:`")
        self._start_new()

    def _start_new(self) -> None:
        new = [r for r in self._informers if r not in self._started]
        self._started.update(new)
        group = self._task_group
        if group is not None:  # otherwise _serve starts them as soon as it begins
            for resource in new:
                group.start_soon(self._informers[resource].run, name=f"informer {resource}")

    async def wait_for_cache_sync(self) -> dict[Resource, bool]:
        """Wait for every started informer's initial list (or for it to stop unsynced).

        Bound it with :func:`anyio.fail_after` or :func:`anyio.move_on_after`.

        :returns: whether each started informer synced.
        :raises LifecycleError: when there is nothing to wait for: no informer was created,
            the factory is not running, or informers created since it started were not
            started (call :meth:`start`) — waiting would report success for caches that
            never fill.
        """
        if not self._informers:
            raise LifecycleError(
                "wait_for_cache_sync(): the factory has no informers; create them with"
                " factory.for_resource(...) before entering the factory"
            )
        if not self._started:
            raise LifecycleError(
                "wait_for_cache_sync() before start(): no informer is running; create informers"
                " before entering the factory (`async with factory:`), or call factory.start()"
            )
        unstarted = self._unstarted()
        if unstarted and not self._stop_requested:
            raise LifecycleError(
                f"wait_for_cache_sync(): {unstarted} created after the factory started never"
                " started; call factory.start() first"
            )
        started = [(r, i) for r, i in self._informers.items() if r in self._started]
        for _, informer in started:
            await informer.wait_for_cache_sync()
        return {resource: informer.has_synced() for resource, informer in started}

    # -- running ---------------------------------------------------------------------------

    def _on_start(self) -> None:
        self._started.update(self._informers)  # entering starts the informers it has

    async def _serve(self, ready: Callable[[], None]) -> None:
        initial = [self._informers[r] for r in self._started]
        try:
            async with anyio.create_task_group() as tg:
                self._task_group = tg
                for informer in initial:
                    tg.start_soon(informer.run, name=f"informer {informer.name}")
                tg.start_soon(self._report_synced, initial, ready)
                await self._wait_stop_requested()
                for informer in self._informers.values():
                    tg.start_soon(informer.aclose)  # concurrently, each bounded
        finally:
            self._task_group = None

    @staticmethod
    async def _report_synced(
        informers: list[SharedIndexInformer], ready: Callable[[], None]
    ) -> None:
        for informer in informers:
            if not await informer.wait_for_cache_sync():
                return  # it stopped unsynced: never ready
        ready()

    def _on_stop_requested(self) -> None:
        if self._started and (unstarted := self._unstarted()):
            logger.warning(
                "%s created after the factory started never started: call factory.start()"
                " after creating informers",
                unstarted,
            )

    def _on_stopped(self) -> None:
        for informer in self._informers.values():
            informer._request_stop()  # those never started: their consumers are released

    def _unstarted(self) -> str:
        """The informers created but not started, for messages (``""`` when none)."""
        return ", ".join(str(r) for r in self._informers if r not in self._started)
