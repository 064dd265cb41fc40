"""``benchmarks/cluster.py`` checks its command line before it starts anything:
an option given where it does nothing, or a number out of range, is an error
(exit status 2, a message naming the option), not a benchmark that ignores it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = ROOT / "benchmarks" / "cluster.py"

if not CLUSTER.exists():
    pytest.skip("run from a copy of the tests, without benchmarks/", allow_module_level=True)


def _cluster(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The script as a module (it imports its neighbours, as when run)."""
    monkeypatch.syspath_prepend(str(CLUSTER.parent))
    spec = importlib.util.spec_from_file_location("cluster_benchmark", CLUSTER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--sizes", "0"], "must be at least 1"),
        (["--sizes", "1,1"], "given twice"),
        (["--sizes", "two"], "not a whole number"),
        (["--sites", "0"], "must be at least 1"),
        (["--rounds", "-1"], "must be at least 1"),
        (["--latency-ms", "3"], "--latency-ms: only with --versus-scrapy-redis"),
        (["--sizes", "4"], "--sizes: only with --versus-scrapy-redis"),
        (["--instructions"], "--instructions: only with --versus-scrapy-redis"),
        (["--versus-scrapy-redis", "--direct-only", "--proxy-only"], "not allowed with"),
        (["--versus-scrapy-redis", "--instructions", "--profile", "p"], "not allowed with"),
        (["--versus-scrapy-redis", "--instructions", "--rounds", "2"], "--rounds: not with"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_a_command_line_that_does_nothing_is_refused(arguments: list[str], said: str) -> None:
    done = subprocess.run(
        [sys.executable, str(CLUSTER), *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert said in done.stderr, done.stderr


def test_a_valid_command_line_reads_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = _cluster(monkeypatch)
    monkeypatch.setattr(
        sys, "argv", ["cluster.py", "--versus-scrapy-redis", "--sizes", "2, 1", "--pages", "3"]
    )
    args = cluster.parse_args()
    assert args.sizes == (2, 1)
    assert args.pages == 3
    assert args.latency_ms == 2.0  # the default, only with --versus-scrapy-redis
    monkeypatch.setattr(sys, "argv", ["cluster.py"])
    assert cluster.parse_args().sizes == cluster.PROCESSES
