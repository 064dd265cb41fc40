"""A crawl's clock that a test moves on (:class:`SkippingClock`), and a page that
moves it on when asked for (:func:`skipping`): a lifetime or a Retry-After runs
out without the test waiting for it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from twisted.web import server

from scrapy_rfc9309.components._clock import Clock

from .server import Route, text

__all__ = ["SkippingClock", "skipping"]

SLOW_PAGE = text("slow page")


class SkippingClock(Clock):
    """Real time plus the seconds :meth:`skip` added: a crawl's outcomes expire,
    and its timers fire, as if that much more time had passed. A timer of at most
    ``eager`` seconds fires at once, the time skipped to when it was due (a
    deferral's back-off without the wait; its deadline still ahead)."""

    def __init__(self, *, eager: float = 0.0) -> None:
        self.eager = eager
        self.skipped = 0.0
        super().__init__(
            monotonic=lambda: time.monotonic() + self.skipped,
            wall=lambda: time.time() + self.skipped,
        )
        self._timers: list[Any] = []

    def call_later(self, seconds: float, fn: Callable[..., Any], *args: Any) -> Any:
        if seconds <= self.eager:
            due = self.monotonic() + seconds

            def fire() -> None:
                self.skipped += max(0.0, due - self.monotonic())
                fn(*args)

            return super().call_later(0.0, fire)
        timer = super().call_later(seconds, fn, *args)
        self._timers = [*(t for t in self._timers if t.active()), timer]
        return timer

    def skip(self, seconds: float) -> None:
        """Move the time on by ``seconds``; timers due by then fire at once."""
        from twisted.internet import reactor as _reactor

        reactor: Any = _reactor
        self.skipped += seconds
        for timer in self._timers:
            if timer.active():
                timer.reset(max(0.0, timer.getTime() - reactor.seconds() - seconds))


def skipping(
    clock: SkippingClock,
    seconds: float,
    *,
    then: Callable[[], object] | None = None,
    after: float = 0.2,
    route: Route | None = None,
) -> Route:
    """A page answered ``after`` real seconds, by when ``clock`` skipped ``seconds``
    (a page that takes ``seconds`` to come, without the wait) and ``then`` ran
    (the sites change what they serve at that moment)."""

    def answer(request: server.Request) -> int:
        from twisted.internet import reactor as _reactor

        reactor: Any = _reactor

        def finish() -> None:
            clock.skip(seconds)
            if then is not None:
                then()
            if request.finished or request._disconnected:
                return
            body = (route or SLOW_PAGE)(request)
            if isinstance(body, bytes):
                request.write(body)
                request.finish()

        reactor.callLater(after, finish)
        return server.NOT_DONE_YET

    return answer
