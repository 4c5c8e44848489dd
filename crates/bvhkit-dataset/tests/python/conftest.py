"""Fixtures of the dataset tests: the corpus, the `bvh` binary, visible skips."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]


def must_run() -> bool:
    """In CI (or once scripts/test.sh installed everything) a skip is a failure."""
    return bool(os.environ.get("CI")) or os.environ.get("BVHKIT_REQUIRE_ALL") == "1"


def skip(reason: str) -> None:
    """Skips visibly, or fails where every test must run."""
    if must_run():
        pytest.fail(f"cannot run: {reason} (CI or BVHKIT_REQUIRE_ALL=1 is set)")
    print(f"SKIPPED: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    env = os.environ.get("BVHKIT_CORPUS")
    d = Path(env) if env else REPO.parent / "shared" / "corpus"
    if not d.is_dir():
        skip("no corpus at ../shared/corpus beside the repository (or $BVHKIT_CORPUS)")
    assert len(list(d.glob("*.bvh"))) >= 40, f"expected the 40+ corpus files in {d}"
    return d


@pytest.fixture(scope="session")
def bvh_bin() -> Path:
    """The `bvh` command, built from this repository ($BVH_BIN overrides)."""
    if os.environ.get("BVH_BIN"):
        return Path(os.environ["BVH_BIN"])
    out = subprocess.run(
        ["cargo", "build", "-q", "-p", "bvhkit-cli", "--message-format=json"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        is_bvh = msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "bvh"
        if is_bvh and msg.get("executable"):
            return Path(msg["executable"])
    raise AssertionError("cargo built no bvh executable")


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
