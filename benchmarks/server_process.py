"""The benchmarks' site server, run in a process of its own.

A benchmark script starts itself as ``python <script> serve ... <port file>``;
the server listens on a free port of 127.0.0.1 and writes it to the port
file. Imported by the scripts run as ``python benchmarks/<script>.py`` (their
folder is then first on ``sys.path``).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Seconds the server has to write its port before the benchmark gives up.
STARTUP_TIMEOUT = 30


class ServerProcess:
    """A temporary folder (:attr:`folder`, with :attr:`port_file` in it) for the
    server's files; :meth:`start` runs the server and waits for its port."""

    def __init__(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.folder = Path(self.tmp.name)
        self.port_file = self.folder / "port"
        self.port = 0

    def start(self, script: str, *args: str) -> None:
        """Run ``python script serve *args`` (``args`` name :attr:`port_file`) and
        wait until it has written its port there."""
        self.process = subprocess.Popen(
            [sys.executable, script, "serve", *args], cwd=Path(script).parent
        )
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not (self.port_file.exists() and self.port_file.read_text()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise SystemExit("the benchmark server did not start")
            time.sleep(0.05)
        self.port = int(self.port_file.read_text())

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        self.tmp.cleanup()
