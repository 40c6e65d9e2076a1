"""``make bench``: run every benchmark, print the figures, and keep a copy in benchmarks/results/.

Each benchmark measures its own baseline in the same run and prints ratios against it.
"""

from __future__ import annotations

import datetime
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = [
    ("informer_throughput.py", ["--objects", "10000", "--events", "20000", "--churn", "1000"]),
    ("workqueue_throughput.py", []),
    ("fake_apiserver_throughput.py", []),
]


def main() -> int:
    header = (
        f"aioinformer benchmarks, {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, "
        f"Python {platform.python_version()} on {platform.machine()}, "
        f"{platform.processor() or platform.platform()}"
    )
    report = [header, ""]
    print(header, flush=True)
    failed = 0
    for script, args in BENCHMARKS:
        print(f"\n== {script}", flush=True)
        done = subprocess.run(
            [sys.executable, str(HERE / script), *args], capture_output=True, text=True
        )
        print(done.stdout, end="", flush=True)
        if done.returncode != 0:
            failed += 1
            print(done.stderr[-2000:], file=sys.stderr)
        report += [f"== {script} {' '.join(args)}", done.stdout]
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / "latest.txt").write_text("\n".join(report))
    print(f"\n(saved to {results / 'latest.txt'})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
