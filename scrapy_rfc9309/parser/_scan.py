"""A few rules in canonical form scanned as written, for a matcher's first
checks (RFC 9309 2.2.2 and 2.2.3). Pure, no Scrapy import.

A site checked a few times never pays for an index: its rules are kept as
written (their texts, allow flags and lines) and each check tests every
rule's text with one ``str.startswith(tuple)`` first. A path that starts
with none (most crawled URLs) is then decided by the rules with a ``*`` or
a ``$`` alone; any other path tries every rule. Keys (``_rulekey``) are
made for matching rules only. The scan counts what its checks cost, and
its matcher compiles the rules once that reaches what compiling costs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._glob import matches_after
from ._rule_forms import Rule, wild_indexes
from ._rulekey import LINE_BITS as _LINE_BITS
from ._rulekey import LINE_MAX as _LINE_MAX
from ._rulekey import OFFSET_BITS as _LOW_BITS
from ._rulekey import RuleKey

__all__ = ["SCAN_CHECKS", "RuleScan"]

# A scan is compiled once its checks have tried SCAN_CHECKS times its rules
# in all, counting for each check that tried only the wildcards
# _SCAN_OVERHEAD more, and a sixteenth of the rules for the test in C (what
# such a check costs over a compiled one): eight checks that try every rule,
# as many more as cost the same, so a scan never costs much more than the
# compiling it spares (a rule tried costs about a tenth of compiling it).
SCAN_CHECKS = 8
_SCAN_OVERHEAD = 3
# Up to this many rules, those with a "*" or a "$" are found one by one;
# more, by searches in C over their joined values.
_ONE_BY_ONE = 64


class RuleScan:
    """Rules in canonical form kept as written, scanned for each check."""

    __slots__ = ("allows", "any", "budget", "globs", "lines", "texts", "wild")

    #: The rules' texts (none empty), in file order.
    texts: tuple[str, ...]
    #: Their ``allow`` flags; ``None`` when none is an allow rule (most groups).
    allows: tuple[bool, ...] | None
    lines: tuple[int, ...]
    #: Whether the rules have wildcards (else all plain prefixes).
    globs: bool
    #: The indexes (an octet each) of the rules with a ``*`` or a ``$``: the
    #: only ones a path that starts with no rule's text can match.
    wild: bytes
    #: What a path must start with for any rule but those to match: each
    #: text (a plain prefix's final ``*`` dropped).
    any: tuple[str, ...]
    #: What the checks may still spend, in rules tried, before the rules are
    #: compiled (see SCAN_CHECKS).
    budget: int

    def __init__(
        self, joined: bytes, rules: list[Rule], columns: list[tuple[Any, ...]], plain: bool
    ) -> None:
        """``rules`` in canonical form, their values ``joined`` by LF and
        their ``columns`` (allow flags, values, lines); ``plain``: all are
        plain prefixes (a final ``*`` allowed)."""
        text = joined.decode("ascii")
        texts = tuple(text.split("\n")) if rules else ()
        if "" in texts:  # empty rules match nothing (RFC 9309 2.2.2)
            kept = [(value, rule) for value, rule in zip(texts, rules, strict=True) if value]
            texts, rules = tuple(value for value, _ in kept), [rule for _, rule in kept]
            text = "\n".join(texts)
            joined = text.encode("ascii")
            columns = list(zip(*rules, strict=False))
        if rules:
            allows = columns[0]
            self.allows, self.lines = (allows if True in allows else None), columns[2]
        else:
            self.allows, self.lines = None, ()
        self.texts, self.globs = texts, not plain
        if plain:
            self.wild = b""
        elif len(texts) <= _ONE_BY_ONE:
            self.wild = bytes([i for i, value in enumerate(texts) if "*" in value or "$" in value])
        else:
            self.wild = bytes(wild_indexes(joined, len(texts)))
        self.budget = SCAN_CHECKS * len(texts)
        if plain and "*" in text:
            # "/private*" matches as "/private", one octet more specific.
            self.any = tuple(text.replace("*", "").split("\n"))
        else:
            # A wildcard rule's text is tested as a literal prefix: harmless,
            # as a path that starts with it is scanned whole.
            self.any = texts

    def decide(self, path: str) -> RuleKey | None:
        """The deciding rule for ``path`` (canonical form), charged to the
        budget; ``None`` if no rule matches."""
        texts = self.texts
        if path.startswith(self.any):  # one test in C: a rule may match
            self.budget -= len(texts)
            if self.globs:
                return self._scan_globs(path, range(len(texts)))
            return self._scan_plain(path)
        # The path starts with no rule's text: only those with a "*" or a
        # "$" can match.
        wild = self.wild
        self.budget -= len(wild) + len(texts) // 16 + _SCAN_OVERHEAD
        return self._scan_globs(path, wild) if wild else None

    def _scan_plain(self, path: str) -> RuleKey | None:
        """The longest plain prefix rule of ``path``."""
        texts = self.texts
        best = -1
        for index, prefix in enumerate(self.any):
            if path.startswith(prefix):
                best = max(best, self._key(index, len(texts[index])))
        return None if best < 0 else best

    def _scan_globs(self, path: str, indexes: Iterable[int]) -> RuleKey | None:
        """The most specific rule of ``path`` among the rules at ``indexes``
        (canonical, with wildcards)."""
        texts = self.texts
        best = -1
        for index in indexes:
            text = texts[index]
            star = text.find("*")
            if star < 0:  # a prefix, or a whole path when it ends with "$"
                if not (path == text[:-1] if text[-1] == "$" else path.startswith(text)):
                    continue
            elif not path.startswith(text[:star]) or not matches_after(text, star, path):
                continue
            key = self._key(index, len(text))
            if key > best:
                best = key
        return None if best < 0 else best

    def _key(self, index: int, specificity: int) -> RuleKey:
        """The key of rule ``index`` (see ``_rulekey``)."""
        allows = self.allows
        allow, line = (allows is not None and allows[index]), self.lines[index]
        return ((specificity << 1 | allow) << _LINE_BITS | (_LINE_MAX - line)) << _LOW_BITS

    def rules(self) -> list[Rule]:
        """The rules as read, to compile them."""
        texts = self.texts
        allows = self.allows or (False,) * len(texts)
        return list(zip(allows, map(str.encode, texts), self.lines, strict=True))  # in C
