"""The benchmarks' realistic Pods (``benchmarks/podgen.py``) for tests that need real-sized
objects: loaded from the file, so both use the very same generator."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "podgen.py"
_spec = importlib.util.spec_from_file_location("_aioinformer_bench_podgen", _PATH)
assert _spec is not None and _spec.loader is not None
_podgen: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_podgen)

PodEncoder: Any = _podgen.PodEncoder
list_body: Any = _podgen.list_body
make_pod: Any = _podgen.make_pod
watch_line: Any = _podgen.watch_line
NAMESPACE: str = _podgen.NAMESPACE

__all__ = ["NAMESPACE", "PodEncoder", "list_body", "make_pod", "watch_line"]
