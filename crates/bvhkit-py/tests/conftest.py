"""Fixtures: the corpus, the `bvh` binary, visible skips (shared with the
dataset tests in crates/bvhkit-testdata/python/bvhkit_pytest.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bvhkit-testdata" / "python"))

from bvhkit_pytest import REPO, bvh_bin, corpus_or_skip, must_run, skip  # noqa: E402

__all__ = ["REPO", "bvh_bin", "corpus", "must_run", "skip"]


@pytest.fixture(scope="session")
def corpus() -> list[Path]:
    return sorted(corpus_or_skip().glob("*.bvh"))
