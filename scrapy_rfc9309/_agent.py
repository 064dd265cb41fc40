"""Product tokens (RFC 9309 2.2.1). Pure, no Scrapy import."""

from __future__ import annotations

import re

__all__ = ["derive_product_token", "is_valid_token", "product_token"]

_TOKEN = re.compile(r"[A-Za-z_-]+")
_PRODUCT_NAME = re.compile(r"[^\s/;(),]+")
_FULL_TOKEN = re.compile(r"[A-Za-z_-]+\Z")

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
    }
)


def product_token(value: str) -> str:
    """The leading product name of ``value``, lower-cased; ``""`` if none.

    RFC 9309 2.2.1: a product token is ``[A-Za-z_-]+``; ``ExampleBot/1.2``
    and ``ExampleBot Images`` both reduce to ``examplebot``. The name runs to
    the first ``/``, blank, ``;``, ``,`` or parenthesis and is kept whole, so
    ``hedwig-news2`` stays ``hedwig-news2`` and never matches ``hedwig-news``.
    """
    match = _PRODUCT_NAME.match(value.strip())
    return match.group().lower() if match else ""


def is_valid_token(value: str) -> bool:
    """Whether ``value`` is exactly one RFC 9309 product token."""
    return _FULL_TOKEN.match(value) is not None


def derive_product_token(user_agent: str) -> str:
    """The crawler's product token in a whole User-Agent header value.

    Browser compatibility products are skipped:
    ``Mozilla/5.0 (compatible; ExampleBot/0.1; +https://x)`` gives
    ``ExampleBot``; ``Scrapy/2.19 (+https://scrapy.org)`` gives ``Scrapy``.
    The case is kept as written. ``""`` when there is nothing to derive.
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
                match = _TOKEN.match(items[index + 1])
                if match:
                    return match.group()
    for product in products:
        match = _TOKEN.match(product)
        if match and match.group().lower() not in _COMPATIBILITY_PRODUCTS:
            return match.group()
    match = _TOKEN.match(user_agent.strip())
    return match.group() if match else ""
