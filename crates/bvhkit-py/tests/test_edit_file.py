"""``bvhkit.edit_file`` (the core's streamed edit) against the in-memory edit.

Each case runs the same steps twice on corpus files: streamed from file to
file by ``edit_file``, and as ``Bvh`` methods chained on the loaded clip
(``to_bytes()``); the bytes must be equal. The cases cover the streamed
path (frame steps, per-frame maps, renaming), the look at frames first
(detected up axis, guessed unit, root motion, a rest-pose frame), sampled
lines behind frame steps, and the whole-clip path (reverse, resample).
"""

from __future__ import annotations

import os
import subprocess

import pytest
from conftest import corpus_named

import bvhkit

FILES = [
    "cmu_01_01_walk_cgspeed_mb_names.bvh",
    "fair_zombie_animated_drawings_xyz_yxz.bvh",
    "azure_kinect_xyz_no_end_sites.bvh",
    "truebones_elephant_idle_6ch_every_joint.bvh",
    "bvh_python_test_mocapbank_crlf.bvh",
    "malformed_frames_3069_rows_3070_boxing_toes.bvh",
]

# (name, keyword steps of edit_file, the same as Bvh methods)
CASES = [
    ("frames_every", {"frames": (3, None), "every": 2}, lambda b: b.frames(3).every(2)),
    ("bounded", {"frames": (2, 40)}, lambda b: b.frames(2, 40)),
    (
        "maps",
        {"reorder": "ZXY", "scale": 0.5, "rename_pattern": ("Left", "L_")},
        lambda b: b.reorder("ZXY").scale(0.5).rename_pattern("Left", "L_"),
    ),
    ("up_detected", {"every": 2, "convert_up": "z"}, lambda b: b.every(2).convert_up("z")),
    ("units_guessed", {"frames": (1, None), "to_units": "m"}, lambda b: b.frames(1).to_units("m")),
    ("in_place", {"in_place_root": True}, lambda b: b.in_place_root()),
    ("rest_frame", {"every": 3, "rest_pose": 1}, lambda b: b.every(3).rest_pose(1)),
    ("strip", {"strip_end_sites": True, "mirror": True}, lambda b: b.strip_end_sites().mirror()),
    ("whole", {"reverse": True, "resample": 24}, lambda b: b.reverse().resample(24)),
]


def named(corpus, name):
    return corpus_named(corpus, [name])[0]


@pytest.mark.parametrize("file", FILES)
@pytest.mark.parametrize(("name", "steps", "methods"), CASES, ids=[c[0] for c in CASES])
def test_edit_file_equals_the_in_memory_edit(corpus, tmp_path, file, name, steps, methods):
    src = named(corpus, file)
    dst = tmp_path / "out.bvh"
    try:
        expected = methods(bvhkit.read(src)).to_bytes()
    except ValueError:
        # Refused in memory (a unit that cannot be guessed): refused too.
        with pytest.raises(ValueError):
            bvhkit.edit_file(src, dst, **steps)
        assert os.listdir(tmp_path) == [], "nothing left behind"
        return
    bvhkit.edit_file(src, dst, **steps)
    assert dst.read_bytes() == expected, name
    assert os.listdir(tmp_path) == ["out.bvh"], "nothing else left behind"


def test_edit_file_keeps_keyword_order_and_says_the_commands_notes(corpus, bvh_bin, tmp_path):
    src = named(corpus, "cmu_01_01_walk_cgspeed_mb_names.bvh")
    a, b = tmp_path / "a.bvh", tmp_path / "b.bvh"
    # Frames 10..20 then every 2nd, against every 2nd then its frames 10..20.
    bvhkit.edit_file(src, a, frames=(10, 20), every=2)
    bvhkit.edit_file(src, b, every=2, frames=(10, 20))
    assert bvhkit.read(a).n_frames == 5
    assert bvhkit.read(b).n_frames == 10
    # The notes are the ones `bvh edit` prints on stderr, in its order.
    for steps, flags in [
        ({"to_units": "m"}, ["--units", "m"]),
        (
            {"every": 3, "convert_up": "z", "in_place_root": True},
            ["--every", "3", "--up", "z", "--in-place-root"],
        ),
    ]:
        notes = bvhkit.edit_file(src, a, **steps)
        said = subprocess.run(
            [bvh_bin, "edit", src, "-o", b, *flags], check=True, capture_output=True, text=True
        ).stderr
        assert notes == said.splitlines() and notes, steps
        assert a.read_bytes() == b.read_bytes(), steps


def test_edit_file_refuses_bad_steps_and_inputs_without_writing(corpus, tmp_path):
    src = named(corpus, "cmu_01_01_walk_cgspeed_mb_names.bvh")
    dst = tmp_path / "out.bvh"
    with pytest.raises(TypeError, match="unknown step"):
        bvhkit.edit_file(src, dst, shuffle=True)
    with pytest.raises(ValueError, match="every must be at least 1"):
        bvhkit.edit_file(src, dst, every=0)
    with pytest.raises(ValueError, match="not a unit"):
        bvhkit.edit_file(src, dst, to_units="furlong")
    with pytest.raises(FileNotFoundError):
        bvhkit.edit_file(tmp_path / "missing.bvh", dst, every=2)
    bad = tmp_path / "bad.bvh"
    bad.write_bytes(
        b"HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n}\n"
        b"MOTION\nFrames: 2\nFrame Time: 0.1\n1\nx\n"
    )
    with pytest.raises(bvhkit.ParseError) as err:
        bvhkit.edit_file(bad, dst, every=1, strict=True)
    assert err.value.path == str(bad) and err.value.line == 11
    # A layout that loses motion is refused, as the command refuses it.
    with pytest.raises(ValueError, match="drop-motion"):
        bvhkit.edit_file(
            named(corpus, "bandai_namco_ds1_kick_6ch_every_joint.bvh"), dst, relayout="ZXY"
        )
    assert not dst.exists()
    # Never over its input, by any name.
    copy = tmp_path / "copy.bvh"
    copy.write_bytes(src.read_bytes())
    os.link(copy, tmp_path / "link.bvh")
    for same in [copy, tmp_path / "link.bvh", tmp_path / "." / "copy.bvh"]:
        with pytest.raises(ValueError, match="never writes over its input"):
            bvhkit.edit_file(copy, same, every=2)
    assert copy.read_bytes() == src.read_bytes()
