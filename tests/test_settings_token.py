"""The product token a request obeys as (RFC 9309 2.2.1), read from its
``User-Agent`` header by ``RobotsTxtSettings.token_of``: the same token as
``token_for_header(request.headers.get(b"User-Agent"))``, read from the header
dictionary's own entry (the layout of Scrapy's ``Headers``, checked here on
every Scrapy version the matrix runs)."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Request
from scrapy.settings import Settings

from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings

SETTINGS = {"USER_AGENT": "CrawlBot/2.0 (+https://example.com/bot)"}


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"User-Agent": "ExampleBot/1.0 (+https://example.com)"},
        {"user-agent": "lowerbot/3"},
        {b"USER-AGENT": b"ShoutBot/1"},
        {"User-Agent": ["FirstBot/1", "LastBot/2"]},
        {"User-Agent": []},
        {"User-Agent": ""},
        {"User-Agent": "   "},
    ],
    ids=str,
)
def test_2_2_1_token_of_a_request_is_the_token_of_its_user_agent_header(
    headers: dict[Any, Any],
) -> None:
    settings = RobotsTxtSettings.from_settings(Settings(SETTINGS))
    request = Request("http://example.com/page", headers=headers)
    assert settings.token_of(request) == settings.token_for_header(
        request.headers.get(b"User-Agent")
    )


def test_2_2_1_the_header_dictionary_keeps_a_normalised_name_and_a_list_of_values() -> None:
    """The layout ``token_of`` reads: a name written any way is kept as
    ``User-Agent``, its values as a list of bytes, the last of which
    ``Headers.get`` returns."""
    request = Request("http://example.com/", headers={"user-AGENT": ["A/1", "B/2"]})
    assert dict.get(request.headers, b"User-Agent") == [b"A/1", b"B/2"]
    assert request.headers.get(b"User-Agent") == b"B/2"
    settings = RobotsTxtSettings.from_settings(Settings(SETTINGS))
    assert settings.token_of(request) == "B"
    assert settings.token_of(Request("http://example.com/")) == "CrawlBot"
    assert settings.token_of(None) == "CrawlBot"


def test_2_2_1_robotstxt_user_agent_wins_over_the_header() -> None:
    settings = RobotsTxtSettings.from_settings(
        Settings({**SETTINGS, "ROBOTSTXT_USER_AGENT": "ChosenBot"})
    )
    request = Request("http://example.com/", headers={"User-Agent": "HeaderBot/1"})
    assert settings.token_of(request) == "ChosenBot"


def test_2_2_1_the_crawls_own_token_is_derived_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``token_for(None)``, asked at each robots.txt parsed, derives the token from
    ``USER_AGENT`` once; the same token as a request without a User-Agent header."""
    from scrapy_rfc9309.components.settings import _settings

    derived: list[str] = []
    real = _settings.derive_product_token  # type: ignore[attr-defined]

    def counting(user_agent: str) -> str:
        derived.append(user_agent)
        return real(user_agent)

    monkeypatch.setattr(_settings, "derive_product_token", counting)
    settings = RobotsTxtSettings.from_settings(Settings(SETTINGS))
    assert [settings.token_for(None) for _ in range(3)] == ["CrawlBot"] * 3
    assert settings.token_for_header(None) == "CrawlBot"
    assert derived == [SETTINGS["USER_AGENT"]]
