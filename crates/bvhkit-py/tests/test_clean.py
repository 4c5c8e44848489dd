"""`Bvh.clean` against independent references: the smoothing filters equal
`scipy.signal` (`butter` + `filtfilt` with its default padding,
`savgol_filter`) and the PyPI `OneEuroFilter` package on single-axis
rotation tracks and position channels, within 1e-9 degrees (units); joints
outside `joints` and a clip no step touches stay bit for bit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import corpus_named
from scipy.signal import butter, filtfilt, savgol_filter

import bvhkit

TOL = 1e-9
FPS = 120.0


def clip(n: int = 400, seed: int = 1) -> tuple[bvhkit.Bvh, np.ndarray, np.ndarray, np.ndarray]:
    """A root with position channels turning about Z only (a track that
    passes +-180 degrees several times), a child turning about X only (one
    channel), noise on both. Returns the clip and the three tracks."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / FPS
    z = 400.0 * t + 30.0 * np.sin(2 * np.pi * 1.3 * t) + rng.normal(0, 2.0, n)
    x = 40.0 * np.sin(2 * np.pi * 0.7 * t) + rng.normal(0, 2.0, n)
    px = 10.0 * t + rng.normal(0, 0.3, n)
    # Wrap the Z channel into (-180, 180] as a file would hold it.
    zw = (z + 180.0) % 360.0 - 180.0
    lines = [
        "HIERARCHY",
        "ROOT Hips { OFFSET 0 0 0",
        "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
        "  JOINT Spine { OFFSET 0 10 0 CHANNELS 1 Xrotation",
        "    End Site { OFFSET 0 10 0 } }",
        "  JOINT Leg { OFFSET 0 -10 0 CHANNELS 3 Zrotation Xrotation Yrotation",
        "    End Site { OFFSET 0 -10 0 } } }",
        "MOTION",
        f"Frames: {n}",
        f"Frame Time: {1.0 / FPS!r}",
    ]
    for f in range(n):
        row = (float(px[f]), 90.0, 0.0, float(zw[f]), 0.0, 0.0, float(x[f]), float(f), 0.0, 0.0)
        lines.append(" ".join(repr(v) for v in row))
    bvh = bvhkit.parse("\n".join(lines) + "\n")
    # The tracks as read back (the text round trip is exact with repr()).
    m = bvh.motion
    return bvh, np.unwrap(m[:, 3], period=360.0), m[:, 6], m[:, 0]


def angle_err(a: np.ndarray, b: np.ndarray) -> float:
    """Largest difference of two angle tracks in degrees, modulo 360."""
    d = (a - b + 180.0) % 360.0 - 180.0
    return float(np.max(np.abs(d)))


def check(out: bvhkit.Bvh, src: bvhkit.Bvh, z: np.ndarray, x: np.ndarray, px: np.ndarray) -> None:
    m = out.motion
    assert angle_err(m[:, 3], z) < TOL
    assert np.max(np.abs(m[:, 4])) < TOL and np.max(np.abs(m[:, 5])) < TOL
    assert angle_err(m[:, 6], x) < TOL
    assert np.max(np.abs(m[:, 0] - px)) < TOL
    # Continuous: the input wraps at +-180 degrees, the output never jumps.
    assert np.max(np.abs(np.diff(src.motion[:, 3]))) > 180.0
    assert np.max(np.abs(np.diff(m[:, 3]))) < 90.0


@pytest.mark.parametrize(("cutoff", "order"), [(6.0, 4), (2.0, 2), (15.0, 6)])
def test_butterworth_equals_scipy_filtfilt(cutoff: float, order: int) -> None:
    bvh, z, x, px = clip()
    b, a = butter(order, cutoff, fs=FPS)
    out = bvh.clean(butterworth=(cutoff, order))
    check(out, bvh, filtfilt(b, a, z), filtfilt(b, a, x), filtfilt(b, a, px))
    assert "butterworth" in out.report


