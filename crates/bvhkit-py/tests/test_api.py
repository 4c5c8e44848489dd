"""The Python API on small fixtures written here."""

from __future__ import annotations

import gc
import os
import sys
import warnings

import numpy as np
import pytest

import bvhkit

# Two ROOTs, position channels on a non-root joint, a joint with two
# rotation channels, an End Site: what several Python readers refuse.
TWO_ROOTS = """HIERARCHY
ROOT Hips
{
\tOFFSET 0 10 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Arm
\t{
\t\tOFFSET 5 0 0
\t\tCHANNELS 5 Xposition Yposition Zposition Yrotation Xrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 -4 0
\t\t}
\t}
}
ROOT Prop
{
\tOFFSET 1 2 3
\tCHANNELS 3 Xrotation Yrotation Zrotation
}
MOTION
Frames: 3
Frame Time: 0.04
1 10 2 30 20 10 5 0 0 45 -30 0 0 0
0 11 0 0 0 0 5 1 0 90 0 10 20 30
2 12 1 -170 60 5 6 0 1 -45 15 0 0 0
"""


def rot(axis: str, deg: float) -> np.ndarray:
    """The elementary rotation (column vectors), written out."""
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return {
        "X": np.array([[1, 0, 0], [0, c, -s], [0, s, c]]),
        "Y": np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
        "Z": np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]),
    }[axis]


def reference_world(b: bvhkit.Bvh, frame: int) -> list[np.ndarray]:
    """4x4 world matrices from the channels: local = T(offset, replaced) @ R1 @ R2 @ R3."""
    values = b.motion[frame]
    col = 0
    world = []
    for j, chans in enumerate(b.channels):
        t = b.offsets[j].copy()
        r = np.eye(3)
        for ch in chans:
            axis, kind = ch[0], ch[1:]
            if kind == "position":
                t["XYZ".index(axis)] = values[col]
            else:
                r = r @ rot(axis, values[col])
            col += 1
        local = np.eye(4)
        local[:3, :3], local[:3, 3] = r, t
        p = b.parents[j]
        world.append(local if p < 0 else world[p] @ local)
    return world


@pytest.fixture
def two_roots() -> bvhkit.Bvh:
    return bvhkit.parse(TWO_ROOTS, strict=True)


def test_model_arrays(two_roots):
    b = two_roots
    assert b.joint_names == ["Hips", "Arm", "Arm_End", "Prop"]
    assert b.parents.tolist() == [-1, 0, 1, -1]
    assert b.end_sites.tolist() == [False, False, True, False]
    assert b.offsets.tolist() == [[0, 10, 0], [5, 0, 0], [0, -4, 0], [1, 2, 3]]
    assert b.channels[1] == ["Xposition", "Yposition", "Zposition", "Yrotation", "Xrotation"]
    assert b.channels[2] == []
    assert b.channel_joints.tolist() == [0] * 6 + [1] * 5 + [3] * 3
    assert (b.n_frames, b.n_channels, b.n_joints, len(b)) == (3, 14, 4, 3)
    assert b.frame_time == 0.04 and b.fps == 25.0
    assert b.motion[2, 3] == -170.0
    assert b.path is None
    assert repr(b) == "<bvhkit.Bvh: 3 joints + 1 end sites, 14 channels, 3 frames at 25 fps>"


def test_positions_against_a_4x4_reference(two_roots):
    b = two_roots
    pos = b.positions()
    assert pos.shape == (3, 4, 3) and pos.dtype == np.float64
    for f in range(3):
        expected = np.array([m[:3, 3] for m in reference_world(b, f)])
        np.testing.assert_allclose(pos[f], expected, rtol=0, atol=1e-12)


def test_rotations_against_a_4x4_reference(two_roots):
    b = two_roots
    world = b.rotations("matrix", space="world")
    local = b.rotations("matrix", space="local")
    assert world.shape == (3, 4, 3, 3)
    for f in range(3):
        ref = reference_world(b, f)
        for j in range(4):
            np.testing.assert_allclose(world[f, j], ref[j][:3, :3], atol=1e-14)
            p = b.parents[j]
            parent = np.eye(3) if p < 0 else ref[p][:3, :3]
            np.testing.assert_allclose(parent @ local[f, j], ref[j][:3, :3], atol=1e-14)
    q = b.rotations("quat", space="world")
    assert q.shape == (3, 4, 4)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-15)
    assert (q[..., 3] >= 0).all()
    six = b.rotations("6d", space="world")
    np.testing.assert_array_equal(six[..., :3], world[..., :, 0])
    np.testing.assert_array_equal(six[..., 3:], world[..., :, 1])
    aa = b.rotations("axis_angle", space="world")
    angle = np.linalg.norm(aa, axis=-1)
    trace = np.trace(world, axis1=-2, axis2=-1)
    np.testing.assert_allclose(np.cos(angle), (trace - 1) / 2, atol=1e-12)


