"""Gates: a store double held until the test says its condition holds.

A store call made slow for a fixed time states a duration ("the worker is
busy for 0.5 s") and hopes the crawl does the rest meanwhile; a gate states the
order of events: the call waits until the test opens the gate (the sites met
meanwhile are all asked, the spider closes, ...). A gate never opened does not
hang the test: its wait gives up after ``timeout`` seconds and the ``gate``
fixture (``tests/conftest.py``) fails the test, naming the gate, even when the
crawl swallowed the error the wait raised on the store's thread.
"""

from __future__ import annotations

import threading

__all__ = ["Gate", "GateNotOpened"]


class GateNotOpened(AssertionError):
    """A gate's wait gave up: the condition it waits for never held."""


class Gate:
    """A one-way gate between the test and a store call on another thread."""

    def __init__(self, what: str, timeout: float = 10.0) -> None:
        #: what opens the gate, for the failure's message
        self.what = what
        self.timeout = timeout
        self._open = threading.Event()
        #: the waits that gave up (at most one per waiting call)
        self.missed = 0

    def open(self) -> None:
        """The condition holds: every wait, now and later, goes on."""
        self._open.set()

    @property
    def is_open(self) -> bool:
        return self._open.is_set()

    def wait(self) -> None:
        """Until the gate is open; :class:`GateNotOpened` after ``timeout`` seconds."""
        if not self._open.wait(self.timeout):
            self.missed += 1
            raise GateNotOpened(f"gate never opened within {self.timeout:g} s: {self.what}")
