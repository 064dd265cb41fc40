"""``RedisSilence``: what the Redis queue says while Redis does not answer. Scrapy glue.

scrapy-redis's own queue lets a Redis error out of ``pop`` and ``__len__``,
which Scrapy's engine calls on its timers: each failed call is a traceback
(an ERROR under the asyncio reactor, a CRITICAL ``while handling timed
call`` under the others), every few seconds for as long as Redis is down.
:class:`~._redis_queue.RobotsTxtRedisQueue` instead hands out nothing while
Redis is silent and says so once: one WARNING when Redis stops
answering, DEBUG lines while it stays silent, one INFO line when it answers
again, with how long it was silent. A settled site's waiting list that
could not move into the queue is said once per site: a WARNING when Redis did
not answer, an ERROR when the move script failed in Redis.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._clock import Clock

__all__ = ["RedisSilence"]

logger = logging.getLogger("scrapy_rfc9309.queue")


class RedisSilence:
    """An outage of the queue's Redis, from its first failed call to its next answer."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        #: when Redis stopped answering (the crawl's clock); ``None``: it answers
        self.since: float | None = None
        #: the queue's length at Redis's last answer (told while it is silent)
        self.length = 0
        #: settled sites whose waiting list did not move (Redis silent): each said once
        self.unmoved: set[str] = set()
        #: sites whose move script Redis refused (an error of the script): each said once
        self.refused: set[str] = set()

    def failed(self, error: Exception, doing: str) -> None:
        """A call of the queue failed: a WARNING for the first of an outage."""
        first = self.since is None
        if first:
            self.since = self._clock.monotonic()
        logger.log(
            logging.WARNING if first else logging.DEBUG,
            "Redis did not answer the queue while %s (%s): no request is handed out "
            "until it answers, and the requests in Redis stay there; asked again at the "
            "engine's next call",
            doing,
            error,
        )

    def answered(self) -> None:
        """A call of the queue succeeded: an INFO line if Redis was silent."""
        if self.since is None:
            return
        silent = self._clock.monotonic() - self.since
        self.since = None
        logger.info("Redis answers the queue again (silent for %.1f s)", silent)

    def moved(self, site: str) -> None:
        """``site``'s waiting list moved (or it has none): a later failure is said again."""
        self.unmoved.discard(site)
        self.refused.discard(site)

    def move_failed(self, sites: list[str], error: Exception) -> None:
        """Redis did not answer the move of ``sites``' waiting lists: they stay in
        Redis, the move tried again at the next pop (one WARNING per site)."""
        _said_once(
            self.unmoved,
            sites,
            logging.WARNING,
            "Redis did not answer while moving the waiting requests of %s into the "
            "queue (%s): they stay in Redis, and are handed out once it answers "
            "(tried again at the next pop)",
            error,
        )

    def move_refused(self, sites: list[str], error: Exception) -> None:
        """Redis ran the move of ``sites``' waiting lists and the script failed
        (a key of another type under the list's name: not Redis's silence, not
        the sites' doing): one ERROR per site; the lists stay in Redis, the
        move is tried again at the next pop."""
        _said_once(
            self.refused,
            sites,
            logging.ERROR,
            "The script moving the waiting requests of %s into the queue failed in "
            "Redis (%s): they stay in Redis (tried again at the next pop)",
            error,
        )


def _said_once(told: set[str], sites: list[str], level: int, text: str, error: Exception) -> None:
    """``text`` (the sites, then the error) at ``level`` for the sites not ``told``
    yet, at DEBUG when every one was; ``told`` then holds them all."""
    first = [site for site in sites if site not in told]
    told.update(sites)
    logger.log(level if first else logging.DEBUG, text, ", ".join(first or sites), error)
