#!/usr/bin/env python3
"""Whether two outputs differ only in the last digits of their numbers.

    scripts/numbers-close.py TOLERANCE OLD_FILE NEW_FILE [ABSOLUTE]

Splits both files into numbers and the text between them. The text must be
the same bytes and the numbers as many; each pair of numbers must agree
within TOLERANCE relative to the larger magnitude, or within ABSOLUTE
(default 0: two zeros agree, a zero against a non-zero does not; 1e-12 lets
a rounding residue of an angle or a distance that is 0 in exact arithmetic,
printed as 5e-17, pass). Prints the largest relative difference among the
numbers other than such residues (those beyond TOLERANCE but within
ABSOLUTE), and the largest absolute difference of all; exits 0 when within the tolerances, 1 otherwise (with
the first difference beyond them), 2 when the text between the numbers
differs.
"""

import re
import sys

NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def split(data):
    """The text pieces between the numbers, and the numbers as floats."""
    return NUMBER.split(data), [float(m) for m in NUMBER.findall(data)]


def main():
    tolerance = float(sys.argv[1])
    absolute = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    with open(sys.argv[2], "rb") as f:
        old_text, old = split(f.read())
    with open(sys.argv[3], "rb") as f:
        new_text, new = split(f.read())
    if old_text != new_text or len(old) != len(new):
        print("text differs")
        return 2
    largest, largest_abs = 0.0, 0.0
    for i, (a, b) in enumerate(zip(old, new)):
        if a == b:
            continue
        diff = abs(a - b)
        largest_abs = max(largest_abs, diff)
        rel = diff / max(abs(a), abs(b))
        if rel > tolerance and diff <= absolute:
            continue
        largest = max(largest, rel)
        if rel > tolerance:
            print(f"{largest:.3e} {largest_abs:.3e} (number {i}: {a!r} against {b!r})")
            return 1
    print(f"{largest:.3e} {largest_abs:.3e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