def test_local_euler_is_the_file_values(two_roots):
    b = two_roots
    e = b.rotations("euler")
    assert b.euler_orders() == ["ZXY", "ZXY", "ZXY", "XYZ"]
    np.testing.assert_array_equal(e[:, 0], b.motion[:, 3:6])
    np.testing.assert_array_equal(e[:, 3], b.motion[:, 11:14])
    assert b.euler_orders("XYZ") == ["XYZ"] * 4
    # Another order: the angles rebuild the same matrix.
    xyz = b.rotations("euler", order="XYZ")
    m = b.rotations("matrix")
    for f in range(3):
        a = xyz[f, 0]
        np.testing.assert_allclose(
            rot("X", a[0]) @ rot("Y", a[1]) @ rot("Z", a[2]), m[f, 0], atol=1e-12
        )


def test_frame_selection(two_roots):
    b = two_roots
    allp = b.positions()
    np.testing.assert_array_equal(b.positions(frames=1), allp[1])
    np.testing.assert_array_equal(b.positions(frames=-1), allp[2])
    np.testing.assert_array_equal(b.positions(frames=slice(None, None, 2)), allp[::2])
    np.testing.assert_array_equal(b.positions(frames=[2, 0]), allp[[2, 0]])
    np.testing.assert_array_equal(b.positions(frames=range(1, 3)), allp[1:3])
    assert b.positions(frames=[]).shape == (0, 4, 3)
    with pytest.raises(IndexError, match="frame 3 is out of range for 3 frames"):
        b.positions(frames=3)
    with pytest.raises(IndexError):
        b.positions(frames=[0, -4])
    with pytest.raises(TypeError):
        b.positions(frames="0")


def test_position_channels_add_and_replace(two_roots):
    b = two_roots
    rep = b.positions()
    add = b.positions(position_channels="add")
    # Hips: OFFSET (0, 10, 0) replaced by, or added to, the channels.
    np.testing.assert_array_equal(rep[0, 0], [1, 10, 2])
    np.testing.assert_array_equal(add[0, 0], [1, 20, 2])
    with pytest.raises(ValueError, match="position_channels"):
        b.positions(position_channels="both")


def test_motion_is_a_read_only_view_that_keeps_its_owner(two_roots):
    b = two_roots
    m = b.motion
    assert m.dtype == np.float64 and m.shape == (3, 14)
    assert not m.flags.writeable and not m.flags.owndata
    assert m.base is b
    assert np.shares_memory(m, b.motion)  # no copy per access
    with pytest.raises(ValueError):
        m[0, 0] = 1.0
    with pytest.raises(ValueError):
        m.setflags(write=True)
    before = sys.getrefcount(b)
    m2 = b.motion
    assert sys.getrefcount(b) == before + 1
    del m2
    expected = m.copy()
    del b, two_roots
    gc.collect()
    _ = [np.zeros(1000) for _ in range(100)]
    np.testing.assert_array_equal(m, expected)
    assert isinstance(m.base, bvhkit.Bvh)


def test_parse_takes_bytes_and_str():
    a = bvhkit.parse(TWO_ROOTS)
    b = bvhkit.parse(TWO_ROOTS.encode())
    c = bvhkit.parse(bytearray(TWO_ROOTS.encode()))
    assert a.to_bytes() == b.to_bytes() == c.to_bytes()
    with pytest.raises(TypeError, match="bytes or str"):
        bvhkit.parse(42)


def test_parse_error_has_position():
    text = TWO_ROOTS.replace("OFFSET 5 0 0", "OFFSET 5 zero 0")
    with pytest.raises(bvhkit.ParseError) as info:
        bvhkit.parse(text)
    e = info.value
    assert isinstance(e, ValueError)
    assert (e.line, e.column, e.path) == (8, 12, None)
    assert str(e).startswith("8:12: ")
    assert "'zero'" in str(e)


def test_read_errors_carry_the_path(tmp_path):
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT A\n{\n  OFFSET 0 0 0\n  CHANNELS 2 Xrotation Wrotation\n}\n")
    with pytest.raises(bvhkit.ParseError) as info:
        bvhkit.read(bad)
    assert info.value.path == str(bad)
    assert (info.value.line, info.value.column) == (5, 24)
    assert str(info.value).startswith(f"{bad}:5:24: ")
    with pytest.raises(FileNotFoundError) as nf:
        bvhkit.read(tmp_path / "missing.bvh")
    assert nf.value.filename == str(tmp_path / "missing.bvh")
    with pytest.raises(IsADirectoryError):
        bvhkit.read(tmp_path)


