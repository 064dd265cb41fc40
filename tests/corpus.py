"""Where the real-world corpus lives: ``../shared/corpus`` beside the clone,
or ``$ROBOTSTXT_CORPUS``. The collections carry no licence of their own, so
the project never copies them; tests that need them skip when absent."""

from __future__ import annotations

import os
from pathlib import Path

CORPUS = Path(
    os.environ.get("ROBOTSTXT_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus")
)


def corpus_files() -> list[Path]:
    """Every robots.txt file of the corpus, in a stable order ([] if absent)."""
    if not CORPUS.is_dir():
        return []
    return sorted(path for path in CORPUS.glob("*/*.txt") if path.parent.name != "urls")


SKIP_REASON = f"the real-world corpus is not at {CORPUS} (set ROBOTSTXT_CORPUS)"
