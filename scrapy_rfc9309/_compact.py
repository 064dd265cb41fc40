"""``CompactRobots``: a parsed robots.txt as a cache keeps it. Pure.

Only what deciding needs: the compiled matchers, and the body compressed
with zlib (read to show a deciding line, or to compile the rules of an agent
not seen before). Groups, warnings and sitemaps are not kept. On the
real-world corpus this is about half of a parsed file's size after a check.
"""

from __future__ import annotations

import zlib

from ._lines import line_starts, line_text
from ._matcher import AgentMatcher
from ._robotstxt import AGENT_CACHE_SIZE, RobotsTxt, Verdicts
from ._rulekey import MAX_BODY_SIZE

__all__ = ["CompactRobots"]


class CompactRobots(Verdicts):
    """Same verdicts as the :class:`RobotsTxt` it was made from."""

    __slots__ = ("_compressed", "_matchers")

    def __init__(self, robots: RobotsTxt) -> None:
        self._compressed = zlib.compress(robots.body, 6)
        self._matchers = robots.compiled_matchers()

    def _body(self) -> bytes:
        return zlib.decompress(self._compressed)

    def _line_text(self, line: int) -> str:
        body = self._body()
        return line_text(body, line_starts(body)[line - 1])

    def matcher(self, agent: str) -> AgentMatcher:
        matcher = self._matchers.get(agent)
        if matcher is None:
            # The body was already prepared: parsing it again gives the same offsets.
            matcher = RobotsTxt.parse(self._body(), max_size=MAX_BODY_SIZE - 1).matcher(agent)
            if len(self._matchers) < AGENT_CACHE_SIZE:
                self._matchers[agent] = matcher
        return matcher
