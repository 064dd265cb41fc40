"""Work in steps: a generator that yields between slices and returns its result.

Parsing and compiling a 500 KiB robots.txt can take tens of milliseconds; as
steps, the caller decides when to pause (Scrapy's reactor gets a turn between
slices) and the pure modules stay free of any event loop.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TypeVar

__all__ = ["STEP", "Steps", "run_to_end"]

T = TypeVar("T")

#: A generator that yields ``None`` between slices of work and returns a ``T``.
Steps = Generator[None, None, T]

#: Lines or rules handled between two yields (well under a millisecond each).
STEP = 500


def run_to_end(steps: Steps[T]) -> T:
    """Do all the steps at once and return the result."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: T = done.value
            return result
