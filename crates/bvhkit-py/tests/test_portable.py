"""``Bvh.portable()``, ``write(portable=True)`` and ``relayout``'s refusal
against the ``bvh`` command (issue 30)."""

from __future__ import annotations

import subprocess

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
    with pytest.raises(ValueError, match=r"Hips \(Xposition Yposition Zposition\) by up to 48\.06") as e:
        bvh.relayout("ZXY")
    assert str(e.value).split(";")[0] in cli.stderr
    assert not out.exists()
    kept = bvh.relayout("ZXY", drop_motion=True)
    cli = subprocess.run(
        [str(bvh_bin), "edit", str(src), "--layout", "ZXY", "--drop-motion", "-o", str(out)],
        check=True,
    )
    assert kept.to_bytes() == out.read_bytes()
