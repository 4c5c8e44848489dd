"""Extreme rates, Frame Times and crossfades raise a precise ``ValueError``
(the core's message, naming the value and the limit) before anything is
allocated: ``resample(1e300)`` used to raise ``PanicException`` and
``resample(1e9)`` to kill the interpreter; ``concat(crossfade=1e308)``
silently made no crossfade."""

from __future__ import annotations

import pytest

import bvhkit


def clip(frame_time: str, frames: int = 10) -> bvhkit.Bvh:
    rows = "".join(f"{i} 90 0 {3 * i} 0 0 0 {2 * i} 0\n" for i in range(frames))
    return bvhkit.parse(
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n"
        " CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
        " JOINT Spine\n {\n  OFFSET 0 10 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "  End Site\n  {\n   OFFSET 0 10 0\n  }\n }\n}\n"
        f"MOTION\nFrames: {frames}\nFrame Time: {frame_time}\n{rows}"
    )


LIMIT = r"a resampled clip has at most 4294967295 frames and 536870912 values \(4 GiB\)"


@pytest.mark.parametrize(
    ("fps", "shown"), [(1e300, "1e300"), (1e9, "1000000000"), (1e12, "1000000000000")]
)
def test_resample_to_an_extreme_rate_is_a_value_error(fps, shown):
    a = clip("0.0083333", 100)
    with pytest.raises(ValueError, match=LIMIT) as e:
        a.resample(fps)
    assert type(e.value).__name__ != "PanicException"
    assert f"to {shown} fps would make" in str(e.value)


@pytest.mark.parametrize("fps", [float("inf"), float("nan"), 0.0, -30.0])
def test_resample_to_no_rate_is_a_value_error(fps):
    with pytest.raises(ValueError, match="must be finite and positive"):
        clip("0.1").resample(fps)


def test_extreme_frame_times_are_value_errors():
    slow, fast, a = clip("1e300"), clip("1e-300"), clip("0.0333333")
    with pytest.raises(ValueError, match=r"\(Frame Time 1e300\) to 30 fps would make"):
        slow.resample(30)
    for first, second, culprit in [(a, slow, "1e300"), (fast, a, "1e-300")]:
        for call in [
            lambda f=first, s=second: bvhkit.concat([f, s]),
            lambda f=first, s=second: f.blend(s, 0.5),
            lambda f=first, s=second: f.layer(s),
        ]:
            with pytest.raises(ValueError, match=LIMIT) as e:
                call()
            assert f"(Frame Time {culprit})" in str(e.value)


@pytest.mark.parametrize("crossfade", [1e308, "1e308s"])
def test_a_crossfade_longer_than_any_clip_is_refused(crossfade):
    a = clip("0.1")
    want = r"the crossfade \(1e308s = about 1e309 frames\) is longer than"
    with pytest.raises(ValueError, match=want):
        bvhkit.concat([a, a], crossfade=crossfade)
    with pytest.raises(ValueError, match=want):
        a.loop(crossfade=crossfade)
