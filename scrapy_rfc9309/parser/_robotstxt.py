"""``RobotsTxt``: a parsed robots.txt file and its verdicts (RFC 9309 section 2).

Pure Python, no Scrapy import, no I/O. Data flows one way:
bytes -> numbered lines (``_lines``) -> groups (``_groups``) -> a compiled
per-agent matcher (``_matcher``), built on first use and kept. This module
parses and keeps what deciding needs (the matchers, Crawl-delay, sitemaps,
usage lines); the checks themselves are :class:`~._verdicts.Verdicts`'.
"""

from __future__ import annotations

from array import array
from collections.abc import Collection

from ._agent import agent_token
from ._groups import WILDCARD_AGENT, Group, Grouping, group_all, group_steps
from ._lines import DEFAULT_MAX_SIZE, Warnings, line_starts, line_text, prepare
from ._matcher import ALLOWING_ALL, AgentMatcher, Rule
from ._rulekey import MAX_BODY_SIZE
from ._steps import Steps
from ._tokenset import token_set
from ._usage_index import UsageIndex, usage_index_of
from ._verdicts import AGENT_CACHE_SIZE, Verdicts, kept_crawl_delay

__all__ = ["RobotsTxt"]

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


def _checked(max_size: int) -> int:
    if not isinstance(max_size, int) or isinstance(max_size, bool):
        raise ValueError(f"max_size must be an int, got {max_size!r}")
    if not 0 <= max_size < MAX_BODY_SIZE:
        raise ValueError(f"max_size must be from 0 to {MAX_BODY_SIZE - 1}, got {max_size}")
    return max_size


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

    def has_crawl_delay(self) -> bool:
        return bool(self.crawl_delays())

    def crawl_delay(self, agent: str) -> float | None:
        """The longest valid ``Crawl-delay`` of ``agent``'s groups, in seconds.

        Not part of RFC 9309; widely used. Groups as for rules (RFC 9309 2.2.1,
        2.2.4): user-agent lines separated only by Crawl-delay lines share one
        group, and several groups for one agent merge; of the Crawl-delay lines
        that apply the longest is used, so an agent never waits less than a line
        addressed to it asks (the linter says where merging changed the value).
        ``None`` when there is none.

        Once a check has dropped the groups, read from :meth:`crawl_delays`
        (kept before they went), as a cached copy reads it: the body is not
        grouped again for each question.
        """
        delays = self._delays
        if delays is None or self._grouping is not None:
            return _longest(self.groups_for(agent))
        return kept_crawl_delay(delays, self._tokens, agent)

    def __repr__(self) -> str:
        counts = (len(self._groups().groups), len(self.sitemaps), len(self.warnings))
        return "<RobotsTxt groups={} sitemaps={} warnings={}>".format(*counts)


def _longest(groups: list[Group]) -> float | None:
    """The longest Crawl-delay of ``groups``; ``None`` when none has one."""
    return max((g.crawl_delay for g in groups if g.crawl_delay is not None), default=None)
