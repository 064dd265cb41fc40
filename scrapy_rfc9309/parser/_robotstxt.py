"""``RobotsTxt``: a parsed robots.txt file and its verdicts (RFC 9309 section 2).

Pure Python, no Scrapy import, no I/O. Data flows one way:
bytes -> numbered lines (``_lines``) -> groups (``_groups``) -> a compiled
per-agent matcher (``_matcher``), built on first use and kept.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Collection

from ._agent import derive_product_token
from ._dots import resolved_path
from ._encoding import CANONICAL_HTTP_URL, canonical_path, uncommon_path
from ._groups import WILDCARD_AGENT, Group, Grouping, group_all, group_steps
from ._lines import DEFAULT_MAX_SIZE, Warnings, line_starts, line_text, prepare
from ._matcher import ALLOWED_BY_DEFAULT, ALLOWING_ALL, AgentMatcher, Rule, Verdict
from ._rulekey import ALLOW_BIT as _ALLOW_BIT
from ._rulekey import MAX_BODY_SIZE, key_allows, key_line
from ._steps import Steps
from ._tokenset import token_set
from ._usage import NO_PREFERENCES, Usage, UsageIndex, usage_index_of

__all__ = ["ResolvedVerdict", "RobotsTxt", "Verdict", "Verdicts", "agent_token"]

_URL_LIKE = re.compile(r"/|[A-Za-z][A-Za-z0-9+.-]*://")
_PLAIN_TOKEN = re.compile(r"[A-Za-z0-9_.*-]+\Z")
_ROBOTS_PATH = "/robots.txt"
_canonical_url = CANONICAL_HTTP_URL.match
#: Distinct agent strings whose matcher a parsed file remembers (tokens
#: with groups are remembered however many there are).
AGENT_CACHE_SIZE = 64
# Bodies longer than this are prepared in a step of their own.
_STEP_SIZE = 65_536


def _as_bytes(body: bytes | str) -> bytes:
    if isinstance(body, str):
        try:
            return body.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # lone surrogates that stand for no octet
            return body.encode("utf-8", "replace")
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    raise TypeError(f"robots.txt body must be bytes or str, not {type(body).__name__}")


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


def _checked(max_size: int) -> int:
    if not isinstance(max_size, int) or isinstance(max_size, bool):
        raise ValueError(f"max_size must be an int, got {max_size!r}")
    if not 0 <= max_size < MAX_BODY_SIZE:
        raise ValueError(f"max_size must be from 0 to {MAX_BODY_SIZE - 1}, got {max_size}")
    return max_size


def _may_resolve(url: str) -> bool:
    """Whether the path of ``url`` (absolute, or a path) may contain a dot
    segment or ``//`` (``%2e`` not decoded yet): a cheap test before the
    canonical path is computed again."""
    scheme = url.find("://")
    rest = url if scheme < 0 else url[scheme + 3 :]
    return "/." in rest or "//" in rest or "%2" in rest


class ResolvedVerdict(Verdict):
    """A denial reached on the path the server resolves the request's path to.

    LENIENT(dot-segments): ``/./private/a`` is served as ``/private/a``
    (RFC 3986 5.2.4; nginx merges slashes), so it is checked as both.
    ``matched_as`` is the resolved path the rule matched; ``sent`` the path
    as sent (canonical, ``%2e`` read as ``.``). A :class:`Verdict` otherwise
    (a 3-tuple, equal to the plain verdict).
    """

    matched_as: str
    sent: str

    @classmethod
    def of(cls, verdict: Verdict, matched_as: str, sent: str) -> ResolvedVerdict:
        made = cls(*verdict)
        made.matched_as = matched_as
        made.sent = sent
        return made

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, matched_as={self.matched_as!r})"


def _resolved_denial(matcher: AgentMatcher, path: str) -> tuple[int, str] | None:
    """The disallow rule that matches the path ``path`` resolves to, and that path.

    LENIENT(dot-segments): called only for a path containing ``/.`` or
    ``//`` that the as-sent check allows (a canonical path has ``%2e``
    read as ``.`` already).
    """
    resolved = resolved_path(path)
    if resolved is None or resolved == _ROBOTS_PATH:
        return None
    rule = matcher.decide(resolved)
    if rule is None or (rule >> _ALLOW_BIT) & 1:
        return None
    return rule, resolved


def _denying_rule(matcher: AgentMatcher, path: str) -> int | None:
    """The disallow rule that decides the canonical ``path`` (RFC 9309
    2.2.2), or denies the path it resolves to (LENIENT(dot-segments));
    ``None`` when allowed."""
    if path == _ROBOTS_PATH:
        return None
    rule = matcher.decide(path)
    if rule is None or (rule >> _ALLOW_BIT) & 1:
        if "/." in path or "//" in path:  # LENIENT(dot-segments)
            resolved = _resolved_denial(matcher, path)
            return None if resolved is None else resolved[0]
        return None
    return rule


class Verdicts:
    """``check`` and ``allowed`` over compiled rules (RFC 9309 2.2.2).

    Subclasses say where the rules and the text of their lines come from:
    :class:`RobotsTxt`, or the compact form a cache keeps (``_compact``).
    """

    __slots__ = ()
    _by_agent: dict[str, AgentMatcher]

    def matcher(self, agent: str) -> AgentMatcher:
        raise NotImplementedError

    def crawl_delay(self, agent: str) -> float | None:
        """The ``Crawl-delay`` that applies to ``agent``, in seconds; ``None`` if none."""
        raise NotImplementedError

    def _remember(self, agent: str, matcher: AgentMatcher) -> None:
        """Remember the matcher of up to :data:`AGENT_CACHE_SIZE` agent
        strings, so a whole User-Agent value is reduced once."""
        if len(self._by_agent) < AGENT_CACHE_SIZE:
            self._by_agent[agent] = matcher

    def _body(self) -> bytes:
        raise NotImplementedError

    def _decide(self, url: str, agent: str) -> int | None:
        if not isinstance(url, str):
            raise TypeError(f"url must be a str, not {type(url).__name__}")
        path = canonical_path(url)
        matcher = self._by_agent.get(agent)
        if matcher is None:
            matcher = self.matcher(agent)
        if path == _ROBOTS_PATH:
            return None
        return matcher.decide(path)

    def _denied(self, url: str, agent: str) -> int | None:
        """The deciding rule if it may disallow ``url``, else ``None``: a path
        that starts with no disallow rule's literal prefix is allowed without
        a full check (RFC 9309 2.2.2: only a matching disallow rule denies)."""
        try:
            match = _canonical_url(url)  # canonical_path, inline: the common case
        except TypeError:
            raise TypeError(f"url must be a str, not {type(url).__name__}") from None
        path = uncommon_path(url) if match is None else match[1]
        matcher = self._by_agent.get(agent)
        if matcher is None:
            matcher = self.matcher(agent)
        # Whether the path starts with no disallow prefix and holds none of
        # the needles (a compiled matcher's shortcut), or starts with no rule
        # of a scan of a few plain rules: then no rule denies it.
        heads = matcher.heads
        if heads is not None:
            bucket = heads.get(path[1:2])
            unmatched = bucket is None or not path.startswith(bucket)
            if unmatched:
                for needle in matcher.needles:
                    if needle in path:
                        unmatched = False
                        break
        else:
            prefixes = matcher.plain_prefixes
            unmatched = prefixes is not None and not path.startswith(prefixes)
        # LENIENT(dot-segments): "/." and "//" take a full check.
        if unmatched and "//" not in path and ("." not in path or "/." not in path):
            return None
        return _denying_rule(matcher, path)

    def check(self, url: str, agent: str) -> Verdict:
        """Decide whether ``agent`` may fetch ``url``, and by which line.

        ``url`` is an absolute URL or a path with an optional query; ``agent``
        a product token or a whole User-Agent value (its leading product name
        is used). RFC 9309 2.2.2: the most specific rule wins, allow on a tie;
        ``/robots.txt`` is always allowed. LENIENT(dot-segments): a path
        that a server resolves to another (``/./private/a``, ``//private``,
        ``/x/../private``, RFC 3986 5.2.4) is allowed only if that one is
        too; such a denial is a :class:`ResolvedVerdict`.
        """
        rule = self._decide(url, agent)
        if rule is None or (rule >> _ALLOW_BIT) & 1:
            denied = self._denied_as_resolved(url, agent)
            if denied is not None:
                return denied
        return self._verdict(rule)

    def _denied_as_resolved(self, url: str, agent: str) -> ResolvedVerdict | None:
        """LENIENT(dot-segments): the denial of the path the server resolves
        ``url``'s path to, when that is another path and the check of the path
        as sent did not deny it."""
        path = canonical_path(url)
        if "/." not in path and "//" not in path:
            return None
        denied = _resolved_denial(self.matcher(agent), path)
        if denied is None:
            return None
        rule, resolved = denied
        return ResolvedVerdict.of(self._verdict(rule), resolved, path)

    def denial(self, url: str, agent: str) -> Verdict | None:
        """The verdict if ``agent`` may not fetch ``url``, else ``None``.

        One check, and no verdict built when allowed: for callers (such as
        the middleware) that need the deciding line only to explain a drop.
        """
        rule = self._denied(url, agent)
        if rule is None:
            return None
        if _may_resolve(url) and _may_resolve(canonical_path(url)):
            # Denied as sent, or only as resolved (LENIENT(dot-segments)): say which.
            as_sent = self._decide(url, agent)
            if as_sent is None or (as_sent >> _ALLOW_BIT) & 1:
                denied = self._denied_as_resolved(url, agent)
                if denied is not None:
                    return denied
        return self._verdict(rule)

    def _line_text(self, line: int) -> str:
        raise NotImplementedError

    def _verdict(self, rule: int | None) -> Verdict:
        if rule is None:
            return ALLOWED_BY_DEFAULT
        line = key_line(rule)
        return Verdict(key_allows(rule), line, self._line_text(line))

    def allowed(self, url: str, agent: str) -> bool:
        """``check(url=url, agent=agent).allowed``."""
        return self._denied(url, agent) is None

    def usage_index(self) -> UsageIndex | None:
        """The file's usage lines by agent token; ``None`` when it has none."""
        raise NotImplementedError

    def usage(self, url: str, agent: str) -> Usage:
        """The usage preferences (``Content-Usage``, ``Content-Signal``) for ``url``.

        Groups and agents as for rules (RFC 9309 2.2.1); path-scoped lines
        match as Allow / Disallow do (longest match; ``n`` wins a tie). Each
        :class:`~._usage.Preference` names its line.
        """
        if not isinstance(url, str):
            raise TypeError(f"url must be a str, not {type(url).__name__}")
        index = self.usage_index()
        if index is None:
            return NO_PREFERENCES
        token = agent_token(agent)
        if not index.records(token):
            token = token if token in self._usage_tokens() else WILDCARD_AGENT
        return index.usage(url, token)

    def _usage_tokens(self) -> Collection[str]:
        raise NotImplementedError