@pytest.mark.parametrize(("window", "poly"), [(11, 3), (31, 2), (5, 4)])
def test_savgol_equals_scipy(window: int, poly: int) -> None:
    bvh, z, x, px = clip()
    out = bvh.clean(savgol=(window, poly))
    f = lambda s: savgol_filter(s, window, poly)  # noqa: E731
    check(out, bvh, f(z), f(x), f(px))


def test_one_euro_equals_the_pypi_package() -> None:
    one_euro = pytest.importorskip("OneEuroFilter")
    bvh, z, x, px = clip()
    params = (1.5, 0.02, 1.2)

    def f(s: np.ndarray) -> np.ndarray:
        flt = one_euro.OneEuroFilter(bvh.fps, *params)
        return np.array([flt(v) for v in s])

    # The package filters values; the rotation track starts at 0 (the
    # first frame's angle is an offset the filter carries unchanged).
    out = bvh.clean(one_euro=params)
    check(out, bvh, f(z - z[0]) + z[0], f(x - x[0]) + x[0], f(px))


def test_joints_mask_and_untouched_joints_bit_for_bit() -> None:
    bvh, _, x, _ = clip()
    b, a = butter(4, 6.0, fs=FPS)
    out = bvh.clean(butterworth=6.0, joints=["Spine"])
    m, src = out.motion, bvh.motion
    assert np.array_equal(m[:, :6], src[:, :6])
    assert np.array_equal(m[:, 7:], src[:, 7:])
    assert angle_err(m[:, 6], filtfilt(b, a, x)) < TOL
    # No step: every value bit for bit.
    assert np.array_equal(bvh.clean().motion, src)


def test_bad_options_are_errors() -> None:
    bvh = clip(n=20)[0]
    with pytest.raises(ValueError, match="needs more than 15 frames"):
        bvh.frames(0, 15).clean(butterworth=6.0)
    with pytest.raises(ValueError, match="Nyquist"):
        bvh.clean(butterworth=70.0)
    with pytest.raises(ValueError, match="odd"):
        bvh.clean(savgol=(10, 2))
    with pytest.raises(ValueError, match="no joint named"):
        bvh.clean(butterworth=6.0, joints=["Nope"])


def test_strength_blends_with_the_original() -> None:
    """``strength``: 0 keeps a joint bit for bit, 1 is the full filter
    (bit for bit the result without ``strength``), 0.5 on a single-axis
    joint moves its angle halfway to scipy's filtered angle; a dict and a
    sequence of pairs give the same; bad entries are errors."""
    bvh, z, x, px = clip()
    b, a = butter(4, 6.0, fs=FPS)
    full = bvh.clean(butterworth=6.0).motion
    out = bvh.clean(butterworth=6.0, strength={"*": 0.0, "Spine": 0.5, "Leg": 1.0})
    m, src = out.motion, bvh.motion
    assert np.array_equal(m[:, :6], src[:, :6])
    assert np.array_equal(m[:, 7:], full[:, 7:])
    assert angle_err(m[:, 6], x + 0.5 * (filtfilt(b, a, x) - x)) < TOL
    pairs = bvh.clean(butterworth=6.0, strength=[("*", 0.0), ("Spine", 0.5), ("Leg", 1.0)])
    assert np.array_equal(pairs.motion, m)
    # "Hips/*" is every joint below the root; the later entry wins.
    only_root = bvh.clean(butterworth=6.0, strength=[("Hips/*", 0.0), ("Spine", 1.0)]).motion
    assert np.array_equal(only_root[:, :7], full[:, :7])
    assert np.array_equal(only_root[:, 7:], src[:, 7:])
    with pytest.raises(ValueError, match="not between 0 and 1"):
        bvh.clean(butterworth=6.0, strength={"Spine": 1.5})
    with pytest.raises(ValueError, match="no joint named"):
        bvh.clean(butterworth=6.0, strength={"Tail": 0.5})
    with pytest.raises(TypeError, match="strength must be"):
        bvh.clean(butterworth=6.0, strength=3)


