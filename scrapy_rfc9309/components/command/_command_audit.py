"""``scrapy robotstxt audit FILE [FILE ...]``: a crawl's record checked, chain and decisions.

Reads each record (``ROBOTSTXT_RECORD_FILE``; gzip when its name ends in
``.gz``), checks it with :func:`~scrapy_rfc9309.sites._record_audit.audit_lines`
(the hash chain; each request decided again by the crawl's own decision
function from the copies in the file, with the header's policy), prints how
many requests were verified and every problem with its line number, and
exits 0 only when every file verifies (1: a problem; 2: a file that cannot
be read). A last line cut short (the crawl was
killed) is reported, never a traceback.
"""

from __future__ import annotations

import sys

from scrapy.exceptions import UsageError

from ...sites._record_audit import AuditResult, audit_lines
from ..record._record_read import read_record, record_bytes
from ._command_answer import EXIT_ALLOWED, EXIT_ERROR

__all__ = ["EXIT_MISMATCH", "run_audit"]

#: The exit status when a record does not verify (as a refused URL's: 1).
EXIT_MISMATCH = 1


def run_audit(args: list[str]) -> int:
    """``audit FILE [FILE ...]``: print what each record's audit found; the exit status."""
    if not args:
        raise UsageError("audit takes one or more record files (ROBOTSTXT_RECORD_FILE)")
    failed = unreadable = False
    for path in args:
        try:
            result = audit_lines(read_record(record_bytes(path)))
        except OSError as error:
            print(f"{path}: cannot be read: {error}", file=sys.stderr)
            unreadable = True
            continue
        failed |= not result.ok
        _print(path, result)
    if unreadable:
        return EXIT_ERROR
    return EXIT_MISMATCH if failed else EXIT_ALLOWED


def _print(path: str, result: AuditResult) -> None:
    for number, problem in result.problems:
        print(f"{path}:{number}: {problem}")
    for number in result.cut:
        print(f"{path}:{number}: a line cut short (the crawl was killed while writing it)")
    if result.partial is not None:
        print(
            f"{path}:{result.partial}: the last line is cut short: the crawl was killed "
            "while writing it (not verified)"
        )
    if result.lines == 0:
        print(f"{path}: no whole line: not a record")
    verdict = "VERIFIED" if result.ok else "FAILED"
    closed = "closed" if result.closed else "no close line: the crawl did not finish"
    runs = f"{result.runs} crawls, one chain" if result.runs > 1 else "1 crawl"
    print(
        f"{path}: {verdict}: {result.verified} requests decided again and matched, "
        f"{result.undecided} dropped at close, {len(result.problems)} "
        f"problem{'' if len(result.problems) == 1 else 's'} in {result.lines} lines "
        f"({runs}; {closed}); last line's hash {result.head}"
    )
