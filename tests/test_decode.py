"""Pure parts of the robots.txt fetch: bounded decoding (RFC 9309 2.5), Retry-After,
what counts as a download failure (2.3.1.4), 401/403 readings (2.3.1.3 and HTTP: The
Definitive Guide ch. 9), and the ROBOTSTXT_USER_AGENT reduction (2.2.1)."""

from __future__ import annotations

import gzip
import logging
import zlib
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import brotli
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rfc9309.components.settings._agent_settings import reduce_agent_setting
from scrapy_rfc9309.components.settings._setting_values import SettingError
from scrapy_rfc9309.components.sitefiles._decode import decode_body, split_encodings
from scrapy_rfc9309.components.sitefiles._fetcher import is_download_failure, retry_after_seconds
from scrapy_rfc9309.sites._outcome import Kind, kind_of_status

from .profiles import examples
from .server import _compress

ENCODINGS = ["gzip", "deflate", "br", "zstd"]


@settings(max_examples=examples(150), deadline=None)
@given(
    body=st.binary(max_size=3000),
    encodings=st.lists(st.sampled_from(ENCODINGS), min_size=1, max_size=3),
    limit=st.integers(min_value=0, max_value=4000),
)
def test_2_5_decoding_gives_the_body_up_to_the_limit(
    body: bytes, encodings: list[str], limit: int
) -> None:
    data = body
    for encoding in encodings:  # Content-Encoding lists them in the order applied
        data = _compress(data, encoding)
    decoded = decode_body(data, encodings, limit)
    assert decoded.body == body[: limit + 1]
    assert decoded.undecoded == ()
    assert not decoded.broken or len(body) > limit


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_2_5_bombs_stop_one_byte_past_the_limit(encoding: str) -> None:
    bomb = _compress(b"\0" * (64 << 20), encoding)
    assert len(bomb) < 200_000
    decoded = decode_body(bomb, [encoding], 512_000)
    assert len(decoded.body) == 512_001


