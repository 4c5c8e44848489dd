"""A Spark job: a folder of BVH files to the Parquet long table of `bvh export`.

Reads every ``*.bvh`` under IN_DIR (Spark's ``binaryFile`` source, folders
walked), parses each file and computes world positions and local rotations
in ``mapInPandas`` with the ``bvhkit`` Python package, and writes the rows
``bvh export IN_DIR -o OUT.parquet`` writes (clip, frame, joint, parent,
px py pz, qx qy qz qw; the clip is the path relative to IN_DIR) as Parquet
files under OUT_DIR. A file bvhkit cannot read is printed and skipped.

    python bvh_to_parquet.py IN_DIR OUT_DIR [--master local[2]]
    spark-submit bvh_to_parquet.py IN_DIR OUT_DIR      # on a cluster

Every worker needs ``bvhkit`` (``pip install ./crates/bvhkit-py``), numpy,
pandas and pyarrow.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import pandas as pd

SCHEMA = (
    "clip string, frame int, joint string, parent string, "
    "px double, py double, pz double, qx double, qy double, qz double, qw double"
)


def local_path(uri: str) -> str:
    """`file:/a/b%20c.bvh` (what binaryFile gives) -> `/a/b c.bvh`."""
    return unquote(urlparse(uri).path) if ":" in uri.split("/", 1)[0] else uri


def clip_frame(name: str, data: bytes) -> pd.DataFrame:
    """One file's rows, in `bvh export`'s order: frame-major, joints in file order."""
    import bvhkit

    b = bvhkit.parse(data)
    pos = b.positions()  # frames x joints x 3
    rot = b.rotations("quat")  # frames x joints x 4, local, w >= 0
    f, j = b.n_frames, b.n_joints
    names = np.array(b.joint_names, dtype=object)
    parents = np.array([None if p < 0 else b.joint_names[p] for p in b.parents], dtype=object)
    cols = {
        "clip": np.full(f * j, name, dtype=object),
        "frame": np.repeat(np.arange(f, dtype=np.int32), j),
        "joint": np.tile(names, f),
        "parent": np.tile(parents, f),
    }
    for k, c in enumerate(("px", "py", "pz")):
        cols[c] = pos[..., k].reshape(-1)
    for k, c in enumerate(("qx", "qy", "qz", "qw")):
        cols[c] = rot[..., k].reshape(-1)
    return pd.DataFrame(cols)


def rows(root: str):
    """The mapInPandas function: (path, content) batches to rows."""

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        import bvhkit

        for batch in batches:
            for uri, content in zip(batch["path"], batch["content"], strict=True):
                name = os.path.relpath(local_path(uri), local_path(root)).replace(os.sep, "/")
                try:
                    yield clip_frame(name, bytes(content))
                except (bvhkit.ParseError, ValueError) as e:
                    print(f"bvh_to_parquet: skipped {uri}: {e}", file=sys.stderr)

    return run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", help="folder of BVH files (walked)")
    ap.add_argument("output", help="output folder of Parquet files")
    ap.add_argument("--master", help="Spark master (default: spark-submit's, or local[*])")
    a = ap.parse_args(argv)

    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("bvh_to_parquet")
    if a.master:
        builder = builder.master(a.master)
    spark = (
        builder.config("spark.sql.execution.arrow.maxRecordsPerBatch", "8")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    try:
        # A local folder, or a URI (hdfs://, s3a://) the cluster reads.
        root = a.input if "://" in a.input else str(Path(a.input).resolve())
        files = (
            spark.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .option("pathGlobFilter", "*.bvh")
            .load(root)
            .select("path", "content")
        )
        out = files.mapInPandas(rows(root), schema=SCHEMA)
        out.write.mode("overwrite").parquet(a.output)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
