#!/usr/bin/env bash
# `bvh diff --json` (and its text, errors and exit codes) of one binary
# against another over many corpus pairs: each file against itself,
# against its mirror, its up axis turned, its first frames, another frame
# rate, its length unit changed, and files against each other, with
# --units, --map auto, --position-channels add and standard input. A change
# that "changes no result" must print nothing but the final count.
#
#   scripts/diff-unchanged.sh OLD_BVH NEW_BVH
#
# The edited clips are made by OLD_BVH. Corpus: BVHKIT_CORPUS or
# ../shared/corpus from the repository root.
set -u
OLD=$(realpath "${1:?usage: diff-unchanged.sh OLD_BVH NEW_BVH}")
NEW=$(realpath "${2:?usage: diff-unchanged.sh OLD_BVH NEW_BVH}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=${BVHKIT_CORPUS:-$ROOT/../shared/corpus}
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS" >&2; exit 2; }
T=$(mktemp -d /tmp/diff-unchanged.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0 bad=0

# same ARGS...: `bvh diff ARGS` of both binaries must agree byte for byte.
same() {
    n=$((n + 1))
    "$OLD" diff "$@" >"$T/o.out" 2>"$T/o.err" </dev/null
    local ro=$?
    "$NEW" diff "$@" >"$T/n.out" 2>"$T/n.err" </dev/null
    local rn=$?
    if [ $ro != $rn ] || ! cmp -s "$T/o.out" "$T/n.out" || ! cmp -s "$T/o.err" "$T/n.err"; then
        bad=$((bad + 1))
        echo "DIFFERS: bvh diff $* (exit $ro / $rn)"
    fi
}

# samepipe FILE ARGS...: the same with FILE on standard input.
samepipe() {
    local f=$1
    shift
    n=$((n + 1))
    "$OLD" diff "$@" <"$f" >"$T/o.out" 2>"$T/o.err"
    local ro=$?
    "$NEW" diff "$@" <"$f" >"$T/n.out" 2>"$T/n.err"
    local rn=$?
    if [ $ro != $rn ] || ! cmp -s "$T/o.out" "$T/n.out" || ! cmp -s "$T/o.err" "$T/n.err"; then
        bad=$((bad + 1))
        echo "DIFFERS: bvh diff $* < $f (exit $ro / $rn)"
    fi
}

files=("$CORPUS"/*.bvh)
for f in "${files[@]}"; do
    b=$(basename "$f" .bvh)
    same --json "$f" "$f"
    same "$f" "$f" --worst 3
    same --json "$f" "$f" --units cm
    same --json "$f" "$f" --position-channels add
    "$OLD" edit "$f" --mirror -o "$T/$b.mirror.bvh" 2>/dev/null &&
        same --json "$f" "$T/$b.mirror.bvh" &&
        same --json "$T/$b.mirror.bvh" "$f" --units m &&
        same --json "$f" "$T/$b.mirror.bvh" --map auto
    "$OLD" edit "$f" --up z -o "$T/$b.upz.bvh" 2>/dev/null &&
        same --json "$f" "$T/$b.upz.bvh"
    "$OLD" edit "$f" --frames 0..700 -o "$T/$b.head.bvh" 2>/dev/null &&
        same --json "$f" "$T/$b.head.bvh" && same --json "$T/$b.head.bvh" "$f" &&
        same --json "$T/$b.head.bvh" "$T/$b.mirror.bvh"
    "$OLD" edit "$f" --fps 60 -o "$T/$b.fps.bvh" 2>/dev/null &&
        same --json "$f" "$T/$b.fps.bvh" && same --json "$T/$b.fps.bvh" "$f"
    "$OLD" edit "$f" --units mm -o "$T/$b.mm.bvh" 2>/dev/null &&
        same --json "$f" "$T/$b.mm.bvh" && same --json "$T/$b.mm.bvh" "$T/$b.mirror.bvh"
    samepipe "$f" --json - "$f"
done
# Files against each other (shared names, name families, nothing shared).
for ((i = 0; i < ${#files[@]}; i += 3)); do
    for ((k = 1; k < ${#files[@]}; k += 4)); do
        same --json "${files[i]}" "${files[k]}"
    done
done
echo "$n pairs, $bad differ"
[ $bad = 0 ]
