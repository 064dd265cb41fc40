"""Rules sorted by kind while a matcher compiles them, and its disallow shortcut.

Pure, no Scrapy import. :class:`RuleTables` reads a group's rules once
(RFC 9309 2.2.2: an empty pattern matches nothing) into prefix tables (plain
prefixes, prefixes with a final ``*``, ``$``-anchored paths), wildcard rules
compiled now and canonical ones compiled when first tried (``_wildcards``);
:func:`disallow_shortcut` finds in them what lets a check allow most paths
with one C-level test. Compiling only: no check reads this module.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._rule_forms import GLOB_CANONICAL, PLAIN_CANONICAL, Rule, names_a_host, rule_pattern
from ._rulekey import ALLOW_BIT as _ALLOW_BIT
from ._rulekey import LINE_BITS as _LINE_BITS
from ._rulekey import LINE_MAX as _LINE_MAX
from ._rulekey import OFFSET_BITS as _LOW_BITS
from ._rulekey import RuleKey, pack
from ._wildcards import Lazy, Wildcard, compile_lazy, compile_pattern

__all__ = ["RuleTables", "disallow_shortcut"]

# A disallow shortcut keeps at most this many literal prefixes, and this many
# needles (the longest piece of a rule that starts with a wildcard).
_DENY_LIMIT = 64
_NEEDLE_LIMIT = 32

_Key = RuleKey


class RuleTables:
    """Rules sorted by kind while compiling: prefix tables and wildcards."""

    __slots__ = ("count", "exact", "lazy", "plain", "starred", "wildcards")

    def __init__(self) -> None:
        self.plain: dict[str, _Key] = {}
        self.starred: dict[str, _Key] = {}
        self.exact: dict[str, _Key] = {}
        self.wildcards: list[Wildcard] = []
        self.lazy: list[Lazy] = []
        self.count = 0

    def add(self, rules: Iterable[Rule]) -> int:
        """Add ``rules``; return how many were read."""
        plain, starred, exact = self.plain, self.starred, self.exact
        simple, glob = PLAIN_CANONICAL.fullmatch, GLOB_CANONICAL.fullmatch
        read = simple_count = lazy_count = 0
        lazy_append, new_tuple = self.lazy.append, tuple.__new__
        for allow, raw, line in rules:
            read += 1
            if not raw:
                continue  # RFC 9309 2.2.2: an empty pattern matches nothing
            if simple(raw):  # most rules: "/private/", already canonical
                simple_count += 1
                value = raw.decode("ascii")
                key = ((len(value) << 1 | allow) << _LINE_BITS | (_LINE_MAX - line)) << _LOW_BITS
                known = plain.get(value)
                if known is None or key > known:
                    plain[value] = key
                continue
            if glob(raw) and 0 <= raw.rfind(b"*") < len(raw) - 1 - raw.endswith(b"$"):
                # Canonical, with a literal piece after its last star: its
                # specificity is its length; split it only when tried.
                lazy_count += 1
                key = ((len(raw) << 1 | allow) << _LINE_BITS | (_LINE_MAX - line)) << _LOW_BITS
                lazy_append(new_tuple(Lazy, (key, raw)))  # Lazy(key, raw), built in C
                continue
            value = rule_pattern(raw)
            if names_a_host(raw, value):
                continue
            self.count += 1
            prefix, pieces, anchored, specificity = compile_pattern(value)
            key = pack(specificity, allow, line)
            if "*" not in value:
                table = exact if anchored else plain
            elif not pieces and not anchored and specificity == len(prefix) + 1:
                table = starred  # "/private*": a prefix, one octet more specific
            else:
                needle = max(pieces, key=len, default="")
                self.wildcards.append(Wildcard(key, prefix, pieces, anchored, needle))
                continue
            known = table.get(prefix)
            if known is None or key > known:
                table[prefix] = key
        self.count += simple_count + lazy_count
        return read


def _allows(key: _Key) -> int:
    return (key >> _ALLOW_BIT) & 1


def disallow_shortcut(tables: RuleTables) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """The literal prefixes of the disallow rules in ``tables``, and the
    longest piece of those whose prefix is ``/`` or empty (``/*?``): any
    path such a rule matches contains it. ``None`` when there are many, or
    when a rule would match every path (``/``, ``/*$``)."""
    prefixes = {
        pattern
        for table in (tables.plain, tables.starred, tables.exact)
        for pattern, key in table.items()
        if not _allows(key)
    }
    wildcards = [rule for rule in tables.wildcards if not _allows(rule.key)]
    wildcards += [compile_lazy(rule) for rule in tables.lazy if not _allows(rule.key)]
    needles = set()
    for rule in wildcards:
        if len(rule.prefix) > 1:
            prefixes.add(rule.prefix)
        elif rule.needle:
            needles.add(rule.needle)
        else:
            return None, ()
    if len(prefixes) > _DENY_LIMIT or len(needles) > _NEEDLE_LIMIT:
        return None, ()
    if "/" in prefixes or "" in prefixes:
        return None, ()
    return tuple(sorted(prefixes)), tuple(sorted(needles))
