"""Typed, frozen configuration objects (each field documents its default).

They hold policy only: the mutable state built from them (a backoff sequence, a reflector's
resource version) lives with the component that uses them, so one object can configure any
number of informers.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_PAGE_SIZE", "BackoffPolicy", "WatchConfig"]

#: Page size of paginated lists (client-go's pager default).
DEFAULT_PAGE_SIZE = 500


@dataclass(frozen=True, kw_only=True, slots=True)
class BackoffPolicy:
    """Delays between retries: ``initial * factor**n``, capped, jittered, reset periodically.

    The defaults are client-go's reflector backoff: 0.8 s doubling, each wait drawn from
    ``[d, 2d)``, the duration capped at 30 s (so waits settle in ``[30, 60)`` s), and the
    sequence starting over 2 minutes after its last reset. A
    :class:`~aioinformer.lowlevel.Backoff` walks the sequence.

    :raises ValueError: for a negative value, or a factor under 1.
    """

    #: The first duration, in seconds. Default 0.8.
    initial: float = 0.8
    #: Growth per step. Default 2.0.
    factor: float = 2.0
    #: The most a wait is lengthened at random, as a fraction of its duration: a wait lies in
    #: ``[d, d + jitter·d)``. Default 1.0; 0 disables jitter.
    jitter: float = 1.0
    #: The largest duration before jitter, in seconds. Default 30.
    cap: float = 30.0
    #: Seconds after the last reset at which the sequence starts over at ``initial``
    #: (measured from the last *reset*, not the last failure, as apimachinery's
    #: ``DelayWithReset`` does). Default 120.
    reset_after: float = 120.0

    def __post_init__(self) -> None:
        values = (self.initial, self.jitter, self.cap, self.reset_after)
        if any(value < 0 for value in values) or self.factor < 1:
            raise ValueError("backoff parameters must be non-negative (factor at least 1)")


@dataclass(frozen=True, kw_only=True, slots=True)
class WatchConfig:
    """How a reflector lists and watches (given to a reflector, an informer or a factory).

    :raises ValueError: for a negative page size or a non-positive timeout or deadline.
    """

    #: The ``limit`` of paginated lists; 0 lists in one response. Default 500 (client-go's
    #: pager). Relists at a known resource version are never paginated, so the API server's
    #: watch cache serves them.
    page_size: int = DEFAULT_PAGE_SIZE
    #: Each watch asks the server to end it after a random ``timeoutSeconds`` in
    #: ``[min_watch_timeout, 2·min_watch_timeout)``. Default 300. (client-go ignores values
    #: under 300; any positive value is honoured here, which tests use.)
    min_watch_timeout: float = 300.0
    #: Abandon and resume a watch that delivered no bytes at all (not even a bookmark) for
    #: this many seconds. Default 120 (API servers send a bookmark about every minute); None
    #: waits forever.
    idle_timeout: float | None = 120.0
    #: Sync with a streaming list (a watch with ``sendInitialEvents=true``: the current state
    #: as ADDED events, then a bookmark annotated ``k8s.io/initial-events-end``; the same
    #: stream then goes on as the watch) instead of a LIST. It spares the API server the
    #: memory of large lists (Kubernetes 1.32+). On any error, or when the bookmark is late,
    #: that attempt falls back to a LIST. Default False.
    streaming_list: bool = False
    #: Seconds to wait for the initial-events-end bookmark before falling back to a LIST
    #: (client-go waits forever). Default 60.
    streaming_list_deadline: float = 60.0
    #: Delays between attempts after errors. Default :class:`BackoffPolicy` ``()``
    #: (client-go's).
    backoff: BackoffPolicy = BackoffPolicy()

    def __post_init__(self) -> None:
        if self.page_size < 0:
            raise ValueError("page_size must not be negative")
        if not self.min_watch_timeout > 0:
            raise ValueError("min_watch_timeout must be positive")
        if self.idle_timeout is not None and not self.idle_timeout > 0:
            raise ValueError("idle_timeout must be positive (or None)")
        if not self.streaming_list_deadline > 0:
            raise ValueError("streaming_list_deadline must be positive")
