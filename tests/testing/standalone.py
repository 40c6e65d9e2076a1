"""Running ``aioinformer fake-apiserver`` (or kubectl) as a subprocess in tests."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO


class LineReader:
    """Reads a pipe line by line in a thread, so tests can wait for a line with a deadline."""

    def __init__(self, pipe: IO[str]) -> None:
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, args=(pipe,), daemon=True)
        self._thread.start()

    def _run(self, pipe: IO[str]) -> None:
        for line in pipe:
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, pattern: str, *, timeout: float = 15.0) -> re.Match[str]:
        """The first new line matching ``pattern`` (raises AssertionError at EOF or deadline)."""
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r} in {timeout} s") from None
            if line is None:
                raise AssertionError(f"stream ended without {pattern!r}: {self.lines}")
            match = re.search(pattern, line)
            if match:
                return match

    def join(self, timeout: float = 10.0) -> None:
        """Wait for the pipe to close."""
        self._thread.join(timeout)


class Standalone:
    """A running ``aioinformer fake-apiserver`` process."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "aioinformer", "fake-apiserver", "--port", "0", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stderr is not None
        self.log = LineReader(self.process.stderr)
        try:
            self.url = self.log.wait_for(r"listening on (http://\S+)").group(1)
        except BaseException:
            self.stop()
            raise

    def stop(self, signal_number: int = 2) -> int:
        """Send a signal (SIGINT by default) and return the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal_number)
        try:
            return self.process.wait(timeout=15)
        finally:
            self.log.join()
            if self.process.stderr is not None:
                self.process.stderr.close()


def run(command: Sequence[str], *, env: dict[str, str], stdin: str | None = None) -> str:
    """Run a command to completion; its stdout (raises on failure, with stderr)."""
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, f"{command} failed: {done.stderr}"
    return done.stdout
