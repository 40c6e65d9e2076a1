"""Run one benchmark variant in a fresh process and hand its result back.

The orchestrator forks each variant from a server process that has already imported the
libraries (``multiprocessing``'s *forkserver*), so a variant starts in milliseconds with the
same clean state every time: nothing allocated by an earlier variant, no event loop, default
garbage-collector settings. ``python benchmarks/_worker.py '<spec json>'`` runs one variant
from the command line (for profiling, e.g. under py-spy) and prints its result as JSON.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Run the variant named by ``spec["variant"]`` here and return its result."""
    import anyio
    from _variants import VARIANTS

    function = VARIANTS[spec["variant"]]
    if inspect.iscoroutinefunction(function):
        result: dict[str, Any] = anyio.run(function, spec)
    else:
        result = function(spec)
    return result


def child(spec: dict[str, Any], connection: Connection) -> None:
    """Entry point of a forked variant: run it, send ``("ok", result)`` or ``("error", text)``."""
    try:
        connection.send(("ok", run(spec)))
    except BaseException:
        connection.send(("error", traceback.format_exc()))
    finally:
        connection.close()
        sys.stdout.flush()
        sys.stderr.flush()
        # Some variants leave daemon threads blocked on a silent stream (the official client's
        # informer cannot be stopped then); nothing needs tearing down in a throwaway process.
        os._exit(0)


def main() -> None:
    result = run(json.loads(sys.argv[1]))
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
