"""Who the crawl obeys as and what it declares it is for: the product tokens
(``ROBOTSTXT_USER_AGENT``, ``ROBOTSTXT_ALSO_OBEY``) and the declared purposes
(``ROBOTSTXT_PURPOSES``), read and checked.

The readers are pure: a value used other than as written (``MyBot/1.0`` obeyed
as ``MyBot``, ``ai-input`` declared as ``ai-use``) adds a warning to the
``warnings`` list it is given; whoever reads the settings for a crawler (or for
a run of ``scrapy robotstxt``) logs them, once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...parser._agent import derive_product_token, is_valid_token
from ._setting_values import SettingError

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["aliased_purpose", "read_also_obey", "read_purposes", "reduce_agent_setting"]


def reduce_agent_setting(
    value: str, name: str = "ROBOTSTXT_USER_AGENT", warnings: list[str] | None = None
) -> str:
    """The product token (RFC 9309 2.2.1) to obey as, from a setting or option value.

    A User-Agent-like value such as ``MyBot/1.0 (+https://example.com)`` is
    accepted, as Scrapy's own ``ROBOTSTXT_USER_AGENT`` accepts it, and reduced
    to its product name (``MyBot``), a warning saying so added to ``warnings``;
    a value with no product name in it raises :class:`SettingError` naming ``name``.
    """
    text = str(value).strip()
    token = derive_product_token(text)
    if not any(char.isalnum() for char in token):
        raise SettingError(
            f"{name} must contain a product token such as 'ExampleBot' "
            f"(RFC 9309 2.2.1), got {value!r}"
        )
    if token != text and warnings is not None:
        warnings.append(
            f"{name} {text!r} is not a product token; obeying robots.txt as its product "
            f"name {token!r} (RFC 9309 2.2.1)"
        )
    return token


def aliased_purpose(name: str, alias: str, warnings: list[str] | None = None) -> str:
    """The category a declared ``alias`` stands for (``PURPOSE_ALIASES``), a
    warning naming it added to ``warnings``: ``ai-input`` is declared as ``ai-use``."""
    from ...parser._usage import PURPOSE_ALIASES

    category = PURPOSE_ALIASES[alias]
    if warnings is not None:
        warnings.append(
            f"{name}: {alias!r} is Content-Signal's name for the AIPREF vocabulary's "
            f"{category!r} (draft-ietf-aipref-vocab-08); declared as {category!r}"
        )
    return category


def read_purposes(settings: BaseSettings, warnings: list[str]) -> tuple[str, ...]:
    """``ROBOTSTXT_PURPOSES``: the declared uses of the crawl, each a known category.

    A name earlier vocabulary drafts had (``train-genai``, ``bots``), or this
    package's earlier ``ai-input`` (now read as ``ai-use``), is refused with
    what replaced it (``RETIRED_PURPOSES``).
    """
    from ...parser._usage import CATEGORIES, PURPOSE_ALIASES, RETIRED_PURPOSES

    raw = settings.get("ROBOTSTXT_PURPOSES")
    if raw is None or raw == "" or raw == []:
        return ()
    if isinstance(raw, str):
        items = [item.strip() for item in raw.split(",")]
    elif isinstance(raw, (list, tuple, set, frozenset)):
        items = [str(item).strip() if isinstance(item, str) else item for item in raw]
    else:
        raise SettingError(f"ROBOTSTXT_PURPOSES must be a list of names, got {raw!r}")
    purposes: list[str] = []
    for item in items:
        if isinstance(item, str) and item.lower() in PURPOSE_ALIASES:
            item = aliased_purpose("ROBOTSTXT_PURPOSES", item.lower(), warnings)
        if isinstance(item, str) and item.lower() in RETIRED_PURPOSES:
            raise SettingError(
                f"ROBOTSTXT_PURPOSES: {item!r} is no longer a usage category: "
                f"{RETIRED_PURPOSES[item.lower()]}"
            )
        if not isinstance(item, str) or item.lower() not in CATEGORIES:
            known = ", ".join(sorted(CATEGORIES))
            # -s 'ROBOTSTXT_PURPOSES=["train-ai"]' comes as the string '["train-ai"]'
            hint = (
                "; on the command line write -s ROBOTSTXT_PURPOSES=train-ai,search "
                "(no brackets or quotes)"
                if isinstance(item, str) and any(char in item for char in "[]\"'")
                else ""
            )
            raise SettingError(
                f"ROBOTSTXT_PURPOSES: unknown purpose {item!r}; known: {known}{hint}"
            )
        if item.lower() not in purposes:
            purposes.append(item.lower())
    return tuple(purposes)


def read_also_obey(settings: BaseSettings, warnings: list[str]) -> tuple[str, ...]:
    """``ROBOTSTXT_ALSO_OBEY``: further product tokens whose robots.txt groups must
    allow a URL too (a list, or a comma-separated string from the command line),
    each a product token as RFC 9309 2.2.1 writes them (``GPTBot``, ``CCBot``)."""
    raw = settings.get("ROBOTSTXT_ALSO_OBEY")
    if raw is None or raw == "" or raw == []:
        return ()
    if isinstance(raw, str):
        items: list[Any] = [item.strip() for item in raw.split(",")]
    elif isinstance(raw, (list, tuple)):
        items = [item.strip() if isinstance(item, str) else item for item in raw]
    else:
        raise SettingError(
            f"ROBOTSTXT_ALSO_OBEY must be a list of product tokens such as "
            f"['GPTBot', 'CCBot'], got {raw!r}"
        )
    tokens: list[str] = []
    for item in items:
        if item == "" and isinstance(raw, str):
            continue  # "GPTBot,,CCBot" or a trailing comma
        if isinstance(item, str) and "/" in item and not is_valid_token(item):
            # "GPTBot/1.0", a User-Agent's product: reduced with a warning, as
            # ROBOTSTXT_USER_AGENT is ("CC Bot" is no User-Agent: refused below)
            reduced = derive_product_token(item.strip())
            if any(char.isalnum() for char in reduced) and is_valid_token(reduced):
                item = reduce_agent_setting(item, "ROBOTSTXT_ALSO_OBEY", warnings)
        if not isinstance(item, str) or not is_valid_token(item):
            raise SettingError(
                f"ROBOTSTXT_ALSO_OBEY: {item!r} is not a product token such as 'GPTBot' "
                "(RFC 9309 2.2.1: letters, digits, '-', '_' and '.'; no version, no blank)"
            )
        if item.lower() not in (token.lower() for token in tokens):
            tokens.append(item)
    return tuple(tokens)
