"""Property tests: no input raises, and matching agrees with a small,
obviously correct reference matcher (RFC 9309 2.2.2, 2.2.3)."""

from __future__ import annotations

import re
from functools import cache
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rfc9309 import RobotsTxt

from .profiles import examples


@given(body=st.binary(max_size=2000), url=st.text(max_size=60), agent=st.text(max_size=30))
@settings(max_examples=examples(300), deadline=None)
def test_arbitrary_bytes_urls_and_agents_never_crash(body: bytes, url: str, agent: str) -> None:
    robots = RobotsTxt.parse(body)
    try:
        verdict = robots.check(url="/" + url, agent=agent)
    except ValueError as error:  # only for agents that look like URLs (swapped arguments)
        assert "looks like a URL" in str(error)
    else:
        assert isinstance(verdict.allowed, bool)
    assert isinstance(robots.warnings, tuple)
    robots.crawl_delay("x")


@given(body=st.text(alphabet="uUser-agent:*Dislow/ab$#%2A\r\n\t \x00é", max_size=300))
@settings(max_examples=examples(300), deadline=None)
def test_robots_like_text_never_crashes(body: str) -> None:
    robots = RobotsTxt.parse(body)
    for url in ("/", "/a", "/ab$", "/%2A", "https://h/é"):
        robots.check(url=url, agent="a")


def _reference_match(pattern: str, path: str) -> bool:
    """Naive recursive glob: ``*`` any run, final ``$`` end, else prefix match."""
    anchored = pattern.endswith("$")
    if anchored:
        pattern = pattern[:-1]
    if any(piece not in path for piece in pattern.split("*")):
        return False  # a match holds every piece between the stars (a short cut)

    @cache
    def match(i: int, j: int) -> bool:
        if i == len(pattern):
            return not anchored or j == len(path)
        if pattern[i] == "*":
            return any(match(i + 1, k) for k in range(j, len(path) + 1))
        return j < len(path) and path[j] == pattern[i] and match(i + 1, j + 1)

    return match(0, 0)


def _reference_allowed(rules: list[tuple[bool, str]], path: str) -> bool:
    best: tuple[int, bool] | None = None
    for allow, pattern in rules:
        if pattern and _reference_match(pattern, path):
            candidate = (len(pattern), allow)
            if best is None or candidate > best:
                best = candidate
    return True if best is None else best[1]


_PATTERN = st.text(alphabet="/ab*$", max_size=8).map(lambda s: "/" + s) | st.text(
    alphabet="/ab*$", max_size=4
).map(lambda s: "*" + s)
_PATH = st.text(alphabet="/ab$", max_size=10).map(lambda s: "/" + s)


@given(
    rules=st.lists(st.tuples(st.booleans(), _PATTERN), max_size=8),
    paths=st.lists(_PATH, max_size=8),
)
@settings(max_examples=examples(500), deadline=None)
def test_matching_agrees_with_reference(rules: list[tuple[bool, str]], paths: list[str]) -> None:
    _assert_agrees_with_reference(rules, paths)


def _assert_agrees_with_reference(rules: list[tuple[bool, str]], paths: list[str]) -> None:
    body = "user-agent: *\n" + "".join(
        f"{'allow' if allow else 'disallow'}: {pattern}\n" for allow, pattern in rules
    )
    robots = RobotsTxt.parse(body)
    for path in paths:
        if path == "/robots.txt":
            continue
        # LENIENT(dot-segments): a path with "//" is also checked as the server
        # resolves it, slashes merged (nginx; RFC 3986 5.2.4).
        expected = _reference_allowed(rules, path) and _reference_allowed(
            rules, re.sub("/+", "/", path)
        )
        assert robots.allowed(url=path, agent="a") is expected, (body, path)


# Lengths spread evenly up to 40, so paths both shorter and longer than the
# number of indexed 3-grams occur.
_LONG_PATH = st.integers(0, 40).flatmap(
    lambda size: st.text(alphabet="/ab$", min_size=size, max_size=size).map(lambda s: "/" + s)
)
_WILDCARD = st.builds(
    lambda parts, anchored: "/" + "*".join(parts) + anchored,
    st.lists(st.text(alphabet="/ab", max_size=4), min_size=2, max_size=4),
    st.sampled_from(["", "$"]),
)


@pytest.mark.slow
@given(
    wildcards=st.lists(st.tuples(st.booleans(), _WILDCARD), min_size=17, max_size=60),
    others=st.lists(st.tuples(st.booleans(), _PATTERN), max_size=10),
    paths=st.lists(_LONG_PATH, max_size=8),
)
@settings(max_examples=examples(200), deadline=None)
def test_2_2_3_indexed_wildcards_agree_with_reference(
    wildcards: list[tuple[bool, str]], others: list[tuple[bool, str]], paths: list[str]
) -> None:
    """Enough wildcard rules that they are indexed rather than scanned."""
    _assert_agrees_with_reference(wildcards + others, paths)


_STEMS = ["".join(chars) for size in range(6) for chars in product("/ab", repeat=size)]


@given(allows=st.integers(0, 2**60), paths=st.lists(_PATH, max_size=8))
@settings(max_examples=examples(10), deadline=None)
def test_2_2_2_hundreds_of_final_star_rules_agree_with_reference(
    allows: int, paths: list[str]
) -> None:
    """Hundreds of ``/x`` and ``/x*`` rules: the compact prefix indexes."""
    rules = [
        ((allows >> (i % 61)) & 1 == 1, "/" + stem + star)
        for i, (stem, star) in enumerate((stem, star) for stem in _STEMS for star in ("", "*"))
    ]
    rules.append(((allows >> 61) & 1 == 1, "*"))
    _assert_agrees_with_reference(rules, paths)


@given(
    patterns=st.lists(st.text(alphabet="/abc", max_size=6), max_size=40),
    paths=st.lists(st.text(alphabet="/abc", max_size=8), max_size=10),
    bonus=st.sampled_from([0, 1]),
    offsets=st.booleans(),
    first_line=st.sampled_from([1, 120, 5000]),
)
@settings(max_examples=examples(400), deadline=None)
def test_2_2_2_compact_prefix_index_agrees_with_the_dict(
    patterns: list[str], paths: list[str], bonus: int, offsets: bool, first_line: int
) -> None:
    """The three indexes give the key the table holds: with the caller's low
    bits (kept whole), or without (kept as ``line << 1 | allow``)."""
    from scrapy_rfc9309.parser._prefixes import DictPrefixes, FewPrefixes, SortedPrefixes
    from scrapy_rfc9309.parser._rulekey import pack

    table = {
        pattern: pack(len(pattern) + bonus, i % 2 == 0, first_line + i, i if offsets else 0)
        for i, pattern in enumerate(patterns)
    }
    fast = DictPrefixes(table, bonus)
    compact, few = SortedPrefixes(table, bonus), FewPrefixes(table)
    for path in paths:
        # The reference: every pattern tried, the longest prefix of the path wins.
        matching = [pattern for pattern in table if path.startswith(pattern)]
        expected = table[max(matching, key=len)] if matching else None
        assert fast.longest(path) == compact.longest(path) == few.longest(path) == expected
        assert fast.longest(path) == expected  # a key rebuilt once, then remembered


@given(
    tokens=st.lists(st.text(alphabet="ab*-", min_size=1, max_size=4), unique=True, max_size=12),
    asked=st.lists(st.text(alphabet="ab*-\n", max_size=5), max_size=12),
)
@settings(max_examples=examples(300), deadline=None)
def test_2_2_1_kept_token_set_answers_as_the_token_index(
    tokens: list[str], asked: list[str]
) -> None:
    """What a parsed file keeps of its token index once its groups are
    dropped answers ``in`` as the index did, for tokens, their parts and
    their joins, and lists the same tokens."""
    from scrapy_rfc9309.parser._tokenset import token_set

    index = dict.fromkeys(tokens)
    kept = token_set(index)
    for token in [*asked, *tokens, "", "\n", *(a + b for a in tokens for b in tokens)]:
        assert (token in kept) is (token in index), token
    assert sorted(kept) == sorted(tokens)
    assert len(kept) == len(tokens)


def test_2_2_1_kept_token_set_of_a_file_naming_thousands_of_agents_is_a_look_up() -> None:
    """A hostile file naming 5,000 agents: what is kept answers ``in`` as the
    index did, by a hash look-up, not by a search through 5,000 names (an
    agent not remembered pays it on every check)."""
    from scrapy_rfc9309.parser._tokenset import TokenSet, token_set

    tokens = [f"agent{n}bot" for n in range(5000)]
    kept = token_set(dict.fromkeys(tokens))
    assert not isinstance(kept, (TokenSet, tuple))
    assert all(token in kept for token in tokens[::97])
    assert "agent5000bot" not in kept and "agent1" not in kept
    assert isinstance(token_set(dict.fromkeys(tokens[:20])), TokenSet)


@given(
    scheme=st.sampled_from(["http://", "https://", "HTTP://", "ftp://", ""]),
    authority=st.text(alphabet="ab.:@?#/%", max_size=6),
    rest=st.text(alphabet="/ab?#%2Fé ~*$[]'\x00", max_size=20),
)
@settings(max_examples=examples(500), deadline=None)
def test_2_2_2_canonical_path_fast_path_agrees_with_the_general_one(
    scheme: str, authority: str, rest: str
) -> None:
    from scrapy_rfc9309.parser._encoding import canonical_path, normalize, path_of

    url = scheme + authority + rest
    try:
        expected = normalize(path_of(url))
    except ValueError:
        return  # neither a URL nor a path: refused either way
    assert canonical_path(url) == expected, url


