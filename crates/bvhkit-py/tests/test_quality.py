"""The motion-quality metrics (`Bvh.lint`, `bvhkit.diff`) against plain
references on the whole corpus: GMD's skating ratio ported line by line
(SciPy's `uniform_filter1d`), jitter from NumPy's differences, MPJPE and
PA-MPJPE with SciPy's orthogonal Procrustes, the default ground from its
documented rule in NumPy. Every metric within 1e-9
relative of its reference."""

from __future__ import annotations

import json
import subprocess
import warnings

import numpy as np
import pytest
from scipy.linalg import orthogonal_procrustes
from scipy.ndimage import uniform_filter1d

import bvhkit

REL = 1e-9


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= REL * max(abs(a), abs(b), 1e-12)


def clips(corpus):
    """Every corpus file the lenient reader takes, with at least 8 frames."""
    out = []
    for path in corpus:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                bvh = bvhkit.read(path)
        except ValueError:
            continue
        if bvh.n_frames >= 8:
            out.append((path.name, bvh))
    assert len(out) >= 25, [n for n, _ in out]
    return out


def y_up(p: np.ndarray, up_axis: str) -> np.ndarray:
    """Positions with the up axis as Y (x, up, z): the layout GMD's code
    indexes ([0, 2] horizontal, 1 up)."""
    axis = "xyz".index(up_axis[-1])
    sign = -1.0 if up_axis.startswith("-") else 1.0
    others = [a for a in range(3) if a != axis]
    return np.stack([p[..., others[0]], sign * p[..., axis], p[..., others[1]]], axis=-1)


def gmd_skating_ratio(motions, fps, feet):
    """GMD's `calculate_skating_ratio`, line by line, with the file's rate
    instead of its fixed 20 fps and the feet as arguments.
    motions: [bs, joints, 3, frames], Y up, the ground at 0."""
    thresh_height = 0.05
    thresh_vel = 0.50
    avg_window = 5  # frames

    verts_feet = motions[:, feet, :, :]  # [bs, 2, 3, max_len]
    verts_feet_plane_vel = (
        np.linalg.norm(verts_feet[:, :, [0, 2], 1:] - verts_feet[:, :, [0, 2], :-1], axis=2) * fps
    )  # [bs, 2, max_len-1]
    vel_avg = uniform_filter1d(
        verts_feet_plane_vel, axis=-1, size=avg_window, mode="constant", origin=0
    )

    verts_feet_height = verts_feet[:, :, 1, :]  # [bs, 2, max_len]
    # If feet touch ground in adjacent frames
    feet_contact = np.logical_and(
        (verts_feet_height[:, :, :-1] < thresh_height),
        (verts_feet_height[:, :, 1:] < thresh_height),
    )  # [bs, 2, max_len - 1]
    # it must both skating in the current frame
    skating = np.logical_and(feet_contact, verts_feet_plane_vel > thresh_vel)
    # and also skate in the windows of frames
    skating = np.logical_and(skating, (vel_avg > thresh_vel))
    # Both feet slide
    skating = np.logical_or(skating[:, 0, :], skating[:, 1, :])  # [bs, max_len -1]
    skating_ratio = np.sum(skating, axis=1) / skating.shape[1]
    return skating_ratio


def reference_metrics(bvh: bvhkit.Bvh, q: dict) -> dict:
    """The metrics from docs/quality.md's formulas, on `positions()`."""
    p = bvh.positions() * q["metres_per_unit"]  # frames x joints x 3
    fps = q["fps"]
    out = {}
    jerk = np.diff(p, n=3, axis=0) * fps**3
    out["jitter"] = float(np.linalg.norm(jerk, axis=-1).mean()) if jerk.size else None
    if not q["feet"] or q["ground"] is None:
        return out
    index = {n: i for i, n in enumerate(q["_joint_names"])}
    p = y_up(p, q["up_axis"])
    p[..., 1] -= q["ground"]
    feet = [index[f["skate_joint"]] for f in q["feet"]]
    if len(feet) == 2:
        motions = np.transpose(p, (1, 2, 0))[None]  # [1, joints, 3, frames]
        out["skate_ratio"] = float(gmd_skating_ratio(motions, fps, feet)[0])
    # kimodo: the toes over their contact steps.
    contacts = skates = 0
    for f in q["feet"]:
        t = p[:, index[f["toe_joint"]]]
        on = (t[:-1, 1] < 0.05) & (t[1:, 1] < 0.05)
        vel = np.linalg.norm(t[1:, [0, 2]] - t[:-1, [0, 2]], axis=-1) * fps
        contacts += int(on.sum())
        skates += int((on & (vel > 0.2)).sum())
    out["skate_ratio_kimodo"] = skates / contacts if contacts else None
    # foot_slide: each foot's lowest point (each point from its own planted
    # height), its slowest point's speed.
    speeds = []
    for f in q["feet"]:
        pts = p[:, [index[j] for j in f["joints"]]]  # frames x points x 3
        q05 = np.quantile(pts[:, :, 1], 0.05, axis=0)  # each point's planted height
        low = (pts[:, :, 1] - (q05 - q05.min())).min(axis=1)
        speed = (np.linalg.norm(pts[1:][..., [0, 2]] - pts[:-1][..., [0, 2]], axis=-1) * fps).min(
            axis=1
        )
        on = (low[:-1] < 0.05) & (low[1:] < 0.05)
        speeds.extend(speed[on].tolist())
    out["foot_slide"] = float(np.mean(speeds)) if speeds else None
    return out


