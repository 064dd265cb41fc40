"""Bounded decoding of a compressed robots.txt body (RFC 9309 2.5). Pure, no Scrapy.

A 200 KB gzip body can decode to 200 MiB. The decoders here stream: each
stage hands on output in chunks of at most :data:`CHUNK` bytes and the whole
stops as soon as ``limit + 1`` decoded bytes are out, so memory stays near
the limit whatever the compression ratio, however many encodings are
stacked. The part decoded is then parsed like any truncated body.

gzip / x-gzip and deflate always; ``br`` with ``brotli`` (or
``brotlicffi``) when it can bound its output; ``zstd`` with
``compression.zstd`` (Python 3.14), ``backports.zstd`` or ``zstandard``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Decoded", "accept_encoding", "decode_body", "split_encodings"]

#: Output handed on per step of a decoder; also the input slice fed at once.
CHUNK = 64 * 1024

Stage = Callable[[Iterable[bytes]], Iterator[bytes]]


@dataclass(frozen=True)
class Decoded:
    """A decoded body: at most ``limit + 1`` bytes, so the parser sees a cut body."""

    body: bytes
    #: encodings that were not decoded (unknown, or no module to decode them)
    undecoded: tuple[str, ...] = ()
    #: the compressed data ended early or was corrupt; ``body`` is what came before
    broken: bool = False
    #: the compressed data ended before its stream did (a cut, not a corrupt byte)
    cut: bool = False


class _Broken(Exception):
    pass


class _Cut(_Broken):
    """The input ended before the compressed stream did."""


def _zlib_stage(wbits: int, *, members: bool) -> Stage:
    def stage(chunks: Iterable[bytes]) -> Iterator[bytes]:
        decoder = zlib.decompressobj(wbits)
        started = False  # a member / stream has begun
        first = True
        for chunk in chunks:
            data = chunk
            while data:
                if decoder.eof:
                    if not members or not data.strip(b"\0"):
                        return
                    decoder, started = zlib.decompressobj(wbits), False  # next gzip member
                try:
                    out = decoder.decompress(data, CHUNK)
                except zlib.error as exc:
                    if first and wbits == zlib.MAX_WBITS:
                        # "deflate" sent raw, without the zlib header (old servers)
                        decoder, data, first = zlib.decompressobj(-zlib.MAX_WBITS), chunk, False
                        continue
                    raise _Broken from exc
                first = False
                started = True
                if out:
                    yield out
                data = decoder.unused_data if decoder.eof else decoder.unconsumed_tail
        while started and not decoder.eof:  # output still held inside the decoder
            try:
                out = decoder.decompress(b"", CHUNK)
            except zlib.error as exc:
                raise _Broken from exc
            if not out:
                raise _Cut  # the stream was cut
            yield out

    return stage


def _brotli_stage(module: Any) -> Stage:
    def stage(chunks: Iterable[bytes]) -> Iterator[bytes]:
        decoder = module.Decompressor()
        for chunk in chunks:
            for start in range(0, len(chunk), CHUNK):
                data = chunk[start : start + CHUNK]
                try:
                    out = decoder.process(data, output_buffer_limit=CHUNK)
                    while True:
                        if out:
                            yield out
                        if decoder.is_finished() or decoder.can_accept_more_data():
                            break
                        out = decoder.process(b"", output_buffer_limit=CHUNK)
                except getattr(module, "error", Exception) as exc:
                    raise _Broken from exc
                if decoder.is_finished():
                    return
        if not decoder.is_finished():
            raise _Cut

    return stage


def _zstd_stage(module: Any) -> Stage:
    """``compression.zstd`` / ``backports.zstd``: the bz2-like decompressor API."""

    def stage(chunks: Iterable[bytes]) -> Iterator[bytes]:
        decoder = module.ZstdDecompressor()
        started = False  # a frame has begun
        for chunk in chunks:
            data = chunk
            while data or (started and not decoder.eof and not decoder.needs_input):
                if decoder.eof:
                    decoder, started = module.ZstdDecompressor(), False  # next frame
                try:
                    out = decoder.decompress(data, CHUNK)
                except (module.ZstdError, EOFError) as exc:
                    raise _Broken from exc
                started = True
                data = decoder.unused_data if decoder.eof else b""
                if out:
                    yield out
        if started and not decoder.eof:
            raise _Cut

    return stage


class _ChunkReader:
    """A file-like view of an iterator of chunks, for ``zstandard.stream_reader``."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._buffer = b""

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._buffer) < size:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self._buffer += chunk
        if size < 0:
            size = len(self._buffer)
        out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out


def _zstandard_stage(module: Any) -> Stage:
    def stage(chunks: Iterable[bytes]) -> Iterator[bytes]:
        reader = module.ZstdDecompressor().stream_reader(
            _ChunkReader(chunks), read_size=CHUNK, read_across_frames=True
        )
        while True:
            try:
                out = reader.read(CHUNK)
            except module.ZstdError as exc:
                raise _Broken from exc
            if not out:
                return
            yield out

    return stage


def _optional_stages() -> dict[str, Stage]:
    stages: dict[str, Stage] = {}
    try:
        import brotli
    except ImportError:
        try:
            import brotlicffi as brotli
        except ImportError:
            brotli = None
    if brotli is not None and hasattr(brotli.Decompressor(), "can_accept_more_data"):
        stages["br"] = _brotli_stage(brotli)  # only a version that can bound its output
    zstd: Any = None
    try:
        from compression import zstd  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:
        try:
            from backports import zstd  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:
            zstd = None
    if zstd is not None:
        stages["zstd"] = _zstd_stage(zstd)
    else:
        try:
            import zstandard
        except ImportError:
            pass
        else:
            stages["zstd"] = _zstandard_stage(zstandard)
    return stages


_STAGES: dict[str, Stage] = {
    "gzip": _zlib_stage(16 + zlib.MAX_WBITS, members=True),
    "x-gzip": _zlib_stage(16 + zlib.MAX_WBITS, members=True),
    "deflate": _zlib_stage(zlib.MAX_WBITS, members=False),
    **_optional_stages(),
}


def accept_encoding() -> bytes:
    """An ``Accept-Encoding`` value naming only the encodings decoded here."""
    names = [name for name in ("gzip", "deflate", "br", "zstd") if name in _STAGES]
    return ", ".join(names).encode()


def split_encodings(values: Iterable[bytes]) -> list[str]:
    """``Content-Encoding`` header values as a list of codings, first applied first."""
    codings = []
    for value in values:
        for item in value.decode("latin-1").split(","):
            coding = item.strip().lower()
            if coding and coding != "identity":
                codings.append(coding)
    return codings


def decode_body(body: bytes, encodings: list[str], limit: int) -> Decoded:
    """``body`` decoded (last applied encoding first), at most ``limit + 1`` bytes.

    Decoding stops at the first encoding that cannot be decoded; the rest
    are reported in :attr:`Decoded.undecoded` and the body is returned as it
    is at that point. A corrupt or cut stream gives the part before the fault.
    """
    pending = list(encodings)
    stream: Iterable[bytes] = (body,)
    while pending and pending[-1] in _STAGES:
        stream = _STAGES[pending.pop()](stream)
    if not pending and not encodings:
        return Decoded(body[: limit + 1])
    parts: list[bytes] = []
    size = 0
    broken = cut = False
    iterator = iter(stream)
    try:
        for part in iterator:
            parts.append(part)
            size += len(part)
            if size > limit:
                break
    except _Broken as fault:
        broken = True
        cut = isinstance(fault, _Cut)
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()
    return Decoded(b"".join(parts)[: limit + 1], tuple(pending), broken, cut)
