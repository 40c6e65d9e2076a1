"""What a :class:`~aioinformer.lowlevel.Reflector` writes to, and its error hook's shape."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from .._objects import KubeObject

if TYPE_CHECKING:
    from ._loop import Reflector

__all__ = ["ReflectorStore", "WatchErrorHandler"]


class ReflectorStore(Protocol):
    """What a reflector writes to; :class:`~aioinformer.delta_fifo.DeltaFIFO` implements it.

    A store may also have ``async def apply(changes)`` (as the DeltaFIFO has): the reflector
    then hands it each batch of watch events in one call (see :meth:`DeltaFIFO.apply
    <aioinformer.delta_fifo.DeltaFIFO.apply>`) instead of one ``add``/``update``/``delete``
    per event.
    """

    async def add(self, obj: KubeObject) -> None: ...

    async def update(self, obj: KubeObject) -> None: ...

    async def delete(self, obj: Any) -> None: ...

    async def replace(self, objs: Iterable[KubeObject], resource_version: str) -> None: ...

    async def resync(self) -> None: ...


class WatchErrorHandler(Protocol):
    """Called with the reflector and the error for every list or watch error (before the
    wait that follows it)."""

    def __call__(self, reflector: Reflector, error: BaseException, /) -> object: ...
