"""A real Twisted HTTP server on 127.0.0.x for middleware tests.

Each :class:`MockSite` listens on its own port (its own robots.txt site),
serves scripted routes and records every path it was asked for.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from twisted.web import resource, server

Route = Callable[[server.Request], bytes | int]


def text(body: bytes | str, status: int = 200, content_type: bytes = b"text/plain") -> Route:
    data = body.encode() if isinstance(body, str) else body

    def route(request: server.Request) -> bytes:
        request.setResponseCode(status)
        request.setHeader(b"Content-Type", content_type)
        return data

    return route


def status(code: int, body: bytes = b"") -> Route:
    return text(body, code)


def redirect(location: str, code: int = 301) -> Route:
    def route(request: server.Request) -> bytes:
        request.setResponseCode(code)
        request.setHeader(b"Location", location.encode())
        return b""

    return route


def hang() -> Route:
    """Never answer: the request stays open until the client gives up."""

    def route(request: server.Request) -> int:
        return server.NOT_DONE_YET

    return route


def endless(chunk: bytes = b"# filler line of an endless robots.txt\n") -> Route:
    """Send ``chunk`` forever (every reactor turn), until the client goes away."""

    def route(request: server.Request) -> int:
        from twisted.internet import reactor as _reactor

        reactor: Any = _reactor

        request.setHeader(b"Content-Type", b"text/plain")
        request.write(b"User-agent: *\nDisallow: /private\n")
        gone: list[bool] = []
        request.notifyFinish().addBoth(lambda _: gone.append(True))

        def more(sent: int) -> None:
            if gone or sent > 50_000_000:  # a bound, so a broken client cannot loop us forever
                return
            request.write(chunk * 64)
            reactor.callLater(0, more, sent + len(chunk) * 64)

        more(0)
        return server.NOT_DONE_YET

    return route


def slow(seconds: float, body: bytes = b"slow page") -> Route:
    def route(request: server.Request) -> int:
        from twisted.internet import reactor as _reactor

        reactor: Any = _reactor

        def finish() -> None:
            if not request.finished and not request._disconnected:
                request.write(body)
                request.finish()

        reactor.callLater(seconds, finish)
        return server.NOT_DONE_YET

    return route


class _Root(resource.Resource):
    isLeaf = True

    def __init__(self, site: MockSite) -> None:
        super().__init__()
        self.site = site

    def render(self, request: server.Request) -> bytes | int:
        path = request.uri.decode()
        self.site.hits.append(path)
        self.site.hit_times.append(self.site.now())
        route = self.site.routes.get(path.split("?")[0]) or self.site.default
        if route is None:
            request.setResponseCode(404)
            return b"not found"
        self.site.open_requests.append(request)
        return route(request)


class _CountingSite(server.Site):
    """A Twisted web site that counts the TCP connections it accepts."""

    def __init__(self, site: MockSite) -> None:
        super().__init__(_Root(site))
        self.mock = site

    def buildProtocol(self, addr: Any) -> Any:
        self.mock.connections += 1
        return super().buildProtocol(addr)


@dataclass
class MockSite:
    host: str = "127.0.0.1"
    routes: dict[str, Route] = field(default_factory=dict)
    default: Route | None = None
    hits: list[str] = field(default_factory=list)
    hit_times: list[float] = field(default_factory=list)
    open_requests: list[Any] = field(default_factory=list)
    port: Any = None
    #: TCP connections the server accepted
    connections: int = 0
    #: the clock of ``hit_times`` (a test's crawl clock: ``SkippingClock.monotonic``)
    now: Callable[[], float] = time.monotonic

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port.getHost().port}"

    def url(self, path: str) -> str:
        return self.origin + path

    def count(self, path: str) -> int:
        return self.hits.count(path)

    def start(self) -> MockSite:
        from twisted.internet import reactor as _reactor

        reactor: Any = _reactor

        self.port = reactor.listenTCP(0, _CountingSite(self), interface=self.host)
        return self

    def stop(self) -> None:
        for request in self.open_requests:
            if not request.finished and request.channel is not None:
                request.channel.transport.abortConnection()
        self.port.stopListening()


def with_headers(route: Route, **headers: str) -> Route:
    """``route`` with extra response headers (``Retry_After="3"`` -> ``Retry-After: 3``)."""

    def wrapped(request: server.Request) -> bytes | int:
        for name, value in headers.items():
            request.setHeader(name.replace("_", "-").encode(), value.encode())
        return route(request)

    return wrapped


def retry_after(code: int, value: str) -> Route:
    """A 429 / 503 asking the client to come back later (``Retry-After``)."""
    return with_headers(status(code), Retry_After=value)


def compressed(body: bytes, encoding: str = "gzip") -> Route:
    """``body`` compressed with ``encoding`` (``gzip``, ``deflate``, ``br``, ``zstd``)."""
    return encoded(_compress(body, encoding), encoding)


def encoded(data: bytes, encoding: str) -> Route:
    """Already encoded ``data`` sent with ``Content-Encoding: encoding``."""
    return with_headers(text(data), Content_Encoding=encoding)


def _compress(body: bytes, encoding: str) -> bytes:
    import zlib

    if encoding in ("gzip", "x-gzip"):
        import gzip

        return gzip.compress(body)
    if encoding == "deflate":
        return zlib.compress(body)
    if encoding == "br":
        import brotli

        return bytes(brotli.compress(body, quality=5))
    if encoding == "zstd":
        try:
            from compression import zstd
        except ImportError:
            from backports import zstd
        return bytes(zstd.compress(body))
    raise ValueError(encoding)


@functools.lru_cache(maxsize=4)
def gzip_bomb(head: bytes, filler: bytes, size: int, tail: bytes = b"") -> bytes:
    """``head`` + ``filler`` repeated to ``size`` bytes + ``tail``, gzip-compressed.

    Compressed a MiB at a time, so the test process never holds the whole
    decoded body either.
    """
    import zlib

    encoder = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [encoder.compress(head)]
    block = filler * max(1, (1 << 20) // len(filler))
    written = len(head)
    while written < size:
        parts.append(encoder.compress(block))
        written += len(block)
    parts.append(encoder.compress(tail))
    parts.append(encoder.flush())
    return b"".join(parts)


def page_with_headers(
    body: bytes | str,
    headers: list[tuple[bytes, bytes]] = (),  # type: ignore[assignment]
    content_type: bytes = b"text/html",
    status: int = 200,
) -> Route:
    """A page with extra response headers; a name may repeat (several header lines)."""
    data = body.encode() if isinstance(body, str) else body

    def route(request: server.Request) -> bytes:
        request.setResponseCode(status)
        request.setHeader(b"Content-Type", content_type)
        for name, value in headers:
            request.responseHeaders.addRawHeader(name, value)
        return data

    return route


def html_page(head: str = "", links: list[str] = (), body: str = "") -> bytes:  # type: ignore[assignment]
    """An HTML page with ``head`` in its head and a link to each of ``links``."""
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    return (
        f"<!DOCTYPE html><html><head><title>t</title>{head}</head>"
        f"<body>{body}{anchors}</body></html>"
    ).encode()


def delayed(seconds: float, route: Route) -> Route:
    """``route``'s answer, given ``seconds`` after the request arrived."""

    def wrapped(request: server.Request) -> int:
        from twisted.internet import reactor as _reactor

        reactor: Any = _reactor

        def answer() -> None:
            if request.finished or request._disconnected:
                return
            body = route(request)
            if isinstance(body, bytes):
                request.write(body)
                request.finish()

        reactor.callLater(seconds, answer)
        return server.NOT_DONE_YET

    return wrapped


