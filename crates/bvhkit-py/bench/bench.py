"""Speed of the Python package, side by side with pybvh, in one run.

    python crates/bvhkit-py/bench/bench.py [FILE.bvh ...]

Times `read` + `positions` with bvhkit and with pybvh (`read_bvh_file` +
`node_positions`) on the largest corpus file, on that file with its frames
repeated until it is at least 38 MB (the issue's size; written to a
temporary folder and deleted after), and on any FILEs given, interleaved,
best of N; then `read_many` over the whole corpus with 1 and 2 threads.
Figures on a shared machine are noisy: read the ratios.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import bvhkit

REPO = Path(__file__).resolve().parents[3]


def corpus_dir() -> Path:
    env = os.environ.get("BVHKIT_CORPUS")
    d = Path(env) if env else REPO.parent / "shared" / "corpus"
    if not d.is_dir():
        sys.exit(f"bench: no corpus at {d} (set BVHKIT_CORPUS)")
    return d


def best(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def ours(path: Path) -> np.ndarray:
    return bvhkit.read(path).positions()


def ours_one_core(path: Path) -> np.ndarray:
    # read_many's pool of one thread also runs the parse and FK inside it.
    return bvhkit.read_many([path], threads=1, positions=True)[0][1]


def theirs(path: Path) -> np.ndarray:
    import pybvh

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pybvh.read_bvh_file(path, world_up="+y").node_positions()


def compare(path: Path, rounds: int) -> None:
    mb = path.stat().st_size / 1e6
    a, b = ours(path), theirs(path)  # warm up, and check they agree
    scale = max(float(np.abs(b).max()), 1.0)
    assert a.shape == b.shape and np.allclose(a, b, rtol=1e-9, atol=1e-9 * scale)
    assert np.array_equal(a, ours_one_core(path))
    t_ours, t_one, t_theirs = [], [], []
    for _ in range(rounds):  # interleaved: A B C A B C
        t_ours.append(best(lambda: ours(path), 3))
        t_one.append(best(lambda: ours_one_core(path), 3))
        t_theirs.append(best(lambda: theirs(path), 1))
    o, o1, t = min(t_ours), min(t_one), min(t_theirs)
    print(
        f"| {path.name} | {mb:.1f} | {a.shape[0]} x {a.shape[1]} | {o * 1e3:.1f} | "
        f"{o1 * 1e3:.1f} | {t * 1e3:.0f} | {t / o:.0f}x | {t / o1:.0f}x |"
    )


def repeated(path: Path, min_bytes: int, out_dir: Path) -> Path:
    """The file with its frames repeated until it has at least `min_bytes` bytes
    (a large real-looking file)."""
    text = bvhkit.read(path).to_bytes()
    head, _, rest = text.partition(b"\nMOTION\n")
    frames_line, time_line, values = rest.split(b"\n", 2)
    header = len(head) + len(rest) - len(values) + 16
    times = max(1, -(-(min_bytes - header) // len(values)))
    n = int(frames_line.split()[1]) * times
    out = out_dir / f"{path.stem}_x{times}.bvh"
    with out.open("wb") as f:
        f.write(head + b"\nMOTION\nFrames: %d\n" % n + time_line + b"\n")
        for _ in range(times):
            f.write(values)
    assert out.stat().st_size >= min_bytes
    return out


def main() -> None:
    files = sorted(corpus_dir().glob("*.bvh"))
    largest = max(files, key=lambda p: p.stat().st_size)
    extra = [Path(a) for a in sys.argv[1:]]
    tmp = Path(tempfile.mkdtemp(prefix="bvhkit-bench-"))
    try:
        extra.append(repeated(largest, 38_000_000, tmp))
        print(f"bvhkit {bvhkit.__version__}, {os.cpu_count()} cores")
        print()
        print("read + positions (ms, best of interleaved runs)")
        print()
        print(
            "| file | MB | frames x joints | bvhkit | bvhkit, 1 core | pybvh "
            "| pybvh / bvhkit | pybvh / bvhkit 1 core |"
        )
        print("|---|---:|---|---:|---:|---:|---:|---:|")
        for path in [largest, *extra]:
            compare(path, rounds=5)
        print()
        total = sum(p.stat().st_size for p in files) / 1e6
        print(f"read_many over the corpus ({len(files)} files, {total:.1f} MB), ms, best of 5")
        print()
        print("| | 1 thread | 2 threads | 1 / 2 |")
        print("|---|---:|---:|---:|")
        for positions in (False, True):
            one = best(lambda p=positions: bvhkit.read_many(files, threads=1, positions=p), 5)
            two = best(lambda p=positions: bvhkit.read_many(files, threads=2, positions=p), 5)
            label = "read + positions" if positions else "read"
            print(f"| {label} | {one * 1e3:.1f} | {two * 1e3:.1f} | {one / two:.2f} |")
        loop = best(lambda: [bvhkit.read(p).positions() for p in files], 5)
        print(f"| a Python loop of read + positions | {loop * 1e3:.1f} | | |")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
