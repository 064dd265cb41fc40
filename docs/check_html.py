"""After ``sphinx-build``: every name the code uses appears in the built HTML.

Run by ``make docs``: ``python docs/check_html.py docs/_build/html``. Exits 1,
listing what is missing, when a setting, stat key (or family), logger name or
meta key collected from the source (``code_names.py``) is not on the built
reference page that should list it.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

from code_names import REFERENCE, expected, missing

TAG = re.compile(r"<[^>]+>")


def page_text(path: Path) -> str:
    """The visible text of a built page, tags removed and entities decoded."""
    return html.unescape(TAG.sub("", path.read_text(encoding="utf-8")))


def main(argv: list[str]) -> int:
    built = Path(argv[1]) if len(argv) > 1 else Path(__file__).parent / "_build" / "html"
    problems = []
    for kind, names in expected().items():
        source = REFERENCE[kind]
        page = built / source.relative_to(source.parents[1]).with_suffix(".html")
        if not page.exists():
            problems.append(f"{page}: not built")
            continue
        for name in missing(names, page_text(page), quoted=False):
            problems.append(f"{page}: {kind}: {name} is not listed")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    total = sum(len(names) for names in expected().values())
    print(f"check_html: {total} names, each on its reference page")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
