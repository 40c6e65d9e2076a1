"""The fake's kubelet (``FakeApiServer(kubelet=True)``) on a fake clock, and ``pods/log`` of
pods that never ran.

Each test names the real behaviour: the kubelet's status manager
(``pkg/kubelet/status/status_manager.go``: the status it PATCHes, the final ``DELETE`` with
``gracePeriodSeconds: 0`` and a uid precondition), the pod strategy's graceful deletion
(``pkg/registry/core/pod/strategy.go``, ``CheckGracefulDelete``), ``LogLocation`` (same file)
and the kubelet's ``validateContainerLogStatus`` (``pkg/kubelet/kubelet_pods.go``).
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from aioinformer.errors import NotFoundError
from aioinformer.testing import FakeApiServer, FakeClock

from .valid import pod

PODS = "/api/v1/namespaces/default/pods"
Obj = dict[str, Any]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def _with_kubelet(clock: FakeClock) -> FakeApiServer:
    """A server whose kubelet starts pods 2 s (on ``clock``) after accepting them."""
    return FakeApiServer(kubelet=True, clock=clock, pod_start_delay=2.0)


def _history(server: FakeApiServer, since: str) -> list[tuple[str, Obj]]:
    """(type, object) of every stored pod event after resource version ``since``."""
    events = server._storage.history(server.resource("pods")).since(int(since)) or []
    return [(e.type, e.obj) for e in events]


def _condition_states(obj: Obj) -> list[tuple[str, str]]:
    return [(c["type"], c["status"]) for c in obj["status"]["conditions"]]


async def test_a_scheduled_pod_is_accepted_then_running_after_the_start_delay(
    clock: FakeClock,
) -> None:
    """The kubelet accepts a pod bound to its node at once (``phase: Pending``, containers
    ``waiting: ContainerCreating``, ``PodReadyToStartContainers``/``Ready``/``ContainersReady``
    False, ``Initialized``/``PodScheduled`` True, ``startTime``, ``hostIP``) and writes
    ``Running`` once the containers started: every condition True, ``running.startedAt``,
    ``ready``/``started``, ``containerID``, the fully qualified image and its ``imageID``, a
    ``podIP``. Written as ``PATCH pods/status`` by field manager ``kubelet``."""
    async with _with_kubelet(clock) as server:
        server.objects.create("pods", pod("web", node="node-1", image="nginx:1.25"))
        await clock.advance(0)
        accepted = server.objects.get("pods", "web")
        status = accepted["status"]
        assert status["phase"] == "Pending" and status["qosClass"] == "BestEffort"
        assert _condition_states(accepted) == [
            ("PodReadyToStartContainers", "False"),
            ("Initialized", "True"),
            ("Ready", "False"),
            ("ContainersReady", "False"),
            ("PodScheduled", "True"),
        ]
        ready = status["conditions"][2]
        assert (ready["reason"], ready["message"]) == (
            "ContainersNotReady",
            "containers with unready status: [app]",
        )
        assert ready["lastProbeTime"] is None and ready["observedGeneration"] == 1
        [container] = status["containerStatuses"]
        assert container == {
            "name": "app",
            "image": "nginx:1.25",
            "imageID": "",
            "lastState": {},
            "ready": False,
            "restartCount": 0,
            "started": False,
            "state": {"waiting": {"reason": "ContainerCreating"}},
        }
        assert status["hostIP"] == "172.18.0.2" and status["hostIPs"] == [{"ip": "172.18.0.2"}]
        assert status["startTime"] and status["observedGeneration"] == 1
        managers = {m["manager"] for m in accepted["metadata"]["managedFields"]}
        assert "kubelet" in managers
        await clock.advance(1.9)
        assert server.objects.get("pods", "web")["status"]["phase"] == "Pending"
        await clock.advance(0.1)
        running = server.objects.get("pods", "web")
        status = running["status"]
        assert status["phase"] == "Running"
        assert {state for _, state in _condition_states(running)} == {"True"}
        [container] = status["containerStatuses"]
        assert container["image"] == "docker.io/library/nginx:1.25"
        assert container["imageID"].startswith("docker.io/library/nginx@sha256:")
        assert container["containerID"].startswith("containerd://")
        assert len(container["containerID"]) == len("containerd://") + 64
        assert (container["ready"], container["started"]) == (True, True)
        assert container["state"]["running"]["startedAt"]
        assert status["podIP"].startswith("10.244.")
        assert status["podIPs"] == [{"ip": status["podIP"]}]
        scheduled = status["conditions"][4]
        assert (
            scheduled["lastTransitionTime"]
            == accepted["status"]["conditions"][4]["lastTransitionTime"]
        )


async def test_an_unscheduled_pod_stays_pending_without_conditions(
    clock: FakeClock,
) -> None:
    """No ``spec.nodeName``, no kubelet: without a scheduler the pod stays as the API server
    created it (``phase: Pending``, ``qosClass``, no conditions), as on envtest."""
    async with _with_kubelet(clock) as server:
        server.objects.create("pods", pod("lonely"))
        await clock.advance(10)
        assert server.objects.get("pods", "lonely")["status"] == {
            "phase": "Pending",
            "qosClass": "BestEffort",
        }


async def test_init_containers_hold_initialized_false_until_they_ran(
    clock: FakeClock,
) -> None:
    """With init containers, the accepted pod has ``Initialized: False``
    (``ContainersNotInitialized``, ``containers with incomplete status: [init]``) and main
    containers waiting ``PodInitializing``; once running, the init containers are
    ``terminated: Completed`` with exit code 0."""
    async with _with_kubelet(clock) as server:
        obj = pod("init", node="node-1")
        obj["spec"]["initContainers"] = [{"name": "init", "image": "busybox"}]
        server.objects.create("pods", obj)
        await clock.advance(0)
        status = server.objects.get("pods", "init")["status"]
        initialized = status["conditions"][1]
        assert (initialized["status"], initialized["reason"], initialized["message"]) == (
            "False",
            "ContainersNotInitialized",
            "containers with incomplete status: [init]",
        )
        assert status["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}
        await clock.advance(2)
        status = server.objects.get("pods", "init")["status"]
        terminated = status["initContainerStatuses"][0]["state"]["terminated"]
        assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
        assert status["conditions"][1]["status"] == "True"


async def test_graceful_deletion_ends_when_the_containers_stop(
    clock: FakeClock,
) -> None:
    """``DELETE`` of a scheduled pod marks it (``deletionTimestamp``, grace 30); the
    containers stop after the stop delay (1 s, well inside the grace period); the kubelet
    writes their terminated states (exit code 0, ``Completed``) and the terminal phase
    ``Succeeded``, then its final ``DELETE`` (``gracePeriodSeconds: 0``, uid precondition)
    removes the pod: a watcher sees MODIFIED (marked), MODIFIED (terminated), MODIFIED
    (``deletionGracePeriodSeconds: 0``, ``updateForGracefulDeletionAndFinalizers``),
    DELETED."""
    async with _with_kubelet(clock) as server:
        server.objects.create("pods", pod("web", node="node-1"))
        await clock.advance(2)
        rv = server.objects.resource_version
        marked = server.objects.delete("pods", "web")
        assert marked["metadata"]["deletionGracePeriodSeconds"] == 30
        await clock.advance(0.9)
        assert server.objects.get("pods", "web")["metadata"]["deletionTimestamp"]
        await clock.advance(0.1)
        with pytest.raises(NotFoundError):
            server.objects.get("pods", "web")
        events = _history(server, rv)
        assert [t for t, _ in events] == ["MODIFIED", "MODIFIED", "MODIFIED", "DELETED"]
        final = events[1][1]["status"]
        assert final["phase"] == "Succeeded"
        terminated = final["containerStatuses"][0]["state"]["terminated"]
        assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
        assert [c["status"] for c in final["conditions"] if c["type"] == "Ready"] == ["False"]


async def test_containers_that_ignore_sigterm_are_killed_when_the_grace_period_ends(
    clock: FakeClock,
) -> None:
    """``pod_stop_delay=None``: the containers ignore SIGTERM; the kubelet kills them when
    the grace period (here 5 s) ends: exit code 137, reason ``Error``, phase ``Failed``; a
    later DELETE with a shorter grace period brings the kill forward."""
    async with FakeApiServer(kubelet=True, clock=clock, pod_stop_delay=None) as server:
        server.objects.create("pods", pod("stubborn", node="node-1"))
        server.objects.create("pods", pod("hurried", node="node-1"))
        await clock.advance(1)
        rv = server.objects.resource_version
        server.objects.delete("pods", "stubborn", grace_period_seconds=5)
        server.objects.delete("pods", "hurried", grace_period_seconds=30)
        await clock.advance(1)
        server.objects.delete("pods", "hurried", grace_period_seconds=2)
        await clock.advance(1.9)
        assert len(server.objects.list("pods")) == 2
        await clock.advance(0.1)
        assert [p["metadata"]["name"] for p in server.objects.list("pods")] == ["stubborn"]
        await clock.advance(2)
        assert server.objects.list("pods") == []
        last = [obj for t, obj in _history(server, rv) if t == "MODIFIED"][-1]
        terminated = last["status"]["containerStatuses"][0]["state"]["terminated"]
        assert (last["status"]["phase"], terminated["exitCode"]) == ("Failed", 137)
        assert terminated["reason"] == "Error"


async def test_the_kubelet_is_off_by_default_in_process(clock: FakeClock) -> None:
    """``FakeApiServer()`` runs no kubelet (like envtest): a scheduled pod stays
    ``Pending`` and a graceful deletion waits for ``finish_deletion()``."""
    async with FakeApiServer(clock=clock) as server:
        server.objects.create("pods", pod("web", node="node-1"))
        await clock.advance(60)
        assert server.objects.get("pods", "web")["status"]["phase"] == "Pending"
        server.objects.delete("pods", "web")
        await clock.advance(60)
        assert server.objects.get("pods", "web")["metadata"]["deletionTimestamp"]
        server.objects.finish_deletion("pods", "web")
        assert server.objects.list("pods") == []


async def _log(http: aiohttp.ClientSession, name: str) -> tuple[int, Any]:
    async with http.get(f"{PODS}/{name}/log") as response:
        body = await response.read()
        return response.status, (await response.json() if response.status >= 400 else body)


async def test_logs_of_pods_that_never_ran_answer_as_a_real_server(
    clock: FakeClock,
) -> None:
    """``kubectl logs`` of a pod that never ran: no node → 204 No Content (``LogLocation``
    returns no location); accepted but not started → 400 ``container "app" in pod "web" is
    waiting to start: ContainerCreating`` (the kubelet's ``validateContainerLogStatus``,
    turned into a BadRequest by the API server's proxy); running → 200 with the log."""
    async with _with_kubelet(clock) as server:
        server.objects.create("pods", pod("lonely"))
        server.objects.create("pods", pod("web", node="node-1"))
        await clock.advance(0)
        async with aiohttp.ClientSession(base_url=server.url) as http:
            assert await _log(http, "lonely") == (204, b"")
            code, body = await _log(http, "web")
            assert (code, body["reason"], body["message"]) == (
                400,
                "BadRequest",
                'container "app" in pod "web" is waiting to start: ContainerCreating',
            )
            await clock.advance(2)
            assert await _log(http, "web") == (200, b"")


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"waiting": {"reason": "ErrImagePull"}}, "is waiting to start: image can't be pulled"),
        (
            {"waiting": {"reason": "ImagePullBackOff"}},
            "is waiting to start: trying and failing to pull image",
        ),
        ({"waiting": {"reason": "CrashLoopBackOff"}}, "is waiting to start: CrashLoopBackOff"),
        ({}, "is waiting to start - no logs yet"),
        ({"terminated": {"exitCode": 1}}, "is terminated"),
        (None, "is not available"),
    ],
)
async def test_logs_follow_the_container_status_the_kubelet_reports(
    fake_apiserver: FakeApiServer,
    http: aiohttp.ClientSession,
    state: Obj | None,
    message: str,
) -> None:
    """Without the fake's kubelet, a pod on a node with no Node object is 404 ``nodes
    "node-1" not found`` (the API server finds no kubelet to proxy to); with the Node, the
    answer follows ``validateContainerLogStatus`` on the status a test wrote."""
    server = fake_apiserver
    server.objects.create("pods", pod("web", node="node-1"))
    code, body = await _log(http, "web")
    assert (code, body["message"]) == (404, 'nodes "node-1" not found')
    server.objects.create("nodes", {"metadata": {"name": "node-1"}})
    if state is not None:
        entry = {"name": "app", "image": "nginx", "imageID": "", "ready": False}
        entry |= {"restartCount": 0, "state": state}
        status = {"status": {"containerStatuses": [entry]}}
        server.objects.patch("pods", "web", status, subresource="status")
    code, body = await _log(http, "web")
    assert (code, body["message"]) == (400, f'container "app" in pod "web" {message}')
