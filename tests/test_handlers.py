"""Handler registrations: what is accepted, and whose registration a removal touches."""

from __future__ import annotations

import logging

import anyio
import pytest

from aioinformer._informer._event_stream import (
    ResourceEventHandlerFuncs,
    validate_handler,
)
from aioinformer._informer._informer import SharedIndexInformer
from aioinformer._objects import KubeObject
from aioinformer.testing import MemorySource

from .support import CONFIGMAPS, FAST_WATCH, configmap

GUARD = 10.0


class Recorder:
    """Records the names it is told about, and wakes a waiter."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.changed = anyio.Event()

    def on_add(self, obj: KubeObject) -> None:
        self.names.append(obj["metadata"]["name"])
        self.changed.set()


def informer_for(source: MemorySource) -> SharedIndexInformer:
    return SharedIndexInformer(source.lister_watcher(CONFIGMAPS), watch=FAST_WATCH)


async def test_removing_a_registration_through_another_informer_is_a_no_op() -> None:
    """``other.remove_event_handler(reg)`` leaves ``reg`` running on its own informer, like
    client-go's ``RemoveEventHandler`` for a handle it does not own."""
    source = MemorySource()
    mine, other = informer_for(source), informer_for(source)
    recorder = Recorder()
    registration = mine.add_event_handler(recorder)
    async with mine, other:
        other.remove_event_handler(registration)
        other.remove_event_handler(registration)
        assert registration.listener in mine._listeners
        source.create(CONFIGMAPS, configmap("after"))
        with anyio.fail_after(GUARD):
            while "after" not in recorder.names:
                recorder.changed = anyio.Event()
                await recorder.changed.wait()
        mine.remove_event_handler(registration)
        assert registration.listener.closed
        assert registration.listener not in mine._listeners
        mine.remove_event_handler(registration)  # idempotent


class Misspelt:
    def on_added(self, obj: KubeObject) -> None: ...


class HalfMisspelt:
    def on_add(self, obj: KubeObject) -> None: ...

    def on_updated(self, old: KubeObject, new: KubeObject) -> None: ...


class NotCallable:
    on_add = "add"


def plain_function(obj: KubeObject) -> None: ...


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        (plain_function, r"not a function .*ResourceEventHandlerFuncs\(on_add=\.\.\.\)"),
        (lambda obj: None, "not a function"),
        (Misspelt(), r"none of on_add, on_update, on_delete.*on_added \(did you mean on_add\?\)"),
        (object(), "none of on_add, on_update, on_delete, so it would never be called"),
        (ResourceEventHandlerFuncs(), "none of on_add, on_update, on_delete"),
        (NotCallable(), "on_add is 'add', not a callable"),
    ],
)
def test_a_handler_that_would_never_be_called_is_refused(
    api_client_informer: SharedIndexInformer, handler: object, message: str
) -> None:
    """A plain function, a misspelt method or an empty ResourceEventHandlerFuncs raises a
    TypeError saying what to write, and nothing is registered."""
    with pytest.raises(TypeError, match=message):
        api_client_informer.add_event_handler(handler)
    assert api_client_informer.statistics().listeners == ()


def test_a_misspelt_method_beside_a_valid_one_is_a_warning(
    api_client_informer: SharedIndexInformer, caplog: pytest.LogCaptureFixture
) -> None:
    """``on_add`` plus ``on_updated``: accepted, with one warning naming the misspelling."""
    with caplog.at_level(logging.WARNING, logger="aioinformer._informer._event_stream"):
        api_client_informer.add_event_handler(HalfMisspelt())
    (message,) = [r.getMessage() for r in caplog.records]
    assert message.endswith(
        ": on_updated (did you mean on_update?) is never called;"
        " handler methods are on_add, on_update, on_delete"
    )


def test_validate_handler_returns_the_callbacks() -> None:
    """The three callables, None where absent."""
    funcs = ResourceEventHandlerFuncs(on_delete=plain_function)
    assert validate_handler(funcs) == (None, None, plain_function)


@pytest.fixture
def api_client_informer() -> SharedIndexInformer:
    """An informer that is never started."""
    return informer_for(MemorySource())
