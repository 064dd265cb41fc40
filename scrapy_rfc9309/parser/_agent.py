"""Product tokens (RFC 9309 2.2.1). Pure, no Scrapy import."""

from __future__ import annotations

import re

__all__ = ["agent_token", "derive_product_token", "is_valid_token", "product_token"]

_URL_LIKE = re.compile(r"/|[A-Za-z][A-Za-z0-9+.-]*://")
_PLAIN_TOKEN = re.compile(r"[A-Za-z0-9_.*-]+\Z")

_PRODUCT_NAME = re.compile(r"[^\s/;(),]+")
# RFC 9309 2.2.1 identifier characters, plus the digits and dots that real
# crawler names carry (MJ12bot, 360Spider, archive.org_bot).
_FULL_TOKEN = re.compile(r"[A-Za-z0-9_.-]+\Z")

# Products that browsers and HTTP libraries put in a User-Agent for
# compatibility; they never name a crawler.
_COMPATIBILITY_PRODUCTS = frozenset(
    {
        "mozilla",
        "applewebkit",
        "khtml",
        "gecko",
        "chrome",
        "chromium",
        "safari",
        "mobile",
        "version",
        "firefox",
        "edg",
        "opera",
        "presto",
        "like",
        "compatible",
        "trident",
        "opr",
    }
)


def _product_name(value: str) -> str:
    match = _PRODUCT_NAME.match(value.strip())
    return match.group() if match else ""


def product_token(value: str) -> str:
    """The leading product name of ``value``, lower-cased; ``""`` if none.

    RFC 9309 2.2.1: ``ExampleBot/1.2`` and ``ExampleBot Images`` both reduce
    to ``examplebot``. The name runs to the first ``/``, blank, ``;``, ``,``
    or parenthesis and is kept whole, digits and dots included
    (``MJ12bot/1.4.8`` is ``mj12bot``, ``archive.org_bot`` stays whole), so
    ``hedwig-news2`` stays ``hedwig-news2`` and never matches ``hedwig-news``.
    The same reading serves a file's user-agent lines and a crawler's
    User-Agent header (:func:`derive_product_token`).
    """
    return _product_name(value).lower()


def is_valid_token(value: str) -> bool:
    """Whether ``value`` is exactly one product name: RFC 9309 2.2.1's
    ``[A-Za-z_-]``, plus the digits and dots real crawler names carry."""
    return _FULL_TOKEN.match(value) is not None


def derive_product_token(user_agent: str) -> str:
    """The crawler's product token in a whole User-Agent header value.

    Browser compatibility products are skipped:
    ``Mozilla/5.0 (compatible; ExampleBot/0.1; +https://x)`` gives
    ``ExampleBot`` (RFC 9309 2.2.1's example); ``Scrapy/2.19 (+https://scrapy.org)``
    gives ``Scrapy``; ``MJ12bot/1.4.8`` gives ``MJ12bot``. Each product name is
    read as :func:`product_token` reads a user-agent line. The case is kept as
    written. ``""`` when there is nothing to derive.
    """
    products: list[str] = []
    comments: list[str] = []
    depth = 0
    word: list[str] = []
    comment: list[str] = []
    for char in user_agent:
        if char == "(":
            depth += 1
            if depth == 1:
                continue
        elif char == ")" and depth:
            depth -= 1
            if depth == 0:
                comments.append("".join(comment))
                comment = []
                continue
        if depth:
            comment.append(char)
        elif char.isspace():
            if word:
                products.append("".join(word))
                word = []
        else:
            word.append(char)
    if word:
        products.append("".join(word))
    if comment:
        comments.append("".join(comment))
    for text in comments:
        items = [item.strip() for item in text.split(";")]
        for index, item in enumerate(items[:-1]):
            if item.lower() == "compatible":
                name = _product_name(items[index + 1])
                if name:
                    return name
    for product in products:
        name = _product_name(product)
        if name and name.lower() not in _COMPATIBILITY_PRODUCTS:
            return name
    return _product_name(user_agent)


#: Agent strings already reduced to their token, up to :data:`_TOKENS_KEPT`.
_TOKENS: dict[str, str] = {}
_TOKENS_KEPT = 4096
_TOKEN_CACHED_LENGTH = 256


def agent_token(agent: str) -> str:
    """The product token ``agent`` stands for (RFC 9309 2.2.1), lower case."""
    token = _TOKENS.get(agent) if isinstance(agent, str) else None
    if token is None:
        token = _agent_token(agent)
        if len(_TOKENS) < _TOKENS_KEPT and len(agent) <= _TOKEN_CACHED_LENGTH:
            _TOKENS[agent] = token
    return token


def _agent_token(agent: str) -> str:
    if not isinstance(agent, str):
        raise TypeError(f"agent must be a str, not {type(agent).__name__}")
    if _URL_LIKE.match(agent):
        raise ValueError(f"agent {agent[:80]!r} looks like a URL; call check(url=..., agent=...)")
    if _PLAIN_TOKEN.match(agent):
        return agent.lower()
    # A whole User-Agent value: reduced as the middleware reduces the header
    # (RFC 9309 2.2.1's "Mozilla/5.0 (compatible; ExampleBot/0.1; ...)").
    return derive_product_token(agent).lower()
