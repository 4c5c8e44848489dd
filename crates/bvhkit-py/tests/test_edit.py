"""The edit methods of ``Bvh`` against the ``bvh edit`` command on corpus files.

Every method must give the same bytes (``to_bytes()``) as ``bvh edit`` with
the matching flag, and refuse what the command refuses with the core's
message as a ``ValueError``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import corpus_named

import bvhkit

# Diverse corpus files: Y up (CMU walk, fingers), Z up, Y down without End
# Sites, position channels on every joint, a quadruped.
FILES = [
    "cmu_01_01_walk_cgspeed_mb_names.bvh",
    "fair_zombie_animated_drawings_xyz_yxz.bvh",
    "azure_kinect_xyz_no_end_sites.bvh",
    "makehuman_163_joints_6ch_every_joint_deep.bvh",
    "rokoko_jesse_dance_yxz_fingers.bvh",
    "truebones_elephant_idle_6ch_every_joint.bvh",
]

# (method call on a Bvh, `bvh edit` flags); `{tmp}` is a folder for side files.
CASES = [
    ("frames", lambda b, t: b.frames(3, 40), ["--frames", "3..40"]),
    ("frames_open", lambda b, t: b.frames(5), ["--frames", "5.."]),
    ("frames_beyond", lambda b, t: b.frames(2, 10**9), ["--frames", "2..1000000000"]),
    ("every", lambda b, t: b.every(3), ["--every", "3"]),
    ("reverse", lambda b, t: b.reverse(), ["--reverse"]),
    ("resample", lambda b, t: b.resample(24), ["--fps", "24"]),
    ("reorder", lambda b, t: b.reorder("XYZ"), ["--order", "XYZ"]),
    ("relayout", lambda b, t: b.relayout("YXZ"), ["--layout", "YXZ"]),
    (
        "relayout_all",
        lambda b, t: b.relayout("ZYX", positions="all"),
        ["--layout", "ZYX", "--layout-positions", "all"],
    ),
    (
        "convert_up_z",
        lambda b, t: b.convert_up("z", source_up="y"),
        ["--up", "z", "--source-up", "y"],
    ),
    ("convert_up_detected", lambda b, t: b.convert_up("y"), ["--up", "y"]),
    ("scale", lambda b, t: b.scale(2.5), ["--scale", "2.5"]),
    (
        "to_units",
        lambda b, t: b.to_units("mm", source_units="cm"),
        ["--units", "mm", "--source-units", "cm"],
    ),
    # The guess from the frames (`UnitGuess::of_bvh`) is the whole-clip
    # path's: a streamed `bvh edit --units` guesses from the rest pose only,
    # so --reverse twice (exact) keeps the command on the whole clip.
    (
        "to_units_guessed",
        lambda b, t: b.to_units("m"),
        ["--reverse", "--units", "m", "--reverse"],
    ),
    ("to_height", lambda b, t: b.to_height(1.8), ["--height", "1.8"]),
    ("mirror", lambda b, t: b.mirror(), ["--mirror"]),
    ("in_place_root", lambda b, t: b.in_place_root(), ["--in-place-root"]),
    ("root_to_origin", lambda b, t: b.root_to_origin(), ["--root-to-origin"]),
    ("extract_root", lambda b, t: b.extract_root("Ground"), ["--extract-root", "Ground"]),
    (
        "rename",
        lambda b, t: b.rename({b.joint_names[0]: "pelvis"}),
        lambda b, t: ["--rename", rename_map(t, {b.joint_names[0]: "pelvis"})],
    ),
    ("rename_pattern", lambda b, t: b.rename_pattern("e", "E"), ["--rename", "e=E"]),
    (
        "remove_joints",
        lambda b, t: b.remove_joints([b.joint_names[1]]),
        lambda b, t: ["--remove-joints", b.joint_names[1]],
    ),
    ("strip_end_sites", lambda b, t: b.strip_end_sites(), ["--strip-end-sites"]),
    ("add_end_sites", lambda b, t: b.add_end_sites(), ["--add-end-sites"]),
    ("rest_pose_frame", lambda b, t: b.rest_pose(1), ["--rest-pose", "1"]),
    (
        "chain",
        lambda b, t: b.frames(0, 30).mirror().reorder("ZYX").scale(0.5),
        ["--frames", "0..30", "--mirror", "--order", "ZYX", "--scale", "0.5"],
    ),
]


def rename_map(tmp: Path, mapping: dict[str, str]) -> str:
    path = tmp / "names.map"
    path.write_text("".join(f"{k}\t{v}\n" for k, v in mapping.items()))
    return str(path)


def cli_edit(bvh_bin: Path, src: Path, out: Path, flags: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(bvh_bin), "edit", str(src), "-o", str(out), *flags],
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="module")
def files(corpus: list[Path]) -> list[Path]:
    return corpus_named(corpus, FILES)


@pytest.mark.parametrize("name,method,flags", CASES, ids=[c[0] for c in CASES])
def test_method_matches_bvh_edit(name, method, flags, files, bvh_bin, tmp_path):
    compared = 0
    for src in files:
        bvh = bvhkit.read(src)
        args = flags(bvh, tmp_path) if callable(flags) else flags
        out = tmp_path / f"{src.stem}.{name}.bvh"
        cli = cli_edit(bvh_bin, src, out, args)
        try:
            edited = method(bvh, tmp_path)
        except ValueError as e:
            # Refused by both, with the same message (up to the advice after
            # a ';', which names the flag or the argument to give).
            assert cli.returncode == 2, f"{src.name}: Python refused ({e}), bvh edit did not"
            what = str(e).split(";")[0]
            assert what and what in cli.stderr, f"{src.name}: {e!r} not in {cli.stderr!r}"
            continue
        assert cli.returncode == 0, f"{src.name}: bvh edit {args} failed: {cli.stderr}"
        assert isinstance(edited, bvhkit.Bvh)
        assert edited is not bvh
        assert edited.to_bytes() == out.read_bytes(), f"{src.name}: {name} differs from bvh edit"
        compared += 1
    # Every case compares bytes on most files (a refusal is the exception).
    assert compared >= len(files) - 2, f"{name}: only {compared} files compared"


def test_rest_pose_from_another_file(files, bvh_bin, tmp_path):
    src, other = files[0], files[0]
    bvh = bvhkit.read(src)
    shifted = bvh.rest_pose(5)
    shifted_path = tmp_path / "rest5.bvh"
    shifted.write(shifted_path)
    out = tmp_path / "back.bvh"
    cli = cli_edit(bvh_bin, other, out, ["--rest-pose", str(shifted_path)])
    assert cli.returncode == 0, cli.stderr
    assert bvh.rest_pose(shifted).to_bytes() == out.read_bytes()


def test_the_original_is_unchanged(files):
    bvh = bvhkit.read(files[0])
    before = bvh.to_bytes()
    bvh.mirror()
    bvh.frames(0, 2)
    bvh.scale(3)
    assert bvh.to_bytes() == before


def test_errors_are_value_errors_with_the_core_message(files, bvh_bin, tmp_path):
    src = files[0]
    bvh = bvhkit.read(src)
    # Refused by the core: the same message as `bvh edit` prints.
    for call, flags in [
        (lambda: bvh.remove_joints(["NoSuchJoint"]), ["--remove-joints", "NoSuchJoint"]),
        (lambda: bvh.rename_pattern("", "x"), ["--rename", "=x"]),
        (lambda: bvh.rest_pose(10**9), ["--rest-pose", "1000000000"]),
        (lambda: bvh.extract_root("Hips"), ["--extract-root", "Hips"]),
    ]:
        with pytest.raises(ValueError) as e:
            call()
        cli = cli_edit(bvh_bin, src, tmp_path / "x.bvh", flags)
        assert cli.returncode == 2, flags
        assert str(e.value) and str(e.value) in cli.stderr, f"{e.value!r} vs {cli.stderr!r}"
    # Refused by the core (the command refuses these values in its argument
    # parser, with its own words) or while converting the arguments.
    for bad in [
        lambda: bvh.resample(-1),
        lambda: bvh.scale(0),
        lambda: bvh.scale(1e300),
        lambda: bvh.scale(1e-7),
        lambda: bvh.to_height(1e300),
        lambda: bvh.every(0),
        lambda: bvh.reorder("XYY"),
        lambda: bvh.convert_up("w"),
        lambda: bvh.to_units("furlong"),
        lambda: bvh.relayout("XYZ", positions="some"),
        lambda: bvh.relayout("XYZ", position_channels="mix"),
    ]:
        with pytest.raises(ValueError):
            bad()
    with pytest.raises(TypeError):
        bvh.rest_pose("frame 3")
