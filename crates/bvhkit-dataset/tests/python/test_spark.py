"""The Spark example job on the corpus in local mode gives `bvh export`'s rows."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
from conftest import REPO, skip

JOB = REPO / "crates" / "bvhkit-dataset" / "spark" / "bvh_to_parquet.py"


def test_spark_job_gives_the_rows_of_bvh_export(corpus_dir, corpus_export, tmp_path):
    if shutil.which("java") is None:
        skip("no java on PATH (apt-get install default-jre-headless): the Spark job cannot run")
    try:
        import bvhkit  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as e:
        skip(f"the Spark test needs pyspark and bvhkit in this Python: {e}")
    out = tmp_path / "spark"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    r = subprocess.run(
        [sys.executable, str(JOB), str(corpus_dir), str(out), "--master", "local[2]"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-4000:]
    exported, _ = corpus_export
    spark = f"read_parquet('{Path(out)}/*.parquet')"
    con = duckdb.connect()
    n_spark = con.execute(f"SELECT count(*) FROM {spark}").fetchone()[0]
    n_cli = con.execute(f"SELECT count(*) FROM '{exported}'").fetchone()[0]
    assert n_spark == n_cli > 700_000
    # The same rows, every number bit for bit, both ways.
    for a, b in ((spark, f"'{exported}'"), (f"'{exported}'", spark)):
        extra = con.execute(f"SELECT count(*) FROM (FROM {a} EXCEPT ALL FROM {b})").fetchone()[0]
        assert extra == 0, f"{extra} rows of {a} are not in {b}"
    clips = con.execute(f"SELECT count(DISTINCT clip) FROM {spark}").fetchone()[0]
    assert clips >= 40
