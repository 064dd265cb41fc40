"""The usage preferences a response states: its ``Content-Usage`` and
``Content-Signal`` headers, and TDMRep's ``tdm-reservation`` and ``tdm-policy``
(header or ``<meta>``). Pure.

The signals come as written from ``_usage_signals``; a header read only in
part refuses what it could state (:func:`unread_usage`, fail closed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ._usage import NO_PREFERENCES, TDM_CATEGORIES, USE_KEY, VOCABULARY, Preference, Usage
from ._usage_values import content_signal_use, parse_content_usage, read_content_usage

__all__ = [
    "HEADER_CATEGORIES",
    "MAX_POLICY_CHARS",
    "TDM_POLICY_SOURCES",
    "response_usage",
    "tdm_policy_value",
    "unread_usage",
    "with_tdm_policy",
]

#: TDMRep's ``tdm-policy`` sources of a response (``read_usage_signals``), the
#: meta first: "The values of `tdm-reservation` and `tdm-policy` found here
#: [HTML metadata] supercede previous values" (the header's).
TDM_POLICY_SOURCES = ('<meta name="tdm-policy">', "tdm-policy header")
#: Characters of a ``tdm-policy`` kept (as of a tdmrep.json rule's): a URL
MAX_POLICY_CHARS = 2000


def tdm_policy_value(value: str) -> str | None:
    """A ``tdm-policy`` header or meta value as kept: stripped, at most
    :data:`MAX_POLICY_CHARS`, control characters escaped (it is logged);
    ``None`` when empty."""
    text = value.strip()[:MAX_POLICY_CHARS]
    if not text:
        return None
    return text if text.isprintable() else repr(text)[1:-1]


def with_tdm_policy(usage: Usage, policy: str | None) -> Usage:
    """``usage`` with TDMRep's ``policy`` on each reservation (a refusal): it goes
    with ``tdm-reservation: 1`` only ("TDM rights are reserved. If a TDM Policy
    is set, TDM Agents MAY use it"; with ``0``, "TDM Agents SHOULD NOT process
    `tdm-policy`"). ``None``: ``usage`` unchanged."""
    preferences = usage.preferences
    if policy is None or all(p.allowed or p.policy == policy for p in preferences.values()):
        return usage
    return Usage(
        {
            category: p if p.allowed else replace(p, policy=policy)
            for category, p in preferences.items()
        }
    )


def response_usage(signals: Iterable[tuple[str, str]]) -> Usage:
    """The preferences a response states (see ``read_usage_signals``).

    ``Content-Usage`` field lines are combined into one value before parsing
    (RFC 9651 4.2), so the last of a key applies across lines too; a
    ``tdm-reservation`` of ``1`` refuses :data:`TDM_CATEGORIES`, ``0`` allows
    them; a ``tdm-policy`` (the meta's, else the header's; the first stated of
    each) goes with the reservations (:func:`with_tdm_policy`). Between the
    header and the TDMRep signals, the most restrictive wins.
    """
    usage = NO_PREFERENCES
    usage_lines: list[tuple[str, str]] = []
    signal_lines: list[tuple[str, str]] = []
    policies: dict[str, str] = {}
    for source, value in signals:
        text = value.strip()
        if source.startswith("Content-Usage"):
            if text:
                usage_lines.append((source, text))
            continue
        if source.startswith("Content-Signal"):
            if text:
                signal_lines.append((source, text))
            continue
        if source in TDM_POLICY_SOURCES:
            policy = tdm_policy_value(text)
            if policy is not None:
                policies.setdefault(source, policy)
            continue
        reserved = _header_reservation(text)
        if reserved is None:
            continue
        rule = f"{source.replace(' header', '')}: {text[:200]}"
        if source.startswith("<meta"):
            rule = f'{source[:-1]} content="{text[:200]}">'
        usage = usage.merged(_stated(source, rule, [(c, not reserved) for c in TDM_CATEGORIES]))
    if policies:
        policy = next(policies[source] for source in TDM_POLICY_SOURCES if source in policies)
        usage = with_tdm_policy(usage, policy)
    if usage_lines:
        source = usage_lines[0][0]
        text = ", ".join(text for _, text in usage_lines)
        rule = f"{source.replace(' header', '')}: {text[:200]}"
        usage = usage.merged(_stated(source, rule, read_content_usage(text).preferences))
    if signal_lines:
        usage = usage.merged(_content_signal_header(signal_lines))
    return usage


def _content_signal_header(lines: Sequence[tuple[str, str]]) -> Usage:
    """The ``Content-Signal`` response header, read as the robots.txt line is
    (:func:`parse_content_usage`, its own ``yes`` / ``no`` reading, and the
    ``use`` level): several field lines are one comma-separated list; a name
    stated twice, the most restrictive."""
    source = lines[0][0]
    text = ", ".join(text for _, text in lines)
    rule = f"{source.replace(' header', '')}: {text[:200]}"
    stated = Usage()
    for category, allowed in parse_content_usage(text, "content-signal"):
        stated = stated.merged(_stated(source, rule, [(category, allowed)]))
    use = content_signal_use(text)
    if use is not None:
        level = Preference(USE_KEY, True, source, None, rule, None, use)
        stated = stated.merged(Usage({USE_KEY: level}))
    return stated


#: The categories each usage header can state (``read_usage_signals``'s sources):
#: a header read only in part may refuse any of them past the limit.
HEADER_CATEGORIES: dict[str, tuple[str, ...]] = {
    "Content-Usage header": tuple(
        sorted(
            {category for (signal, _), category in VOCABULARY.items() if signal == "content-usage"}
        )
    ),
    "Content-Signal header": tuple(
        sorted(
            {category for (signal, _), category in VOCABULARY.items() if signal == "content-signal"}
        )
    ),
    "tdm-reservation header": TDM_CATEGORIES,
}


def unread_usage(truncated: Mapping[str, Iterable[str]]) -> Usage:
    """Refusals assumed for usage headers read only in part (fail closed).

    ``truncated``: each header source that met a reading limit, with the
    limits' names (``read_usage_signals``). A value past the limit was not
    read, and may refuse any category its header can state
    (:data:`HEADER_CATEGORIES`): each of them is read as refused, so that a
    declared purpose is never allowed by what was not read. A ``tdm-policy``
    header states no preference: its limits refuse nothing.
    """
    preferences: dict[str, Preference] = {}
    for source, limits in truncated.items():
        named = ", ".join(sorted(limits))
        rule = f"{source.replace(' header', '')}: read only in part ({named} reached), refused"
        for category in HEADER_CATEGORIES.get(source, ()):
            preferences.setdefault(category, Preference(category, False, source, None, rule))
    return Usage(preferences) if preferences else NO_PREFERENCES


def _stated(source: str, rule: str, stated: Iterable[tuple[str, bool]]) -> Usage:
    return Usage(
        {category: Preference(category, ok, source, None, rule) for category, ok in stated}
    )


def _header_reservation(text: str) -> bool | None:
    """A ``tdm-reservation`` header or meta value: ``1`` reserves, ``0`` does
    not; TDMRep: "Other values are considered protocol errors", read as unset
    (never a permission), as :func:`~._tdmrep.reservation_value` reads tdmrep.json."""
    text = text.strip()
    if text == "1":
        return True
    if text == "0":
        return False
    return None
