"""Where the real-world corpus lives: the folder ``$ROBOTSTXT_CORPUS`` names.
The collections carry no licence of their own, so the project never copies
them; tests that need them skip when it is not named or absent.

The costly per-file checks run on a fixed sample of the files (every
:data:`SAMPLE_STEP`-th, with the largest where size matters);
``ROBOTSTXT_CORPUS_FULL=1`` runs them on every file."""

from __future__ import annotations

import os
from pathlib import Path

#: The corpus's folder (``None``: ``$ROBOTSTXT_CORPUS`` names none).
CORPUS = Path(os.environ["ROBOTSTXT_CORPUS"]) if os.environ.get("ROBOTSTXT_CORPUS") else None


def corpus_missing() -> str | None:
    """Why the corpus cannot be read; ``None``: it can."""
    if CORPUS is None:
        return "the real-world corpus is not named: set ROBOTSTXT_CORPUS to its folder"
    if not CORPUS.is_dir():
        return f"the real-world corpus is not at {CORPUS} (ROBOTSTXT_CORPUS)"
    return None


def corpus_files() -> list[Path]:
    """Every robots.txt file of the corpus, in a stable order ([] if absent)."""
    if CORPUS is None or not CORPUS.is_dir():
        return []
    return sorted(path for path in CORPUS.glob("*/*.txt") if path.parent.name != "urls")


#: The sample's step through the sorted files (the full run's is 1).
SAMPLE_STEP = 1 if os.environ.get("ROBOTSTXT_CORPUS_FULL") else 5


def corpus_sample(files: list[Path], *, largest: int = 0) -> list[Path]:
    """Every :data:`SAMPLE_STEP`-th of ``files`` and the ``largest`` largest, in
    their order: the same sample on every run."""
    if SAMPLE_STEP == 1:
        return files
    sizes = sorted(files, key=lambda path: path.stat().st_size)
    biggest = set(sizes[len(sizes) - largest :])
    return [path for i, path in enumerate(files) if i % SAMPLE_STEP == 0 or path in biggest]


SKIP_REASON = corpus_missing() or "the real-world corpus has no robots.txt files"
