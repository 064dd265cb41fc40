"""A real ``redis-server`` for the Redis store's tests and benchmark.

Started on a free port of 127.0.0.1 in a temporary directory, with no
persistence (``--save '' --appendonly no``); it can be stopped and started
again on the same port (a Redis lost mid-crawl, then back).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

__all__ = ["RedisServer", "in_ci", "redis_server_binary"]


def redis_server_binary() -> str | None:
    return shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith((b"+PONG", b"-NOAUTH"))  # up (a password set)
    except OSError:
        return False


class RedisServer:
    """``redis-server`` in ``directory``; ``url`` is where it answers."""

    def __init__(
        self, directory: Path, binary: str | None = None, extra_args: tuple[str, ...] = ()
    ) -> None:
        self.binary = binary or redis_server_binary() or "redis-server"
        #: more ``redis-server`` options (e.g. ``("--requirepass", "secret")``)
        self.extra_args = extra_args
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def log(self) -> Path:
        return self.directory / "redis.log"

    def start(self) -> RedisServer:
        """Start on the same port as before, or on a free one (retried if taken meanwhile)."""
        for _attempt in range(5):
            port = self.port or _free_port()
            process = subprocess.Popen(
                [
                    self.binary,
                    "--port", str(port),
                    "--bind", "127.0.0.1",
                    "--save", "",
                    "--appendonly", "no",
                    "--dir", str(self.directory),
                    "--logfile", str(self.log),
                    "--daemonize", "no",
                    *self.extra_args,
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=self.directory,
            )  # fmt: skip
            deadline = time.monotonic() + 10
            while process.poll() is None and time.monotonic() < deadline:
                if _answers(port):
                    self.port, self.process = port, process
                    return self
                time.sleep(0.02)
            process.kill()
            process.wait()
            if self.port:  # the same port again: wait for it to be free
                time.sleep(0.5)
        raise RuntimeError(f"redis-server did not start; its log:\n{self._log_text()}")

    def _log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"

    def stop(self, *, kill: bool = False) -> None:
        """Stop the server (``kill``: at once, SIGKILL); the port is kept for :meth:`start`."""
        if self.process is None:
            return
        if kill:
            self.process.kill()
        else:
            self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def freeze(self) -> None:
        """Stop the server from answering (SIGSTOP): connections open, no replies."""
        if self.process is not None:
            self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """Let a frozen server answer again (SIGCONT)."""
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop(kill=True)


def in_ci() -> bool:
    """Whether the tests run under CI (``CI`` set), where a missing server is a failure."""
    return bool(os.environ.get("CI"))


def require_redis_server() -> str:
    """The redis-server binary; the test is skipped without one (failed in CI)."""
    import pytest

    binary = redis_server_binary()
    if binary is None:
        message = "redis-server is not installed (apt-get install redis-server)"
        if in_ci():
            pytest.fail(f"{message}; CI must run the Redis store tests")
        pytest.skip(message)
    return binary
