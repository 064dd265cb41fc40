"""``HeldQueue``: Scrapy's priority queue handing out nothing for the first 0.3 s.

The (g) round trip's ``off-held`` baseline: no robots.txt, but every request
waits in the scheduler as long as the first robots.txt round trip, so the
crawl starts, as the add-on's does, with all its requests ready at once
(``off`` takes them from ``start()`` one per engine turn instead, and keeps
a few in flight).

A request whose meta has :data:`UNHELD` set is handed out at once when it is
the next one: the ``held-fetched`` baseline sends each site's robots.txt so,
as a plain page that every other request waits behind.
"""

from __future__ import annotations

import time
from typing import Any

from scrapy.pqueues import ScrapyPriorityQueue

#: how long nothing is handed out, from the queue's creation (spider open)
HOLD = 0.3
#: the meta key of a request handed out during the hold
UNHELD = "unheld"


class HeldQueue(ScrapyPriorityQueue):
    def __init__(self, crawler: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(crawler, *args, **kwargs)  # as Scrapy's scheduler passes them
        from twisted.internet import reactor

        from scrapy_rfc9309.components._engine import wake_engine

        self._until = time.monotonic() + HOLD
        # the engine asks again then (else only at its 5 s heartbeat)
        reactor.callLater(HOLD, wake_engine, crawler)  # type: ignore[attr-defined]

    def pop(self) -> Any:
        if time.monotonic() < self._until:
            first = self.peek()
            if first is None or not first.meta.get(UNHELD):
                return None
        return super().pop()
