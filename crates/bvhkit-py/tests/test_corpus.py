"""The whole shared corpus from Python, against the `bvh` command and pybvh."""

from __future__ import annotations

import csv
import io
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

import bvhkit

# Files pybvh 0.9 refuses (checked against the live set below, so a change
# in either reader shows up): position channels on non-root joints, a root
# with CHANNELS 0, and the damaged files bvhkit reads leniently.
PYBVH_CANNOT_READ = {
    "bandai_namco_ds1_kick_6ch_every_joint.bvh",
    "geno_bind_pose_6ch_sci_crlf.bvh",
    "godot_vr_mocap_root_0_channels_trackers.bvh",
    "makehuman_163_joints_6ch_every_joint_deep.bvh",
    "malformed_132_channels_66_values_per_row.bvh",
    "malformed_frames_1352_but_1_row.bvh",
    "malformed_frames_3069_rows_3070_boxing_toes.bvh",
    "malformed_hierarchy_only_no_motion_kinect.bvh",
    "malformed_no_motion_keyword_no_frame_time.bvh",
    "pymo_writer_end_site_lowercase_xyz.bvh",
    "truebones_elephant_idle_6ch_every_joint.bvh",
}


def cli_table(bvh_bin: Path, *args: str) -> tuple[list[str], np.ndarray]:
    """Runs `bvh ARGS` (CSV on stdout): joint names of frame 0 and the numbers."""
    out = subprocess.run([str(bvh_bin), *args], check=True, capture_output=True, text=True).stdout
    rows = list(csv.reader(io.StringIO(out)))
    header, rows = rows[0], rows[1:]
    first = 3 if "order" in header else 2
    names = [r[1] for r in rows if r[0] == "0"]
    values = np.array([[float(v) for v in r[first:]] for r in rows], dtype=np.float64)
    return names, values


def assert_close(actual: np.ndarray, expected: np.ndarray, what: str) -> None:
    """Every number within 1e-9 relative (of the value, or of the array's scale near 0)."""
    assert actual.shape == expected.shape, what
    scale = max(float(np.abs(expected).max()) if expected.size else 0.0, 1.0)
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-9 * scale, err_msg=what)


def test_every_file_reads_with_consistent_arrays(corpus):
    for path in corpus:
        b = bvhkit.read(path)
        j, c, f = b.n_joints, b.n_channels, b.n_frames
        assert len(b) == f
        assert b.path == path
        assert len(b.joint_names) == j
        assert b.parents.shape == (j,) and b.parents.dtype == np.int64
        assert all(-1 <= p < i for i, p in enumerate(b.parents)), path.name
        assert b.offsets.shape == (j, 3) and b.offsets.dtype == np.float64
        assert len(b.channels) == j and sum(map(len, b.channels)) == c
        assert b.channel_joints.shape == (c,)
        assert b.motion.shape == (f, c) and b.motion.dtype == np.float64
        assert b.frame_time > 0 and b.fps == pytest.approx(1 / b.frame_time)
        p = b.positions()
        assert p.shape == (f, j, 3) and p.dtype == np.float64 and p.flags.c_contiguous
        assert np.isfinite(p).all(), path.name


def test_positions_equal_bvh_positions(corpus, bvh_bin):
    for path in corpus:
        b = bvhkit.read(path)
        for mode in ("replace", "add"):
            names, table = cli_table(
                bvh_bin, "positions", str(path), "--position-channels", mode, "--format", "csv"
            )
            if b.n_frames:
                assert names == b.joint_names, path.name
            expected = table.reshape(b.n_frames, b.n_joints, 3)
            assert_close(b.positions(position_channels=mode), expected, f"{path.name} {mode}")


@pytest.mark.parametrize("repr_", ["quat", "matrix", "6d", "axis_angle", "euler"])
@pytest.mark.parametrize("space", ["local", "world"])
def test_rotations_equal_bvh_rotations(corpus, bvh_bin, repr_, space):
    # Five files with different orders and layouts keep this quick.
    picks = [
        "second_life_avatar_walk_poser_per_joint_orders.bvh",
        "fair_zombie_animated_drawings_xyz_yxz.bvh",
        "pybvh_fixture_rotation_before_position_root.bvh",
        "godot_vr_mocap_root_0_channels_trackers.bvh",
        "xsens_mvn_style_mpi_1space_yxz_crlf.bvh",
    ]
    by_name = {p.name: p for p in corpus}
    for name in picks:
        path = by_name[name]
        b = bvhkit.read(path)
        cli_repr = repr_.replace("_", "-")
        for continuous in (False, True):
            args = ["rotations", str(path), "--repr", cli_repr, "--space", space]
            _, table = cli_table(bvh_bin, *args, *(["--continuous"] if continuous else []))
            got = b.rotations(repr_, space=space, continuous=continuous)
            got = got.reshape(b.n_frames * b.n_joints, -1)
            assert_close(got, table, f"{name} {repr_} {space} continuous={continuous}")


def test_positions_equal_pybvh_where_it_reads(corpus):
    pybvh = pytest.importorskip("pybvh")
    refused = set()
    for path in corpus:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = pybvh.read_bvh_file(path, world_up="+y")
                expected = theirs.node_positions()
        except ValueError:
            refused.add(path.name)
            continue
        b = bvhkit.read(path)
        assert_close(b.positions(), expected, path.name)
        # Their joint angles (radians) are our local Euler angles in each joint's order.
        ours = np.radians(b.rotations("euler")[:, ~b.end_sites])
        assert_close(ours, theirs.joint_angles, path.name)
    assert refused == PYBVH_CANNOT_READ


def test_read_many_equals_read_on_one_and_two_threads(corpus):
    singles = [bvhkit.read(p) for p in corpus]
    for threads in (1, 2, None):
        many = bvhkit.read_many(corpus, threads=threads, positions=True)
        assert len(many) == len(corpus)
        for one, (b, pos) in zip(singles, many, strict=True):
            assert b.path == one.path
            assert np.array_equal(b.motion, one.motion)
            assert np.array_equal(pos, one.positions())
            assert [str(w) for w in b.warnings] == [str(w) for w in one.warnings]


def test_round_trip_is_exact(corpus, tmp_path):
    for path in corpus:
        b = bvhkit.read(path)
        text = b.to_bytes()
        back = bvhkit.parse(text, strict=True)
        assert back.joint_names == b.joint_names
        assert back.motion.tobytes() == b.motion.tobytes(), path.name
        assert back.frame_time == b.frame_time
        out = tmp_path / path.name
        b.write(out)
        assert out.read_bytes() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in corpus)
