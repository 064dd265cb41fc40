"""Percent-encoding normalisation of rule paths and URLs (RFC 9309 2.2.2).

Rules and URLs are brought to one canonical form before any comparison:

* octets outside ASCII (and characters not allowed in a URI, such as space)
  are percent-encoded as their UTF-8 octets;
* ``%XX`` escapes of unreserved characters (RFC 3986 2.3) are decoded
  (``%7E`` is ``~``, ``%62%61%7A`` is ``baz``);
* ``%2A`` and ``%24`` are decoded to ``*`` and ``$``: a rule's ``%2A`` /
  ``%24`` stands for a literal ``*`` / ``$`` (RFC 9309 2.2.3), so a URL is
  brought to the same form, and a rule matches its own spelling
  (``/dollar%24`` matches both ``/dollar$`` and ``/dollar%24``);
* every other escape stays escaped, with upper-case hex digits
  (``%2f`` is ``%2F``, never ``/``).

Pure functions, no Scrapy import.
"""

from __future__ import annotations

import re

__all__ = ["CANONICAL_HTTP_URL", "canonical_path", "normalize", "path_of", "uncommon_path"]

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Decoded too, on both sides: what a rule's %2A / %24 stands for (RFC 9309 2.2.3).
_DECODED = _UNRESERVED | {"*", "$"}

# Anything that is not an unescaped URI character needs work: a linear scan,
# one character class, no backtracking.
_NEEDS_WORK = re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,;=:@/?\[\]]")
# An http(s) URL whose path and query are already canonical, in one match:
# the authority, then only unescaped URI characters up to a fragment or the end.
_CANONICAL_HTTP_URL = re.compile(r"https?://[^/?#]*(/[A-Za-z0-9\-._~!$&'()*+,;=:@/?\[\]]*)(?:#|\Z)")
#: The pattern of an already canonical http(s) URL: group 1 is its path and query.
CANONICAL_HTTP_URL = _CANONICAL_HTTP_URL
# An http(s) URL with a path (group 1: its path and query, fragment cut),
# or with nothing after its authority but a fragment (group 1 unset: "/").
_HTTP_URL_PATH = re.compile(r"https?://[^/?#]*(?:(/[^#]*)|(?=#)|\Z)")
_WORK_ITEM = re.compile(r"%([0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$&'()*+,;=:@/?\[\]]")
# Text whose only work is its ``%`` escapes (the common case once a URL
# needs any): each escape is then one dict look-up, not a regex callback.
_NEEDS_MORE_WORK = re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,;=:@/?\[\]%]")


def _encode_octets(char: str) -> str:
    # surrogateescape restores the original octet of invalid UTF-8 input.
    return "".join(f"%{octet:02X}" for octet in char.encode("utf-8", "surrogateescape"))


def _replace(match: re.Match[str]) -> str:
    hex_digits = match.group(1)
    if hex_digits is None:
        return _encode_octets(match.group())
    return _escape_form(hex_digits)


def _escape_form(hex_digits: str) -> str:
    """What ``%`` + ``hex_digits`` (two hex digits) stands for in canonical form."""
    char = chr(int(hex_digits, 16))
    return char if char in _DECODED else "%" + hex_digits.upper()


_HEX = "0123456789ABCDEFabcdef"
#: Each spelling of two hex digits, and what ``%`` and those digits become.
_ESCAPES = {high + low: _escape_form(high + low) for high in _HEX for low in _HEX}


def _normalized_escapes(text: str) -> str:
    """:func:`normalize` of ``text`` whose only characters outside the
    canonical set are ``%``: a ``%`` before two hex digits is an escape
    (decoded, or upper-cased), any other ``%`` is ``%25``."""
    pieces = text.split("%")
    if len(pieces) == 1:
        return text
    escapes = _ESCAPES
    out = [pieces[0]]
    for piece in pieces[1:]:
        form = escapes.get(piece[:2])
        out.append("%25" + piece if form is None else form + piece[2:])
    return "".join(out)


def normalize(text: str) -> str:
    """Canonical percent-encoded form of a path, a query or a rule fragment."""
    if _NEEDS_WORK.search(text) is None:
        return text
    if _NEEDS_MORE_WORK.search(text) is None:
        return _normalized_escapes(text)
    try:
        return _WORK_ITEM.sub(_replace, text)
    except UnicodeEncodeError:  # a lone surrogate that was not an escaped octet
        return _WORK_ITEM.sub(_replace, text.encode("utf-8", "replace").decode("utf-8"))


def canonical_path(url: str) -> str:
    """``normalize(path_of(url))``: what a check matches (RFC 9309 2.2.2).

    Most crawled URLs need no escaping work; they take one regex match.
    """
    match = _CANONICAL_HTTP_URL.match(url)
    if match is not None:
        return match.group(1)
    return uncommon_path(url)


def uncommon_path(url: str) -> str:
    """:func:`canonical_path` of a URL that :data:`CANONICAL_HTTP_URL` does
    not match: escapes or other characters to normalise, no path, not http(s)."""
    match = _HTTP_URL_PATH.match(url)
    path = path_of(url) if match is None else match[1] or "/"
    if _NEEDS_MORE_WORK.search(path) is None:  # "%" escapes only, or nothing to do
        return _normalized_escapes(path)
    return normalize(path)


def path_of(url: str) -> str:
    """The path and query of ``url`` (absolute, or a path), without fragment.

    RFC 9309 2.2.2: matching starts with the first octet of the path; the
    query is part of what is matched, the fragment is not.

    Raises ``ValueError`` for a value that is neither, which is what a call
    with ``url`` and ``agent`` swapped looks like.
    """
    if url.startswith("/"):
        path = url
    elif url.startswith(("https://", "http://")):
        authority_start = 8 if url[4] == "s" else 7
        slash = url.find("/", authority_start)
        authority = url[authority_start:slash]
        if slash < 0 or "?" in authority or "#" in authority:
            return _path_after_authority(url, authority_start)
        path = url[slash:]
    else:
        scheme_end = url.find("://")
        if scheme_end <= 0 or not url[:scheme_end].isascii() or not url[0].isalpha():
            raise ValueError(
                f"url must be an absolute URL or a path starting with '/', got {url[:80]!r}"
                " (were url= and agent= swapped?)"
            )
        return _path_after_authority(url, scheme_end + 3)
    fragment = path.find("#")
    if fragment >= 0:
        path = path[:fragment]
    return path


def _path_after_authority(url: str, authority_start: int) -> str:
    path_start = len(url)
    for delimiter in "/?#":
        found = url.find(delimiter, authority_start)
        if 0 <= found < path_start:
            path_start = found
    path = url[path_start:]
    fragment = path.find("#")
    if fragment >= 0:
        path = path[:fragment]
    return path if path.startswith("/") else "/" + path