_URL_SCHEMES = st.sampled_from(
    ["http://", "https://", "HTTP://", "Https://", "ftp://", "//", "", "https:/"]
)
_URL_HOSTS = st.sampled_from(
    ["example.com", "h", "", "[::1]", "[2001:db8::1]", "é.com", "a?b", "a#b", "%41.com", "a b"]
)
_URL_TEXT = st.lists(
    st.sampled_from(
        [
            *("/", "//", "a", "B", ".", "..", "?", "#", "~", "*", "$", "[", "]", "'", ":", "@"),
            *("%", "%41", "%7e", "%7E", "%2F", "%2f", "%2e", "%2A", "%24", "%zz", "%4", "%C3%A9"),
            *("é", "|", "=", "&", " ", "\x00", "\U0001f600"),
        ]
    ),
    max_size=14,
).map("".join)


@given(
    scheme=_URL_SCHEMES,
    userinfo=st.sampled_from(["", "u@", "u:p@", "%75@", "é@"]),
    host=_URL_HOSTS,
    port=st.sampled_from(["", ":80", ":", ":8080"]),
    rest=_URL_TEXT,
)
@settings(max_examples=examples(1000), deadline=None)
def test_2_2_2_canonical_path_of_odd_urls_agrees_with_the_general_reading(
    scheme: str, userinfo: str, host: str, port: str, rest: str
) -> None:
    """RFC 9309 2.2.2 and RFC 3986 2.1, 2.3: the URL forms a check reads fast
    (an http(s) URL already canonical; one whose only work is its ``%``
    escapes; one with no path) give the path and query the general reading
    gives: path taken by :func:`path_of`, every escape and octet normalised
    one at a time by the regex."""
    from scrapy_rfc9309.parser._encoding import (
        _WORK_ITEM,
        _replace,
        canonical_path,
        path_of,
        uncommon_path,
    )

    url = scheme + userinfo + host + port + rest
    try:
        expected = _WORK_ITEM.sub(_replace, path_of(url))
    except ValueError:
        return  # neither a URL nor a path: refused either way
    assert uncommon_path(url) == expected, url
    assert canonical_path(url) == expected, url


_MANY_RULES = st.lists(
    st.tuples(
        st.booleans(),
        st.text(alphabet="/abc.", min_size=1, max_size=3).map(lambda s: "/" + s)
        | st.text(alphabet="abc?", min_size=2, max_size=3).map(lambda s: "*" + s),
    ),
    max_size=90,
)


@given(
    rules=_MANY_RULES,
    paths=st.lists(_URL_TEXT.map(lambda s: "/" + s), min_size=1, max_size=12),
    host=st.sampled_from(["https://example.com", "http://u@h:80", ""]),
)
@settings(max_examples=examples(300), deadline=None)
def test_2_2_2_allowed_and_denial_by_the_disallow_shortcut_agree_with_check(
    rules: list[tuple[bool, str]], paths: list[str], host: str
) -> None:
    """RFC 9309 2.2.2: ``allowed`` and ``denial`` skip the rules when the
    path starts with no disallow prefix (looked up by its first octets) and
    contains none of the needles, nor a dot segment (LENIENT(dot-segments));
    they agree with ``check``, which always decides by the compiled rules,
    with up to 90 rules (many prefixes, many needles)."""
    body = "user-agent: *\n" + "".join(
        f"{'allow' if allow else 'disallow'}: {pattern}\n" for allow, pattern in rules
    )
    # Each rule's own text (a star read as "x") is a path too; each path is
    # also tried as "//path" and "/./path" (LENIENT(dot-segments)).
    paths += [
        ("/x" if pattern[0] == "*" else "") + pattern.replace("*", "x") for _, pattern in rules
    ]
    # As parsed (few rules scanned as written), and compiled.
    scanned, robots = RobotsTxt.parse(body), RobotsTxt.parse(body)
    for _ in range(10_000):
        if robots.matcher("a")._first is None:
            break
        robots.check(url="/", agent="a")  # each check spends the scan's budget
    for path in [*paths, *("/" + path for path in paths), *("/." + path for path in paths)]:
        url = host + path
        assert scanned.allowed(url=url, agent="a") is scanned.check(url=url, agent="a").allowed
    matcher = robots.matcher("a")
    for path in [*paths, *("/" + path for path in paths), *("/." + path for path in paths)]:
        url = host + path
        verdict = robots.check(url=url, agent="a")
        assert robots.allowed(url=url, agent="a") is verdict.allowed, (body, url)
        denial = robots.denial(url=url, agent="a")
        assert (denial is None) is verdict.allowed, (body, url)
        if denial is not None:
            assert denial == verdict, (body, url)
        if matcher.heads is not None:
            assert matcher.deny is not None
            bucket = matcher.heads.get(path[1:2])
            found = bucket is not None and path.startswith(bucket)
            assert found is path.startswith(matcher.deny), (body, path)


_SHORT_PIECES = st.builds(
    lambda parts, anchored: "/" + "*".join(parts) + anchored,
    st.lists(st.text(alphabet="ab/$", min_size=1, max_size=2), min_size=2, max_size=4),
    st.sampled_from(["", "$"]),
)


@given(
    wildcards=st.lists(st.tuples(st.booleans(), _SHORT_PIECES), min_size=17, max_size=200),
    others=st.lists(st.tuples(st.booleans(), _PATTERN), max_size=10),
    paths=st.lists(_LONG_PATH, max_size=8),
)
@settings(max_examples=examples(100), deadline=None)
def test_2_2_3_wildcards_with_one_or_two_octet_pieces_agree_with_the_plain_scan(
    wildcards: list[tuple[bool, str]], others: list[tuple[bool, str]], paths: list[str]
) -> None:
    """Hostile files: rules such as ``/*a*b$`` whose literal pieces are too
    short for a 3-octet index, indexed by piece and split on first use,
    compared with the reference scan."""
    _assert_agrees_with_reference(wildcards + others, paths)


# As a hostile file writes them: no literal prefix ("/*a*bc$").
_SHORT_PIECES_ANYWHERE = st.builds(
    lambda parts, anchored: "/*" + "*".join(parts) + anchored,
    st.lists(st.text(alphabet="ab/$", min_size=1, max_size=2), min_size=1, max_size=4),
    st.sampled_from(["", "$"]),
)


