#!/usr/bin/env bash
# `bvh diff --json` (and its text, errors and exit codes) of one binary
# against another over many corpus pairs: each file against itself,
# against its mirror, its up axis turned, its first frames, another frame
# rate, its length unit changed, and files against each other, with
# --units, --map auto, --position-channels add and standard input. A change
# that "changes no result" must print nothing but the final count.
#
#   scripts/diff-unchanged.sh OLD_BVH NEW_BVH
#   TOLERANCE=1e-9 TOLERANCE_ABS=1e-12 scripts/diff-unchanged.sh OLD_BVH NEW_BVH
#
# With TOLERANCE (relative; TOLERANCE_ABS absolute, in the printed unit:
# metres or degrees), outputs whose numbers differ within it and nothing
# else count apart: the final line says how many pairs did and the largest
# differences among them; the script fails only on others.
#
# The edited clips are made by OLD_BVH. Corpus: BVHKIT_CORPUS or
# ../shared/corpus from the repository root.
set -u
. "$(dirname "$0")/unchanged-lib.sh"
unchanged_init "diff-unchanged.sh OLD_BVH NEW_BVH" "$@"

files=("$CORPUS"/*.bvh)
for f in "${files[@]}"; do
    b=$(basename "$f" .bvh)
    same diff --json "$f" "$f"
    same diff "$f" "$f" --worst 3
    same diff --json "$f" "$f" --units cm
    same diff --json "$f" "$f" --position-channels add
    "$OLD" edit "$f" --mirror -o "$T/$b.mirror.bvh" 2>/dev/null &&
        same diff --json "$f" "$T/$b.mirror.bvh" &&
        same diff --json "$T/$b.mirror.bvh" "$f" --units m &&
        same diff --json "$f" "$T/$b.mirror.bvh" --map auto
    "$OLD" edit "$f" --up z -o "$T/$b.upz.bvh" 2>/dev/null &&
        same diff --json "$f" "$T/$b.upz.bvh"
    "$OLD" edit "$f" --frames 0..700 -o "$T/$b.head.bvh" 2>/dev/null &&
        same diff --json "$f" "$T/$b.head.bvh" && same diff --json "$T/$b.head.bvh" "$f" &&
        same diff --json "$T/$b.head.bvh" "$T/$b.mirror.bvh"
    "$OLD" edit "$f" --fps 60 -o "$T/$b.fps.bvh" 2>/dev/null &&
        same diff --json "$f" "$T/$b.fps.bvh" && same diff --json "$T/$b.fps.bvh" "$f"
    "$OLD" edit "$f" --units mm -o "$T/$b.mm.bvh" 2>/dev/null &&
        same diff --json "$f" "$T/$b.mm.bvh" && same diff --json "$T/$b.mm.bvh" "$T/$b.mirror.bvh"
    STDIN=$f same diff --json - "$f"
done
# Files against each other (shared names, name families, nothing shared).
for ((i = 0; i < ${#files[@]}; i += 3)); do
    for ((k = 1; k < ${#files[@]}; k += 4)); do
        same diff --json "${files[i]}" "${files[k]}"
    done
done
if [ -n "${TOLERANCE:-}" ]; then
    echo "$n pairs, $bad differ beyond $TOLERANCE (absolute ${TOLERANCE_ABS:-0})," \
        "$close differ within it (largest relative difference $largest, absolute $largest_abs)"
else
    echo "$n pairs, $bad differ"
fi
[ $bad = 0 ]
