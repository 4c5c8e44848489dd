"""Pytest helpers shared by the Python test suites (crates/bvhkit-py/tests and
crates/bvhkit-dataset/tests/python): the corpus, the `bvh` binary, visible skips.

The Python twin of the `bvhkit-testdata` crate's corpus lookup and `skip`.
Each suite's conftest.py puts this folder on `sys.path`, imports from here
and re-exports what its tests use.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def must_run() -> bool:
    """In CI (or once scripts/test.sh installed everything) a skip is a failure."""
    return bool(os.environ.get("CI")) or os.environ.get("BVHKIT_REQUIRE_ALL") == "1"


def skip(reason: str) -> None:
    """Skips visibly, or fails where every test must run."""
    if must_run():
        pytest.fail(f"cannot run: {reason} (CI or BVHKIT_REQUIRE_ALL=1 is set)")
    print(f"SKIPPED: {reason}")
    pytest.skip(reason)


def find_corpus() -> Path | None:
    """The corpus folder: $BVHKIT_CORPUS, else ../shared/corpus beside the repository."""
    env = os.environ.get("BVHKIT_CORPUS")
    d = Path(env) if env else REPO.parent / "shared" / "corpus"
    return d if d.is_dir() else None


def corpus_or_skip() -> Path:
    """The corpus folder with its 40+ files, or a visible skip."""
    d = find_corpus()
    if d is None:
        skip("no corpus at ../shared/corpus beside the repository (or $BVHKIT_CORPUS)")
    n = len(list(d.glob("*.bvh")))
    assert n >= 40, f"expected the 40+ corpus files in {d}, found {n}"
    return d


@pytest.fixture(scope="session")
def bvh_bin() -> Path:
    """The `bvh` command, built from this repository ($BVH_BIN overrides)."""
    if os.environ.get("BVH_BIN"):
        return Path(os.environ["BVH_BIN"])
    try:
        out = subprocess.run(
            ["cargo", "build", "-q", "-p", "bvhkit-cli", "--message-format=json"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        skip(f"cannot build the bvh command with cargo: {e}")
    for line in out.splitlines():
        msg = json.loads(line)
        is_bvh = msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "bvh"
        if is_bvh and msg.get("executable"):
            return Path(msg["executable"])
    raise AssertionError("cargo built no bvh executable")