@given(
    wildcards=st.lists(
        st.tuples(st.booleans(), _SHORT_PIECES_ANYWHERE | _SHORT_PIECES), min_size=17, max_size=120
    ),
    others=st.lists(st.tuples(st.booleans(), _PATTERN), max_size=10),
    paths=st.lists(_LONG_PATH, min_size=1, max_size=8),
)
@settings(max_examples=examples(150), deadline=None)
def test_2_2_3_compiled_index_of_one_or_two_octet_pieces_agrees_with_the_scan(
    wildcards: list[tuple[bool, str]], others: list[tuple[bool, str]], paths: list[str]
) -> None:
    """The compiled index a hostile file reaches after its first checks:
    rules of one- or two-octet pieces under their piece, anchored ones
    (``/*a*b$``) under their last piece, looked up by the path's end. Key
    for key the first checks' index (or scan), and the reference's verdict."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher

    rules = wildcards + others
    read = [(allow, pattern.encode(), line) for line, (allow, pattern) in enumerate(rules, 2)]
    compiled = AgentMatcher(iter(read))  # not a list: compiled at once
    first_checks = AgentMatcher(read)
    # Paths each rule matches: its stars filled, its "$" dropped.
    filled = [pattern.replace("*", "b/").rstrip("$") for _, pattern in wildcards]
    for path in paths + filled:
        key = compiled.decide(path)
        assert key == first_checks.decide(path), (rules, path)
        allowed = key is None or bool((key >> 63) & 1)
        assert allowed is _reference_allowed(rules, path), (rules, path)


def test_2_2_3_anchored_short_rules_are_indexed_by_end_unless_the_end_is_shared() -> None:
    """Which rules of one- or two-octet pieces a check tries: an anchored one
    is found by its last piece (only paths that end with it), unless many
    rules share that end (thousands of ``/*xy*za$`` would all be tried for
    every path that ends ``za``): then by a piece. Both indexes: the first
    checks' (more than 1,024 rules under one end) and the compiled one (more
    rules under the end than under the rule's longest piece)."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher

    pieces = [a + b for a in "bcdefghij" for b in "bcdefghij"]
    ends = [a + b for a in "klmnopqrs" for b in "klmnopqrs"]
    shared_pieces = [(pieces[i % 81], pieces[i // 81 % 81]) for i in range(1100)]
    shared = [(False, f"/*{p}*{q}*za$".encode(), n) for n, (p, q) in enumerate(shared_pieces, 2)]
    spread = [
        (False, f"/*{p}*{q}$".encode(), n)
        for n, (p, q) in enumerate(zip(pieces, ends, strict=True), 2)
    ]
    for rules, path, tried in (
        (shared, "/" + "klmn" * 50 + "za", 0),  # no piece in the path: none tried
        (spread, "/x/" + ends[40], 1),  # only the rule that ends so
    ):
        compiled = AgentMatcher(iter(rules))  # not a list: compiled at once
        first_checks = AgentMatcher(rules)
        index = first_checks._globs_index
        assert index is not None
        assert len(list(compiled._candidates(path))) == tried
        assert compiled.decide(path) is first_checks.decide(path) is None
        assert len(index._candidates(path)) == tried
    compiled, first_checks = AgentMatcher(iter(shared)), AgentMatcher(shared)
    for p, q in shared_pieces[:50]:  # each rule still found where it matches
        matched = f"/{p}/{q}/za"
        assert compiled.decide(matched) == first_checks.decide(matched) is not None


def test_2_2_3_a_shared_end_is_kept_where_a_rule_has_no_longer_piece() -> None:
    """Rules that share an anchored end past 1,024 (``/*b*za$``, ``/*c*za$``)
    but have no piece of 2 octets or more other than that end stay under the
    end, in the first checks' index and in the compiled one: keyed by the
    end without its ``$``, by a pair or by a one-octet piece, every path
    holding ``za`` or ``i`` (``/pizza/menu``) would try them all."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._rulekey import key_line

    rules = [(False, f"/*{'bcdefghij'[n % 9]}*za$".encode(), n) for n in range(2, 1200)]
    first_checks = AgentMatcher(rules)
    index = first_checks._globs_index
    assert index is not None
    assert index._candidates("/pizza/menu") == []
    assert first_checks.decide("/pizza/menu") is None
    denied = first_checks.decide("/b/xza")
    assert denied is not None and key_line(denied) == 9  # the first "/*b*za$"
    compiled = AgentMatcher(iter(rules))  # not a list: compiled at once
    assert list(compiled._candidates("/pizza/menu")) == []
    assert compiled.decide("/b/xza") == denied


def test_2_2_3_a_shared_end_is_kept_where_every_rule_shares_its_other_piece() -> None:
    """More than 1,024 rules sharing an anchored end (``za$``) stay under it
    when their other long piece is shared by as many (``/*ab*c*d*e*za$``):
    keyed by ``ab`` they would all be tried for every path holding ``ab``
    (``/about``), where by their end only for paths that end ``za``. Both
    indexes, and the end written again as the first piece (``/*za*...``)."""
    from itertools import islice, product

    from scrapy_rfc9309.parser._matcher import AgentMatcher

    letters = "bcdefghijklmnopqrstuvwxy"
    for first, path in (("ab", "/about"), ("za", "/pizza/menu")):
        combos = islice(product(letters, repeat=3), 1100)
        rules = [
            (False, f"/*{first}*{x}*{y}*{z}*za$".encode(), n)
            for n, (x, y, z) in enumerate(combos, 2)
        ]
        first_checks = AgentMatcher(rules)
        index = first_checks._globs_index
        assert index is not None
        assert index._candidates(path) == []
        compiled = AgentMatcher(iter(rules))  # not a list: compiled at once
        assert list(compiled._candidates(path)) == []
        matched = f"/{first}/b/b/b/za"
        assert compiled.decide(matched) == first_checks.decide(matched) is not None


def test_2_2_2_one_line_written_over_and_over_is_tried_once() -> None:
    """RFC 9309 2.2.2: of rules of one pattern the allow rule, then the
    earliest line, wins; the copies never decide. A file of one wildcard line
    written 2,000 times (and an ``Allow`` copy among them) keeps one of each
    under a key in both indexes, so a check tries one rule, not 2,000."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._rulekey import key_allows, key_line

    rules = [(n == 1500, b"/*zz*zz$", n) for n in range(2, 2002)]
    rules += [(False, f"/*{n}*zz$".encode(), 2002 + n) for n in range(10)]
    first_checks = AgentMatcher(rules)
    index = first_checks._globs_index
    assert index is not None
    compiled = AgentMatcher(iter(rules))  # not a list: compiled at once
    tried = [index._texts[i] for i in index._candidates("/a/zzz")]
    assert tried.count("/*zz*zz$") == 1 and len(tried) == 11
    entries = list(compiled._candidates("/a/zzz"))
    assert [getattr(e, "pattern", None) for e in entries].count(b"/*zz*zz$") == 1
    assert len(entries) == 11
    for matcher in (first_checks, compiled):
        allowed = matcher.decide("/zz/zz")
        assert allowed is not None and (key_allows(allowed), key_line(allowed)) == (1, 1500)
        assert matcher.decide("/a/zzz") is None
        denied = matcher.decide("/3/zz")
        assert denied is not None and key_line(denied) == 2005


def test_2_2_2_rules_that_share_their_key_are_keyed_by_their_least_shared_piece() -> None:
    """Past 1,024 rules under one key, each is keyed by the piece of it that
    the fewest rules hold (RFC 9309 2.2.2: every literal run of a rule is in
    any path it matches). ``/*abcdefgh*q1`` ... ``/*abcdefgh*q1199`` were all
    keyed by ``abcdefgh`` and all tried for ``/abcdefgh``; so were rules
    compiled from escapes (``%71`` is ``q``) and rules whose shared piece is
    their anchored end's run (``/*abcdefgh*q1$``). Both indexes; each rule
    still decides where it matches."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._rulekey import key_line

    for template, path, matched in (
        ("/*abcdefgh*q{n}", "/abcdefgh", "/abcdefgh/q{n}"),
        ("/*abcdefgh*q{n}$", "/abcdefgh", "/abcdefgh/q{n}"),
        ("/*abcdefgh*%71{n}", "/abcdefgh/q", "/abcdefgh/q{n}"),
    ):
        rules = [(False, template.format(n=n).encode(), n) for n in range(2, 1200)]
        compiled = AgentMatcher(iter(rules))  # not a list: compiled at once
        assert len(list(compiled._candidates(path))) < 20, template
        assert compiled.decide(path) is None
        if "%" not in template:  # escapes: compiled at once
            first_checks = AgentMatcher(rules)
            index = first_checks._globs_index
            assert index is not None
            assert len(index._candidates(path)) < 20, template
            assert first_checks.decide(path) is None
        for n in (2, 345, 1199):
            denied = compiled.decide(matched.format(n=n))
            assert denied is not None and key_line(denied) == n, (template, n)


def test_2_2_2_rules_under_a_literal_prefix_are_not_keyed_again() -> None:
    """A literal prefix (``/zq*htm*ab*cd``) is looked up only at a path's
    start; keyed again by a piece (``htm``), thousands of such rules would
    be tried for every path holding it (``/index.htm``), where under their
    prefix none is. Both indexes keep them there."""
    import random

    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._rulekey import key_line

    rng = random.Random(2_2_2)

    def run() -> str:
        return "".join(rng.choice("abcdefghijklmnop") for _ in range(2))

    pieces = ("htm", "php", "/in", "dex")
    rules = [(False, f"/zq*{pieces[n % 4]}*{run()}*{run()}".encode(), n) for n in range(2, 3000)]
    compiled = AgentMatcher(iter(rules))  # not a list: compiled at once
    first_checks = AgentMatcher(rules)
    index = first_checks._globs_index
    assert index is not None
    for path in ("/index.htm", "/a/index.php"):
        assert list(compiled._candidates(path)) == []
        assert index._candidates(path) == []
        assert compiled.decide(path) is first_checks.decide(path) is None
    matched = "/zq/" + rules[10][1].decode()[4:].replace("*", "/")
    for matcher in (compiled, first_checks):
        denied = matcher.decide(matched)
        assert denied is not None and key_line(denied) <= 12


def test_2_2_2_rules_under_a_rare_key_are_not_moved_to_one_common_in_paths() -> None:
    """Keying again makes a bucket of more than 1,024 rules only by splitting
    one at least in two. 1,100 rules ``/*zqx*htm*a*b...`` under ``zqx``
    (which no ordinary path holds) all hold ``htm`` too, which fewer rules
    (one less) hold; moved there, all would be tried for every
    ``/index.htm``, where under ``zqx`` none is.
    The same for a run of 2 (``ht``) and an anchored end (``ml$``). Both
    indexes; each rule still decides where it matches (RFC 9309 2.2.2)."""
    import random

    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._rulekey import key_line

    rng = random.Random(2_2_2)

    def octets(count: int) -> str:
        return "*".join(rng.choice("abcdefghijklmnop") for _ in range(count))

    for common, path in (("htm", "/index.htm"), ("ht", "/index.htm"), ("ml$", "/index.html")):
        rules = [(False, b"/*zqx*a", 2)]
        for line in range(3, 1103):
            pieces = (octets(7), common) if "$" in common else (common, octets(7))
            pattern = "/*zqx*" + "*".join(pieces)
            rules.append((False, pattern.encode(), line))
        compiled = AgentMatcher(iter(rules))  # not a list: compiled at once
        first_checks = AgentMatcher(rules)
        index = first_checks._globs_index
        assert index is not None
        assert list(compiled._candidates(path)) == [], common
        assert index._candidates(path) == [], common
        matched = "/zqx/" + rules[7][1].decode()[6:].replace("*", "/").rstrip("$")
        for matcher in (compiled, first_checks):
            assert matcher.decide(path) is None
            denied = matcher.decide(matched)
            assert denied is not None and key_line(denied) <= rules[7][2], (common, matched)


def test_2_2_2_a_string_more_rules_hold_than_move_there_is_a_new_key() -> None:
    """The bound (1,024, or half the rules' share) is on the bucket made, not
    on how many rules hold the string: 1,200 rules hold ``xyz``, but 600 of them move to a string
    of their own (``/*abc*xyz*123``), so the 600 others (``/*abc*xyz*a``)
    may move to ``xyz``; ``/*abcdefgh*q1`` ... ``q20000`` is such a file
    (``q12`` held by 1,111 rules, moved there by 111)."""
    from scrapy_rfc9309.parser._spread import least_shared
    from scrapy_rfc9309.parser._steps import run_to_end

    texts = [f"/*abc*xyz*{n:03d}" for n in range(600)] + ["/*abc*xyz*a"] * 600
    texts += [f"/*abc*{n:03d}" for n in range(600, 700)]
    homes, shares = ["abc"] * len(texts), [len(texts)] * len(texts)
    keys = run_to_end(least_shared(texts, homes, shares, {}))
    assert keys[:600] == [f"{n:03d}" for n in range(600)]
    assert keys[600:1200] == ["xyz"] * 600
    # Not were 500 rules more under "xyz" already (1,100 of a share of 1,300).
    keys = run_to_end(least_shared(texts, homes, shares, {"xyz": 500}))
    assert keys[600:1200] == [None] * 600


def test_2_2_2_rules_keyed_again_split_a_bucket_at_least_in_two() -> None:
    """Past 1,024 rules, a new key's bucket may hold as many as half the one
    it splits: 2,600 rules under ``htm``, which every ``.htm`` path holds,
    1,100 ``/*htm*qzk*a*b*c``, 1,100 ``/*htm*jvw*...`` and 400
    ``/*htm*<3 digits>``, go to ``qzk``, ``jvw`` and their digits; kept
    under ``htm``, ``/index.htm`` would try all of them. Both indexes; each
    rule still decides where it matches (RFC 9309 2.2.2)."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._rulekey import key_line

    def octets(number: int) -> str:  # distinct for each number: no copies
        return "*".join("abcdefghijklmnop"[number >> shift & 15] for shift in (0, 4, 8))

    patterns = [f"/*htm*qzk*{octets(n)}" for n in range(1100)]
    patterns += [f"/*htm*jvw*{octets(n)}" for n in range(1100)]
    patterns += [f"/*htm*{n:03d}" for n in range(400)]
    rules = [(False, pattern.encode(), line) for line, pattern in enumerate(patterns, 2)]
    compiled = AgentMatcher(iter(rules))  # not a list: compiled at once
    first_checks = AgentMatcher(rules)
    index = first_checks._globs_index
    assert index is not None
    assert list(compiled._candidates("/index.htm")) == []
    assert index._candidates("/index.htm") == []
    for matcher in (compiled, first_checks):
        assert matcher.decide("/index.htm") is None
        for at in (5, 1500, 2300):
            matched = "/htm/" + patterns[at][6:].replace("*", "/")
            denied = matcher.decide(matched)
            assert denied is not None and key_line(denied) == at + 2, matched


def test_2_2_2_no_rule_is_keyed_again_under_a_key_being_keyed_again() -> None:
    """A key whose own bucket is keyed again keeps its rules that stay, which
    the bucket a moved rule would make there does not count: 1,000 rules
    ``/*abc*xyz*a`` (of 3,000 under ``abc``) never move to ``xyz``, where
    1,100 rules ``/*xyz*b`` stay (2,100 rules would be tried for every path
    holding ``xyz``)."""
    from scrapy_rfc9309.parser._spread import least_shared
    from scrapy_rfc9309.parser._steps import run_to_end

    texts = ["/*abc*xyz*a"] * 1000 + [f"/*abc*{n:04d}" for n in range(2000)]
    texts += ["/*xyz*b"] * 1100
    homes = ["abc"] * 3000 + ["xyz"] * 1100
    shares = [3000] * 3000 + [1100] * 1100
    keys = run_to_end(least_shared(texts, homes, shares, {}))
    assert keys[:1000] == [None] * 1000
    assert keys[1000:3000] == [f"{n:04d}"[:3] for n in range(2000)]
    assert keys[3000:] == [None] * 1100


def test_2_2_2_rules_under_a_piece_that_starts_with_a_slash_are_keyed_again() -> None:
    """``/*/abcdefgh*q1`` ... is keyed by its first piece's ``/ab``, as a
    literal prefix ``/ab*zz1`` may be: past 1,024 such rules, the first
    checks' index keys those there by a piece again (by their least shared
    piece, as the compiled index does), and keeps those there by their
    prefix, looked up only at a path's start (RFC 9309 2.2.2)."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._rulekey import key_line

    rules = [(False, f"/*/abcdefgh*q{n}".encode(), n) for n in range(2, 1200)]
    rules += [(False, f"/ab*zz{n}".encode(), 1200 + n) for n in range(30)]
    first_checks = AgentMatcher(rules)
    index = first_checks._globs_index
    assert index is not None
    # The 30 prefix rules (their key, 3 octets, is looked up anywhere too).
    assert len(index._candidates("/abcdefgh")) <= 30 + 20
    assert len(index._candidates("/x/abcdefgh")) <= 30 + 20
    compiled = AgentMatcher(iter(rules))  # not a list: compiled at once
    for matcher in (first_checks, compiled):
        assert matcher.decide("/abcdefgh") is None
        for n in (2, 345, 1199):
            denied = matcher.decide(f"/x/abcdefgh/q{n}")
            assert denied is not None and key_line(denied) == n
        denied = matcher.decide("/ab/zz7")
        assert denied is not None and key_line(denied) == 1207


