"""``scrapy robotstxt prune``: drop what a SQLite robots.txt store no longer needs. Scrapy glue.

A store keeps each site's current record for a day past its lifetime (RFC
9309 2.4: a copy is used within its lifetime; past it the store need not keep
it), and its archive as ``ROBOTSTXT_STORE_ARCHIVE`` says (``"all"``, the last
N records per site, ``"off"``); each site's tdmrep.json copies by the same
rule (the newest standing for the current record). A crawl prunes the file when it opens it; this
subcommand does it on demand (a store no crawl opens any more, a cron job).
A Redis store needs none: its current records expire by themselves and its
archives are trimmed at each save.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.exceptions import UsageError

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["prune"]

#: exit status when the store fails
EXIT_ERROR = 2


def prune(settings: BaseSettings, args: list[str], store_uri: str | None) -> int:
    """``scrapy robotstxt prune [--store URI]``: prune the store, print what went."""
    from ...sites._store import StoreError
    from ...sites._store_uri import without_password
    from ..settings._store_settings import StoreSettings

    if args:
        raise UsageError("prune takes no URL")
    try:
        configured = StoreSettings.from_settings(settings, uri=store_uri)
    except ValueError as error:
        raise UsageError(str(error)) from None
    uri = store_uri or configured.uri
    if not uri:
        raise UsageError(
            "no robots.txt store: set ROBOTSTXT_STORE_URI in the project settings "
            "or give --store URI"
        )
    try:
        store = configured.open()
    except (ValueError, StoreError) as error:
        shown = without_password(uri)
        print(f"error:       {shown}: the store cannot be opened: {error}", file=sys.stderr)
        return EXIT_ERROR
    try:
        pruning = getattr(store, "prune", None)
        if pruning is None:
            print(
                f"{store.uri}: nothing to prune (current records expire by themselves, "
                "archives are trimmed at each save)"
            )
            return 0
        removed = dict(getattr(store, "pruned_at_open", None) or {})
        for table, count in pruning().items():  # opening it pruned it already
            removed[table] = removed.get(table, 0) + count
    except StoreError as error:
        print(f"error:       {error}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        store.close()
    print(
        f"{store.uri}: removed {removed['current']} expired current records, "
        f"{removed['archive']} archive records, {removed['bodies']} bodies, "
        f"{removed.get('tdmrep', 0)} tdmrep.json records"
    )
    return 0
