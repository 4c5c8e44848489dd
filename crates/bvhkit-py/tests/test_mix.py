"""The blend family and retarget from Python against the ``bvh`` command.

``Bvh.concat``/``bvhkit.concat``, ``blend``, ``layer``, ``loop`` and
``retarget`` must write the same bytes (``to_bytes()``) as ``bvh concat``,
``blend``, ``layer``, ``loop`` and ``retarget`` with the matching flags on
corpus files, keep the operations' invariants, and refuse bad input with a
precise ``ValueError`` (the core's message, as the command prints it).

The second clip of a pair is made from the first by exact edits (reversed,
a frame range, another Euler order, another frame rate), written to a
temporary file the command reads: so both sides mix the same real motion.
"""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import corpus_named

import bvhkit

# Y up walk with travel; Z up with YXZ order; no End Sites; 6 channels on
# every joint; fingers in YXZ; a quadruped.
FILES = [
    "cmu_01_01_walk_cgspeed_mb_names.bvh",
    "fair_zombie_animated_drawings_xyz_yxz.bvh",
    "azure_kinect_xyz_no_end_sites.bvh",
    "bandai_namco_ds1_kick_6ch_every_joint.bvh",
    "rokoko_jesse_dance_yxz_fingers.bvh",
    "truebones_elephant_idle_6ch_every_joint.bvh",
]