def test_2_2_2_rules_keyed_again_decide_as_the_reference_does() -> None:
    """More than 1,024 random rules sharing a key (and so keyed again by
    their pieces), checked against the reference matcher of RFC 9309 2.2.2
    and 2.2.3 in both indexes, on random paths and on paths each rule
    matches."""
    import random

    from scrapy_rfc9309.parser._matcher import AgentMatcher

    rng = random.Random(2_2_2)

    def run() -> str:
        return "".join(rng.choice("abc/") for _ in range(rng.randint(1, 5)))

    rules = [
        (rng.random() < 0.2, f"/*abc*{run()}*{run()}" + rng.choice(("", "$"))) for _ in range(1100)
    ]
    read = [(allow, pattern.encode(), line) for line, (allow, pattern) in enumerate(rules, 2)]
    compiled = AgentMatcher(iter(read))  # not a list: compiled at once
    first_checks = AgentMatcher(read)
    index = first_checks._globs_index
    assert index is not None
    assert len(index._buckets.get("abc", ())) < 500  # keyed again, not all under "abc"
    paths = [
        "/" + "".join(rng.choice("abc/") for _ in range(rng.randint(3, 16))) for _ in range(150)
    ]
    paths += [pattern.replace("*", "").rstrip("$") for _, pattern in rules[:150]]
    for path in paths:
        key = compiled.decide(path)
        assert key == first_checks.decide(path), path
        allowed = key is None or bool((key >> 63) & 1)
        assert allowed is _reference_allowed(rules, path), path


