"""Helpers for reading watch streams in tests (bounded by timeouts, never sleeping)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson


async def take(
    stream: AsyncIterator[dict[str, Any]], n: int, *, timeout: float = 5.0
) -> list[dict[str, Any]]:
    """The next ``n`` events of a kubernetes_asyncio watch stream."""
    events: list[dict[str, Any]] = []
    async with asyncio.timeout(timeout):
        async for event in stream:
            events.append(event)
            if len(events) == n:
                break
    return events


async def drain(
    stream: AsyncIterator[dict[str, Any]], *, timeout: float = 5.0
) -> list[dict[str, Any]]:
    """Every event until a kubernetes_asyncio watch stream ends."""
    async with asyncio.timeout(timeout):
        return [event async for event in stream]


async def raw_lines(
    response: aiohttp.ClientResponse, n: int | None = None, *, timeout: float = 5.0
) -> list[bytes]:
    """The next ``n`` lines of a raw watch response (all lines until EOF when None)."""
    lines: list[bytes] = []
    async with asyncio.timeout(timeout):
        while n is None or len(lines) < n:
            line = await response.content.readline()
            if not line:
                break
            lines.append(line)
    return lines


def decode(lines: list[bytes]) -> list[dict[str, Any]]:
    """Watch lines as events."""
    return [orjson.loads(line) for line in lines]


def summary(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """``(type, name)`` of each event (bookmarks have no name)."""
    out = []
    for event in events:
        obj = event.get("raw_object", event["object"])
        out.append((event["type"], obj.get("metadata", {}).get("name", "")))
    return out
