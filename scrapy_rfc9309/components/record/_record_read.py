"""Reading a record file back: its lines, from plain or gzip bytes, cut or appended.

What the audit reads, and what a crawl appending to a record reads to chain
on from its last line.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Iterable, Iterator

__all__ = ["read_record", "record_bytes"]


def read_record(chunks: Iterable[bytes]) -> Iterator[tuple[str, bool]]:
    """Each line of a record, from its bytes in ``chunks``, as ``(text,
    complete)``: the last one incomplete when the file was cut (a crawl killed)."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        *whole, pending = pending.split(b"\n")
        for line in whole:
            yield line.decode("utf-8", "replace"), True
    if pending:
        yield pending.decode("utf-8", "replace"), False


def record_bytes(path: str) -> Iterator[bytes]:
    """The bytes of the record at ``path``, decompressed when it ends in ``.gz``.

    A gzip file is decompressed as far as it goes: a file cut short (a crawl
    killed mid-write) gives everything written before the cut, where reading
    it with ``gzip`` loses the last block read; one member after another (a
    crawl appended to an earlier one's file) is read through.
    """
    with open(path, "rb") as stream:
        if not path.endswith(".gz"):
            while chunk := stream.read(1 << 16):
                yield chunk
            return
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while chunk := stream.read(1 << 16):
            while chunk:
                try:
                    yield inflate.decompress(chunk)
                except zlib.error:  # damaged past here: what came before stands
                    return
                chunk = b""
                if inflate.eof:  # the next member, if any, starts in unused_data
                    chunk = inflate.unused_data
                    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        with contextlib.suppress(zlib.error):
            yield inflate.flush()
