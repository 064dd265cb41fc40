"""What one crawler keeps for itself: an object made at the first ask, kept on the crawler.

The crawl's report, its settings read once, its clock: each is found through
the crawler it belongs to, never in a module-level registry, so two crawlers
of one process keep theirs apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["kept_on"]

_T = TypeVar("_T")


def kept_on(crawler: Any, attribute: str, make: Callable[[], _T]) -> _T:
    """``crawler``'s object kept as ``attribute``, made by ``make`` at the first call."""
    kept: _T | None = getattr(crawler, attribute, None)
    if kept is None:
        kept = make()
        setattr(crawler, attribute, kept)
    return kept
