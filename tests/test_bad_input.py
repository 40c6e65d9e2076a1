"""The hostile-input catalogue (issue 15): one test per bad input a server, a proxy or a
consumer can produce.

Each case runs a real informer over HTTP against :class:`tests.hostile.HostileApi` (a tiny
server of the tests' own) or the fake API server, and checks the promise: the informer keeps
running (or stops with a typed error where it cannot go on), the watch-error hook and the
statistics say what happened, a log line says it without the objects' contents, and the
cache (and a subscriber's view) ends equal to the server's objects.

The rules for what a real server sends come from kube-apiserver: a watch is newline-delimited
JSON ``{"type", "object"}`` events (``staging/src/k8s.io/apimachinery/pkg/watch/json``), an
``ERROR`` event carries a ``Status``, ``BOOKMARK`` events carry only ``metadata.
resourceVersion`` (KEP-956), LIST pages continue with ``metadata.continue`` and an expired
continue token is a 410 ``Expired`` (``storage/etcd3``: "The provided continue parameter is too
old").
"""

from __future__ import annotations

import gzip
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import orjson
import pytest
from aiohttp import web
from kubernetes_asyncio.client import ApiClient, Configuration

from aioinformer import KubeClient, KubeObject, ResourceEventHandlerFuncs, SharedIndexInformer
from aioinformer.errors import (
    ExpiredError,
    ForbiddenError,
    InternalServerError,
    InvalidObjectError,
    MalformedWatchEventError,
    NotFoundError,
    ObjectRejectedError,
    ResourceVersionError,
    TransportError,
    TransportTimeoutError,
    UnauthorizedError,
)
from aioinformer.testing import FakeClock

from .hostile import SECRET, Harness, HostileApi, client_of, cm, harness, line

LOGGER = "aioinformer"


@pytest.fixture
async def api() -> AsyncIterator[HostileApi]:
    server = HostileApi()
    server.put("a")
    server.put("b")
    async with server.serving():
        yield server


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    return caplog


def no_contents(logs: pytest.LogCaptureFixture) -> None:
    """No log record, at any level, carries an object's data."""
    for record in logs.records:
        assert SECRET not in record.getMessage()
        assert record.exc_text is None or SECRET not in record.exc_text


def said(logs: pytest.LogCaptureFixture, *words: str, level: int = logging.WARNING) -> list[str]:
    """The records at ``level`` or above whose message has every word; at least one."""
    found = [
        r.getMessage()
        for r in logs.records
        if r.levelno >= level and all(w in r.getMessage() for w in words)
    ]
    assert found, f"no log line at {logging.getLevelName(level)}+ with {words}"
    assert all("\n" not in message for message in found)
    return found


def json_answer(body: bytes, *, status: int = 200, content_type: str = "application/json") -> Any:
    async def answer(_request: web.Request) -> web.StreamResponse:
        return web.Response(body=body, status=status, content_type=content_type)

    return answer


def status_body(code: int, reason: str, message: str = "") -> bytes:
    return orjson.dumps(
        {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
         "reason": reason, "message": message or reason}
    )  # fmt: skip