def run(bvh_bin: Path, *args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(bvh_bin), *(str(a) for a in args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def files(corpus: list[Path]) -> list[Path]:
    return corpus_named(corpus, FILES)


def second(bvh: bvhkit.Bvh, how: str, tmp: Path) -> tuple[bvhkit.Bvh, Path]:
    """A second clip of the same skeleton, written for the command and read back."""
    n = bvh.n_frames
    other = {
        "reverse": lambda: bvh.reverse(),
        "middle": lambda: bvh.frames(n // 4, n // 4 + max(n // 2, 2)),
        "reorder": lambda: bvh.reverse().reorder("XYZ"),
        "resample": lambda: bvh.frames(n // 3).resample(bvh.fps * 0.75),
    }[how]()
    path = tmp / f"{how}.bvh"
    other.write(path)
    return bvhkit.read(path), path


def quiet(call):
    """`call()` with the BvhWarnings of resampled or converted clips muted."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bvhkit.BvhWarning)
        return call()


# (id, second clip, Python call on (a, b), command and flags on (A, B, OUT)).
CASES = [
    (
        "concat",
        "reverse",
        lambda a, b: a.concat(b),
        lambda A, B, Out: ["concat", A, B, "-o", Out],
    ),
    (
        "concat_crossfade_frames_three",
        "middle",
        lambda a, b: bvhkit.concat([a, b, a], crossfade=7),
        lambda A, B, Out: ["concat", A, B, A, "-o", Out, "--crossfade", "7"],
    ),
    (
        "concat_crossfade_seconds_linear",
        "reorder",
        lambda a, b: a.concat(b, crossfade=0.2, linear=True),
        lambda A, B, Out: ["concat", A, B, "-o", Out, "--crossfade", "0.2s", "--linear"],
    ),
    (
        "concat_keep_position_text_span",
        "resample",
        lambda a, b: bvhkit.concat([a, b], crossfade="0.1s", keep_position=True),
        lambda A, B, Out: ["concat", A, B, "-o", Out, "--crossfade", "0.1s", "--keep-position"],
    ),
    (
        "concat_up",
        "reverse",
        lambda a, b: a.concat(b, crossfade=3, up="z"),
        lambda A, B, Out: ["concat", A, B, "-o", Out, "--crossfade", "3", "--up", "z"],
    ),
    (
        "blend_constant",
        "reverse",
        lambda a, b: a.blend(b, 0.3),
        lambda A, B, Out: ["blend", A, B, "-o", Out, "--weight", "0.3"],
    ),
    (
        "blend_ramp_text",
        "resample",
        lambda a, b: a.blend(b, "0..1:smooth"),
        lambda A, B, Out: ["blend", A, B, "-o", Out, "--weight", "0..1:smooth"],
    ),
    (
        "blend_keys_converted",
        "reorder",
        lambda a, b: a.blend(b, "0:0,0.5:1,1:0.25"),
        lambda A, B, Out: ["blend", A, B, "-o", Out, "--weight", "0:0,0.5:1,1:0.25"],
    ),
    (
        "blend_masked",
        "reverse",
        lambda a, b: a.blend(b, 0.8, joints=subtree(a)),
        lambda A, B, Out: ["blend", A, B, "-o", Out, "--weight", "0.8", "--joints", "{subtree}"],
    ),
    (
        "layer",
        "reverse",
        lambda a, b: a.layer(b),
        lambda A, B, Out: ["layer", A, B, "-o", Out],
    ),
    (
        "layer_weighted_masked_reference",
        "middle",
        lambda a, b: a.layer(b, weight="0..1", joints=subtree(a), reference=3),
        lambda A, B, Out: [
            "layer",
            A,
            B,
            "-o",
            Out,
            "--weight",
            "0..1",
            "--joints",
            "{subtree}",
            "--reference",
            "3",
        ],
    ),
    (
        "layer_converted",
        "resample",
        lambda a, b: a.layer(b, weight=0.5),
        lambda A, B, Out: ["layer", A, B, "-o", Out, "--weight", "0.5"],
    ),
    (
        "loop_keep",
        None,
        lambda a, b: a.loop(),
        lambda A, B, Out: ["loop", A, "-o", Out],
    ),
    (
        "loop_in_place_frames",
        None,
        lambda a, b: a.loop(crossfade=9, travel="remove"),
        lambda A, B, Out: ["loop", A, "-o", Out, "--crossfade", "9", "--in-place"],
    ),
    (
        "loop_seconds_linear_up",
        None,
        lambda a, b: a.loop(crossfade="0.3s", linear=True, up="y"),
        lambda A, B, Out: ["loop", A, "-o", Out, "--crossfade", "0.3s", "--linear", "--up", "y"],
    ),
]


def subtree(bvh: bvhkit.Bvh) -> str:
    """A joint with a subtree below it: the root's first child that has children."""
    parents = list(bvh.parents)
    names = bvh.joint_names
    for i in range(1, bvh.n_joints):
        if parents[i] == 0 and not bvh.end_sites[i] and i in parents:
            return names[i]
    raise AssertionError(f"no subtree in {names}")


@pytest.mark.parametrize("name,how,method,cli", CASES, ids=[c[0] for c in CASES])
def test_method_matches_the_command(name, how, method, cli, files, bvh_bin, tmp_path):
    compared = 0
    for src in files:
        a = bvhkit.read(src)
        b, b_path = second(a, how, tmp_path) if how else (None, None)
        out = tmp_path / f"{src.stem}.{name}.bvh"
        args = [str(x).replace("{subtree}", subtree(a)) for x in cli(src, b_path, out)]
        done = run(bvh_bin, *args)
        try:
            result = quiet(lambda a=a, b=b: method(a, b))
        except ValueError as e:
            # Refused by both, with the same message.
            assert done.returncode != 0, f"{src.name}: Python refused ({e}), the command did not"
            assert str(e) in done.stderr, f"{src.name}: {e!r} not in {done.stderr!r}"
            continue
        assert done.returncode == 0, f"{src.name}: bvh {args} failed: {done.stderr}"
        assert isinstance(result, bvhkit.Bvh) and result is not a
        assert result.to_bytes() == out.read_bytes(), f"{src.name}: {name} differs from bvh"
        assert isinstance(result.report, str)
        compared += 1
    assert compared >= len(files) - 1, f"{name}: only {compared} files compared"


def test_reports_are_the_commands_notes(files, bvh_bin, tmp_path):
    a = bvhkit.read(files[0])
    b, b_path = second(a, "resample", tmp_path)
    with pytest.warns(bvhkit.BvhWarning, match="resampled from"):
        blended = a.blend(b, 0.5)
    assert "second clip resampled from" in blended.report
    done = run(bvh_bin, "blend", files[0], b_path, "-o", tmp_path / "x.bvh", "--weight", "0.5")
    assert blended.report.replace(str(b_path), "") in done.stderr.replace(str(b_path), "")
    looped = a.loop(crossfade=10)
    assert looped.report.startswith(f"loop of {a.n_frames - 10} frames (10 crossfaded)")
    assert a.report is None and a.reverse().report is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert a.blend(a, 0.5).report == ""  # nothing to say, nothing warned


def test_blend_at_zero_and_one_is_the_inputs(files):
    for src in files:
        a = bvhkit.read(src)
        b = a.reverse()
        assert a.blend(b, 0.0).to_bytes() == a.to_bytes(), src.name
        assert a.blend(b, 1.0).to_bytes() == b.to_bytes(), src.name
        # A per-frame weight array of zeros and ones picks whole frames.
        w = np.zeros(a.n_frames)
        w[::2] = 1.0
        mixed = a.blend(b, w)
        assert np.array_equal(mixed.motion[::2], b.motion[::2]), src.name
        assert np.array_equal(mixed.motion[1::2], a.motion[1::2]), src.name
        # A masked blend at 1 leaves every channel outside the subtree A's.
        masked = a.blend(b, 1.0, joints=subtree(a)).motion
        inside = set(subtree_joints(a, subtree(a)))
        cols = np.array([j not in inside for j in a.channel_joints])
        assert np.array_equal(masked[:, cols], a.motion[:, cols]), src.name
        assert np.array_equal(masked[:, ~cols], b.motion[:, ~cols]), src.name


def subtree_joints(bvh: bvhkit.Bvh, name: str) -> list[int]:
    parents = list(bvh.parents)
    inside = [bvh.joint_names.index(name)]
    for i in range(bvh.n_joints):
        if parents[i] in inside:
            inside.append(i)
    return inside


def slerp(q0: np.ndarray, q1: np.ndarray, t: float) -> np.ndarray:
    """Quaternion SLERP from its formula (shortest arc), [x, y, z, w] rows."""
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0, -q1, q1)
    dot = np.abs(dot).clip(-1, 1)
    theta = np.arccos(dot)
    s = np.sin(theta)
    small = s < 1e-12
    a = np.where(small, 1 - t, np.sin((1 - t) * theta) / np.where(small, 1, s))
    b = np.where(small, t, np.sin(t * theta) / np.where(small, 1, s))
    return a * q0 + b * q1


def slerp_long(q0: np.ndarray, q1: np.ndarray, t: float) -> np.ndarray:
    """SLERP along the other arc between the two rotations (the long way)."""
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0, q1, -q1)
    theta = np.arccos(-np.abs(dot).clip(-1, 1))
    s = np.sin(theta)
    return (np.sin((1 - t) * theta) * q0 + np.sin(t * theta) * q1) / s


def test_per_frame_weights_follow_slerp(files):
    a = bvhkit.read(files[0])
    b = a.reverse()
    w = np.linspace(0.0, 1.0, a.n_frames) ** 2
    out = a.blend(b, w).rotations("quat")
    qa, qb = a.rotations("quat"), b.rotations("quat")
    for k in range(0, a.n_frames, 37):
        want = slerp(qa[k], qb[k], w[k])
        # Rotations more than 120 degrees apart may take the other arc (the
        # one nearer the previous frame, so that the blend does not flip
        # from one side to the other).
        other = slerp_long(qa[k], qb[k], w[k])
        far = np.abs(np.sum(qa[k] * qb[k], -1)) < np.cos(np.radians(60.0))
        got = out[k]
        # q and -q are one rotation.
        err = np.minimum(np.abs(got - want).max(-1), np.abs(got + want).max(-1))
        err_other = np.minimum(np.abs(got - other).max(-1), np.abs(got + other).max(-1))
        err = np.where(far, np.minimum(err, err_other), err)
        assert err.max() < 1e-9, (k, err.max())
    # The same weights as keys in the command line's text give the same file.
    keys = ",".join(f"{k / (a.n_frames - 1)!r}:{float(x)!r}" for k, x in enumerate(w))
    assert a.blend(b, keys).to_bytes() == a.blend(b, w).to_bytes()


def test_concat_length_and_continuity(files):
    for src in files:
        a = bvhkit.read(src)
        b = a.reverse()
        n, m = a.n_frames, b.n_frames
        assert bvhkit.concat([a, b]).n_frames == n + m, src.name
        assert a.concat(b, a).n_frames == 2 * n + m, src.name
        # search=0: the seam stays where the clips meet (the default moves
        # it up to 0.5 s to match the gait, dropping frames, reported).
        assert a.concat(b, crossfade=5, search=0).n_frames == n + m - 5, src.name
        fade = round(0.1 * a.fps)
        assert a.concat(b, crossfade=0.1, search=0).n_frames == n + m - fade, src.name
        searched = a.concat(b, crossfade=5)
        dropped = n + m - 5 - searched.n_frames
        assert 0 <= dropped <= 2 * round(0.5 * a.fps), src.name
        assert (dropped > 0) == ("seam moved to match the gait" in searched.report), src.name
        # Outside the crossfade, the first clip is copied bit for bit.
        joined = a.concat(b, crossfade=5, search=0)
        assert np.array_equal(joined.motion[: n - 5], a.motion[: n - 5]), src.name
        kept = a.concat(b, keep_position=True)
        assert np.array_equal(kept.motion, np.vstack([a.motion, b.motion])), src.name


def test_loop_length_and_seam(files):
    a = bvhkit.read(files[0])
    looped = a.loop(crossfade=12)
    assert looped.n_frames == a.n_frames - 12
    # Outside the crossfade every frame is a copy.
    assert np.array_equal(looped.motion[12:], a.motion[12 : a.n_frames - 12])
    # search: up to 0.5 s dropped from each end, said in the report.
    searched = a.loop(crossfade=12, search=0.5)
    dropped = a.n_frames - 12 - searched.n_frames
    assert 0 <= dropped <= 2 * round(0.5 * a.fps)
    assert (dropped > 0) == ("seam moved to match the ends" in searched.report)
    in_place = a.loop(crossfade=12, travel="remove")
    assert in_place.n_frames == looped.n_frames
    # In place: the carrier ends its cycle about where it started on the
    # ground (the travel removed), unlike the kept loop.
    up = 1  # the CMU walk is Y up
    ground = [i for i in range(3) if i != up]
    hips = lambda b: b.positions()[:, 0, ground]  # noqa: E731
    step = np.linalg.norm(np.diff(hips(a), axis=0), axis=1).mean()
    drift_kept = np.linalg.norm(hips(looped)[-1] - hips(looped)[0])
    drift_in_place = np.linalg.norm(hips(in_place)[-1] - hips(in_place)[0])
    assert drift_kept > 20 * step
    assert drift_in_place < 3 * step


def height(bvh: bvhkit.Bvh) -> float:
    pos = bvh.positions()
    return float(np.ptp(pos, axis=1).max())


def test_retarget_onto_its_own_skeleton_is_the_identity(corpus):
    checked = 0
    for src in corpus:
        if src.name.startswith("malformed_"):
            continue
        a = bvhkit.read(src)
        if a.n_frames == 0:
            continue
        # Joints below the root keep the target's offsets by default; six-
        # channel rigs' values differ from their offsets (by 1.5e-5 in
        # Bandai Namco's), so the identity copies the source's translations.
        # The exact transfer: the default foot lock plants the captured feet
        # (stopping their slide), which is not the identity.
        out = a.retarget(a, joint_translations=True, lock_feet=False)
        assert out.joint_names == a.joint_names and out.n_frames == a.n_frames, src.name
        h = height(a)
        worst = float(np.abs(out.positions() - a.positions()).max())
        assert worst <= 1e-9 * h, f"{src.name}: {worst} > 1e-9 * {h}"
        # A rig whose hips are not above its feet (bvh_anim_test_simple's
        # two joints) says its root translation is not scaled, and why.
        assert (
            "root translation scaled by 1.000000" in out.report
            or "root translation not scaled (1)" in out.report
        ), src.name
        checked += 1
    assert checked >= 30


RETARGETS = [
    # (source, target, Python keyword arguments, command flags)
    ("cmu_01_01_walk_cgspeed_mb_names", "bandai_namco_ds1_kick_6ch_every_joint", {}, []),
    ("cmu_01_01_walk_cgspeed_mb_names", "rokoko_jesse_dance_yxz_fingers", {}, []),
    (
        "perception_neuron_axis_yxz_fingers_crlf",
        "cmu_01_01_walk_cgspeed_mb_names",
        {"reference": "rest", "source_reference": "tpose"},
        ["--reference", "rest", "--source-reference", "tpose"],
    ),
    (
        "bandai_namco_ds1_kick_6ch_every_joint",
        "cmu_12_01_walk_cgspeed_pybvh",
        {"reference": 0, "source_up": "y", "target_up": "y", "position_channels": "add"},
        ["--reference", "0", "--source-up", "y", "--target-up", "y"]
        + ["--position-channels", "add"],
    ),
    # Notes of what the map leaves out: a quadruped onto a person, a
    # hand-only rig onto a body.
    ("truebones_elephant_idle_6ch_every_joint", "cmu_12_01_walk_cgspeed_pybvh", {}, []),
    ("hand_only_skeleton_lhand_crlf", "cmu_01_01_walk_cgspeed_mb_names", {}, []),
]


@pytest.mark.parametrize(
    "src,tgt,kwargs,flags", RETARGETS, ids=[f"{r[0]}-onto-{r[1]}" for r in RETARGETS]
)
def test_retarget_matches_the_command(src, tgt, kwargs, flags, corpus, bvh_bin, tmp_path):
    by_name = {p.stem: p for p in corpus}
    s, t = by_name[src], by_name[tgt]
    out = tmp_path / "out.bvh"
    done = run(bvh_bin, "retarget", s, "--to", t, "-o", out, *flags)
    assert done.returncode == 0, done.stderr
    result = bvhkit.read(s).retarget(bvhkit.read(t), **kwargs)
    assert result.to_bytes() == out.read_bytes()
    assert result.joint_names == bvhkit.read(t).joint_names
    # The report is the command's summary, line for line.
    assert result.report.splitlines() == done.stderr.splitlines()


def coverage_notes(report: str) -> list[str]:
    """The notes of what a retarget's map leaves out (``Report::notes``):
    the ``bvh: note:`` lines before ``bvh: feet locked``'s."""
    lines = report.splitlines()
    end = next((i for i, line in enumerate(lines) if line.startswith("bvh: feet locked")), None)
    return [line for line in lines[:end] if line.startswith("bvh: note: ")]


def test_retarget_report_notes_what_the_map_leaves_out(corpus):
    cmu, cmu2, daz, elephant, hand = (
        bvhkit.read(p)
        for p in corpus_named(
            corpus,
            [
                "cmu_12_01_walk_cgspeed_pybvh.bvh",
                "cmu_01_01_walk_cgspeed_mb_names.bvh",
                "cmu_02_03_daz_names_165_joints_face_hands.bvh",
                "truebones_elephant_idle_6ch_every_joint.bvh",
                "hand_only_skeleton_lhand_crlf.bvh",
            ],
        )
    )
    # A quadruped onto a person: its front legs become arms.
    notes = coverage_notes(elephant.retarget(cmu, lock_feet=False).report)
    assert len(notes) == 1 and "the source's hands stand as low as its feet" in notes[0], notes
    # A hand-only rig onto a body maps its root alone: the limbs are kept.
    onto_body = hand.retarget(cmu, lock_feet=False)
    assert "\n1 joint mapped:\n" in onto_body.report
    kept = "no left leg, right leg, left arm or right arm found in the source to drive the target's"
    assert [kept in n for n in coverage_notes(onto_body.report)] == [True], onto_body.report
    # A body onto the hand: its limbs' motion is dropped.
    dropped = "no left leg, right leg, left arm or right arm found in the target"
    notes = coverage_notes(cmu.retarget(hand).report)
    assert [dropped in n for n in notes] == [True], notes
    # The CMU walk onto CMU-like rigs: nothing left out, nothing said.
    for tgt in (cmu, cmu2, daz):
        assert coverage_notes(cmu.retarget(tgt).report) == []


def test_retarget_with_a_map_file_or_dict(corpus, bvh_bin, tmp_path):
    by_name = {p.stem: p for p in corpus}
    s = by_name["cmu_01_01_walk_cgspeed_mb_names"]
    t = by_name["bandai_namco_ds1_kick_6ch_every_joint"]
    src, tgt = bvhkit.read(s), bvhkit.read(t)
    auto = src.retarget(tgt)
    pairs = [line.strip().split(" (")[0].split(" -> ") for line in auto.report.splitlines()]
    pairs = [p for p in pairs if len(p) == 2][:8]
    assert len(pairs) == 8
    mapping = dict(pairs)
    map_file = tmp_path / "cmu_to_bandai.txt"
    map_file.write_text("# eight pairs\n" + "".join(f"{a} = {b}\n" for a, b in pairs))
    out = tmp_path / "out.bvh"
    done = run(bvh_bin, "retarget", s, "--to", t, "-o", out, "--map", map_file)
    assert done.returncode == 0, done.stderr
    from_file = src.retarget(tgt, map=map_file)
    from_str = src.retarget(tgt, map=str(map_file))
    from_dict = src.retarget(tgt, map=mapping)
    assert from_file.to_bytes() == out.read_bytes()
    assert from_str.to_bytes() == out.read_bytes()
    assert from_dict.to_bytes() == out.read_bytes()
    assert from_file.to_bytes() != auto.to_bytes()  # fewer joints driven


def test_bad_input_raises_precise_value_errors(files, bvh_bin, tmp_path):
    walk, kinect = files[0], files[2]
    a, other = bvhkit.read(walk), bvhkit.read(kinect)
    # Mismatched skeletons: the core's message naming the first difference,
    # as the command prints it.
    for call, cmd in [
        (lambda: a.blend(other, 0.5), ["blend", walk, kinect, "--weight", "0.5"]),
        (lambda: a.layer(other), ["layer", walk, kinect]),
        (lambda: bvhkit.concat([a, other]), ["concat", walk, kinect]),
    ]:
        differ = (
            r'the skeletons differ at joint 0: root "Hips" in \S+cmu_01_01\S+, root "PELVIS" in'
        )
        with pytest.raises(ValueError, match=differ) as e:
            call()
        done = run(bvh_bin, *cmd, "-o", tmp_path / "x.bvh")
        assert done.returncode != 0
        assert str(e.value) in done.stderr, f"{e.value!r} vs {done.stderr!r}"
    # An unknown joint: the message lists the joints there are.
    with pytest.raises(ValueError, match=r'no joint named "Tail" \(joints: Hips, ') as e:
        a.blend(a.reverse(), 0.5, joints="Tail")
    with pytest.raises(ValueError, match='no joint named "Tail"'):
        a.layer(a, joints="Tail")
    # Weights out of [0, 1], arrays of the wrong length or shape.
    with pytest.raises(ValueError, match=r"a weight must be in \[0, 1\], found 1.5"):
        a.blend(a, 1.5)
    with pytest.raises(ValueError, match=r"a weight must be in \[0, 1\], found -0.5"):
        a.blend(a, np.full(a.n_frames, -0.5))
    with pytest.raises(ValueError, match=r"a weight must be in \[0, 1\], found NaN"):
        a.blend(a, np.full(a.n_frames, np.nan))
    with pytest.raises(ValueError, match=f"has 3 values; the output has {a.n_frames} frames"):
        a.blend(a, [0.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="must be 1-D"):
        a.blend(a, np.zeros((a.n_frames, 2)))
    with pytest.raises(ValueError, match="unknown ramp shape"):
        a.blend(a, "0..1:cubic")
    with pytest.raises(TypeError):
        a.blend(a, {"w": 1})
    # Crossfades and loops the core refuses.
    with pytest.raises(ValueError, match="the crossfade .* is longer than"):
        a.concat(a, crossfade=10**6)
    with pytest.raises(ValueError, match="at least one frame"):
        a.loop(crossfade=0)
    with pytest.raises(ValueError, match="longer than half the clip"):
        a.loop(crossfade=a.n_frames)
    with pytest.raises(ValueError, match="crossfade must be 0 frames or more"):
        a.concat(a, crossfade=-1)
    with pytest.raises(ValueError, match="expected a number of frames"):
        a.concat(a, crossfade="soon")
    with pytest.raises(ValueError, match="travel must be 'keep' or 'remove'"):
        a.loop(travel="away")
    with pytest.raises(ValueError, match="is not an axis"):
        a.loop(up="w")
    with pytest.raises(ValueError, match="the reference frame 999999 is past the end"):
        a.layer(a, reference=999_999)
    with pytest.raises(ValueError, match="nothing to concatenate"):
        bvhkit.concat([])
    # Retarget: a map naming no joint, bad references.
    with pytest.raises(ValueError, match='the target skeleton has no joint "Nope"'):
        a.retarget(other, map={"Hips": "Nope"})
    bad_map = tmp_path / "bad.map"
    bad_map.write_text("Hips = PELVIS\nLeftUpLeg\n")
    with pytest.raises(ValueError, match=r"bad.map: map line 2: expected `source = target`"):
        a.retarget(other, map=bad_map)
    with pytest.raises(FileNotFoundError):
        a.retarget(other, map=tmp_path / "missing.map")
    with pytest.raises(ValueError, match="reference must be tpose, rest or a frame number"):
        a.retarget(other, reference="sideways")
    with pytest.raises(TypeError):
        a.retarget(other, map=3)


def test_inputs_are_unchanged(files):
    a = bvhkit.read(files[0])
    b = a.reverse()
    before = (a.to_bytes(), b.to_bytes())
    a.concat(b, crossfade=4)
    a.blend(b, 0.5)
    a.layer(b)
    a.loop()
    a.retarget(b)
    assert (a.to_bytes(), b.to_bytes()) == before