class RobotsTxt(Verdicts):
    """A parsed robots.txt file. Build it with :meth:`parse`.

    >>> robots = RobotsTxt.parse(b"User-agent: *\\nDisallow: /private")
    >>> robots.allowed(url="https://example.com/private/x", agent="ExampleBot")
    False
    >>> robots.check(url="/private/x", agent="ExampleBot")
    Verdict(allowed=False, line=2, rule='Disallow: /private')
    """

    __slots__ = (
        "_allows_everything",
        "_body_",
        "_by_agent",
        "_delays",
        "_early_warnings",
        "_grouping",
        "_line_starts",
        "_sitemaps",
        "_tokens",
        "_usage",
        "_usage_count",
        "_usage_lines",
        "_warnings",
        "truncated",
    )

    def __init__(
        self,
        grouping: Grouping,
        warnings: tuple[tuple[int, str], ...],
        truncated: bool,
        early_warnings: int = 0,
    ):
        self._grouping: Grouping | None = grouping
        self._body_ = grouping.body
        # The token index (by token, its groups); only the tokens once the
        # groups are dropped, unless usage lines need the index again.
        self._tokens: Collection[str] = grouping.by_token
        # kept when the groups go: a cache keeps them with the compiled rules
        self._sitemaps = grouping.sitemaps
        self._allows_everything: bool | None = None
        #: each token's Crawl-delay, read before the groups go (see crawl_delays)
        self._delays: dict[str, float] | None = None
        self._line_starts: array[int] | None = None
        # One dict for both: the matcher of each token compiled (kept
        # whatever their number), and of up to AGENT_CACHE_SIZE agent strings.
        # A key is never both with two meanings: an agent string equal to a
        # token with groups is reduced to that token.
        self._by_agent: dict[str, AgentMatcher] = {}
        self._usage: UsageIndex | None = None
        self._usage_count = grouping.usage_count
        self._usage_lines: list[list[int] | None] | None = None
        self._warnings: tuple[tuple[int, str], ...] | None = warnings
        # The warnings about the body as received (size limit, BOM, NUL,
        # encoding), which the prepared body alone cannot tell again.
        self._early_warnings = warnings[:early_warnings]
        #: Whether the body was longer than ``max_size`` and cut (RFC 9309 2.5).
        self.truncated = truncated

    @property
    def warnings(self) -> tuple[tuple[int, str], ...]:
        """Lint findings, ``(line, message)``: each lenient reading and each ignored line."""
        warnings = self._warnings
        if warnings is None:
            self._regroup()
            warnings = self._warnings
            assert warnings is not None
        return warnings

    def _groups(self) -> Grouping:
        """The groups; read again from the body once dropped (see :meth:`_compiled`)."""
        grouping = self._grouping
        if grouping is None:
            grouping = self._regroup()
        return grouping

    def _regroup(self) -> Grouping:
        collector = Warnings()
        collector.items.extend(self._early_warnings)
        grouping = self._grouping = group_all(self._body_, collector)
        self._warnings = tuple(collector.items)
        return grouping

    @classmethod
    def parse(cls, body: bytes | str, max_size: int = DEFAULT_MAX_SIZE) -> RobotsTxt:
        """Parse the first ``max_size`` octets of ``body``; never raises on content.

        RFC 9309 2.5: ``max_size`` should be at least 500 KiB (512,000 bytes).
        """
        collector = Warnings()
        if (
            type(body) is bytes
            and type(max_size) is int
            and len(body) <= max_size < MAX_BODY_SIZE
            and body.isascii()
            and b"\r" not in body
            and b"\x00" not in body
        ):
            # Most files: nothing for ``prepare`` to cut, drop, turn or say.
            return cls(group_all(body, collector), tuple(collector.items), False)
        prepared, truncated = prepare(_as_bytes(body), _checked(max_size), collector)
        early = len(collector.items)
        grouping = group_all(prepared, collector)
        return cls(grouping, tuple(collector.items), truncated, early)

    @classmethod
    def parse_in_steps(
        cls, body: bytes | str, max_size: int = DEFAULT_MAX_SIZE, agent: str | None = None
    ) -> Steps[RobotsTxt]:
        """:meth:`parse` as steps (see ``_steps``), compiling ``agent``'s rules too.

        Lets a caller with an event loop parse a 500 KiB file in slices of a
        few milliseconds each.
        """
        collector = Warnings()
        prepared, truncated = prepare(_as_bytes(body), _checked(max_size), collector)
        early = len(collector.items)
        if len(prepared) > _STEP_SIZE:
            yield
        grouping = yield from group_steps(prepared, collector)
        robots = cls(grouping, tuple(collector.items), truncated, early)
        if agent is not None:
            yield from robots._compile_steps(agent)
        return robots

    @property
    def body(self) -> bytes:
        """The bytes parsed: cut at ``max_size``, without BOM, line ends as LF."""
        return self._body_

    def _body(self) -> bytes:
        return self._body_

    def _line_text(self, line: int) -> str:
        starts = self._line_starts
        if starts is None:  # built on the first verdict that names a line
            starts = self._line_starts = line_starts(self._body_)
        return line_text(self._body_, starts[line - 1])

    def compiled_matchers(self) -> dict[str, AgentMatcher]:
        """The matchers compiled so far, by product token (``*``: the
        fallback shared by every token without a group of its own)."""
        tokens = self._tokens
        return {
            key: matcher
            for key, matcher in self._by_agent.items()
            if key == WILDCARD_AGENT or key in tokens
        }

    @property
    def tokens(self) -> frozenset[str]:
        """The product tokens that have groups of their own (lower case)."""
        return frozenset(self._tokens)

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """Sitemap URLs in file order (RFC 9309 2.2.4: other records)."""
        return self._sitemaps

    @property
    def allows_everything(self) -> bool:
        """No rule with a pattern and no Crawl-delay in any group: nothing to obey."""
        allows = self._allows_everything
        if allows is None:
            allows = self._allows_everything = self._groups().allows_everything()
        return allows

    def usage_index(self) -> UsageIndex | None:
        if self._usage_count == 0:
            return None
        usage = self._usage
        if usage is None:
            grouping = self._grouping
            if grouping is not None:
                usage_lines = [group.usage_lines for group in grouping.groups]
                usage = usage_index_of(grouping.body, usage_lines, grouping.by_token)
            else:
                # The groups are gone (a matcher was compiled), their usage
                # line numbers kept: the lines are read from the body again.
                assert self._usage_lines is not None
                tokens = self._tokens
                assert isinstance(tokens, dict)  # kept whole when the file has usage lines
                usage = usage_index_of(self._body_, self._usage_lines, tokens)
            self._usage, self._usage_lines = usage, None
        return usage

    def _usage_tokens(self) -> Collection[str]:
        return self._tokens  # a look-up, not a copy of every token per call

    def groups_for(self, agent: str) -> list[Group]:
        """The groups that govern ``agent`` (RFC 9309 2.2.1), in file order."""
        return self._groups().groups_for(agent_token(agent))

    def matcher(self, agent: str) -> AgentMatcher:
        """The compiled rules for ``agent``; built once per token with groups
        (RFC 9309 2.2.1), every other token sharing the ``*`` group's."""
        matcher = self._by_agent.get(agent)
        if matcher is None:
            token = self._group_token(agent)
            matcher = self._by_agent.get(token)
            if matcher is None:
                matcher = self._shared_matcher()
                if matcher is None:
                    matcher = AgentMatcher(self._rules(token))
                matcher = self._compiled(token, matcher)
            self._remember(agent, matcher)
        return matcher

    def _remember(self, agent: str, matcher: AgentMatcher) -> None:
        # The compiled tokens share the map (at most one per token, and "*"):
        # agent strings keep AGENT_CACHE_SIZE places beyond them.
        if len(self._by_agent) < AGENT_CACHE_SIZE + len(self._tokens) + 1:
            self._by_agent[agent] = matcher

    def _compile_steps(self, agent: str) -> Steps[AgentMatcher]:
        token = self._group_token(agent)
        matcher = self._by_agent.get(token)
        if matcher is None:
            matcher = self._shared_matcher()
            if matcher is None:
                matcher = yield from AgentMatcher.compile_steps(self._rules(token))
            self._compiled(token, matcher)
        self._remember(agent, matcher)
        return matcher

    def _group_token(self, agent: str) -> str:
        """The token whose groups govern ``agent``: its own, or ``*``."""
        token = agent_token(agent)
        return token if token in self._tokens else WILDCARD_AGENT

    def _shared_matcher(self) -> AgentMatcher | None:
        """:data:`~._matcher.ALLOWING_ALL` when no rule of the file has a
        pattern (RFC 9309 2.2.2: nothing to compile, for any agent); else
        ``None``: the agent's rules are compiled."""
        return None if self._groups().pattern_count else ALLOWING_ALL

    def _rules(self, token: str) -> list[Rule]:
        return self._groups().rules_for(token)

    def _compiled(self, token: str, matcher: AgentMatcher) -> AgentMatcher:
        # The groups, the rules read while parsing, the sitemaps and the
        # warnings served the first agent; what a later call needs is read
        # from the body again, so a parsed file keeps what deciding needs.
        self.allows_everything  # noqa: B018 (computed before the groups go)
        self.crawl_delays()
        self._drop_groups()
        self._by_agent[token] = matcher
        return matcher

    def _drop_groups(self) -> None:
        grouping = self._grouping
        if grouping is not None and self._usage_count and self._usage is None:
            # One reference per group: usage lines are read again without
            # grouping the whole body again.
            self._usage_lines = [group.usage_lines for group in grouping.groups]
        self._grouping = None
        if not self._usage_count:  # the groups of each token are read again when needed
            self._tokens = token_set(self._tokens)
        if self._warnings is not None and len(self._warnings) > len(self._early_warnings):
            self._warnings = None

    def crawl_delays(self) -> dict[str, float]:
        """The :meth:`crawl_delay` of each product token with groups of its own
        (and ``*``) that has one; empty when no group has a Crawl-delay (most
        files). What a cache keeps of the file's Crawl-delay lines: a token
        with groups of its own that is not here has none (no ``*`` fallback)."""
        delays = self._delays
        if delays is None:
            grouping = self._groups()
            delays = {}
            if any(group.crawl_delay is not None for group in grouping.groups):
                for token in (*grouping.by_token, WILDCARD_AGENT):
                    delay = _longest(grouping.groups_for(token))
                    if delay is not None:
                        delays[token] = delay
            self._delays = delays
        return delays

    def crawl_delay(self, agent: str) -> float | None:
        """The longest valid ``Crawl-delay`` of ``agent``'s groups, in seconds.

        Not part of RFC 9309; widely used. Groups as for rules (RFC 9309 2.2.1,
        2.2.4): user-agent lines separated only by Crawl-delay lines share one
        group, and several groups for one agent merge; of the Crawl-delay lines
        that apply the longest is used, so an agent never waits less than a line
        addressed to it asks (the linter says where merging changed the value).
        ``None`` when there is none.
        """
        return _longest(self.groups_for(agent))

    def __repr__(self) -> str:
        counts = (len(self._groups().groups), len(self.sitemaps), len(self.warnings))
        return "<RobotsTxt groups={} sitemaps={} warnings={}>".format(*counts)


def _longest(groups: list[Group]) -> float | None:
    """The longest Crawl-delay of ``groups``; ``None`` when none has one."""
    return max((g.crawl_delay for g in groups if g.crawl_delay is not None), default=None)