def stream_of(*chunks: bytes, content_type: str = "application/json", **headers: str) -> Any:
    """A watch answer writing ``chunks`` and ending."""

    async def answer(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": content_type, **headers})
        await response.prepare(request)
        for chunk in chunks:
            await response.write(chunk)
        await response.write_eof()
        return response

    return answer


def reflector(it: Harness) -> Any:
    return it.informer.statistics().reflector


# -- the watch stream ----------------------------------------------------------------------


async def test_non_json_watch_line(api: HostileApi, logs: pytest.LogCaptureFixture) -> None:
    """A line that is not JSON ends the watch at once; a relist from the last good RV repairs
    what the lost event would have said."""
    async with harness(api) as it:
        await api.wait_watching()
        await it.converged()
        changed = api.put("a", v="2")
        api.send(b"{not json\n")
        (error,) = await it.until_error(MalformedWatchEventError)
        assert "not JSON" in str(error)
        await it.converged()
        assert it.cache()["default/a"] == changed["metadata"]["resourceVersion"]
        assert reflector(it).malformed_events == 1
        assert reflector(it).watch_restarts["malformed"] == 1
    said(logs, "MalformedWatchEventError", "not JSON")
    no_contents(logs)


async def test_truncated_line_at_stream_end(
    api: HostileApi, logs: pytest.LogCaptureFixture
) -> None:
    """A line cut off by the end of the stream is reported like a malformed one, then a
    relist repairs the cache."""
    api.on_watch(stream_of(line("ADDED", cm("c", 99))[:30]))
    api.put("c")
    async with harness(api) as it:
        await it.until_error(MalformedWatchEventError)
        await it.converged()
        assert reflector(it).malformed_events == 1
    said(logs, "MalformedWatchEventError")
    no_contents(logs)


async def test_100_mb_line_without_newline(api: HostileApi, logs: pytest.LogCaptureFixture) -> None:
    """A 100 MB line that never ends (the stream closes first) is larger than
    ``max_event_size``: skipped without being kept, reported, the cache repaired by a
    relist. Before, it vanished without a log, counter, hook call or relist."""
    megabyte = b"x" * 2**20
    api.on_watch(stream_of(b'{"type":"ADDED","object":{"data":"', *([megabyte] * 100)))
    api.put("c")
    async with harness(api, max_event_size=2**20) as it:
        (error,) = await it.until_error(MalformedWatchEventError)
        assert "max_event_size" in str(error)
        await it.converged()
        assert reflector(it).malformed_events == 1
    said(logs, "max_event_size")


async def test_unknown_event_type(api: HostileApi, logs: pytest.LogCaptureFixture) -> None:
    """An event of a type the client does not know is skipped, counted, logged and handed to
    the hook; the watch goes on (client-go's reflector logs and skips it too)."""
    async with harness(api) as it:
        await api.wait_watching()
        await it.converged()
        api.send(line("RENAMED", cm("a", 50)))
        changed = api.put("b", v="2")
        api.send(line("MODIFIED", changed))
        await it.converged()
        assert reflector(it).unknown_events == 1
        assert reflector(it).lists == 1  # no relist was needed
        (error,) = it.of(MalformedWatchEventError)
        assert "RENAMED" in str(error)
    said(logs, "unknown type", "RENAMED")
    no_contents(logs)


@pytest.mark.parametrize(
    ("code", "reason", "kind"),
    [
        (500, "InternalError", InternalServerError),
        (403, "Forbidden", ForbiddenError),
        (410, "Expired", ExpiredError),
    ],
)
async def test_error_events(
    api: HostileApi,
    logs: pytest.LogCaptureFixture,
    code: int,
    reason: str,
    kind: type[Exception],
) -> None:
    """An ``ERROR`` event carrying a Status ends the watch; its typed error reaches the hook;
    the informer re-watches (410: relists) and catches up with what happened meanwhile."""
    async with harness(api) as it:
        await api.wait_watching()
        await it.converged()
        api.put("c")
        api.send(line("ERROR", orjson.loads(status_body(code, reason, "injected"))))
        (error,) = await it.until_error(kind)
        assert getattr(error, "code", None) == code
        await it.converged()
        assert reflector(it).errors >= 1
    said(logs, kind.__name__, "injected", level=logging.INFO)
    no_contents(logs)


# -- objects that cannot be cached -------------------------------------------------------


BAD_OBJECTS: dict[str, Callable[[], Any]] = {
    "no metadata": lambda: {"kind": "ConfigMap", "data": {"secret": SECRET}},
    "no name": lambda: {**cm("x", 30), "metadata": {"namespace": "default"}},
    "non-string name": lambda: {**cm("x", 30), "metadata": {"name": 7, "namespace": "default"}},
    "non-string resourceVersion": lambda: {
        **cm("x", 30),
        "metadata": {"name": "x", "namespace": "default", "resourceVersion": 30},
    },
}


@pytest.mark.parametrize("case", BAD_OBJECTS)
async def test_invalid_item_in_a_list(
    api: HostileApi, logs: pytest.LogCaptureFixture, case: str
) -> None:
    """One bad item does not fail the list: it is skipped and reported (with its position,
    and its key when it has one), the rest is cached."""
    items = [*api.objects.values(), BAD_OBJECTS[case]()]
    api.on_list(json_answer(api.list_body(items)))
    async with harness(api) as it:
        (error,) = await it.until_error(InvalidObjectError)
        assert getattr(error, "position", None) == 2
        await it.converged()
        assert it.informer.has_synced()
        assert reflector(it).invalid_objects == 1
        assert reflector(it).lists == 1  # not retried forever
    said(logs, "InvalidObjectError")
    no_contents(logs)


@pytest.mark.parametrize("case", BAD_OBJECTS)
async def test_invalid_object_on_the_watch(
    api: HostileApi, logs: pytest.LogCaptureFixture, case: str
) -> None:
    """The same objects on the watch are skipped and reported; the watch goes on."""
    async with harness(api) as it:
        await api.wait_watching()
        await it.converged()
        api.send(line("ADDED", BAD_OBJECTS[case]()))
        await it.until_error(InvalidObjectError)
        changed = api.put("a", v="2")
        api.send(line("MODIFIED", changed))
        await it.converged()
        assert reflector(it).invalid_objects == 1
    said(logs, "InvalidObjectError")
    no_contents(logs)


async def test_duplicate_keys_in_one_list(api: HostileApi, logs: pytest.LogCaptureFixture) -> None:
    """A key listed twice: the later item is kept (as a store's ``Replace`` does), once."""
    older = cm("a", 5, v="old")
    api.on_list(json_answer(api.list_body([older, *api.objects.values()])))
    async with harness(api) as it:
        await it.converged()
        assert it.informer.statistics().objects == 2
    no_contents(logs)


async def test_5_mb_object(api: HostileApi, logs: pytest.LogCaptureFixture) -> None:
    """A 5 MB object (under the default ``max_event_size``) is listed and watched whole."""
    big = "y" * (5 * 2**20)
    api.put("big", blob=big)
    async with harness(api) as it:
        await api.wait_watching()
        await it.converged()
        changed = api.put("big", blob=big + "z")
        api.send(line("MODIFIED", changed))
        await it.converged()
        (stored,) = [o for o in it.lister() if o["metadata"]["name"] == "big"]
        assert stored["data"]["blob"].endswith("z")
    no_contents(logs)


async def test_20000_item_page(api: HostileApi) -> None:
    """A server that ignores ``limit`` and answers 20,000 items in one page is cached whole."""
    for number in range(20_000):
        api.put(f"n{number}")
    async with harness(api) as it:
        await it.converged()
        assert it.informer.statistics().objects == 20_002


# -- what proxies and broken servers answer ----------------------------------------------


async def test_html_502_from_a_proxy(api: HostileApi, logs: pytest.LogCaptureFixture) -> None:
    """A proxy's multi-line HTML 502 page becomes one bounded line in the error; the informer
    backs off and lists again."""
    page = b"<html>\n<head><title>502 Bad Gateway</title></head>\n<body>" + b"x" * 5000
    api.on_list(json_answer(page + b"</body></html>", status=502, content_type="text/html"))
    async with harness(api) as it:
        (error,) = [e for e in await it.until_error(Exception) if "502" in str(e)]
        await it.converged()
        assert "\n" not in str(error) and len(str(error)) < 600
        assert "<html>" not in str(error)
    said(logs, "502")


async def test_200_list_whose_body_is_not_json(
    api: HostileApi, logs: pytest.LogCaptureFixture
) -> None:
    """A 200 LIST answer that is not JSON is a typed error; the informer lists again."""
    api.on_list(json_answer(b"<html>maintenance</html>"))
    async with harness(api) as it:
        await it.until_error(TransportError)
        await it.converged()
        assert len([s for s in api.requests if s.verb == "list"]) == 2
    said(logs, "TransportError")


async def test_wrong_content_type(api: HostileApi, logs: pytest.LogCaptureFixture) -> None:
    """A JSON list and watch labelled ``text/plain`` are read as JSON (the client asks for
    JSON; kube-apiserver answers nothing else to it): nothing is lost."""
    api.on_list(json_answer(api.list_body(), content_type="text/plain"))
    api.put("c")
    api.on_watch(stream_of(line("ADDED", api.objects["default/c"]), content_type="text/plain"))
    async with harness(api) as it:
        await it.converged()
    no_contents(logs)


async def test_401_then_success_after_a_credential_reload(
    api: HostileApi, logs: pytest.LogCaptureFixture
) -> None:
    """A 401 reloads the credentials (here: a refresher that rotates the token) and the list
    is repeated with the new one; the old token is in no log."""
    configuration = Configuration(host=api.url)
    configuration.api_key["BearerToken"] = "Bearer old-token"
    reloads: list[str] = []

    async def reload() -> None:
        configuration.api_key["BearerToken"] = "Bearer new-token"
        reloads.append("new")

    api.on_list(json_answer(status_body(401, "Unauthorized"), status=401))
    kube = KubeClient(ApiClient(configuration), credential_refresher=reload)
    async with harness(api, client=kube) as it:
        await it.until_error(UnauthorizedError)
        await it.converged()
        assert reloads
        assert api.requests[-1].headers["Authorization"] == "Bearer new-token"
    for record in logs.records:
        assert "old-token" not in record.getMessage() and "new-token" not in record.getMessage()


async def test_403_on_list_forever_backs_off(
    api: HostileApi, logs: pytest.LogCaptureFixture
) -> None:
    """RBAC that never allows the list: each attempt waits longer (up to the cap), it says
    so, it does not spin. On virtual time: an hour of it is a bounded number of requests."""
    forbidden = json_answer(status_body(403, "Forbidden", "configmaps is forbidden"), status=403)
    api.on_list(*([forbidden] * 1000))
    clock = FakeClock()
    async with harness(api, clock=clock) as it:
        await it.until_error(ForbiddenError)
        for _ in range(20):
            (deadline,) = await clock.wait_for_timers()
            await clock.advance(deadline - clock.now())
        waits = it.informer.statistics().reflector.errors
        assert waits >= 20
        assert not it.informer.has_synced()
        assert len(api.requests) <= 21
    said(logs, "ForbiddenError", "forbidden")


async def test_404_for_an_unknown_resource(logs: pytest.LogCaptureFixture) -> None:
    """Listing a resource the server does not serve is a ``NotFoundError`` for the hook (and
    a log line); the informer keeps trying with backoff (the resource may be installed
    later, as a CRD is), never syncing on nothing."""
    server = HostileApi()
    server.on_list(*[json_answer(status_body(404, "NotFound"), status=404)] * 3)
    async with server.serving(), harness(server) as it:
        await it.until_error(NotFoundError, 3)
        await it.converged()  # the CRD arrived: the fourth list succeeds
    said(logs, "NotFoundError")


async def test_continue_token_expires_mid_list(
    api: HostileApi, logs: pytest.LogCaptureFixture
) -> None:
    """The second page answers 410 Expired (the continue token is too old): the hook hears of
    it, and the informer lists again in one unpaginated request and syncs."""
    first = [api.objects["default/a"]]
    api.on_list(
        json_answer(api.list_body(first, **{"continue": "tok"})),
        json_answer(status_body(410, "Expired", "continue parameter is too old"), status=410),
    )
    async with harness(api) as it:
        await it.until_error(ExpiredError)
        await it.converged()
    lists = [(s.query.get("continue"), s.query.get("limit")) for s in api.requests]
    # the pages; then one list without pages (client-go's pager: "fullListIfExpired")
    assert lists == [(None, "500"), ("tok", "500"), (None, None)]
    said(logs, "ExpiredError", "too old", level=logging.INFO)


async def test_resource_versions_going_backwards(
    api: HostileApi, logs: pytest.LogCaptureFixture
) -> None:
    """An event older than what the informer already has ends the watch; the informer
    relists from its last good RV instead of moving its cursor back."""
    async with harness(api) as it:
        await api.wait_watching()
        await it.converged()
        start = len(api.requests)
        api.send(line("MODIFIED", cm("a", 3)))
        (error,) = await it.until_error(ResourceVersionError)
        assert "'3'" in str(error)
        relist = await api.wait_request("list", start=start)
        assert relist.query.get("resourceVersion") == str(api.rv)  # the last good one
        await it.converged()
        assert it.cache()["default/a"] == api.objects["default/a"]["metadata"]["resourceVersion"]
        assert reflector(it).watch_restarts["backwards"] == 1
    said(logs, "ResourceVersionError")


async def test_bookmark_without_resource_version(
    api: HostileApi, logs: pytest.LogCaptureFixture
) -> None:
    """A bookmark without ``metadata.resourceVersion`` is reported and ignored; the watch goes
    on."""
    async with harness(api) as it:
        await api.wait_watching()
        await it.converged()
        api.send(line("BOOKMARK", {"kind": "ConfigMap", "metadata": {}}))
        await it.until_error(InvalidObjectError)
        changed = api.put("a", v="3")
        api.send(line("MODIFIED", changed))
        await it.converged()
        assert reflector(it).lists == 1
    said(logs, "InvalidObjectError")


@pytest.mark.parametrize("members", [1, 2])
async def test_gzip_watch_response(api: HostileApi, members: int) -> None:
    """A gzip-encoded watch (``Content-Encoding: gzip``, as kube-apiserver sends with the
    APIResponseCompression feature) is decoded, also when the body is several gzip members
    (RFC 1952 2.2: "a gzip file consists of a series of members")."""
    api.put("c")
    api.put("d")
    lines = [line("ADDED", api.objects["default/c"]), line("ADDED", api.objects["default/d"])]
    if members == 1:
        body = gzip.compress(b"".join(lines))
    else:
        body = b"".join(gzip.compress(one) for one in lines)
    api.on_list(json_answer(api.list_body(list(api.objects.values())[:2], rv="12")))
    api.on_watch(stream_of(body, **{"Content-Encoding": "gzip"}))
    async with harness(api) as it:
        await it.converged()
        assert reflector(it).malformed_events == 0


async def test_server_that_never_answers_the_list(logs: pytest.LogCaptureFixture) -> None:
    """The connection is accepted, the request sent, no answer comes: after the client's
    ``request_timeout`` the error says so (not "connect timed out"), and the next attempt
    succeeds."""
    server = HostileApi()
    server.put("a")
    never = anyio.Event()

    async def silent(_request: web.Request) -> web.StreamResponse:
        await never.wait()
        return web.Response(status=503)

    server.on_list(silent)
    async with server.serving():
        async with harness(server, client=client_of(server.url, request_timeout=0.2)) as it:
            (error,) = await it.until_error(TransportTimeoutError)
            assert "waiting for the response" in str(error)
            await it.converged()
        never.set()
    said(logs, "TransportTimeoutError", "waiting for the response")


# -- consumers that misbehave -----------------------------------------------------------


async def test_handler_raising_on_every_event(
    api: HostileApi, logs: pytest.LogCaptureFixture
) -> None:
    """A handler that raises each time is counted and logged per event; the informer and the
    other consumers go on."""

    def fail(obj: KubeObject, is_in_initial_list: bool) -> None:
        raise RuntimeError("handler bug")

    def setup(informer: SharedIndexInformer) -> None:
        informer.add_event_handler(
            ResourceEventHandlerFuncs(on_add=fail, on_update=lambda old, new: fail(new, False))
        )

    async with harness(api, setup=setup) as it:
        await api.wait_watching()
        await it.converged()
        changed = api.put("a", v="2")
        api.send(line("MODIFIED", changed))
        await it.converged()

        def failed_three() -> bool:
            listeners = it.informer.statistics().listeners
            return [s.handler_errors for s in listeners if "handler" in s.name] == [3]

        await it.until(failed_three)  # two initial adds and the update
    said(logs, "handler raised", "RuntimeError", level=logging.ERROR)
    no_contents(logs)


async def test_transform_raising(api: HostileApi, logs: pytest.LogCaptureFixture) -> None:
    """A transform that raises for one object: the object is skipped and reported (hook,
    statistics' stale keys, one WARNING per key), the rest is cached; once a version of it
    transforms, it is up to date again."""

    def transform(obj: Any) -> Any:
        if obj["data"].get("v") == "poison":
            raise ValueError("cannot transform")
        return obj

    async with harness(api, transform=transform) as it:
        await api.wait_watching()
        await it.converged()
        bad = api.put("a", v="poison")
        api.send(line("MODIFIED", bad), line("MODIFIED", bad))
        (error, _again) = await it.until_error(ObjectRejectedError, 2)
        assert isinstance(error, ObjectRejectedError)
        assert reflector(it).stale_keys == ("default/a",)
        good = api.put("a", v="fine")
        api.send(line("MODIFIED", good))
        await it.converged()
        assert reflector(it).stale_keys == ()
    assert len(said(logs, "ObjectRejectedError", "default/a")) == 1
    no_contents(logs)


async def test_transform_raising_in_a_list(api: HostileApi, logs: pytest.LogCaptureFixture) -> None:
    """The same in a LIST: the list is stored without the object, not retried forever."""

    def transform(obj: Any) -> Any:
        if obj["metadata"]["name"] == "b":
            raise ValueError("cannot transform")
        return obj

    async with harness(api, transform=transform) as it:
        await it.until_error(ObjectRejectedError)
        await it.until(it.informer.has_synced)
        assert set(it.cache()) == {"default/a"}
        assert reflector(it).lists == 1
        assert "default/b" in reflector(it).stale_keys
    said(logs, "default/b")
    no_contents(logs)


async def test_index_function_raising(api: HostileApi, logs: pytest.LogCaptureFixture) -> None:
    """An index function that raises for one object: reported like a transform, with the
    index named; the object is not left silently stale."""

    def by_v(obj: KubeObject) -> list[str]:
        value = obj["data"].get("v", "")
        if value == "poison":
            raise KeyError("no index value")
        return [value]

    def setup(informer: SharedIndexInformer) -> None:
        informer.add_indexers({"v": by_v})

    async with harness(api, setup=setup) as it:
        await api.wait_watching()
        await it.converged()
        bad = api.put("a", v="poison")
        api.send(line("MODIFIED", bad))
        (error,) = await it.until_error(ObjectRejectedError)
        assert "index" in str(error) and "default/a" in str(error)
        assert reflector(it).stale_keys == ("default/a",)
        good = api.put("a", v="fine")
        api.send(line("MODIFIED", good))
        await it.converged()
    said(logs, "ObjectRejectedError", "default/a")
    no_contents(logs)


async def test_consumer_that_never_reads(api: HostileApi) -> None:
    """An ``events()`` stream nobody reads only grows its own backlog (visible in statistics);
    the cache and the other consumers are not held up."""

    unread = []

    def setup(informer: SharedIndexInformer) -> None:
        unread.append(informer.events())  # never read

    async with harness(api, setup=setup) as it:
        await api.wait_watching()
        await it.converged()
        for number in range(50):
            changed = api.put("a", v=str(number))
            api.send(line("MODIFIED", changed))
        await it.converged()
        backlogs = [s.backlog for s in it.informer.statistics().listeners]
        assert max(backlogs) == 52 and min(backlogs) == 0


async def test_sync_handler_that_blocks(api: HostileApi) -> None:
    """A sync handler that blocks the event loop for a while holds everything up meanwhile
    (it runs on the loop), but nothing is lost: once it returns, all consumers catch up."""
    blocked = threading.Event()
    release = threading.Timer(0.2, blocked.set)  # how long the handler blocks

    def block(old: KubeObject, new: KubeObject) -> None:
        if not blocked.is_set():
            release.start()
            blocked.wait()

    def setup(informer: SharedIndexInformer) -> None:
        informer.add_event_handler(ResourceEventHandlerFuncs(on_update=block))

    async with harness(api, setup=setup) as it:
        await api.wait_watching()
        await it.converged()
        for number in range(5):
            changed = api.put("b", v=str(number))
            api.send(line("MODIFIED", changed))
        await it.converged()
    release.join()
    assert blocked.is_set()


# -- sharded replicas (issue 21) -----------------------------------------------------------


def test_replica_identity_the_api_server_would_refuse() -> None:
    """``R1`` is not a Lease name: refused where it is given, naming the value and the rule,
    instead of failing every Lease write with 422 and reconciling nothing."""
    from aioinformer import ShardedController
    from aioinformer.errors import InvalidNameError

    async def reconcile(key: str) -> None:
        return None

    with pytest.raises(InvalidNameError, match=r"replica identity.*'R1'.*DNS-1123 subdomain"):
        ShardedController(
            name="c", reconcile=reconcile, client=None,  # type: ignore[arg-type]
            resource="v1/configmaps", group="g", identity="R1",
        )  # fmt: skip


async def test_replica_without_rbac_on_leases(logs: pytest.LogCaptureFixture) -> None:
    """Every write of the replica's Lease is refused 403: one WARNING with the Status and the
    verb and resource it needs, the refusals counted by code, one ERROR once it has not joined
    for ``JOIN_PERIODS`` lease durations; it keeps trying (and joins once it may)."""
    from aioinformer import ShardedController, ShardTiming
    from aioinformer._replicas._member import JOIN_PERIODS
    from aioinformer.testing import FakeApiServer

    async def reconcile(key: str) -> None:
        return None

    erred = anyio.Event()

    class OnError(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.ERROR:
                erred.set()

    member_log = logging.getLogger("aioinformer._replicas._member")
    handler = OnError()
    member_log.addHandler(handler)
    timing = ShardTiming(lease_duration=0.5, renew_deadline=0.3, retry_period=0.1)
    try:
        async with FakeApiServer() as server, KubeClient(server.api_client()) as client:
            server.faults.fail_next(10_000, 403, verb="create", resource="leases")
            c = ShardedController(
                name="c", reconcile=reconcile, client=client, resource="v1/configmaps",
                group="g", identity="r1", timing=timing,
            )  # fmt: skip
            async with c:
                with anyio.fail_after(30):
                    await erred.wait()
                stats = c.statistics()
    finally:
        member_log.removeHandler(handler)
    found = said(logs, "403 Forbidden", "needs create on leases.coordination.k8s.io")
    (warning,) = [m for m in found if m.startswith("r1: lease write")]  # once, not per retry
    assert "namespace default" in warning
    (error,) = said(logs, "not a member of group g", level=logging.ERROR)
    assert f"{JOIN_PERIODS} lease durations" in error
    assert stats.lease_write_failures["403"] == stats.failed_lease_writes > 0
    assert not stats.joined
