"""`Bvh.write` keeps the promises of every bvhkit output (ARCHITECTURE.md):
the target is the old file or the whole new one, a new file gets the
umask's mode, an existing one keeps its mode, links are followed, devices
and FIFOs are written through, and a `kill -9` leaves nothing behind."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import skip

import bvhkit

TEXT = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  End Site
  {
    OFFSET 0 1 0
  }
}
MOTION
Frames: 2
Frame Time: 0.1
0 1 2 3 4 5
6 7 8 9 10 11
"""


@pytest.fixture
def clip() -> bvhkit.Bvh:
    return bvhkit.parse(TEXT, strict=True)


def mode(p: Path) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_a_new_file_gets_the_umask_mode(clip, tmp_path, umask):
    old = os.umask(umask)
    try:
        clip.write(tmp_path / "new.bvh")
    finally:
        os.umask(old)
    assert mode(tmp_path / "new.bvh") == 0o666 & ~umask
    assert os.listdir(tmp_path) == ["new.bvh"]


def test_an_existing_file_keeps_its_mode(clip, tmp_path):
    out = tmp_path / "out.bvh"
    out.write_text("old")
    out.chmod(0o640)
    clip.write(out)
    assert mode(out) == 0o640
    assert out.read_bytes() == clip.to_bytes()


def test_a_symbolic_link_is_followed(clip, tmp_path):
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "walk.bvh"
    real.write_text("old")
    link = tmp_path / "link.bvh"
    link.symlink_to("real/walk.bvh")
    clip.write(link)
    assert link.is_symlink() and os.readlink(link) == "real/walk.bvh"
    assert real.read_bytes() == clip.to_bytes()
    assert sorted(os.listdir(tmp_path)) == ["link.bvh", "real"]
    assert os.listdir(tmp_path / "real") == ["walk.bvh"]


def test_a_fifo_is_written_through(clip, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    clip.write(fifo)
    reader.join(timeout=60)
    assert got == [clip.to_bytes()]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO stays a FIFO"
    assert os.listdir(tmp_path) == ["fifo"]


def test_a_device_is_written_through(clip, tmp_path):
    if os.geteuid() != 0:
        skip("a device node is written through: not root, cannot make one")
    # A null device of this test's own (the real /dev/null is not put at risk).
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    clip.write(null)
    assert stat.S_ISCHR(os.lstat(null).st_mode), "the device node stays"
    assert os.listdir(tmp_path) == ["null"]


def test_a_hard_linked_file_is_refused_unless_asked(clip, tmp_path):
    a, b = tmp_path / "a.bvh", tmp_path / "b.bvh"
    a.write_text("shared")
    os.link(a, b)
    with pytest.raises(OSError) as info:
        clip.write(b)
    assert info.value.filename == str(b)
    assert "has 2 hard links" in str(info.value) and "break_links=True" in str(info.value)
    assert a.read_text() == b.read_text() == "shared"
    clip.write(b, break_links=True)
    assert b.read_bytes() == clip.to_bytes() and a.read_text() == "shared"
    assert sorted(os.listdir(tmp_path)) == ["a.bvh", "b.bvh"]


def test_errors_are_os_errors_with_the_file_name(clip, tmp_path):
    missing = tmp_path / "no" / "such" / "dir.bvh"
    with pytest.raises(FileNotFoundError) as info:
        clip.write(missing)
    assert info.value.filename == str(missing)
    with pytest.raises(IsADirectoryError) as dir_info:
        clip.write(tmp_path)
    assert dir_info.value.filename == str(tmp_path)
    assert os.listdir(tmp_path) == []


# A child that writes a clip of about 20 MB over `out` (once).
WRITER = textwrap.dedent(
    """
    import sys
    import bvhkit

    joints = 20
    lines = ["HIERARCHY", "ROOT J0", "{", "OFFSET 0 0 0",
             "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"]
    for j in range(1, joints):
        lines += [f"JOINT J{j}", "{", "OFFSET 0 1 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    lines += ["End Site", "{", "OFFSET 0 1 0", "}"] + ["}"] * joints
    frames = 40_000
    width = 6 + 3 * (joints - 1)
    row = " ".join(f"{(k * 7.123456) % 360 - 180:.6f}" for k in range(width))
    lines += ["MOTION", f"Frames: {frames}", "Frame Time: 0.008333"] + [row] * frames
    clip = bvhkit.parse("\\n".join(lines) + "\\n")
    print("ready", flush=True)
    clip.write(sys.argv[1])
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/fd")
def test_a_killed_writer_leaves_only_the_old_file(tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "big.bvh"
    out.write_text("the old file\n")
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(out)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        # Wait until the child holds a file in the output folder with data in it.
        fds = Path(f"/proc/{child.pid}/fd")
        seen = None
        deadline = time.monotonic() + 120
        while seen is None and time.monotonic() < deadline:
            assert child.poll() is None, "the child finished before it was killed"
            for fd in fds.iterdir() if fds.exists() else []:
                try:
                    target = os.readlink(fd)
                    size = os.stat(fd).st_size
                except OSError:
                    continue
                if target.startswith(str(out_dir)) and size > 1_000_000:
                    seen = target
    finally:
        child.kill()
        child.wait()
    assert seen is not None, "the child never wrote into the output folder"
    assert seen.endswith("(deleted)"), f"the file being written has no name: {seen}"
    assert os.listdir(out_dir) == ["big.bvh"], f"only the old file (written as {seen})"
    assert out.read_text() == "the old file\n"
