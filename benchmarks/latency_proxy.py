"""A TCP proxy on 127.0.0.1 that adds a fixed latency each way, and counts round trips.

Used by ``cluster.py --versus-scrapy-redis`` to put Redis "on another
machine": the crawler processes connect to the proxy, which connects to
``redis-server`` and passes every chunk it reads on after ``delay`` seconds,
in each direction, in order (a chunk is never sent before the one read
before it on the same side).

It also counts the clients' round trips: on each connection, a chunk from
the client that follows a reply of the server (or opens the connection)
starts a new *burst*, the client's next request; chunks the client sends
before the server has answered belong to the same burst. A pipeline (or a
``MULTI`` ... ``EXEC`` block) written at once is one burst, however many
commands it holds: bursts are the round trips, commands are what
``INFO commandstats`` counts. Replies the server sends unasked (Pub/Sub
messages) do not start bursts. Each burst is also counted by its first
command (:func:`burst_kind`), to tell where the round trips come from.

The proxy runs an asyncio loop in a thread of the driver (which only waits
for its crawler processes meanwhile); nothing leaves 127.0.0.1. With 2 ms
each way a ``PING`` takes 4.6 to 4.7 ms through it (0.04 ms direct): the
loop's timers round the delay up a little.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from typing import Any

__all__ = ["LatencyProxy", "burst_kind"]

CHUNK = 65536


def burst_kind(data: bytes) -> str:
    """A burst's first command, from the start of its first chunk (RESP): its
    name, with the script's SHA1 for ``EVALSHA`` (its first 8 digits) and the
    next command for ``MULTI``; ``?`` when the chunk does not say."""
    lines = data[:400].split(b"\r\n")
    words = [line.decode("latin-1") for line in lines if line and line[:1] not in b"*$"]
    if not words:
        return "?"
    name = words[0].upper()
    if name == "EVALSHA" and len(words) > 1:
        return f"EVALSHA {words[1][:8]}"
    if name == "MULTI" and len(words) > 1:
        return f"MULTI {words[1].upper()}"
    return name


class LatencyProxy:
    """Listens on a free port of 127.0.0.1 (:attr:`port`) and forwards to
    ``127.0.0.1:target_port``, each chunk ``delay`` seconds late each way."""

    def __init__(self, target_port: int, delay: float) -> None:
        self.target_port = target_port
        self.delay = delay
        #: client bursts (round trips) since :meth:`reset`
        self.bursts = 0
        #: the bursts by their first command (:func:`burst_kind`)
        self.kinds: Counter[str] = Counter()
        #: connections opened since :meth:`reset`
        self.connections = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=1024), self.loop
        ).result(timeout=10)
        self.port = int(self.server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def reset(self) -> None:
        self.bursts = 0
        self.kinds = Counter()
        self.connections = 0

    def close(self) -> None:
        """Stop listening, close the connections still open, stop the loop."""

        async def stop() -> None:
            self.server.close()
            tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(
                "127.0.0.1", self.target_port
            )
        except OSError:
            writer.close()
            return
        asked = [False]  # the client has sent since the server last answered
        try:
            await asyncio.gather(
                self._pump(reader, upstream_writer, asked, from_client=True),
                self._pump(upstream_reader, writer, asked, from_client=False),
            )
        except asyncio.CancelledError:  # closed by close(): the connection just ends
            writer.close()
            upstream_writer.close()

    async def _pump(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        asked: list[bool],
        *,
        from_client: bool,
    ) -> None:
        """Read chunks from one side and write each to the other ``delay`` later."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        sender = asyncio.create_task(self._send(queue, writer))
        try:
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    break
                if from_client:
                    if not asked[0]:
                        self.bursts += 1
                        self.kinds[burst_kind(data)] += 1
                        asked[0] = True
                else:
                    asked[0] = False
                queue.put_nowait((loop.time() + self.delay, data))
        except (ConnectionError, OSError):
            pass
        queue.put_nowait((loop.time() + self.delay, b""))  # the end: close the other side
        await sender

    async def _send(self, queue: asyncio.Queue[tuple[float, bytes]], writer: Any) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                due, data = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
