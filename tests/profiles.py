"""The suite's Hypothesis profiles, chosen by ``HYPOTHESIS_PROFILE``.

``suite`` (the default, ``make test``): each property test runs a fifth of its
examples (:func:`examples`), so the whole suite stays short on a 2-core
machine. ``HYPOTHESIS_PROFILE=thorough`` runs every property test's full count
(the counts written in the tests), for a change to the parser or the matcher.
Both have no per-example deadline, and a slow example is not a failed health
check: property tests run beside real crawls (the properties themselves are
the same in both).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["THOROUGH", "examples"]

#: the profile named by ``HYPOTHESIS_PROFILE`` runs every test's full count
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE", "suite") == "thorough"

#: the default profile runs 1 / SHARE of a test's examples
SHARE = 5
#: ... and never fewer than this (nor more than the test's full count)
FLOOR = 20

settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", settings.get_profile("suite"))
settings.load_profile("thorough" if THOROUGH else "suite")


def examples(full: int) -> int:
    """The examples a property test runs: ``full`` under the ``thorough``
    profile, a fifth of it (at least :data:`FLOOR`) by default."""
    if THOROUGH:
        return full
    return min(full, max(FLOOR, full // SHARE))
