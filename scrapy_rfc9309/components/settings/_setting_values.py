"""Reading one setting's value: a bool, a number, a bounded delay; ``SettingError``.

An invalid value raises :class:`SettingError` naming the setting and the value,
which stops the crawl at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["MAX_DELAY_SECONDS", "SettingError", "read_bool", "read_delay_bound", "read_number"]


class SettingError(ValueError):
    """A scrapy-rfc9309 setting has a value it cannot work with."""

    #: logged already (:func:`start_up_errors_logged`): Scrapy's traceback follows
    logged = False


def read_bool(settings: BaseSettings, name: str, default: bool = False) -> bool:
    """A boolean setting (``default`` when unset or ``None``); a value Scrapy
    cannot read as one (``"maybe"``, a list, a dict) names the setting."""
    if settings.get(name) is None:
        return default
    try:
        return settings.getbool(name)
    except (TypeError, ValueError):
        raise SettingError(
            f"{name} must be True or False (or 1/0, 'true'/'false'), got {settings.get(name)!r}"
        ) from None


def read_number(
    settings: BaseSettings, name: str, default: float, *, integer: bool, minimum: float = 0
) -> Any:
    """A number setting of at least ``minimum``; ``integer``: a whole number
    (``2.5`` is refused, not cut to ``2``). A bool is refused: ``True`` is no size."""
    raw = settings.get(name, default)
    if raw is None:
        return default
    kind = "a whole number" if integer else "a number"
    if isinstance(raw, bool):
        raise SettingError(f"{name} must be {kind}, got {raw!r}")
    try:
        value = float(raw)
        if integer:
            if not value.is_integer():
                raise ValueError(raw)
            value = int(raw) if isinstance(raw, int) else int(value)
    except (TypeError, ValueError, OverflowError):
        raise SettingError(f"{name} must be {kind}, got {raw!r}") from None
    if not minimum <= value < float("inf"):
        raise SettingError(f"{name} must be {kind} of at least {minimum:g}, got {raw!r}")
    return value


#: Upper bound of ``ROBOTSTXT_CRAWL_DELAY_MAX`` and ``ROBOTSTXT_CLUSTER_DELAY``:
#: a day. A site paced more slowly is as good as not crawled, and the cluster
#: clock keeps each delay in Redis in whole milliseconds.
MAX_DELAY_SECONDS = 86_400.0


def read_delay_bound(settings: BaseSettings, name: str, default: float) -> float:
    """A number of seconds from 0 to :data:`MAX_DELAY_SECONDS` (a day); a larger
    or non-finite value stops the crawl at start-up naming ``name``."""
    value = float(read_number(settings, name, default, integer=False))
    if value > MAX_DELAY_SECONDS:
        raise SettingError(
            f"{name} must be at most {MAX_DELAY_SECONDS:.0f} seconds, got {settings.get(name)!r}"
        )
    return value
