"""HTML heads made to be slow to read, for the page-directive reader's
never-crash tests and its benchmark (``benchmarks/meta.py``).

Each is :data:`MAX_HEAD_BYTES` long, the most of a body that is read.
"""

from __future__ import annotations

from scrapy_rfc9309.parser._directives import MAX_HEAD_BYTES


def _fill(unit: bytes, prefix: bytes = b"") -> bytes:
    return (prefix + unit * (MAX_HEAD_BYTES // len(unit) + 1))[:MAX_HEAD_BYTES]


def hostile_heads() -> dict[str, bytes]:
    """Name -> a hostile head."""
    return {
        "meta-without-end": _fill(b"<meta "),
        "meta-robots-without-end": _fill(b"<meta name=robots "),
        "robots-words": _fill(b"robots ", b"<head><title>"),
        "robots-far-in-a-meta": _fill(b"<meta " + b" " * 4000 + b"robots "),
        "million-attributes": _fill(b"a=b ", b"<meta name=robots "),
        "attributes-named-robots": _fill(b"robots=b ", b"<meta "),
        "unclosed-quotes": _fill(b"<meta a='"),
        "comment-openings": _fill(b"<!--"),
        "unclosed-comment": _fill(b"-", b"<head><!--"),
        "nested-openings": _fill(b"<meta <meta <!-- <script "),
        "unclosed-script": _fill(b"<", b"<script>"),
        "script-openings": _fill(b"<script>"),
        "almost-scripts": _fill(b"<scripts"),
        "almost-bodies": _fill(b"<bodyx"),
        "less-than-signs": _fill(b"<"),
        "robots-tags": _fill(b'<meta name="robots" content="noindex;nofollow">'),
        "long-directive-list": _fill(b"a,", b'<meta name=robots content="'),
    }


#: The pieces of the hostile heads, for mixtures (property tests).
HOSTILE_UNITS = (
    b"<meta ",
    b"<meta name=robots ",
    b"robots ",
    b" " * 4000,
    b"a=b ",
    b"<meta a='",
    b'"',
    b"<!--",
    b"-->",
    b"<script>",
    b"</script",
    b"<scripts",
    b"<bodyx",
    b"<",
    b">",
    b"</head>",
    b'<meta name="robots" content="noindex;nofollow">',
    b"a,",
    b"<head>",
    b"\x80\xff",
)