class Held:
    """``route``'s answer, given once ``ready()`` holds (checked every 10 ms), or
    ``most`` seconds after the request arrived if it never does: a file slow for
    exactly as long as the test needs the rest of the crawl to go on, however
    loaded the machine (a fixed delay is too short on a slow one). ``answered``
    holds when each answer was given (``time.monotonic``, the clock of
    :attr:`MockSite.hit_times`)."""

    def __init__(self, ready: Callable[[], bool], route: Route, *, most: float = 5.0) -> None:
        self.ready = ready
        self.route = route
        self.most = most
        self.answered: list[float] = []

    def __call__(self, request: server.Request) -> int:
        from twisted.internet import reactor as _reactor

        reactor: Any = _reactor
        arrived = time.monotonic()

        def answer() -> None:
            if request.finished or request._disconnected:
                return
            if not self.ready() and time.monotonic() - arrived < self.most:
                reactor.callLater(0.01, answer)
                return
            self.answered.append(time.monotonic())
            body = self.route(request)
            if isinstance(body, bytes):
                request.write(body)
                request.finish()

        reactor.callLater(0.01, answer)
        return server.NOT_DONE_YET


def sequence(*routes: Route) -> Route:
    """Each request gets the next of ``routes``; the last one answers from then on
    (``sequence(status(503), status(503), text("..."))``: 503 twice, then 200)."""
    served = [0]

    def route(request: server.Request) -> bytes | int:
        index = min(served[0], len(routes) - 1)
        served[0] += 1
        return routes[index](request)

    return route


def unreachable_for(
    seconds: float, then: Route, now: Callable[[], float] = time.monotonic
) -> Route:
    """503 for ``seconds`` from the first request (by the clock ``now``: a test's
    crawl clock), then ``then``'s answers."""
    first: list[float] = []

    def route(request: server.Request) -> bytes | int:
        now_ = now()
        if not first:
            first.append(now_)
        if now_ - first[0] < seconds:
            return status(503)(request)
        return then(request)

    return route


def silent_server(drop_after: float = 20.0) -> Any:
    """A TCP server on 127.0.0.1 that accepts connections and never says a word
    (an FTP server that hangs before its greeting), dropping each connection after
    ``drop_after`` s, as real servers do after their own idle time-out. Returns
    the listening port (``.getHost().port``; ``.stopListening()`` when done)."""
    from twisted.internet import protocol
    from twisted.internet import reactor as _reactor

    reactor: Any = _reactor

    class Silent(protocol.Protocol):
        drop: Any = None

        def connectionMade(self) -> None:
            transport: Any = self.transport
            self.drop = reactor.callLater(drop_after, transport.abortConnection)

        def connectionLost(self, reason: Any = None) -> None:
            if self.drop is not None and self.drop.active():
                self.drop.cancel()

    factory = protocol.ServerFactory()
    factory.protocol = Silent
    return reactor.listenTCP(0, factory, interface="127.0.0.1")
