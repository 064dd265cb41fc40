"""After ``sphinx-build``: every name the code uses appears in the built HTML.

Run by ``make docs``: ``python docs/check_html.py docs/_build/html``. Exits 1,
listing what is missing, when a setting, stat key (or family), logger name or
meta key collected from the source (``code_names.py``) is not on the built
reference page that should list it, when a setting has no heading of its
own (so no anchor to link to) on the settings page, or when a page shows an
inline code span longer than :data:`LONGEST_CODE` characters (a backtick
left unpaired, or a line of Markdown read as a list item inside one, turns a
paragraph into code).
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

from code_names import REFERENCE, expected, missing

TAG = re.compile(r"<[^>]+>")
#: A section of a built page and its heading: ``<section id="robotstxt-max-size">
#: <span id="robotstxt_max_size"></span><h3><code ...>ROBOTSTXT_MAX_SIZE</code>
#: <a class="headerlink" ...>`` (the span: MyST's anchor of the heading).
SECTION = re.compile(
    r'<section id="([^"]+)">\s*(?:<span id="[^"]*"></span>\s*)*<h([1-6])>(.*?)</h\2>', re.S
)
HEADERLINK = re.compile(r'<a class="headerlink".*?</a>', re.S)
#: An inline code span of a built page.
INLINE_CODE = re.compile(r'<code class="docutils literal notranslate">(.*?)</code>', re.S)
#: The longest inline code span a page may show (the longest meant, a log
#: line, is under 200 characters).
LONGEST_CODE = 400


def page_text(path: Path) -> str:
    """The visible text of a built page, tags removed and entities decoded."""
    return html.unescape(TAG.sub("", path.read_text(encoding="utf-8")))


def anchors(page_html: str) -> dict[str, str]:
    """Each heading's visible text -> the id of its section (the anchor a link uses)."""
    found: dict[str, str] = {}
    for anchor, _, heading in SECTION.findall(page_html):
        text = html.unescape(TAG.sub("", HEADERLINK.sub("", heading))).strip()
        found.setdefault(text, anchor)
    return found


def settings_without_anchor(names: set[str], page_html: str) -> list[str]:
    """The settings that have no heading of their own (the name alone) on the page."""
    headed = anchors(page_html)
    return sorted(name for name in names if name not in headed)


def overlong_code(page_html: str) -> list[str]:
    """The start of each inline code span longer than :data:`LONGEST_CODE`."""
    spans = (html.unescape(TAG.sub("", span)) for span in INLINE_CODE.findall(page_html))
    return [span[:60] for span in spans if len(span) > LONGEST_CODE]


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
        if kind == "settings":
            page_html = page.read_text(encoding="utf-8")
            for name in settings_without_anchor(names, page_html):
                problems.append(f"{page}: settings: {name} has no heading (no anchor) of its own")
    for page in sorted(built.rglob("*.html")):
        if "_modules" in page.parts:
            continue
        for start in overlong_code(page.read_text(encoding="utf-8")):
            problems.append(f"{page}: inline code of over {LONGEST_CODE} characters: {start!r}...")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    total = sum(len(names) for names in expected().values())
    print(f"check_html: {total} names, each on its reference page; each setting with its anchor")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
