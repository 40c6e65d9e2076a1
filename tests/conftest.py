"""Suite-wide guards: no asyncio error reports (e.g. "Task was destroyed but it is pending")."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from aioinformer._compact import CacheMode


@pytest_asyncio.fixture(autouse=True)
async def no_asyncio_error_reports() -> AsyncIterator[None]:
    """Fail a test whose event loop reported an unhandled error (a destroyed pending task, an
    exception nobody retrieved, ...): every task must be owned and finished."""
    loop = asyncio.get_running_loop()
    reports: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reports.append(context))
    try:
        yield
        gc.collect(1)  # young pending tasks nobody references report when collected
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
    messages = [str(report.get("message")) for report in reports]
    assert not reports, f"the event loop reported errors: {messages}"


@pytest.fixture(params=["compact", "dict"])
def cache_mode(request: pytest.FixtureRequest) -> CacheMode:
    """Each cache mode of the informer (issue 13): informer, lister and controller tests run
    with both."""
    mode: CacheMode = request.param
    return mode
