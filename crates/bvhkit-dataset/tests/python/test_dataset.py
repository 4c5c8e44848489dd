"""`bvh export -o OUT.parquet / OUT.npz` read back with pyarrow, DuckDB and
NumPy, every number compared with `bvh positions` and `bvh rotations`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def npy(bvh_bin: Path, tmp: Path, command: str, path: Path, *args: str) -> tuple[np.ndarray, dict]:
    """`bvh COMMAND PATH -o x.npy --dtype f64 ARGS`: the array and its sidecar."""
    out = tmp / f"{command}.npy"
    subprocess.run(
        [str(bvh_bin), command, str(path), "-o", str(out), "--dtype", "f64", *args],
        check=True,
        capture_output=True,
    )
    side = json.loads(Path(str(out) + ".json").read_text())
    return np.load(out), side


def test_long_table_equals_bvh_positions_and_rotations(
    bvh_bin, corpus_dir, corpus_export, tmp_path
):
    out, stderr = corpus_export
    table = pq.read_table(out)
    assert table.column_names == [
        "clip", "frame", "joint", "parent", "px", "py", "pz", "qx", "qy", "qz", "qw",
    ]  # fmt: skip
    assert str(table.schema.field("px").type) == "double"
    meta = json.loads(pq.read_metadata(out).metadata[b"bvhkit"])
    assert meta["rotations"] == "quat" and meta["layout"] == "long"
    clips = table.column("clip").to_numpy()
    # One row group per clip, in input (sorted) order.
    pf = pq.ParquetFile(out)
    names_in_order = [
        pf.read_row_group(i, columns=["clip"]).column(0)[0].as_py()
        for i in range(pf.num_row_groups)
    ]
    assert names_in_order == sorted(names_in_order)
    # The names are dictionary-encoded chunks (a dictionary page, then
    # RLE_DICTIONARY data pages), read back as text or, when asked, as a
    # dictionary column with the same values.
    md = pf.metadata
    names = [md.schema.column(i).name for i in range(md.num_columns)]
    for g in range(md.num_row_groups):
        for c in ("clip", "joint", "parent"):
            col = md.row_group(g).column(names.index(c))
            assert col.has_dictionary_page and "RLE_DICTIONARY" in col.encodings, (g, c)
        px = md.row_group(g).column(names.index("px"))
        assert not px.has_dictionary_page and px.encodings == ("PLAIN", "RLE"), g
    as_dict = pq.read_table(out, columns=["joint", "parent"], read_dictionary=["joint", "parent"])
    assert as_dict.schema.field("joint").type == pa.dictionary(pa.int32(), pa.string())
    for c in ("joint", "parent"):
        assert as_dict.column(c).to_pylist() == table.column(c).to_pylist(), c
    checked = 0
    for path in sorted(corpus_dir.glob("*.bvh")):
        rows = clips == path.name
        if not rows.any():
            # Not exported: it must be named in the summary as skipped.
            assert f"skipped {path}" in stderr or path.name in stderr, path.name
            continue
        pos, side = npy(bvh_bin, tmp_path, "positions", path)
        rot, _ = npy(bvh_bin, tmp_path, "rotations", path, "--repr", "quat")
        f, j, _ = pos.shape
        assert rows.sum() == f * j, path.name
        sub = table.filter(rows)
        got = np.stack([sub.column(c).to_numpy() for c in ("px", "py", "pz")], axis=1)
        np.testing.assert_array_equal(got, pos.reshape(-1, 3), err_msg=path.name)
        got = np.stack([sub.column(c).to_numpy() for c in ("qx", "qy", "qz", "qw")], axis=1)
        np.testing.assert_array_equal(got, rot.reshape(-1, 4), err_msg=path.name)
        assert sub.column("joint").to_pylist() == side["joints"] * f, path.name
        parents = [None if p < 0 else side["joints"][p] for p in side["parents"]]
        assert sub.column("parent").to_pylist() == parents * f, path.name
        assert sub.column("frame").to_pylist() == list(np.repeat(np.arange(f), j)), path.name
        checked += 1
    assert checked >= 40, checked


def test_duckdb_reads_the_same_numbers_and_joins_the_skeleton_table(corpus_export):
    out, _ = corpus_export
    skel = out.with_suffix(".skeleton.parquet")
    con = duckdb.connect()
    # The two files carry one id (docs/datasets.md): DuckDB's view of the
    # key-value metadata gives it for both, and pyarrow's agrees.
    pairs = con.execute(
        f"""SELECT decode(value) FROM parquet_kv_metadata(['{out}', '{skel}'])
            WHERE decode(key) = 'bvhkit.pair'"""
    ).fetchall()
    assert len(pairs) == 2 and pairs[0] == pairs[1], pairs
    assert pq.read_metadata(out).metadata[b"bvhkit.pair"].decode() == pairs[0][0]
    long = con.execute(f"SELECT px, py, pz, qx, qy, qz, qw FROM '{out}'").fetchnumpy()
    arrow = pq.read_table(out)
    for c, v in long.items():
        np.testing.assert_array_equal(v, arrow.column(c).to_numpy(), err_msg=c)
    # Rows per clip are frames × joints of the skeleton table.
    bad = con.execute(
        f"""
        WITH counts AS (SELECT clip, count(*) AS n FROM '{out}' GROUP BY clip),
             sk AS (SELECT clip, count(*) * any_value(frames) AS n FROM '{skel}' GROUP BY clip)
        SELECT * FROM sk FULL JOIN counts USING (clip)
        WHERE coalesce(sk.n, 0) <> coalesce(counts.n, 0)
        """
    ).fetchall()
    assert bad == [], bad
    # Mean hip height per clip (the README's query) against NumPy.
    rows = con.execute(
        f"""
        SELECT m.clip, avg(m.py) AS hip_y
        FROM '{out}' m JOIN '{skel}' s ON m.clip = s.clip AND m.joint = s.joint
        WHERE s.parent_index = -1 GROUP BY m.clip ORDER BY m.clip
        """
    ).fetchall()
    assert len(rows) >= 40
    clips = np.array(arrow.column("clip").to_pylist(), dtype=object)
    roots = np.array([p is None for p in arrow.column("parent").to_pylist()])
    py = arrow.column("py").to_numpy()
    for clip, hip_y in rows:
        want = py[(clips == clip) & roots].mean()
        assert np.isclose(hip_y, want, rtol=1e-12, atol=1e-9), (clip, hip_y, want)


def test_broken_files_are_reported_and_skipped(bvh_bin, corpus_dir, tmp_path):
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    good = sorted(corpus_dir.glob("*.bvh"))[:3]
    for p in good:
        (src / "sub" / p.name).write_bytes(p.read_bytes())
    (src / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n")
    out = tmp_path / "d.parquet"
    r = subprocess.run(
        [str(bvh_bin), "export", str(src), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2, r.stderr
    assert "broken.bvh:5:1: expected a number" in r.stderr and "1 file skipped" in r.stderr, (
        r.stderr
    )
    clips = sorted(set(pq.read_table(out).column("clip").to_pylist()))
    assert clips == sorted(f"sub/{p.name}" for p in good)
    # The real corpus read strictly: its malformed files are skipped, the rest exported.
    out = tmp_path / "strict.parquet"
    r = subprocess.run(
        [str(bvh_bin), "export", str(corpus_dir), "-o", str(out), "--strict"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2, r.stderr
    skipped = [ln for ln in r.stderr.splitlines() if ln.startswith("bvh:   skipped ")]
    assert skipped and all("malformed_" in ln for ln in skipped), r.stderr
    exported = set(pq.read_table(out, columns=["clip"]).column("clip").to_pylist())
    assert len(exported) + len(skipped) >= 40
    assert not any(name.startswith("malformed_") and f"{name}:" in r.stderr for name in exported)


def test_options_wide_f32_6d_velocities_contacts(bvh_bin, corpus_dir, tmp_path):
    path = max(corpus_dir.glob("*.bvh"), key=lambda p: p.stat().st_size)
    out = tmp_path / "w.parquet"
    subprocess.run(
        [str(bvh_bin), "export", str(path), "-o", str(out), "--up", "keep", "--layout", "wide",
         "--dtype", "f32", "--rotations", "6d", "--velocities", "--contacts"],
        check=True, capture_output=True,
    )  # fmt: skip
    t = pq.read_table(out)
    assert t.column_names == [
        "clip",
        "frame",
        "positions",
        "rotations",
        "velocities",
        "contacts",
    ]
    pos, side = npy(bvh_bin, tmp_path, "positions", path)
    rot, _ = npy(bvh_bin, tmp_path, "rotations", path, "--repr", "6d")
    f, j, _ = pos.shape
    got = np.stack(t.column("positions").to_numpy(zero_copy_only=False)).reshape(f, j, 3)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, pos.astype(np.float32))
    got = np.stack(t.column("rotations").to_numpy(zero_copy_only=False)).reshape(f, j, 6)
    np.testing.assert_array_equal(got, rot.astype(np.float32))
    v = np.stack(t.column("velocities").to_numpy(zero_copy_only=False)).reshape(f, j, 3)
    want = np.gradient(pos, side["frame_time"], axis=0)  # central, one-sided at the ends
    np.testing.assert_allclose(
        v, want.astype(np.float32), rtol=1e-5, atol=1e-4 * np.abs(want).max()
    )
    c = np.stack(t.column("contacts").to_numpy(zero_copy_only=False)).reshape(f, j)
    assert c.dtype == bool and 0 < c.sum() < c.size
    # Feet touch the ground more often than the head does.
    names = side["joints"]
    head = [k for k, n in enumerate(names) if "head" in n.lower()]
    toes = [k for k, n in enumerate(names) if "toe" in n.lower() or "foot" in n.lower()]
    assert head and toes
    assert c[:, toes].mean() > c[:, head].mean()


def test_npz_holds_per_clip_arrays(bvh_bin, corpus_dir, tmp_path):
    files = sorted(corpus_dir.glob("*.bvh"))[:4]
    out = tmp_path / "d.npz"
    subprocess.run(
        [str(bvh_bin), "export", *map(str, files), "-o", str(out), "--up", "keep", "--velocities"],
        check=True,
        capture_output=True,
    )
    z = np.load(out)
    for p in files:
        pos, side = npy(bvh_bin, tmp_path, "positions", p)
        rot, _ = npy(bvh_bin, tmp_path, "rotations", p, "--repr", "quat")
        np.testing.assert_array_equal(z[f"{p.name}/positions"], pos)
        np.testing.assert_array_equal(z[f"{p.name}/rotations"], rot)
        assert z[f"{p.name}/velocities"].shape == pos.shape
        assert list(z[f"{p.name}/joints"]) == side["joints"]
        np.testing.assert_array_equal(z[f"{p.name}/parents"], side["parents"])
        np.testing.assert_array_equal(
            z[f"{p.name}/offsets"], np.array(side["offsets"]).reshape(-1, 3)
        )
        assert float(z[f"{p.name}/frame_time"]) == side["frame_time"]
