"""``Verdicts``: ``check``, ``allowed`` and ``usage`` over compiled rules (RFC 9309 2.2.2).

The verdicts of a parsed file, shared by :class:`~._robotstxt.RobotsTxt` and
the compact form a cache keeps (:class:`~._compact.CompactRobots`): the
canonical path checked against the agent's compiled matcher, ``/robots.txt``
always allowed, and LENIENT(dot-segments) a path the server resolves to
another checked as that one too (:class:`ResolvedVerdict`). Pure Python, no
Scrapy import; a check's hot path.
"""

from __future__ import annotations

from collections.abc import Collection

from ._agent import agent_token
from ._dots import resolved_path
from ._encoding import CANONICAL_HTTP_URL, canonical_path, uncommon_path
from ._groups import WILDCARD_AGENT
from ._matcher import ALLOWED_BY_DEFAULT, AgentMatcher, Verdict
from ._rulekey import ALLOW_BIT as _ALLOW_BIT
from ._rulekey import key_allows, key_line
from ._usage import NO_PREFERENCES, Usage
from ._usage_index import UsageIndex

__all__ = ["AGENT_CACHE_SIZE", "ResolvedVerdict", "Verdicts", "kept_crawl_delay"]

_ROBOTS_PATH = "/robots.txt"
_canonical_url = CANONICAL_HTTP_URL.match
#: Distinct agent strings whose matcher a parsed file remembers (tokens
#: with groups are remembered however many there are).
AGENT_CACHE_SIZE = 64


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


def kept_crawl_delay(delays: dict[str, float], tokens: Collection[str], agent: str) -> float | None:
    """``agent``'s Crawl-delay from ``delays`` (:meth:`RobotsTxt.crawl_delays
    <._robotstxt.RobotsTxt.crawl_delays>`, kept once the groups go): its
    token's own; for a token with no group of its own (not in ``tokens``),
    ``*``'s (RFC 9309 2.2.1); a token with groups but no delay has none."""
    token = agent_token(agent)
    if token in delays:
        return delays[token]
    return None if token in tokens else delays.get(WILDCARD_AGENT)


class Verdicts:
    """``check`` and ``allowed`` over compiled rules (RFC 9309 2.2.2).

    Subclasses say where the rules and the text of their lines come from:
    :class:`~._robotstxt.RobotsTxt`, or the compact form a cache keeps (``_compact``).
    """

    __slots__ = ()
    _by_agent: dict[str, AgentMatcher]

    def matcher(self, agent: str) -> AgentMatcher:
        raise NotImplementedError

    def crawl_delay(self, agent: str) -> float | None:
        """The ``Crawl-delay`` that applies to ``agent``, in seconds; ``None`` if none."""
        raise NotImplementedError

    def has_crawl_delay(self) -> bool:
        """Whether any group has a valid ``Crawl-delay`` (most files: none, and
        no agent's needs looking up)."""
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
