"""``Bvh.portable()``, ``write(portable=True)`` and ``relayout``'s refusal
against the ``bvh`` command (issue 30)."""

from __future__ import annotations

import subprocess
import warnings

import numpy as np
import pytest
from conftest import corpus_named

import bvhkit

BANDAI = "bandai_namco_ds1_kick_6ch_every_joint.bvh"


def test_portable_matches_fmt_portable_and_keeps_positions(corpus, bvh_bin, tmp_path):
    for src in corpus_named(corpus, [BANDAI, "kinect_v1_custom_writer_nonzero_root_offset.bvh"]):
        bvh = bvhkit.read(src)
        out = tmp_path / f"{src.stem}.bvh"
        subprocess.run([str(bvh_bin), "fmt", str(src), "--portable", "-o", str(out)], check=True)
        port = bvh.portable()
        assert port.to_bytes() == out.read_bytes()
        written = tmp_path / f"{src.stem}.py.bvh"
        bvh.write(written, portable=True)
        assert written.read_bytes() == out.read_bytes()
        before = bvh.positions()
        size = float(np.ptp(before.reshape(-1, 3), axis=0).max())
        for mode in ("replace", "add"):
            after = port.positions(position_channels=mode)
            assert np.abs(after - before).max() <= 1e-9 * size


def test_relayout_that_loses_motion_is_refused_as_bvh_edit_refuses(corpus, bvh_bin, tmp_path):
    (src,) = corpus_named(corpus, [BANDAI])
    bvh = bvhkit.read(src)
    out = tmp_path / "out.bvh"
    cli = subprocess.run(
        [str(bvh_bin), "edit", str(src), "--layout", "ZXY", "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 2
    hips = r"Hips \(Xposition Yposition Zposition\) by up to 48\.06"
    with pytest.raises(ValueError, match=hips) as e:
        bvh.relayout("ZXY")
    assert str(e.value).split(";")[0] in cli.stderr
    assert not out.exists()
    kept = bvh.relayout("ZXY", drop_motion=True)
    cli = subprocess.run(
        [str(bvh_bin), "edit", str(src), "--layout", "ZXY", "--drop-motion", "-o", str(out)],
        check=True,
    )
    assert kept.to_bytes() == out.read_bytes()


# Files whose portable form pybvh 0.9 still refuses: position channels that
# vary below the root (a carrier under a fixed root, trackers, a moving hand
# or tail), which pybvh does not model, and a file without motion.
PYBVH_CANNOT_READ_PORTABLE = {
    "bandai_namco_ds1_kick_6ch_every_joint.bvh",
    "godot_vr_mocap_root_0_channels_trackers.bvh",
    "malformed_hierarchy_only_no_motion_kinect.bvh",
    "pymo_writer_end_site_lowercase_xyz.bvh",
    "truebones_elephant_idle_6ch_every_joint.bvh",
}


def pybvh_positions(pybvh, path):
    """pybvh's world positions of every joint (End Sites included), or None when it refuses."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pybvh.read_bvh_file(path, world_up="+y").node_positions()
    except ValueError:
        return None


def test_pybvh_reads_portable_outputs_and_retargets_as_bvhkit_does(corpus, tmp_path):
    """pybvh (which reads position channels only on the root) reads the
    portable form of every corpus file but those with varying position
    channels below the root, where it reads 30 of the originals, with
    bvhkit's world positions within 1e-6 of the size; and the retarget of
    a walk onto the six-channels-per-joint targets, which it refused."""
    pybvh = pytest.importorskip("pybvh")
    read_before, refused = 0, set()
    for path in corpus:
        try:
            bvh = bvhkit.read(path)
        except bvhkit.ParseError:
            continue
        out = tmp_path / path.name
        bvh.write(out, portable=True)
        ours = bvh.positions()
        size = float(np.ptp(ours.reshape(-1, 3), axis=0).max()) if ours.size else 1.0
        theirs = pybvh_positions(pybvh, out)
        if theirs is None:
            refused.add(path.name)
            continue
        assert np.abs(theirs - ours).max() <= 1e-6 * size, path.name
        read_before += pybvh_positions(pybvh, path) is not None
    assert refused == PYBVH_CANNOT_READ_PORTABLE
    assert read_before < len(corpus) - len(refused)
    (walk,) = corpus_named(corpus, ["cmu_01_01_walk_cgspeed_mb_names.bvh"])
    targets = [
        "geno_bind_pose_6ch_sci_crlf.bvh",
        "makehuman_163_joints_6ch_every_joint_deep.bvh",
        "perception_neuron_axis_yxz_fingers_crlf.bvh",
    ]
    for target in corpus_named(corpus, targets):
        result = bvhkit.read(walk).retarget(bvhkit.read(target))
        out = tmp_path / f"walk_on_{target.name}"
        result.write(out)
        theirs = pybvh_positions(pybvh, out)
        assert theirs is not None, target.name
        ours = result.positions()
        size = float(np.ptp(ours.reshape(-1, 3), axis=0).max())
        assert np.abs(theirs - ours).max() <= 1e-6 * size, target.name