def cli_clean(bvh_bin: Path, src: Path, tmp_path: Path, flags: list[str]) -> bytes:
    """The bytes ``bvh clean SRC -o OUT FLAGS`` writes (it must succeed)."""
    out = tmp_path / "cli.bvh"
    cli = subprocess.run(
        [str(bvh_bin), "clean", str(src), "-o", str(out), *flags], capture_output=True, text=True
    )
    assert cli.returncode == 0, cli.stderr
    return out.read_bytes()


def test_contacts_from_a_file_or_spans_equal_the_command(corpus, bvh_bin, tmp_path) -> None:
    """``contacts`` (with ``lock_feet``): a CSV path, as ``--contacts FILE``,
    and the same spans as tuples give the bytes ``bvh clean --lock-feet
    --contacts FILE`` writes; only the spans given are locked (frames well
    past the last span's ramps stay the input's, where lint's own contacts
    would lock the whole walk); bad spans are errors."""
    (src,) = corpus_named(corpus, ["cmu_01_01_walk_cgspeed_mb_names.bvh"])
    csv = tmp_path / "contacts.csv"
    csv.write_text("joint,start,end\nLeftFoot,100,160\n# the right foot\nRightFoot, 200, 260\n")
    written = cli_clean(bvh_bin, src, tmp_path, ["--lock-feet", "--contacts", str(csv)])
    bvh = bvhkit.read(src)
    from_file = bvh.clean(lock_feet=True, contacts=csv)
    assert from_file.to_bytes() == written
    assert bvh.clean(lock_feet=True, contacts=str(csv)).to_bytes() == written
    spans = [("LeftFoot", 100, 160), ("RightFoot", 200, 260)]
    assert bvh.clean(lock_feet=True, contacts=spans).to_bytes() == written
    assert "2 contact span(s) locked" in from_file.report
    m, src_m = from_file.motion, bvh.motion
    assert not np.array_equal(m[100:161], src_m[100:161])
    assert np.array_equal(m[600:], src_m[600:])
    lint_spans = bvh.clean(lock_feet=True).motion
    assert not np.array_equal(lint_spans[600:], src_m[600:])
    with pytest.raises(ValueError, match="lock_feet"):
        bvh.clean(contacts=spans)
    with pytest.raises(ValueError, match="Nope"):
        bvh.clean(lock_feet=True, contacts=[("Nope", 1, 2)])
    with pytest.raises(ValueError, match="before it starts"):
        bvh.clean(lock_feet=True, contacts=[("LeftFoot", 20, 10)])
    with pytest.raises(ValueError, match="contacts line 1"):
        bad = tmp_path / "bad.csv"
        bad.write_text("LeftFoot,ten,20\n")
        bvh.clean(lock_feet=True, contacts=bad)
    with pytest.raises(FileNotFoundError):
        bvh.clean(lock_feet=True, contacts=tmp_path / "missing.csv")
    with pytest.raises(TypeError, match="contacts must be"):
        bvh.clean(lock_feet=True, contacts=3)


def test_flatten_feet_equals_the_command(corpus, bvh_bin, tmp_path) -> None:
    """``flatten_feet`` (with ``lock_feet``) gives the bytes ``bvh clean
    --lock-feet --flatten-feet`` writes, differs from ``lock_feet`` alone,
    and without ``lock_feet`` is an error naming both."""
    (src,) = corpus_named(corpus, ["cmu_01_01_walk_cgspeed_mb_names.bvh"])
    written = cli_clean(bvh_bin, src, tmp_path, ["--lock-feet", "--flatten-feet"])
    bvh = bvhkit.read(src)
    flat = bvh.clean(lock_feet=True, flatten_feet=True)
    assert flat.to_bytes() == written
    assert flat.to_bytes() != bvh.clean(lock_feet=True).to_bytes()
    with pytest.raises(ValueError, match="flatten_feet needs lock_feet"):
        bvh.clean(flatten_feet=True)
