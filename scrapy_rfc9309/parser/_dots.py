"""The path a server resolves a request's path to: dot segments removed, slashes merged.

Pure, no Scrapy import. LENIENT(dot-segments): RFC 9309 2.2.2 matches the
path as sent, but servers resolve ``/./private/a``, ``/x/../private/b`` and
(nginx merges slashes by default) ``//private/c`` to ``/private/...`` and
serve it; a check also matches the resolved form, so such a path cannot get
past a ``Disallow: /private``.
"""

from __future__ import annotations

import re

__all__ = ["needs_resolving", "resolved_path", "resolved_url"]

_ENCODED_DOT = re.compile(r"%2[eE]")
_SLASHES = re.compile(r"//+")


def needs_resolving(path: str) -> bool:
    """Whether ``path`` may resolve to another path (a cheap test for the hot path)."""
    return "/." in path or "//" in path or "%2e" in path or "%2E" in path


def resolved_url(url: str) -> str | None:
    """``url`` with its path as the server resolves it (:func:`resolved_path`);
    ``None`` when that is ``url`` itself, or ``url`` has no path to resolve.
    LENIENT(dot-segments)."""
    scheme_end = url.find("://")
    start = 0 if scheme_end < 0 else scheme_end + 3
    if not needs_resolving(url[start:]):  # most URLs: one look
        return None
    ends = [found for found in (url.find(c, start) for c in "/?#") if found >= 0]
    if not ends or url[min(ends)] != "/":
        return None
    path_at = min(ends)
    path = url[path_at:].partition("#")[0]
    if not needs_resolving(path):
        return None
    resolved = resolved_path(path)
    return None if resolved is None else url[:path_at] + resolved


def resolved_path(path: str) -> str | None:
    """The path a server serves for ``path``; ``None`` when it is ``path`` itself.

    ``%2e`` / ``%2E`` are read as ``.`` (for this purpose only), repeated
    ``/`` are merged (as nginx does), then dot segments are removed (RFC
    3986 5.2.4); a ``..`` above the root stays at the root. The query, after
    the first ``?``, is kept as it is.
    """
    query_at = path.find("?")
    query = "" if query_at < 0 else path[query_at:]
    part = path if query_at < 0 else path[:query_at]
    if "%" in part:
        part = _ENCODED_DOT.sub(".", part)
    if "//" in part:
        part = _SLASHES.sub("/", part)
    if "/." in part:
        part = _remove_dot_segments(part)
    resolved = part + query
    return None if resolved == path else resolved


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4 on an absolute path without empty segments (linear)."""
    if not path.startswith("/"):
        return path
    output: list[str] = []
    segments = path[1:].split("/")
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == ".":
            if index == last:
                output.append("")
        elif segment == "..":
            if output:
                output.pop()
            if index == last:
                output.append("")
        else:
            output.append(segment)
    return "/" + "/".join(output)
