"""Shared fixtures: the corpus, the `bvh` binary, visible skips."""

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


def corpus_dir() -> Path | None:
    env = os.environ.get("BVHKIT_CORPUS")
    d = Path(env) if env else REPO.parent / "shared" / "corpus"
    return d if d.is_dir() else None


@pytest.fixture(scope="session")
def corpus() -> list[Path]:
    d = corpus_dir()
    if d is None:
        skip("no corpus at ../shared/corpus beside the repository (or $BVHKIT_CORPUS)")
    files = sorted(d.glob("*.bvh"))
    assert len(files) >= 40, f"expected the 40+ corpus files in {d}, found {len(files)}"
    return files


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
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "bvh":
            if msg.get("executable"):
                return Path(msg["executable"])
    raise AssertionError("cargo built no bvh executable")
