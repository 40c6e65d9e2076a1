"""Running ``aioinformer fake-apiserver`` (or kubectl) as a subprocess in tests."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any


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
            self.url = self.log.wait_for(r"listening on (https?://\S+)").group(1)
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


class Kubectl:
    """kubectl pointed at the fake, with its own kubeconfig and cache."""

    def __init__(self, server: Standalone, home: Path) -> None:
        kubeconfig = home / "kubeconfig"
        kubeconfig.write_text("")
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        self.base = ["kubectl", "--server", server.url, "--cache-dir", str(home / "cache")]

    def __call__(
        self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> str:
        return run([*self.base, *args], env={**self.env, **(env or {})}, stdin=stdin)

    def result(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run a command whatever its exit status."""
        return subprocess.run(
            [*self.base, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=60,
        )

    def fails(self, *args: str, stdin: str | None = None) -> str:
        """Run a command that must fail; its stderr."""
        done = self.result(*args, stdin=stdin)
        assert done.returncode != 0, done.stdout
        return done.stderr

    def raw(self, path: str) -> dict[str, Any]:
        """``kubectl get --raw PATH``: the server's answer, as it sends it."""
        obj: dict[str, Any] = json.loads(self("get", "--raw", path))
        return obj

    def deployment(self, name: str) -> dict[str, Any]:
        """The stored Deployment, as the server sends it."""
        obj = self.raw(f"/apis/apps/v1/namespaces/default/deployments/{name}")
        assert "$" not in json.dumps(obj), obj
        return obj

    def watch(self, *args: str) -> tuple[subprocess.Popen[str], LineReader]:
        """Start a long-running kubectl (``get -w``); its process and its output lines.
        The caller terminates it."""
        process = subprocess.Popen(
            [*self.base, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=self.env,
        )
        assert process.stdout is not None
        return process, LineReader(process.stdout)
