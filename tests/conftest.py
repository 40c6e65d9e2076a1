"""Suite-wide guards, active for every test: no asyncio error reports (e.g. "Task was
destroyed but it is pending"), and nothing left behind — no task still pending, no aiohttp
session left open, no file descriptor (socket, pipe, file) left open by the test.

The checks are cheap (a set difference of tasks, a weak set of sessions, a directory listing
of ``/proc/self/fd``) and run after the test's own fixtures are torn down (this fixture is
set up first). What a test starts must be stopped by the end of the test; what is still
finishing its shutdown gets :data:`GRACE` seconds (a bound, not a sleep: the check returns as
soon as it is done).
"""

from __future__ import annotations

import asyncio
import gc
import os
import weakref
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from aioinformer._cache._compact import CacheMode

#: Seconds the tasks a test leaves still finishing may take before they count as leaked.
GRACE = 1.0

_FD_DIR = "/proc/self/fd"

# Every aiohttp client session made in this process (kubernetes_asyncio's, ours, tests'),
# weakly: a session nobody references is collected, and aiohttp reports it unclosed.
_sessions: weakref.WeakSet[aiohttp.ClientSession] = weakref.WeakSet()
_session_init = aiohttp.ClientSession.__init__


def _tracked_init(self: aiohttp.ClientSession, *args: Any, **kwargs: Any) -> None:
    _session_init(self, *args, **kwargs)
    _sessions.add(self)


aiohttp.ClientSession.__init__ = _tracked_init  # type: ignore[method-assign]


def _open_fds() -> dict[int, str]:
    """The process's open descriptors and what each points to (empty where unsupported)."""
    try:
        names = os.listdir(_FD_DIR)
    except OSError:
        return {}
    fds: dict[int, str] = {}
    for name in names:
        try:
            fds[int(name)] = os.readlink(f"{_FD_DIR}/{name}")
        except OSError:
            continue  # the listing's own descriptor, already closed
    return fds


async def _pending_tasks(before: set[asyncio.Task[Any]]) -> list[asyncio.Task[Any]]:
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t not in before and t is not current]
    if pending:
        await asyncio.wait(pending, timeout=GRACE)
    return [t for t in pending if not t.done()]


@pytest_asyncio.fixture(autouse=True)
async def no_leaks_and_no_asyncio_error_reports() -> AsyncIterator[None]:
    """Fail a test whose event loop reported an unhandled error (a destroyed pending task, an
    exception nobody retrieved, an unclosed session collected), or that left a task pending,
    an aiohttp session open or a file descriptor open: every task must be owned and finished,
    every resource closed."""
    loop = asyncio.get_running_loop()
    reports: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reports.append(context))
    tasks_before = asyncio.all_tasks()
    sessions_before = set(_sessions)
    fds_before = _open_fds()
    try:
        yield
        leaked_tasks = await _pending_tasks(tasks_before)
        gc.collect(1)  # young pending tasks and sessions nobody references report now
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
    for task in leaked_tasks:
        task.cancel()  # not to disturb the next test
    messages = [str(report.get("message")) for report in reports]
    assert not reports, f"the event loop reported errors: {messages}"
    assert not leaked_tasks, f"tasks left pending: {[t.get_coro() for t in leaked_tasks]}"
    open_sessions = [s for s in _sessions if s not in sessions_before and not s.closed]
    assert not open_sessions, f"aiohttp sessions left open: {open_sessions}"
    leaked_fds = {fd: what for fd, what in _open_fds().items() if fds_before.get(fd) != what}
    if leaked_fds:
        gc.collect()  # a transport in a reference cycle closes its socket when collected
        leaked_fds = {fd: what for fd, what in _open_fds().items() if fds_before.get(fd) != what}
    assert not leaked_fds, f"file descriptors left open: {leaked_fds}"


@pytest.fixture(params=["compact", "dict"])
def cache_mode(request: pytest.FixtureRequest) -> CacheMode:
    """Each cache mode of the informer (issue 13): informer, lister and controller tests run
    with both."""
    mode: CacheMode = request.param
    return mode
