"""The demo: informers and a controller against a churning, faulty fake API server.

Run it from the repository's root (``make demo`` runs the first line)::

    python -m examples.demo                          # 20 s with a live view; Ctrl-C stops early
    python -m examples.demo --plain --duration 10    # one status line a second (logs, CI)
    python -m examples.demo --no-faults --rate 200 --objects 2000

Everything runs in one process and one event loop, over real HTTP, and uses only the public
API of ``aioinformer``:

* the embedded fake API server (:class:`aioinformer.testing.FakeApiServer`);
* a churn generator (:mod:`.churn`) creating, relabelling, annotating and deleting pods and
  moving them through phases at ``--rate`` operations a second, around ``--objects`` pods;
* a :class:`aioinformer.SharedInformerFactory` with a pods informer (with a ``by_node``
  index) and a ConfigMaps informer;
* a :class:`aioinformer.Controller` (:mod:`.controller`) whose keys are node names: it keeps
  a ConfigMap ``node-summary-<node>`` in the ``demo`` namespace with the pod counts of the
  node (by phase), read from the ``by_node`` index; a few reconciles fail on purpose, to show
  retries;
* a fault schedule (:mod:`.faults`): a dropped watch, a stalled watch (recovered through the
  idle timeout), a compaction (410 on resume, recovered by a relist) and throttled watches
  (429).

At the end the churn stops, the demo waits until everything settled (:mod:`.run`), shuts down
and prints a summary (:mod:`.summary`) whose last line checks that the informer's cache equals
the server (same keys, same resource versions). The exit status is 0 when that check and the
node summaries check pass. :mod:`.view` draws the live view (with rich) or the status lines.
"""