def test_2_2_3_a_literal_dollar_inside_rules_is_compiled_not_indexed_as_written() -> None:
    """RFC 9309 2.2.3: ``$`` anchors only at a pattern's end; inside
    (``/*$x``) it is a literal octet, which no key of the first checks' index
    (``_globs``) holds, so there every such rule would be tried on every path.
    Such a group is compiled at once: a path without ``$x`` tries none."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._rulekey import key_line

    rules = [(False, f"/*$x{n % 7}*y".encode(), n) for n in range(2, 300)]
    matcher = AgentMatcher(rules)
    assert matcher._globs_index is None
    assert list(matcher._candidates("/a/b")) == []
    denied = matcher.decide("/a$x3/y")
    assert denied is not None and key_line(denied) == 3


def test_2_2_3_a_lazy_rule_is_indexed_by_a_piece_not_by_its_leading_slash() -> None:
    """A canonical wildcard rule compiled only when tried (``/*q*z``) is
    indexed by its longest piece, as a compiled one is; never by its prefix
    ``/``, which every path holds."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._rulekey import key_line

    rules = [(False, f"/*{'qwv'[n % 3]}*{'z9'[n % 2]}".encode(), n) for n in range(2, 400)]
    compiled = AgentMatcher(iter(rules))  # not a list: compiled at once
    assert list(compiled._candidates("/a/b")) == []
    denied = compiled.decide("/q/z")
    assert denied is not None and key_line(denied) == 6  # the first "/*q*z"


@given(body=st.binary(max_size=200).map(lambda b: b.replace(b"\r", b"")))
@settings(max_examples=examples(200), deadline=None)
def test_2_2_2_a_line_found_alone_is_the_line_of_the_whole_index(body: bytes) -> None:
    """Verdicts name their line (RFC 9309 2.2.2): found by number, one at a
    time (the site cache) or from the index of all lines (a parsed file)."""
    from scrapy_rfc9309.parser._lines import line_start, line_starts

    starts = line_starts(body)
    assert len(starts) == body.count(b"\n") + 1
    for number in range(1, len(starts) + 1):
        assert line_start(body, number) == starts[number - 1]


_PLAIN_PATTERN = st.text(alphabet="/ab", max_size=6).map(lambda s: "/" + s)


@given(
    rules=st.lists(
        st.tuples(st.booleans(), _PLAIN_PATTERN | _PATTERN | st.just("")), min_size=1, max_size=20
    ),
    paths=st.lists(_PATH, min_size=1, max_size=20),
)
@settings(max_examples=examples(300), deadline=None)
def test_2_2_2_first_checks_by_scan_and_the_deny_shortcut_agree_with_the_compiled_index(
    rules: list[tuple[bool, str]], paths: list[str]
) -> None:
    """A matcher of few plain rules, or of few canonical rules with
    wildcards, scans them for its first checks, then compiles (also when
    built in steps); a path that starts with no disallow prefix is allowed
    without a check, as is one that starts with no rule of a scan of plain
    rules. All agree with the compiled index, key for key."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._steps import run_to_end

    read = [(allow, pattern.encode(), line) for line, (allow, pattern) in enumerate(rules, 2)]
    lazy = AgentMatcher(list(read))
    stepped = run_to_end(AgentMatcher.compile_steps(list(read)))
    compiled = AgentMatcher(iter(read))  # not a list: compiled at once
    assert lazy.rule_count == stepped.rule_count == compiled.rule_count
    for path in paths:  # more than the scanned checks: the lazy one compiles on the way
        expected = compiled.decide(path)
        assert lazy.decide(path) == expected, (rules, path)
        assert stepped.decide(path) == expected, (rules, path)
        for matcher in (lazy, stepped, compiled):
            deny, needles = matcher.deny, matcher.needles
            if (
                deny is not None
                and not path.startswith(deny)
                and not any(needle in path for needle in needles)
            ):
                assert expected is None or (expected >> 63) & 1, (rules, path)
            plain = matcher.plain_prefixes  # a scan of plain rules: no rule, no check
            if plain is not None and not path.startswith(plain):
                assert expected is None, (rules, path)


# Rule values not in canonical form: escapes (of unreserved octets, of "*"
# and "$", lower case, broken), octets to escape, no leading "/", URLs.
_RAW_VALUE = st.builds(
    lambda start, body: start + body,
    st.sampled_from(["/", "*", "", "http://h", "https://h/", "HTTP://h/a"]),
    st.lists(
        st.sampled_from(
            ["a", "b", "/", "*", "$", "%2A", "%2a", "%24", "%61", "%7e", "%5B", "%", "é", " ", "|"]
        ),
        max_size=6,
    ).map("".join),
)
_RAW_PATH = st.lists(
    st.sampled_from(["a", "b", "/", "*", "$", "%2A", "%24", "%61", "é", " ", "|", "~"]),
    max_size=8,
).map(lambda parts: "/" + "".join(parts))


@given(
    rules=st.lists(st.tuples(st.booleans(), _RAW_VALUE), min_size=1, max_size=12),
    paths=st.lists(_RAW_PATH, min_size=1, max_size=12),
)
@settings(max_examples=examples(400), deadline=None)
def test_2_2_2_few_rules_not_in_canonical_form_are_written_in_it_and_scanned_as_compiled(
    rules: list[tuple[bool, str]], paths: list[str]
) -> None:
    """RFC 9309 2.2.2: few rules, some not in canonical form (escapes, octets
    to escape, LENIENT(rule-without-slash), LENIENT(rule-url)), are written
    in it and scanned for their first checks, unless a ``%2A`` or a final
    ``%24`` has no such text; every verdict is the compiled index's, key
    for key, the rules dropped the same."""
    from scrapy_rfc9309.parser._encoding import canonical_path
    from scrapy_rfc9309.parser._matcher import AgentMatcher

    read = [(allow, value.encode(), line) for line, (allow, value) in enumerate(rules, 2)]
    scanned = AgentMatcher(list(read))
    compiled = AgentMatcher(iter(read))
    assert scanned.rule_count == compiled.rule_count
    unsaid = any(
        "%2a" in value.lower() or value.lower().rstrip("$").endswith("%24") for _, value in rules
    )
    if not unsaid:
        assert scanned._first is not None, rules  # the scan is tested
    for path in [canonical_path(path) for path in paths] * 2:  # past the scan's budget
        assert scanned.decide(path) == compiled.decide(path), (rules, path)


@given(value=_RAW_VALUE)
@settings(max_examples=examples(1000), deadline=None)
def test_2_2_2_a_rule_written_in_canonical_form_compiles_as_the_rule_as_written(
    value: str,
) -> None:
    """RFC 9309 2.2.2: the text :func:`canonical_text` writes for a rule's
    pattern compiles to the same prefix, pieces, anchor and specificity as
    the pattern itself, its length is that specificity, and writing it
    again changes nothing (so a scan compiled from its texts decides as
    the rules as written)."""
    from scrapy_rfc9309.parser._rule_forms import rule_pattern
    from scrapy_rfc9309.parser._wildcards import canonical_text, compile_pattern

    pattern = rule_pattern(value.encode())
    text = canonical_text(pattern)
    if text is None:  # a %2A, or a final %24: no text says it
        assert "%2a" in value.lower() or value.lower().rstrip("$").endswith("%24")
        return
    assert compile_pattern(text) == compile_pattern(pattern)
    assert len(text) == compile_pattern(pattern)[3]
    assert canonical_text(text) == text


def test_2_2_2_a_lone_star_written_in_canonical_form_is_not_read_as_a_plain_prefix() -> None:
    """A group written in canonical form is scanned as plain prefixes only
    when every rule starts with ``/``: a ``*`` rule would leave an empty
    prefix that every path starts with, so every check would try every rule."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher

    rules = [(False, b"*", 2), (False, b"private/", 3), (True, b"/a%7e", 4)]
    scanned = AgentMatcher(list(rules))
    assert scanned._first is not None and scanned._first.globs
    assert "" not in scanned._first.any
    compiled = AgentMatcher(iter(rules))
    for path in ["/private/x", "/a~", "/", "/x"]:
        assert scanned.decide(path) == compiled.decide(path), path


# Plain rules under "/p", which no path of _PATH starts with.
_PLAIN_UNDER_P = st.text(alphabet="/xy", max_size=5).map(lambda s: "/p" + s)


@given(
    plain=st.lists(st.tuples(st.booleans(), _PLAIN_UNDER_P), min_size=65, max_size=200),
    wildcards=st.lists(st.tuples(st.booleans(), _PATTERN), min_size=1, max_size=6),
    places=st.lists(st.integers(min_value=0, max_value=200), max_size=6),
    paths=st.lists(_PATH, min_size=1, max_size=20),
)
@settings(max_examples=examples(150), deadline=None)
def test_2_2_2_many_plain_rules_with_few_wildcards_are_scanned_then_compiled_alike(
    plain: list[tuple[bool, str]],
    wildcards: list[tuple[bool, str]],
    places: list[int],
    paths: list[str],
) -> None:
    """RFC 9309 2.2.2: a group of more than 64 canonical rules, at most 16
    of them with a ``*`` or a ``$``, is scanned for its first checks (a path
    that starts with no rule's text tries those alone), then compiled; every
    verdict is the compiled index's, key for key, in one go and in steps."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._steps import run_to_end

    rules = list(plain)
    for place, wildcard in zip(places, wildcards, strict=False):
        rules.insert(place % (len(rules) + 1), wildcard)
    read = [(allow, pattern.encode(), line) for line, (allow, pattern) in enumerate(rules, 2)]
    scanned = AgentMatcher(list(read))
    stepped = run_to_end(AgentMatcher.compile_steps(list(read)))
    compiled = AgentMatcher(iter(read))
    assert scanned._first is not None and stepped._first is not None  # the scan is tested
    # The paths start with no plain rule (only the wildcards are tried);
    # paths made from the rules start with one (every rule is tried), and
    # enough of them compile the scan on the way.
    made = [pattern.replace("*", "a").rstrip("$") for _, pattern in wildcards + plain[:4]]
    for path in [*paths, *made, *(path + "b" for path in made), *paths]:
        expected = compiled.decide(path)
        assert scanned.decide(path) == expected, (rules, path)
        assert stepped.decide(path) == expected, (rules, path)


def test_2_2_2_a_scan_is_compiled_once_it_has_cost_what_compiling_does() -> None:
    """A scan is compiled once its checks have tried eight times its rules
    in all: a path that starts with a rule's text tries them all; any other
    path its wildcards only, counted with what such a check costs beyond a
    compiled one (_SCAN_OVERHEAD, and a sixteenth of the rules for the test
    in C). So eight checks that try every rule compile it, as they always
    did, and a site whose paths start with no rule is scanned for longer."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._scan import _SCAN_OVERHEAD

    def scanned_checks(rules: list[tuple[bool, bytes, int]], path: str) -> int:
        matcher = AgentMatcher(list(rules))
        checks = 0
        while matcher._first is not None and checks < 10_000:
            matcher.decide(path)
            checks += 1
        assert matcher._first is None and matcher.plain_prefixes is None  # nothing of the scan kept
        return checks - 1  # the last check compiled

    few = [(False, b"/private/", 2), (False, b"/*.pdf$", 3)]
    assert scanned_checks(few, "/private/a") == 8  # 2 tried each: 16 / 2
    assert scanned_checks(few, "/public/a.pdf") == -(-16 // (1 + _SCAN_OVERHEAD))
    some = [(False, f"/p{i}/".encode(), i + 2) for i in range(40)] + few
    assert scanned_checks(some, "/p3/x") == 8
    assert scanned_checks(some, "/public/a.pdf") == -(-8 * 42 // (1 + 2 + _SCAN_OVERHEAD))
    many = [(False, f"/p{i}/".encode(), i + 2) for i in range(96)]
    many += [(False, b"/*.pdf$", 200), (True, b"/*?ok", 201)]
    assert scanned_checks(many, "/a.pdf") == -(-8 * 98 // (2 + 6 + _SCAN_OVERHEAD))
    assert scanned_checks(many, "/p1/a.pdf") == 8


def test_2_2_2_a_small_plain_scan_lets_unmatched_paths_go_and_a_larger_one_is_compiled() -> None:
    """A path that starts with none of up to 16 plain rules is let go by
    ``allowed`` with one test in C (about what the compiled shortcut costs),
    and the group stays scanned; with more rules such paths go through the
    scan, which is compiled once it has cost what compiling does."""
    from scrapy_rfc9309.parser._matcher import _PLAIN_SHORTCUT

    for count, compiled in ((_PLAIN_SHORTCUT, False), (_PLAIN_SHORTCUT + 1, True)):
        body = "User-agent: *\n" + "".join(f"Disallow: /d{i}/\n" for i in range(count))
        robots = RobotsTxt.parse(body)
        for _ in range(1_000):
            assert robots.allowed(url="https://example.com/page.html", agent="bot")
        matcher = robots.matcher("bot")
        assert (matcher._first is None) is compiled, count
        assert (matcher.plain_prefixes is None) is compiled, count
        assert not robots.allowed(url="https://example.com/d3/x", agent="bot")


def test_2_2_2_many_rules_with_many_wildcards_are_compiled_at_once() -> None:
    """More than 64 rules with more than 16 wildcards are not scanned (a
    scan would try each wildcard on every check): compiled, or indexed in C
    when most are wildcards."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher

    plain = [(False, f"/p{i}/".encode(), i + 2) for i in range(60)]
    some = [(False, f"/*.e{i}$".encode(), i + 100) for i in range(17)]
    most = [(False, f"/*x{i}*y".encode(), i + 200) for i in range(70)]
    assert AgentMatcher(plain + some)._first is None
    assert AgentMatcher(plain + some[:16])._first is not None
    assert AgentMatcher(plain + most)._globs_index is not None


@given(lines=st.lists(st.text(alphabet="/ab*$", max_size=5), max_size=12))
def test_wild_indexes_are_the_lines_with_a_star_or_a_dollar(lines: list[str]) -> None:
    """The scan's list of lines to try alone, found in C, is every line
    with a ``*`` or a ``$`` and no other."""
    from scrapy_rfc9309.parser._rule_forms import wild_indexes

    expected = tuple(i for i, line in enumerate(lines) if "*" in line or "$" in line)
    assert wild_indexes("\n".join(lines).encode(), 256) == expected
    assert wild_indexes("\n".join(lines).encode(), 2) == expected[:2]  # the first few only


@given(pattern=_PATTERN, paths=st.lists(_PATH, max_size=6), allow=st.booleans())
@settings(max_examples=examples(500), deadline=None)
def test_2_2_3_one_rule_scanned_as_written_matches_as_compiled(
    pattern: str, paths: list[str], allow: bool
) -> None:
    """RFC 9309 2.2.3: a canonical rule scanned as written (its literal
    prefix, its pieces in order, a final ``$`` anchoring the last) matches
    the paths its compiled form matches, and no other."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._scan import SCAN_CHECKS

    read = [(allow, pattern.encode(), 2)]
    scanned, compiled = AgentMatcher(list(read)), AgentMatcher(iter(read))
    assert scanned._first is not None  # scanned, not compiled: the scan is what is tested
    # Paths the rule matches too: its stars filled, with and without more after it.
    filled = "/" + pattern.replace("*", "ab").replace("$", "").lstrip("/")
    for path in [*paths, filled, filled + "/b", filled[:-1]][:SCAN_CHECKS]:
        assert scanned.decide(path) == compiled.decide(path), (pattern, path)


_LINE_PIECES = st.sampled_from(
    [
        "User-agent",
        "user-agent",
        "USER-AGENT",
        " User-agent",
        "User-agent ",
        "useragent",
        "Disallow",
        "disallow",
        "Allow",
        "ALLOW",
        "dissallow",
        "Sitemap",
        "Crawl-delay",
        "Content-Usage",
        "content-signal",
        "train-ai=n",
        "Host",
        ":",
        ": ",
        " ",
        "\t",
        "#",
        "# c",
        "*",
        "/a",
        "/b*",
        "$",
        "bot",
        "Googlebot*",
        "x/1.0",
        "http://e.com/p",
        "é",
        "\n",
        "\n",
        "\n",
    ]
)


@given(st.lists(_LINE_PIECES, max_size=60).map("".join))
@settings(max_examples=examples(400), deadline=None)
def test_2_2_lines_split_in_c_read_as_the_line_by_line_reference(text: str) -> None:
    """RFC 9309 2.2: the grouping that splits lines in C and reads the common
    line with one dict look-up gives the line-by-line reading's groups,
    rules, sitemaps and warnings."""
    from .reference import assert_same_grouping

    assert_same_grouping(text.encode())


_USAGE_FILE_LINES = st.sampled_from(
    [
        b"User-agent: *",
        b"User-agent: ExampleBot",
        b"Disallow: /a",
        b"Allow: /a/b",
        b"Content-Usage: train-ai=n",
        b"Content-Usage: /a train-ai=y",
        b"content-usage: /a* search=n",
        b"Content-Signal: ai-train=no, search=yes",
        b"Sitemap: https://example.com/s.xml",
        b"Crawl-delay: 2",
        b"Unknown: x",
    ]
)


@given(
    lines=st.lists(_USAGE_FILE_LINES, max_size=14),
    agents=st.lists(st.sampled_from(["ExampleBot", "OtherBot", "*"]), min_size=1, max_size=3),
)
@settings(max_examples=examples(300), deadline=None)
def test_2_2_4_usage_read_again_after_a_check_is_what_a_fresh_parse_reads(
    lines: list[bytes], agents: list[str]
) -> None:
    """RFC 9309 2.2.1 and 2.2.4: once a check has compiled a matcher, a parsed
    file keeps no groups; the usage lines of each agent's groups (and the
    warnings, and whether the file allows everything) are read again from the
    body, and are those a freshly parsed file gives."""
    from scrapy_rfc9309.parser._compact import CompactRobots

    from .reference import assert_same_grouping

    body = b"\n".join(lines)
    assert_same_grouping(body)  # usage lines kept per group as line by line
    fresh = RobotsTxt.parse(body)
    expected = (
        [fresh.usage(url=path, agent=agent) for agent in agents for path in ("/", "/a", "/ab")],
        fresh.warnings,
        fresh.allows_everything,
    )
    checked = RobotsTxt.parse(body)
    for agent in agents:
        checked.allowed(url="/a", agent=agent)
    assert checked._grouping is None
    usages = [
        checked.usage(url=path, agent=agent) for agent in agents for path in ("/", "/a", "/ab")
    ]
    assert checked._grouping is None  # dropped again once the usage lines are read
    assert (usages, checked.warnings, checked.allows_everything) == expected
    compact = CompactRobots(checked)
    assert [
        compact.usage(url=path, agent=agent) for agent in agents for path in ("/", "/a", "/ab")
    ] == expected[0]


_DELAY_FILE_LINES = st.sampled_from(
    [
        b"User-agent: *",
        b"User-agent: ExampleBot",
        b"User-agent: otherbot",
        b"Disallow: /a",
        b"Crawl-delay: 2",
        b"Crawl-delay: 0.5",
        b"Crawl-delay: soon",
        b"",
    ]
)


@given(
    lines=st.lists(_DELAY_FILE_LINES, max_size=14),
    agents=st.lists(
        st.sampled_from(["ExampleBot", "OtherBot", "ThirdBot/2.0", "*"]), min_size=1, max_size=3
    ),
)
@settings(max_examples=examples(300), deadline=None)
def test_2_2_4_crawl_delay_kept_by_a_cache_is_what_the_file_asks(
    lines: list[bytes], agents: list[str]
) -> None:
    """RFC 9309 2.2.4 (other records): a cached copy (``CompactRobots``, made
    after a check dropped the groups) answers each agent's Crawl-delay as the
    whole file does: a token with groups of its own never falls back to ``*``'s."""
    from scrapy_rfc9309.parser._compact import CompactRobots

    body = b"\n".join(lines)
    fresh = RobotsTxt.parse(body)
    expected = [fresh.crawl_delay(agent) for agent in agents]
    checked = RobotsTxt.parse(body)
    checked.allowed(url="/a", agent=agents[0])
    assert [CompactRobots(checked).crawl_delay(agent) for agent in agents] == expected
    assert [checked.crawl_delay(agent) for agent in agents] == expected
    # a file that asks no agent a Crawl-delay says so without a look-up per agent
    asks = fresh.has_crawl_delay()
    assert checked.has_crawl_delay() is asks and CompactRobots(checked).has_crawl_delay() is asks
    if any(delay is not None for delay in expected):
        assert asks
    if not asks:
        assert all(fresh.crawl_delay(agent) is None for agent in ("ExampleBot", "Other", "*"))


def test_2_2_4_crawl_delay_after_a_check_is_read_without_grouping_the_body_again(
    monkeypatch,
) -> None:
    """RFC 9309 2.2.4: the Crawl-delay of a file whose groups a check dropped
    (each downloaded robots.txt, as the crawl settles it) is read from the
    delays kept; the whole body is not grouped a second time."""
    from scrapy_rfc9309.parser import _robotstxt
    from scrapy_rfc9309.parser._steps import run_to_end

    body = (
        b"User-agent: *\nCrawl-delay: 2\nDisallow: /private\n\n"
        b"User-agent: ExampleBot\nCrawl-delay: 5\nDisallow: /x\n\n"
        b"User-agent: QuietBot\nDisallow: /y\n"
    )
    robots = run_to_end(RobotsTxt.parse_in_steps(body, agent="OtherBot"))

    def no_second_grouping(*args: object) -> None:
        raise AssertionError("the body was grouped again")

    monkeypatch.setattr(_robotstxt, "group_all", no_second_grouping)
    assert robots.crawl_delay("ExampleBot/1.0") == 5.0
    assert robots.crawl_delay("OtherBot") == 2.0
    assert robots.crawl_delay("QuietBot") is None  # a group of its own: no "*" fallback


def test_2_2_4_usage_lines_after_a_check_are_read_without_grouping_the_body_again(
    monkeypatch,
) -> None:
    """RFC 9309 2.2.4: the usage lines of a file whose groups were dropped by
    a check (as the site cache's copy is made) are read from their line
    numbers; the whole body is not grouped a second time."""
    from scrapy_rfc9309.parser import _robotstxt
    from scrapy_rfc9309.parser._compact import CompactRobots
    from scrapy_rfc9309.parser._steps import run_to_end

    body = (
        b"User-agent: *\nContent-Signal: search=yes, ai-train=no\nDisallow: /private\n\n"
        b"User-agent: ExampleBot\nContent-Usage: /ai-ok/ train-ai=y\nDisallow: /x\n"
    )
    expected = RobotsTxt.parse(body).usage(url="/ai-ok/a", agent="ExampleBot")
    robots = run_to_end(RobotsTxt.parse_in_steps(body, agent="OtherBot"))

    def no_second_grouping(*args: object) -> None:
        raise AssertionError("the body was grouped again")

    monkeypatch.setattr(_robotstxt, "group_all", no_second_grouping)
    compact = CompactRobots(robots)
    assert compact.usage(url="/ai-ok/a", agent="ExampleBot") == expected
    assert expected.get("train-ai") is not None
    assert robots.usage(url="/a", agent="OtherBot").refusal(["train-ai"]) is not None


_DOTTED_PATH = st.lists(st.sampled_from(["/", "a", "b", ".", "%2e", "%2E", "?"]), max_size=12).map(
    lambda parts: "/" + "".join(parts)
)


@given(
    rules=st.lists(st.tuples(st.booleans(), _PATTERN), max_size=8),
    paths=st.lists(_DOTTED_PATH, max_size=8),
)
@settings(max_examples=examples(500), deadline=None)
def test_lenient_dot_segments_never_allow_what_the_path_as_sent_disallows(
    rules: list[tuple[bool, str]], paths: list[str]
) -> None:
    """LENIENT(dot-segments): checking the resolved path too (RFC 3986 5.2.4)
    only ever adds denials; a path without dot segments or "//" is checked
    as sent only (RFC 9309 2.2.2)."""
    from scrapy_rfc9309.parser._dots import resolved_path

    body = "user-agent: *\n" + "".join(
        f"{'allow' if allow else 'disallow'}: {pattern}\n" for allow, pattern in rules
    )
    robots = RobotsTxt.parse(body)
    for path in paths:
        if path == "/robots.txt":
            continue
        as_sent = _reference_allowed(rules, path.replace("%2e", ".").replace("%2E", "."))
        allowed = robots.allowed(url=path, agent="a")
        if not as_sent:
            assert not allowed, (body, path)
        resolved = resolved_path(path)
        if resolved is None:
            assert allowed is as_sent, (body, path)
        else:
            assert allowed is (as_sent and robots.allowed(url=resolved, agent="a")), (body, path)
        assert robots.check(url=path, agent="a").allowed is allowed, (body, path)
        assert (robots.denial(url=path, agent="a") is None) is allowed, (body, path)


@given(
    lines=st.lists(st.tuples(_PATTERN, st.booleans()), max_size=6),
    paths=st.lists(_DOTTED_PATH, max_size=8),
)
@settings(max_examples=examples(300), deadline=None)
def test_lenient_dot_segments_usage_as_served_only_ever_adds_refusals(
    lines: list[tuple[str, bool]], paths: list[str]
) -> None:
    """LENIENT(dot-segments) for usage preferences (IETF AIPREF attach: a
    ``Content-Usage`` path line): the path the server resolves to is read too,
    per category the most restrictive, so a URL is refused whenever its path as
    sent or as resolved is; a path that resolves to itself is read as sent."""
    from scrapy_rfc9309.parser._dots import resolved_url
    from scrapy_rfc9309.parser._usage_decision import site_sources

    body = "user-agent: *\n" + "".join(
        f"content-usage: {pattern} train-ai={'y' if allow else 'n'}\n"
        for pattern, allow in lines
        if pattern.startswith("/")
    )
    robots = RobotsTxt.parse(body)
    # each line's own path behind dot segments, and the drawn paths
    dotted = [f"{prefix}{pattern[1:]}" for pattern, _ in lines for prefix in ("/x/../", "/./")]
    for path in dotted + paths:
        url = "https://e.com" + path
        refused = site_sources(robots, url, "a").robots_txt.refusal(["train-ai"]) is not None
        as_sent = robots.usage(url=url, agent="a").refusal(["train-ai"]) is not None
        resolved = resolved_url(url)
        as_served = (
            resolved is not None
            and robots.usage(url=resolved, agent="a").refusal(["train-ai"]) is not None
        )
        assert refused is (as_sent or as_served), (body, path)


_CANONICAL_RULE = (
    _WILDCARD
    | _SHORT_PIECES
    | st.text(alphabet="/ab*$", max_size=6).map(lambda s: "/" + s)
    | st.text(alphabet="/ab*$", max_size=4).map(lambda s: "*" + s)
    | st.sampled_from(["", "/", "*", "/*", "/*$", "*$", "/a$b", "/$", "$"])
)


@given(
    rules=st.lists(st.tuples(st.booleans(), _CANONICAL_RULE), min_size=65, max_size=150),
    paths=st.lists(_LONG_PATH | _PATH, min_size=1, max_size=12),
    dollars_inside=st.booleans(),
)
@settings(max_examples=examples(150), deadline=None)
def test_2_2_2_many_canonical_wildcard_rules_indexed_in_c_agree_with_the_compiled_index(
    rules: list[tuple[bool, str]], paths: list[str], dollars_inside: bool
) -> None:
    """More than 64 canonical rules, mostly wildcards (hostile files): kept
    as written and indexed by C-level operations (``_globs``), they give the
    compiled index's deciding rule, key for key (RFC 9309 2.2.2 tie-breaks
    included), for their first checks and once compiled after them. A
    literal ``$`` inside a rule (RFC 9309 2.2.3) sends them to the compiled
    index at once."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher

    if not dollars_inside:  # a "$" only where it anchors, at a rule's end
        rules = [(allow, p[:-1].replace("$", "") + p[-1:]) for allow, p in rules]
    read = [(allow, pattern.encode(), line) for line, (allow, pattern) in enumerate(rules, 2)]
    indexed = AgentMatcher(list(read))
    compiled = AgentMatcher(iter(read))  # not a list: the general compiler
    wildcards = sum(pattern.count("*") for _, pattern in rules)
    if wildcards * 2 >= len(rules) and not any(p and p[0] not in "/*" for _, p in rules):
        literal_dollars = any("$" in pattern[:-1] for _, pattern in rules)
        # the fast path taken, unless a "$" is a literal octet
        assert (indexed._globs_index is None) is literal_dollars
    assert indexed.rule_count == compiled.rule_count
    for path in (paths * 40)[:40]:  # past the indexed checks: then compiled
        assert indexed.decide(path) == compiled.decide(path), (rules, path)


_FILE_LINES = st.sampled_from(
    [
        b"User-agent: *",
        b"user-agent: ExampleBot",
        b"USER-AGENT: examplebot/2.1",
        b"uSer-Agent : OtherBot*",
        b"useragent: ExampleBot",
        b"User-agent *",
        b"  User-agent: *",
        b"Disallow: /a",
        b"disallow:/a/b # why",
        b"DISALLOW: /a/%7e\t",
        b"dissallow: /typo",
        b"Disallow /no-colon",
        b"Disallow:",
        b"Allow: /a/b",
        b"ALLOW: /*.pdf$",
        b"Allow: a-relative",
        b"Disallow: http://example.com/x",
        b"Disallow: /caf\xc3\xa9",
        b"Disallow: /\xff\xfe",
        b"Sitemap: https://example.com/s.xml",
        b"Crawl-delay: 2",
        b"crawl-delay: soon",
        b"Content-Usage: train-ai=n",
        b"Host: example.com",
        b"# a comment: Disallow: /x",
        b"Disallow: /" + b"x" * 300,
        b"Disallow",
        b"",
        b"   ",
        b"\xef\xbb\xbfUser-agent: *",
    ]
)


@given(
    lines=st.lists(_FILE_LINES, max_size=25),
    ends=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    bom=st.booleans(),
    agent=st.sampled_from(["ExampleBot", "OtherBot", "NoSuchBot", "*"]),
)
@settings(max_examples=examples(400), deadline=None)
def test_2_2_1_parsed_file_reads_as_the_line_by_line_reference(
    lines: list[bytes], ends: bytes, bom: bool, agent: str
) -> None:
    """RFC 9309 2.1, 2.2.1, 2.2.4: whatever its keys' case, typos, missing
    colons, comments, line ends, byte order mark or octets, a parsed file's
    rules (with their lines), sitemaps, Crawl-delay and warnings are those
    of the line-by-line reading, before and after its first check."""
    from scrapy_rfc9309.parser._agent import derive_product_token
    from scrapy_rfc9309.parser._lines import DEFAULT_MAX_SIZE, Warnings, prepare
    from scrapy_rfc9309.parser._matcher import AgentMatcher

    from .reference import reference_grouping

    body = (b"\xef\xbb\xbf" if bom else b"") + ends.join(lines)
    early = Warnings()
    prepared = prepare(body, DEFAULT_MAX_SIZE, early)[0]
    expected_warnings = Warnings()
    expected_warnings.items.extend(early.items)
    reference = reference_grouping(prepared, expected_warnings)
    token = derive_product_token(agent).lower() if agent != "*" else "*"
    expected_rules = reference.rules(reference.groups_for(token))
    fresh = RobotsTxt.parse(body)
    assert fresh.warnings == tuple(expected_warnings.items)
    checked = RobotsTxt.parse(body)
    checked.allowed(url="/a/b", agent=agent)
    for robots in (fresh, checked):
        assert robots.sitemaps == reference.sitemaps
        assert robots.tokens == frozenset(reference.by_token)
        assert robots._rules(robots._group_token(agent)) == expected_rules
        delays = [group.crawl_delay for group in reference.groups_for(token)]
        assert robots.crawl_delay(agent) == max(
            (delay for delay in delays if delay is not None), default=None
        )
        assert robots.warnings == tuple(expected_warnings.items)
        assert robots.allows_everything == (
            reference.pattern_count == 0
            and reference.usage_count == 0
            and all(group.crawl_delay is None for group in reference.groups)
        )
    # The first matcher, built from the groups as read: the reference's rules.
    first, expected = RobotsTxt.parse(body).matcher(agent), AgentMatcher(list(expected_rules))
    assert first.rule_count == expected.rule_count
    for path in ("/a", "/a/b", "/a/~", "/a/b.pdf", "/typo", "/caf%C3%A9", "/x", "/s"):
        assert first.decide(path) == expected.decide(path), path


@pytest.mark.parametrize("octet", [octet for octet in range(256) if octet != 10])
def test_2_2_2_scannable_octets_are_the_canonical_set(octet: int) -> None:
    """RFC 9309 2.2.2, RFC 3986 2.2-2.3: the octets a scanned rule may hold
    (tested by ``bytes.translate``) are exactly the canonical set: unreserved,
    sub-delims, ``:@/?[]``, and the ``*`` (and, with wildcards, ``$``) of a
    pattern."""
    from scrapy_rfc9309.parser._rule_forms import all_glob, all_plain

    plain = re.compile(rb"[^A-Za-z0-9\-._~!&'()+,;=:@/?\[\]\n*]")
    glob = re.compile(rb"[^A-Za-z0-9\-._~!$&'()*+,;=:@/?\[\]\n]")
    value = b"/a" + bytes([octet]) + b"b\n/c"
    assert all_glob(value) == (glob.search(value) is None)
    if octet != 42:  # a star inside a value is a wildcard, not a plain prefix
        assert all_plain(value) == (plain.search(value) is None)


def _reference_key(rules: list[tuple[bool, str]], path: str) -> tuple[int, bool, int] | None:
    """The plain scan, RFC 9309 2.2.2: the longest matching value wins, allow
    wins a tie, then the earliest line (lines numbered from 2)."""
    best: tuple[int, bool, int] | None = None
    for line, (allow, pattern) in enumerate(rules, 2):
        if pattern and _reference_match(pattern, path):
            candidate = (len(pattern), allow, -line)
            if best is None or candidate > best:
                best = candidate
    return best


# Pieces of one or two octets from a small alphabet: many ties, many rules
# that share a last piece, a one-octet pair or a two-octet piece.
_ONE_TWO_OCTET_RULE = st.builds(
    lambda parts, anchored: "/" + "*".join(parts) + anchored,
    st.lists(st.text(alphabet="abc/", min_size=1, max_size=2), min_size=2, max_size=4),
    st.sampled_from(["", "$"]),
)
_ONE_TWO_OCTET_PATH = st.text(alphabet="abc/$", max_size=16).map(lambda s: "/" + s)


@given(
    rules=st.lists(
        st.tuples(st.booleans(), _ONE_TWO_OCTET_RULE | st.sampled_from(["/*a$", "/*$", "*b"])),
        min_size=65,
        max_size=200,
    ),
    paths=st.lists(_ONE_TWO_OCTET_PATH, min_size=1, max_size=12),
)
@settings(max_examples=examples(150), deadline=None)
def test_2_2_2_indexed_rules_of_one_and_two_octet_pieces_decide_as_the_plain_scan(
    rules: list[tuple[bool, str]], paths: list[str]
) -> None:
    """Hostile files of rules such as ``/*a*b$`` and ``/*a*b*cd``, indexed in
    C (``_globs``) by their anchored last piece, two one-octet pieces in
    order or a two-octet piece: the deciding rule (its length, allow, line)
    is the plain scan's, ties and ``$`` anchors included (RFC 9309 2.2.2)."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._rulekey import key_allows, key_line

    read = [(allow, pattern.encode(), line) for line, (allow, pattern) in enumerate(rules, 2)]
    matcher = AgentMatcher(list(read))
    assert matcher._globs_index is not None  # the index in C, for the first checks
    for path in paths:
        expected = _reference_key(rules, path)
        key = matcher.decide(path)
        if expected is None:
            assert key is None, (rules, path)
        else:
            assert key is not None, (rules, path)
            length, allow, line = expected
            assert (key_allows(key), key_line(key)) == (allow, -line), (rules, path)
            assert len(rules[key_line(key) - 2][1]) == length, (rules, path)


def test_2_2_2_indexed_anchored_rules_and_one_octet_pairs_are_tried_only_where_they_can_match() -> (
    None
):
    """Many ``/*x*a$`` and ``/*x*y``: an anchored rule is a candidate only for
    the paths that end with its last piece, two one-octet pieces only for the
    paths that hold them in order (RFC 9309 2.2.2: verdicts unchanged)."""
    from scrapy_rfc9309.parser._globs import GlobIndex

    values = [f"/*{x}*{y}$" for x in "abcdefgh" for y in "abcdefgh"]
    values += [f"/*{x}*{y}" for x in "abcdefgh" for y in "abcdefgh"]
    rules = [(False, value.encode(), line) for line, value in enumerate(values, 2)]
    index = GlobIndex("\n".join(values), rules)
    tried = {values[i] for i in index._candidates("/hb")}
    # Anchored: only "/*?*b$" can match a path that ends with "b".
    assert {value for value in tried if value.endswith("$")} <= {f"/*{x}*b$" for x in "abcdefgh"}
    # Unanchored: only pairs in the path's order ("/", "h", "b": "h*b").
    assert {value for value in tried if not value.endswith("$")} == {"/*h*b"}
    assert index.decide("/hb") is not None
    assert index.decide("/bh") is not None  # "/*b*h", "/*b*h$"
    assert index.decide("/c") is None


def test_2_2_2_candidates_of_one_specificity_are_tried_in_file_order() -> None:
    """Of rules equally specific, the earliest line wins a tie (RFC 9309
    2.2.2, allow apart); the first checks' index tries them in file order
    whatever key each is under, so once one matches, the later ones lose
    the tie without being matched (rules of pieces that every 3 octets of
    which thousands share, keyed again under 8 strings, tried 12,000
    rules a check where file order tries 6,500)."""
    from scrapy_rfc9309.parser._matcher import AgentMatcher

    rules = [(False, f"/*{key}*{n:03d}".encode(), n) for n in range(2, 400) for key in ("aa", "bb")]
    rules += [(False, f"/*{n:03d}*zz".encode(), 1000 + n) for n in range(400)]
    index = AgentMatcher(rules)._globs_index
    assert index is not None
    found = index._candidates("/aa/bb/zz/123/456")
    order = [(-index._lengths[rule], rule) for rule in found]
    assert len(found) > 10 and order == sorted(order)