def test_2_5_stacked_bombs_stop_too() -> None:
    inner = _compress(b"Disallow: /x\n" * (8 << 20), "gzip")
    decoded = decode_body(_compress(inner, "br"), ["gzip", "br"], 100_000)
    assert len(decoded.body) == 100_001
    assert decoded.body.startswith(b"Disallow: /x\n")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_2_5_cut_or_corrupt_streams_give_the_part_before_the_fault(encoding: str) -> None:
    body = b"User-agent: *\n" + b"".join(b"Disallow: /%d\n" % i for i in range(5000))
    data = _compress(body, encoding)
    cut = decode_body(data[: len(data) // 2], [encoding], 1_000_000)
    assert cut.broken
    assert body.startswith(cut.body)
    corrupt = decode_body(data[:20] + b"\xff" * 50 + data[70:], [encoding], 1_000_000)
    assert body.startswith(corrupt.body)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_2_5_a_cut_stream_is_told_from_a_body_not_so_encoded(encoding: str) -> None:
    """A stream cut in its header decodes to nothing, as a plain body labelled
    gzip does; only the first is a cut (unreachable, RFC 9309 2.3.1.4)."""
    data = _compress(b"User-agent: *\nDisallow: /x\n", encoding)
    for size in (4, len(data) - 2):
        cut = decode_body(data[:size], [encoding], 1_000_000)
        assert cut.broken and cut.cut, size
    if encoding in ("gzip", "deflate"):
        plain = decode_body(b"User-agent: *\nDisallow: /x\n", [encoding], 1_000_000)
        assert plain.broken and not plain.cut and not plain.body


def test_raw_deflate_and_gzip_members_are_read() -> None:
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    data = raw.compress(b"User-agent: *\n") + raw.flush()
    assert decode_body(data, ["deflate"], 100).body == b"User-agent: *\n"
    two = gzip.compress(b"a\n") + gzip.compress(b"b\n")
    assert decode_body(two, ["gzip"], 100).body == b"a\nb\n"
    assert decode_body(brotli.compress(b"c\n"), ["br"], 100).body == b"c\n"


def test_unknown_encodings_are_reported_not_guessed() -> None:
    decoded = decode_body(b"abc", ["compress"], 100)
    assert decoded.undecoded == ("compress",)
    assert decoded.body == b"abc"
    decoded = decode_body(gzip.compress(b"abc"), ["compress", "gzip"], 100)
    assert decoded.undecoded == ("compress",)
    assert decoded.body == b"abc"
    assert split_encodings([b"gzip, Identity", b" BR "]) == ["gzip", "br"]
    assert decode_body(b"x" * 50, [], 9).body == b"x" * 10


def test_retry_after_seconds_and_dates() -> None:
    now = 1_800_000_000.0
    assert retry_after_seconds(b"3") == 3.0
    assert retry_after_seconds(" 120 ") == 120.0
    when = datetime.fromtimestamp(now, timezone.utc) + timedelta(seconds=90)
    assert retry_after_seconds(format_datetime(when, usegmt=True), now=now) == 90.0
    assert retry_after_seconds("Sun, 06 Nov 1994 08:49:37 GMT", now=now) == 0.0
    for bad in (None, b"", b"-1", b"1.5", b"soon", b"\xb2", b"Sun, 99 Nov 1994 08:49:37 GMT"):
        assert retry_after_seconds(bad, now=now) is None
    assert retry_after_seconds(b"9" * 100) is not None  # huge, bounded by the caller


def test_2_3_1_4_only_download_failures_mean_unreachable() -> None:
    import ssl

    from scrapy import exceptions
    from twisted.internet import error
    from twisted.internet.defer import CancelledError
    from twisted.web._newclient import ResponseFailed, ResponseNeverReceived

    failures = [
        error.ConnectionRefusedError(),
        error.DNSLookupError(),
        error.TimeoutError(),
        error.ConnectionLost(),
        ResponseFailed([]),
        ResponseNeverReceived([]),
        ssl.SSLError(),
        ConnectionResetError(),
        TimeoutError(),
    ]
    if hasattr(exceptions, "DownloadTimeoutError"):  # Scrapy 2.14+
        failures.append(exceptions.DownloadTimeoutError())
    for exc in failures:
        assert is_download_failure(exc), exc
    from twisted.internet.defer import AlreadyCalledError
    from twisted.internet.defer import TimeoutError as DeferTimeoutError

    assert is_download_failure(DeferTimeoutError())
    bugs = (AttributeError(), TypeError(), KeyError(), ValueError(), AlreadyCalledError())
    for exc in bugs:
        assert not is_download_failure(exc), exc
    assert not is_download_failure(CancelledError())


def test_2_3_1_3_and_http_guide_ch9_status_readings() -> None:
    for code in (401, 403):
        assert kind_of_status(code) is Kind.UNAVAILABLE
        assert kind_of_status(code, auth_disallow=True) is Kind.RESTRICTED
    assert kind_of_status(404, auth_disallow=True) is Kind.UNAVAILABLE
    assert kind_of_status(429, auth_disallow=True) is Kind.UNREACHABLE


def test_2_2_1_user_agent_values_are_reduced_to_their_product_token(caplog) -> None:
    """Pure: the warning is added to the list given, nothing is logged."""
    warnings: list[str] = []
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        assert reduce_agent_setting("ExampleBot", warnings=warnings) == "ExampleBot"
        assert warnings == []
        value = "UnitBot/1.0 (+https://unit.example)"
        assert reduce_agent_setting(value, warnings=warnings) == "UnitBot"
    assert caplog.records == []
    assert len(warnings) == 1 and "'UnitBot'" in warnings[0]
    for value in ("/1.0", "(compatible)", "***"):
        with pytest.raises(SettingError, match="--agent"):
            reduce_agent_setting(value, "--agent")
