#!/usr/bin/env python3
"""Whether two outputs differ only in the last digits of their numbers.

    scripts/numbers-close.py TOLERANCE OLD_FILE NEW_FILE

Splits both files into numbers and the text between them. The text must be
the same bytes and the numbers as many; each pair of numbers must agree
within TOLERANCE relative to the larger magnitude (two zeros agree; a zero
against a non-zero does not). Prints the largest relative difference of the
numbers and exits 0 when within TOLERANCE, 1 otherwise (with the first
difference beyond it), 2 when the text between the numbers differs.
"""

import re
import sys

NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def split(data):
    """The text pieces between the numbers, and the numbers as floats."""
    return NUMBER.split(data), [float(m) for m in NUMBER.findall(data)]


def main():
    tolerance = float(sys.argv[1])
    with open(sys.argv[2], "rb") as f:
        old_text, old = split(f.read())
    with open(sys.argv[3], "rb") as f:
        new_text, new = split(f.read())
    if old_text != new_text or len(old) != len(new):
        print("text differs")
        return 2
    largest = 0.0
    for i, (a, b) in enumerate(zip(old, new)):
        if a == b:
            continue
        scale = max(abs(a), abs(b))
        rel = abs(a - b) / scale
        largest = max(largest, rel)
        if rel > tolerance:
            print(f"{largest:.3e} (number {i}: {a!r} against {b!r})")
            return 1
    print(f"{largest:.3e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