def test_strict_and_lenient_warnings(tmp_path):
    text = TWO_ROOTS.replace("Frames: 3", "Frames: 5")
    path = tmp_path / "count.bvh"
    path.write_text(text)
    with pytest.raises(bvhkit.ParseError, match="Frames"):
        bvhkit.read(path, strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = bvhkit.read(path)  # warn=False: nothing emitted
    (w,) = b.warnings
    assert (w.line, w.column, w.kind) == (22, 9, "FrameCount")
    line, column, message = w
    assert (line, column) == (22, 9) and "declares 5 frames" in message
    assert str(w) == f"22:9: {message}"
    with pytest.warns(bvhkit.BvhWarning, match=r"count\.bvh:22:9: Frames: declares 5"):
        bvhkit.read(path, warn=True)
    assert issubclass(bvhkit.BvhWarning, UserWarning)
    assert bvhkit.read(path, strict=False).n_frames == 3


def test_read_many_errors(tmp_path):
    good = tmp_path / "good.bvh"
    good.write_text(TWO_ROOTS)
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT A\n")
    missing = tmp_path / "missing.bvh"
    with pytest.raises(bvhkit.ParseError) as info:
        bvhkit.read_many([good, bad, missing])
    assert info.value.path == str(bad)  # the first failure in input order
    out = bvhkit.read_many([missing, good, bad], errors="return")
    assert isinstance(out[0], FileNotFoundError) and out[0].filename == str(missing)
    assert isinstance(out[1], bvhkit.Bvh)
    assert isinstance(out[2], bvhkit.ParseError) and out[2].line == 3
    pairs = bvhkit.read_many([good], positions=True, position_channels="add")
    b, pos = pairs[0]
    np.testing.assert_array_equal(pos, b.positions(position_channels="add"))
    assert bvhkit.read_many([]) == []
    with pytest.raises(ValueError, match="threads"):
        bvhkit.read_many([good], threads=0)
    # Refused at once, not after creating a million threads.
    with pytest.raises(ValueError, match="threads must be 1 to 1024, not 1000000"):
        bvhkit.read_many([good], threads=10**6)
    with pytest.raises(ValueError, match="errors"):
        bvhkit.read_many([good], errors="ignore")


def test_write_is_atomic_and_exact(two_roots, tmp_path):
    out = tmp_path / "out.bvh"
    out.write_text("old")
    two_roots.write(out)
    assert out.read_bytes() == two_roots.to_bytes()
    assert os.listdir(tmp_path) == ["out.bvh"]  # no temporary left behind
    back = bvhkit.read(out, strict=True)
    assert back.motion.tobytes() == two_roots.motion.tobytes()
    with pytest.raises(FileNotFoundError):
        two_roots.write(tmp_path / "no" / "such" / "dir.bvh")
    assert os.listdir(tmp_path) == ["out.bvh"]


def test_bad_arguments(two_roots):
    with pytest.raises(ValueError, match="repr"):
        two_roots.rotations("euler321")
    with pytest.raises(ValueError, match="space"):
        two_roots.rotations("quat", space="parent")
    with pytest.raises(ValueError, match="rotation order"):
        two_roots.rotations("euler", order="XXY")


def test_package_surface():
    """The package exports what the stub declares, and nothing public besides."""
    import ast
    from pathlib import Path

    assert bvhkit.__version__ == "0.1.0"
    stub = Path(__file__).resolve().parents[1] / "python/bvhkit/__init__.pyi"
    tree = ast.parse(stub.read_text())
    declared = {n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)} | {
        "__version__"
    }
    assert {"Bvh", "read", "parse", "read_many", "concat", "ParseError"} <= declared
    for name in declared:
        assert getattr(bvhkit, name) is not None, name
    public = {n for n in dir(bvhkit) if not n.startswith("_")}
    assert public <= declared, public - declared
    assert bvhkit.read.__doc__ and bvhkit.Bvh.positions.__doc__


def test_stub_examples_run(monkeypatch):
    """Every >>> example in the docstrings of __init__.pyi runs and prints what it says."""
    import ast
    import doctest
    from pathlib import Path

    repo = Path(__file__).resolve().parents[3]
    stub = repo / "crates/bvhkit-py/python/bvhkit/__init__.pyi"
    monkeypatch.chdir(repo)
    tree = ast.parse(stub.read_text())
    nodes = [tree, *ast.walk(tree)]
    docs = [
        ast.get_docstring(n)
        for n in nodes
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)
    ]
    parser = doctest.DocTestParser()
    examples = [e for d in docs if d for e in parser.get_examples(d)]
    assert len(examples) >= 10
    test = doctest.DocTest(examples, {"bvhkit": bvhkit}, "__init__.pyi", str(stub), 0, None)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
