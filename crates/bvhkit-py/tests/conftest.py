"""Fixtures: the corpus, the `bvh` binary, visible skips (shared with the
dataset tests in crates/bvhkit-testdata/python/bvhkit_pytest.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bvhkit-testdata" / "python"))

from bvhkit_pytest import REPO, bvh_bin, corpus_or_skip, must_run, skip  # noqa: E402

__all__ = ["REPO", "bvh_bin", "corpus", "corpus_named", "must_run", "skip"]


@pytest.fixture(scope="session")
def corpus() -> list[Path]:
    return sorted(corpus_or_skip().glob("*.bvh"))


def corpus_named(corpus: list[Path], names: list[str]) -> list[Path]:
    """The corpus files called `names`, in that order; a missing one fails."""
    by_name = {p.name: p for p in corpus}
    missing = [f for f in names if f not in by_name]
    assert not missing, f"corpus files missing: {missing}"
    return [by_name[f] for f in names]