def test_metrics_equal_their_references_on_the_corpus(corpus):
    checked = {"skate_ratio": 0, "skate_ratio_kimodo": 0, "foot_slide": 0, "jitter": 0}
    for name, bvh in clips(corpus):
        q = bvh.lint()
        q["_joint_names"] = bvh.joint_names
        assert len(q["_joint_names"]) == bvh.positions().shape[1], name
        ref = reference_metrics(bvh, q)
        for key, value in ref.items():
            got = q["metrics"][key]
            assert close(got, value), f"{name}: {key} {got} against the reference {value}"
            checked[key] += value is not None
    # The references measured something on many files, not only None.
    assert all(v >= 15 for v in checked.values()), checked


def reference_ground(bvh: bvhkit.Bvh, q: dict) -> float | None:
    """The default ground as docs/quality.md states it: each foot's height
    the lowest of its points less each point's clearance, its speed the
    slowest point's; g0 the 10th percentile of the lower foot; the
    candidate contacts the steps slower than 0.5 m/s and below g0 + 0.15 m
    in both frames; the floor the 0.05 m band holding the most candidates
    (the lowest on a tie); the ground the lowest of the feet's medians over
    their candidates in that band (both frames), else g0."""
    if not q["feet"] or q["frames"] < 2:
        return None
    index = {n: i for i, n in enumerate(bvh.joint_names)}
    p = y_up(bvh.positions() * q["metres_per_unit"], q["up_axis"])
    fps, ch, cs = q["fps"], 0.05, 0.5
    lows, speeds = [], []
    for f in q["feet"]:
        pts = p[:, [index[j] for j in f["joints"]]]  # frames x points x 3
        q05 = np.quantile(pts[:, :, 1], 0.05, axis=0)
        lows.append((pts[:, :, 1] - (q05 - q05.min())).min(axis=1))
        step = np.linalg.norm(pts[1:][..., [0, 2]] - pts[:-1][..., [0, 2]], axis=-1) * fps
        speeds.append(step.min(axis=1))
    g0 = float(np.quantile(np.min(lows, axis=0), 0.10))
    top = g0 + 3 * ch
    cand = [
        (s < cs) & (low[:-1] < top) & (low[1:] < top) for low, s in zip(lows, speeds, strict=True)
    ]
    heights = np.sort(np.concatenate([low[:-1][c] for low, c in zip(lows, cand, strict=True)]))
    if heights.size == 0:
        return g0
    # The band [floor, floor + ch] holding the most candidates.
    counts = [int(((heights >= a) & (heights - a <= ch)).sum()) for a in heights]
    floor = heights[int(np.argmax(counts))]
    medians = []
    for low, c in zip(lows, cand, strict=True):
        inside = (low >= floor) & (low - floor <= ch)
        mine = low[:-1][c & inside[:-1] & inside[1:]]
        if mine.size:
            medians.append(float(np.median(mine)))
    return min(medians) if medians else g0


def test_ground_equals_its_reference_on_the_corpus(corpus):
    checked = 0
    for name, bvh in clips(corpus):
        q = bvh.lint()
        ref = reference_ground(bvh, q)
        if ref is None:
            continue
        assert close(q["ground"], ref), f"{name}: ground {q['ground']} against {ref}"
        checked += 1
    assert checked >= 15, checked


def test_lint_json_of_the_command_equals_the_python_dict(corpus, bvh_bin):
    for name, bvh in clips(corpus)[:12]:
        path = next(p for p in corpus if p.name == name)
        run = subprocess.run([bvh_bin, "lint", "--json", str(path)], capture_output=True, text=True)
        assert run.returncode in (0, 1), run.stderr
        cmd = json.loads(run.stdout)
        py = bvh.lint()
        for key in ("units", "up_axis", "frames", "feet", "findings", "notes"):
            assert cmd[key] == py[key], f"{name}: {key}"
        for key, v in py["metrics"].items():
            assert close(cmd["metrics"][key], v), f"{name}: {key}"
        assert close(cmd["ground"], py["ground"])


