"""``RecordFile``: the record's lines buffered, written off the hot path. Scrapy glue.

A line is appended to a buffer; a timer on the crawl's clock writes the
buffer out (and flushes it to the system) every :data:`FLUSH_SECONDS`, and
:meth:`RecordFile.close` writes the rest, so a process killed with SIGKILL
loses at most the last second. A file name ending in ``.gz`` is written
gzip-compressed (each flush a sync point, so a cut file is read up to it).
The file is opened at start-up: a path that cannot be written stops the
crawl naming the setting. A write that fails later logs one ERROR and counts
each line not written (``robotstxt/record/unwritten``): never silently.
"""

from __future__ import annotations

import gzip
import logging
import os
from typing import IO, TYPE_CHECKING, Any

from ...sites._record_lines import GENESIS, RecordChain, line_hash
from ..settings._setting_values import SettingError
from ._record_read import read_record, record_bytes

if TYPE_CHECKING:
    from .._clock import Clock

__all__ = ["FLUSH_SECONDS", "RecordFile", "open_record_file"]

logger = logging.getLogger("scrapy_rfc9309.record")

SETTING = "ROBOTSTXT_RECORD_FILE"
#: How often the buffered lines are written out.
FLUSH_SECONDS = 1.0
#: Stats: lines written, and lines that could not be.
STAT_LINES = "robotstxt/record/lines"
STAT_UNWRITTEN = "robotstxt/record/unwritten"


def open_record_file(path: str) -> tuple[IO[bytes], str]:
    """The record file at ``path`` opened for appending (gzip for ``.gz``), and
    the hash its next line chains on from: the last whole line's of an existing
    file (a crawl appended to a record continues its chain, so no earlier
    crawl's lines can be removed unseen), else the first line's
    :data:`GENESIS`; :class:`SettingError` naming the setting when it cannot be."""
    if os.path.isdir(path):
        raise SettingError(f"{SETTING} = {path!r} is a directory, not a file path")
    try:
        last = _last_line_hash(path)
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        raw = open(path, "ab")  # noqa: SIM115 - kept open for the crawl, closed at close
        if not path.endswith(".gz") and raw.tell() > 0:
            with open(path, "rb") as existing:  # a run killed mid-line: end that line
                existing.seek(-1, os.SEEK_END)
                if existing.read(1) != b"\n":
                    raw.write(b"\n")
    except OSError as error:
        raise SettingError(f"{SETTING} = {path!r}: the record cannot be written: {error}") from None
    if path.endswith(".gz"):
        return gzip.GzipFile(fileobj=raw, mode="ab"), last  # type: ignore[return-value]
    return raw, last


def _last_line_hash(path: str) -> str:
    """The hash of the last whole JSON line of the record at ``path`` (a line
    cut by a killed crawl passed over); :data:`GENESIS` when there is none."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return GENESIS
    last = GENESIS
    for text, complete in read_record(record_bytes(path)):
        if complete and text.startswith("{") and text.endswith("}"):
            last = line_hash(text)
    return last


class RecordFile:
    """The chained lines of one crawl's record, buffered and written every second."""

    def __init__(
        self, path: str, stream: IO[bytes], stats: Any, clock: Clock, last: str = GENESIS
    ) -> None:
        self.path = path
        self._stream: IO[bytes] | None = stream
        self._stats = stats
        self._clock = clock
        #: chained on from ``last``: the existing file's last line, when appending
        self.chain = RecordChain(last)
        self._buffer: list[str] = []
        self._timer: Any = None
        #: lines written, by type (the close line says them)
        self.counts: dict[str, int] = {}
        self._failed = False
        #: whether :meth:`close` was called
        self.closed = False

    def add(self, entry: dict[str, Any]) -> str:
        """Append ``entry`` as the next line; returns its hash (later lines name it).
        After :meth:`close` nothing is written: the line is counted as unwritten."""
        if self.closed:
            self._stats.inc_value(STAT_UNWRITTEN)
            return self.chain.last
        self._buffer.append(self.chain.line(entry))
        kind = str(entry.get("type"))
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if self._timer is None and self._stream is not None:
            self._timer = self._clock.call_later(FLUSH_SECONDS, self._tick)
        return self.chain.last

    def _tick(self) -> None:
        self._timer = None
        self.flush()

    def flush(self) -> None:
        """Write the buffered lines out; a failure is told once and counted."""
        lines, self._buffer = self._buffer, []
        if not lines:
            return
        stream = self._stream
        if stream is None or self._failed:
            self._stats.inc_value(STAT_UNWRITTEN, len(lines))
            return
        try:
            stream.write(("\n".join(lines) + "\n").encode("ascii"))
            stream.flush()
            if isinstance(stream, gzip.GzipFile) and stream.fileobj is not None:
                stream.fileobj.flush()
        except (OSError, ValueError) as error:
            self._failed = True
            self._stats.inc_value(STAT_UNWRITTEN, len(lines))
            logger.error(
                "The crawl's record %s cannot be written (%s): this and every later line is "
                "not recorded, counted in the stat %s; the crawl goes on",
                self.path,
                error,
                STAT_UNWRITTEN,
            )
            return
        self._stats.inc_value(STAT_LINES, len(lines))

    def close(self) -> None:
        """Write what is left and close the file."""
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        self.closed = True
        self.flush()
        stream, self._stream = self._stream, None
        if stream is None:
            return
        try:
            stream.close()
            if isinstance(stream, gzip.GzipFile) and stream.fileobj is not None:
                stream.fileobj.close()
        except OSError as error:
            logger.error("The crawl's record %s could not be closed: %s", self.path, error)
