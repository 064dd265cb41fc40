"""What the crawl tells: the close summary, the JSON report, the record, the crawler's identity.

``ROBOTSTXT_SUMMARY_TOP_RULES`` and ``ROBOTSTXT_REPORT_FILE``
(:class:`ReportSettings`), ``ROBOTSTXT_RECORD_FILE``
(:func:`record_file_setting`), and the warning for a crawler that does not
name itself (HTTP: The Definitive Guide ch. 9).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from os import PathLike, fspath
from typing import TYPE_CHECKING

from ._setting_values import SettingError, read_bool, read_number

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["ReportSettings", "default_user_agent", "identity_warning", "record_file_setting"]


DEFAULT_SUMMARY_TOP_RULES = 5


@dataclass(frozen=True)
class ReportSettings:
    """``ROBOTSTXT_SUMMARY_TOP_RULES`` and ``ROBOTSTXT_REPORT_FILE``, validated."""

    #: how many rules the close summary lists (0: none)
    summary_top_rules: int
    #: where the JSON report is written at close; ``None``: not written
    report_file: str | None

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ReportSettings:
        top = read_number(
            settings, "ROBOTSTXT_SUMMARY_TOP_RULES", DEFAULT_SUMMARY_TOP_RULES, integer=True
        )
        raw = settings.get("ROBOTSTXT_REPORT_FILE")
        if raw is not None and not isinstance(raw, (str, PathLike)):
            raise SettingError(f"ROBOTSTXT_REPORT_FILE must be a file path, got {raw!r}")
        path = fspath(raw) if raw is not None else None
        if path is not None and not path.strip():
            raise SettingError("ROBOTSTXT_REPORT_FILE must be a file path, got an empty string")
        if path is not None and os.path.isdir(path):
            raise SettingError(
                f"ROBOTSTXT_REPORT_FILE must be a file path, {path!r} is a directory"
            )
        return cls(summary_top_rules=top, report_file=path or None)


def record_file_setting(settings: BaseSettings) -> str | None:
    """``ROBOTSTXT_RECORD_FILE``: the path (with ``%(name)s``, ``%(time)s``
    placeholders) of the crawl's record; ``None``: no record (the default)."""
    raw = settings.get("ROBOTSTXT_RECORD_FILE")
    if raw is None:
        return None
    if not isinstance(raw, (str, PathLike)):
        raise SettingError(f"ROBOTSTXT_RECORD_FILE must be a file path, got {raw!r}")
    path = fspath(raw)
    if not isinstance(path, str) or not path.strip():
        raise SettingError(f"ROBOTSTXT_RECORD_FILE must be a file path, got {raw!r}")
    return path


_SCRAPY_DEFAULT_USER_AGENT = re.compile(r"Scrapy/[0-9.]+\S* \(\+https://scrapy\.org\)\Z")


def identity_warning(settings: BaseSettings) -> str | None:
    """The start-up warning when robots.txt is obeyed under Scrapy's default User-Agent.

    HTTP: The Definitive Guide ch. 9: a robot should identify itself and its
    operator in ``User-Agent`` (and ``From``), so site owners can reach them.
    Under Scrapy's default every Scrapy crawler looks the same, and a
    ``User-agent: Scrapy`` group binds all of them. ``None`` when there is
    nothing to say.
    """
    if not read_bool(settings, "ROBOTSTXT_OBEY"):
        return None
    user_agent = default_user_agent(settings)
    if not _SCRAPY_DEFAULT_USER_AGENT.match(user_agent):
        return None
    token = str(settings.get("ROBOTSTXT_USER_AGENT") or "").strip()
    if token:
        return (
            f"Crawling under Scrapy's default USER_AGENT {user_agent!r}: site owners cannot "
            "tell this crawler from any other Scrapy crawler, nor reach its operator. Name "
            f"your crawler and a contact URL, e.g. USER_AGENT = '{token}/1.0 "
            "(+https://example.com/bot)'"
        )
    return (
        f"Crawling under Scrapy's default USER_AGENT {user_agent!r}: site owners cannot tell "
        "this crawler from any other Scrapy crawler, nor reach its operator, and robots.txt "
        "groups for 'Scrapy' bind every one of them. Name your crawler and a contact URL, e.g. "
        "USER_AGENT = 'ExampleBot/1.0 (+https://example.com/bot)' (its product token "
        "'ExampleBot' is then obeyed), or set ROBOTSTXT_USER_AGENT = 'ExampleBot' to choose "
        "the robots.txt token alone"
    )


def default_user_agent(settings: BaseSettings) -> str:
    """The User-Agent requests are sent with unless they set their own.

    ``DEFAULT_REQUEST_HEADERS``'s ``User-Agent``, when given, wins over
    ``USER_AGENT``: Scrapy's DefaultHeadersMiddleware (400) sets it before
    UserAgentMiddleware (500). Both run after the robots.txt middleware, so
    the request's own header is not there yet when it decides.
    """
    headers = settings.getdict("DEFAULT_REQUEST_HEADERS")
    for name, value in headers.items():
        if str(name).lower() == "user-agent" and value:
            return value.decode("latin-1") if isinstance(value, bytes) else str(value)
    return str(settings.get("USER_AGENT") or "")