def pa_reference(x: np.ndarray, y: np.ndarray) -> tuple[float, bool]:
    """Mean distance after the similarity fit of x onto y, per frame (x, y
    are joints x 3): SciPy's orthogonal Procrustes on centred points, the
    scale from its singular values; where SciPy's best fit is a reflection,
    Umeyama's proper rotation from NumPy's SVD (PA-MPJPE allows no
    mirroring). Also whether SciPy's fit was used."""
    mx, my = x.mean(axis=0), y.mean(axis=0)
    xc, yc = x - mx, y - my
    spread = (xc**2).sum()
    r, s = orthogonal_procrustes(xc, yc)
    scipy_fit = np.linalg.det(r) > 0
    if not scipy_fit:
        u, sv, vt = np.linalg.svd(xc.T @ yc)
        d = np.sign(np.linalg.det(u @ vt))
        r = u @ np.diag([1.0, 1.0, d]) @ vt
        s = sv[0] + sv[1] + d * sv[2]
    scale = s / spread if spread > 0 else 0.0
    fitted = scale * xc @ r + my
    return float(np.linalg.norm(fitted - y, axis=-1).mean()), bool(scipy_fit)


def test_diff_equals_numpy_and_scipy_references(corpus):
    done = scipy_frames = frames = 0
    for name, a in clips(corpus):
        a = a.frames(0, min(a.n_frames, 120))
        # Another motion on the same skeleton: the clip played backwards.
        b = a.reverse()
        d = bvhkit.diff(a, b, units="m")
        pa = a.positions()
        pb = b.positions()
        assert d["frames"] == a.n_frames
        err = np.linalg.norm(pa - pb, axis=-1)
        assert close(d["mpjpe"], float(err.mean())), name
        np.testing.assert_allclose(d["per_frame"], err.mean(axis=1), rtol=REL, atol=1e-15)
        refs = [pa_reference(pb[f], pa[f]) for f in range(a.n_frames)]
        pa_ref = float(np.mean([r for r, _ in refs]))
        scipy_frames += sum(used for _, used in refs)
        frames += len(refs)
        assert abs(d["pa_mpjpe"] - pa_ref) <= REL * max(d["mpjpe"], 1e-3), (
            f"{name}: {d['pa_mpjpe']} {pa_ref}"
        )
        # Root-aligned: each clip's hips (here the first joint) subtracted.
        root = np.linalg.norm((pa - pa[:, :1]) - (pb - pb[:, :1]), axis=-1).mean()
        if a.joint_names[0] in ("Hips", "hip", "Hip", "pelvis"):
            assert close(d["mpjpe_root"], float(root)), name
        done += 1
    assert done >= 25
    # SciPy's fit decided most frames.
    assert scipy_frames > 0.75 * frames, (scipy_frames, frames)


def test_diff_of_a_clip_with_itself_is_zero_and_a_translation_is_its_length(corpus):
    for name, a in clips(corpus)[:10]:
        d = bvhkit.diff(a, a)
        assert (d["mpjpe"], d["mpjpe_root"], d["pa_mpjpe"]) == (0.0, 0.0, 0.0), name


def test_lint_options_and_errors():
    walk = bvhkit.read(
        str(__import__("pathlib").Path(__file__).resolve().parents[3] / "samples" / "walk.bvh")
    )
    q = walk.lint(ground="lowest", spike_k=10, contact_height=0.04)
    assert q["ground"] == pytest.approx(
        float(walk.positions()[..., 1].min() * q["metres_per_unit"])
    )
    assert walk.lint(ground=0.0)["ground"] == 0.0
    with pytest.raises(ValueError, match="no threshold named"):
        walk.lint(spike=3)
    with pytest.raises(ValueError, match="above 0"):
        walk.lint(spike_k=-1)
    with pytest.raises(ValueError, match="no joint named"):
        walk.lint(feet=["Nope"])
    with pytest.raises(ValueError, match="not a unit"):
        walk.lint(units="furlong")
    with pytest.raises(ValueError, match="ground"):
        walk.lint(ground="floor")
    with pytest.raises(ValueError, match="at most 1e6"):
        walk.lint(ground=1e300)
    with pytest.raises(ValueError, match="below 90"):
        walk.lint(gimbal=90)
    assert walk.lint(feet=["LeftFoot"])["feet"][0]["joints"][0] == "LeftFoot"
