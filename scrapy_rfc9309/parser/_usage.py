"""Usage preferences: the vocabulary of what content may be used for (AI training,
search, ...), and the preferences stated. Pure.

No Scrapy import. Reads the signals sites publish next to robots.txt rules,
as the versions in :data:`SPEC_VERSIONS` say (the one place to change when
they move):

* IETF AIPREF: ``Content-Usage: train-ai=n`` lines in robots.txt groups
  (attach draft: ``rule =/ content-usage``), path-scoped when the value starts
  with ``/`` (``Content-Usage: /ai-ok/ train-ai=y``), and the ``Content-Usage``
  HTTP response header. The value is an RFC 9651 Dictionary, parsed by
  ``http_sf``: of duplicated keys the last applies, a value other than the
  Token ``y`` or ``n`` leaves the preference unknown, parameters are ignored,
  and a value that does not parse leaves every preference unknown. The
  vocabulary (draft -08) has three categories, ``train-ai``, ``ai-use`` and
  ``search``; "no term nests within another", unknown labels are ignored, and
  "Search now overrides any usage that falls into other categories, including
  AI Training and AI Use": a declared ``search`` is governed by ``search``
  alone (:meth:`Usage.refusal`);
* Cloudflare's Content Signals Policy: ``Content-Signal: search=yes,
  ai-train=no`` lines in robots.txt groups and the ``Content-Signal`` response
  header, read with its own values ``yes`` / ``no`` (not an RFC 9651 parse;
  any other value, ``ai-train=disallow``, states nothing); ``ai-train`` is
  ``train-ai``, ``search`` is ``search``, ``ai-input`` is ``ai-use``; its
  ``use`` key (``immediate``, ``reference``, ``full``) is read and reported
  (:data:`USE_LEVELS`), never enforced;
* TDMRep (W3C community group final report): ``tdm-reservation: 1`` (header,
  ``<meta name="tdm-reservation">``, or a ``/.well-known/tdmrep.json`` entry)
  reserves text and data mining rights, read as :data:`TDM_CATEGORIES`.

Every name the signals use maps to a category in ONE table, :data:`VOCABULARY`.
Path-scoped robots.txt lines match as Allow / Disallow do (RFC 9309 2.2.2):
per category, the longest matching path decides; a line without a path
matches every path and is the least specific; among equally long matches
``n`` wins.

This module holds the vocabulary, the versions and the types (:class:`Preference`,
:class:`Usage`); a signal's value is read in ``_usage_values``, robots.txt's
usage lines in ``_usage_index``, and a response's headers and tags in
``_response_usage``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = [
    "CATEGORIES",
    "NO_PREFERENCES",
    "PARENTS",
    "PURPOSE_ALIASES",
    "RETIRED_PURPOSES",
    "SPEC_VERSIONS",
    "TDM_CATEGORIES",
    "USE_KEY",
    "USE_LEVELS",
    "VALUES",
    "VOCABULARY",
    "Preference",
    "Spec",
    "Usage",
    "needs_tdmrep",
]


class Spec(NamedTuple):
    """One specification the usage signals are read as: its name, the exact
    version followed, and where it is published."""

    name: str
    version: str
    url: str


#: THE versions followed. Drafts move: change them here (and the table of
#: docs/usage.md, which a test holds to this one).
SPEC_VERSIONS: tuple[Spec, ...] = (
    Spec(
        "AIPREF vocabulary",
        "draft-ietf-aipref-vocab-08",
        "https://datatracker.ietf.org/doc/draft-ietf-aipref-vocab/08/",
    ),
    Spec(
        "AIPREF attachment (robots.txt, HTTP header)",
        "draft-ietf-aipref-attach-05",
        "https://datatracker.ietf.org/doc/draft-ietf-aipref-attach/05/",
    ),
    Spec(
        "TDM Reservation Protocol (TDMRep)",
        "TDMRep Final Community Group Report",
        "https://www.w3.org/community/reports/tdmrep/",
    ),
    Spec(
        "Cloudflare Content Signals",
        "Content Signals Policy, with the use key and the Content-Signal header (2026-11)",
        "https://contentsignals.org/",
    ),
    # Not usage signals, but texts followed beside them: the Robots-Tag header
    # (``_page_directives``) and the tags lint names known but unsupported (``_lines``).
    Spec(
        "Robots-Tag header (page-level directives)",
        "draft-illyes-repext-03",
        "https://datatracker.ietf.org/doc/draft-illyes-repext/03/",
    ),
    Spec(
        "Google's robots.txt parser (known but unsupported tags, for --lint)",
        "google/robotstxt, robots.cc of 2026-02-19",
        "https://github.com/google/robotstxt",
    ),
)

#: The purposes a crawl may declare (``ROBOTSTXT_PURPOSES``): the AIPREF
#: vocabulary's categories (draft-ietf-aipref-vocab-08: AI Training, AI Use, Search).
CATEGORIES = frozenset({"train-ai", "ai-use", "search"})
#: Names earlier vocabulary drafts (or this package) had, and what replaced them.
#: Declared purposes read as another category, with a WARNING: ``ai-input``
#: (Content-Signal's key, and this package's purpose before AIPREF vocab -08
#: named the category) is declared as ``ai-use``, the category it maps to.
PURPOSE_ALIASES: dict[str, str] = {"ai-input": "ai-use"}
RETIRED_PURPOSES: dict[str, str] = {
    "train-genai": "use train-ai (the vocabulary no longer has train-genai)",
    "bots": "declare the specific purposes instead: train-ai, search "
    "(the vocabulary no longer has bots)",
}
#: Kept for callers of earlier versions: no category nests in another
#: (AIPREF vocab: "no term nests within another"), so none has a parent.
PARENTS: dict[str, str | None] = dict.fromkeys(sorted(CATEGORIES))

#: THE mapping table: (signal, name as written) -> category. Drafts move: edit here.
VOCABULARY: dict[tuple[str, str], str] = {
    # IETF AIPREF vocabulary (Content-Usage line and header)
    ("content-usage", "train-ai"): "train-ai",
    ("content-usage", "ai-use"): "ai-use",
    ("content-usage", "search"): "search",
    # Cloudflare Content Signals Policy (Content-Signal line and header)
    ("content-signal", "search"): "search",
    ("content-signal", "ai-train"): "train-ai",
    ("content-signal", "ai-input"): "ai-use",
}
#: Values each signal writes, and whether they allow (``content-usage``: the
#: RFC 9651 Tokens ``y`` and ``n``).
VALUES: dict[str, dict[str, bool]] = {
    "content-usage": {"y": True, "n": False},
    "content-signal": {"yes": True, "no": False},
}
#: Content Signals Policy: the ``use`` key's levels, narrowest first ("Interact,
#: but store and reuse nothing." / "Index, excerpt, and link back." / "Summarize
#: and reproduce."). Read and reported (a :class:`Preference` of category
#: :data:`USE_KEY` with its ``level``), never enforced: the policy maps no level
#: to a category or to a purpose a crawler declares.
USE_LEVELS = ("immediate", "reference", "full")
USE_KEY = "use"
#: TDMRep: ``tdm-reservation: 1`` refuses text and data mining, read as these categories.
TDM_CATEGORIES = ("train-ai", "ai-use")


def needs_tdmrep(purposes: Iterable[str]) -> bool:
    """Whether a TDMRep reservation can refuse one of ``purposes``."""
    return any(purpose in TDM_CATEGORIES for purpose in purposes)


@dataclass(frozen=True, slots=True)
class Preference:
    """One stated preference: a category, ``y`` / ``n``, and where it was stated."""

    category: str
    allowed: bool
    #: ``robots.txt``, ``Content-Usage header``, ``tdm-reservation header``, ...
    source: str
    #: the robots.txt line number (``None`` for other sources)
    line: int | None = None
    #: the line or header as written
    rule: str = ""
    #: TDMRep's ``tdm-policy``: the URL of the rights holder's policy (``None``: none stated)
    policy: str | None = None
    #: Content-Signal's ``use`` level (:data:`USE_LEVELS`) of a :data:`USE_KEY`
    #: preference, which refuses nothing (``allowed`` is true); else ``None``
    level: str | None = None

    @property
    def value(self) -> str:
        if self.level is not None:
            return self.level
        return "y" if self.allowed else "n"

    def narrower(self, other: Preference) -> bool:
        """Whether this preference restricts more than ``other`` (of the same
        category): ``n`` before ``y``; of ``use`` levels, the narrowest."""
        return _rank(self) < _rank(other)

    def describe(self) -> str:
        where = f"{self.source} line {self.line}" if self.line is not None else self.source
        policy = f", policy {self.policy}" if self.policy else ""
        return f'{self.category}={self.value} ({where}: "{self.rule}"{policy})'


def _rank(preference: Preference) -> tuple[bool, int]:
    level = preference.level
    return preference.allowed, USE_LEVELS.index(level) if level in USE_LEVELS else 0


@dataclass(frozen=True, slots=True)
class Usage:
    """The preferences that apply to one URL, per category, and where each came from."""

    preferences: Mapping[str, Preference] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.preferences)

    def get(self, category: str) -> Preference | None:
        return self.preferences.get(category)

    def applicable(self, purpose: str) -> Preference | None:
        """The preference stated for ``purpose`` itself (no category nests in
        another: AIPREF vocab), else ``None``."""
        return self.preferences.get(purpose)

    def refusal(self, purposes: Iterable[str]) -> Preference | None:
        """The first preference that refuses one of ``purposes``, else ``None``.

        Each purpose is governed by its own category only: no term nests in
        another, and (draft-ietf-aipref-vocab-08) "Search now overrides any
        usage that falls into other categories, including AI Training and AI
        Use", so ``train-ai=n`` or ``ai-use=n`` never refuses ``search``.
        """
        for purpose in purposes:
            preference = self.preferences.get(purpose)
            if preference is not None and not preference.allowed:
                return preference
        return None

    def merged(self, other: Usage) -> Usage:
        """Preferences of two sources (robots.txt and a page, say): per category
        the most restrictive (``n``) wins."""
        if not other.preferences:
            return self
        if not self.preferences:
            return other
        combined = dict(self.preferences)
        for category, preference in other.preferences.items():
            mine = combined.get(category)
            if mine is None or preference.narrower(mine):
                combined[category] = preference
        return Usage(combined)

    def as_dict(self) -> dict[str, dict[str, object]]:
        found: dict[str, dict[str, object]] = {}
        for category, preference in sorted(self.preferences.items()):
            entry: dict[str, object] = {
                "value": preference.value,
                "source": preference.source,
                "line": preference.line,
                "rule": preference.rule,
            }
            if preference.policy is not None:
                entry["policy"] = preference.policy
            if preference.level is not None:
                entry["level"] = preference.level
            found[category] = entry
        return found


NO_PREFERENCES = Usage()
