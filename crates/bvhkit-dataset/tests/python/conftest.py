"""Fixtures of the dataset tests: the corpus, the `bvh` binary, visible skips
(shared with the Python package's tests in
crates/bvhkit-testdata/python/bvhkit_pytest.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bvhkit-testdata" / "python"))

from bvhkit_pytest import REPO, bvh_bin, corpus_or_skip, must_run, skip  # noqa: E402

__all__ = ["REPO", "bvh_bin", "corpus_dir", "corpus_export", "must_run", "skip"]


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return corpus_or_skip()


@pytest.fixture(scope="session")
def corpus_export(bvh_bin: Path, corpus_dir: Path, tmp_path_factory) -> tuple[Path, str]:
    """`bvh export CORPUS -o all.parquet --up keep` and its stderr (the file's own axes,
    as `bvh positions` and the Spark job give them)."""
    out = tmp_path_factory.mktemp("export") / "all.parquet"
    r = subprocess.run(
        [str(bvh_bin), "export", str(corpus_dir), "-o", str(out), "--up", "keep"],
        capture_output=True,
        text=True,
    )
    assert r.returncode in (0, 1), r.stderr
    assert out.exists() and out.with_suffix(".skeleton.parquet").exists(), r.stderr
    return out, r.stderr
