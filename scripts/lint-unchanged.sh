#!/usr/bin/env bash
# `bvh lint` (its JSON, text, errors and exit codes) of one binary against
# another on every corpus file and on any further files given, under many
# option sets: the default, --ground 0 and lowest, --units m, cm and in,
# --up z and -y, --feet (the usual names and a file's first joint),
# --loop, --position-channels add, lowered spike and pop thresholds, the
# text output, standard input, and the new binary on one thread. A change
# that "changes no result" must print nothing but the final count.
#
#   scripts/lint-unchanged.sh OLD_BVH NEW_BVH [MORE.bvh ...]
#
# Corpus: BVHKIT_CORPUS or ../shared/corpus from the repository root.
set -u
OLD=$(realpath "${1:?usage: lint-unchanged.sh OLD_BVH NEW_BVH [MORE.bvh ...]}")
NEW=$(realpath "${2:?usage: lint-unchanged.sh OLD_BVH NEW_BVH [MORE.bvh ...]}")
shift 2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=${BVHKIT_CORPUS:-$ROOT/../shared/corpus}
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS" >&2; exit 2; }
T=$(mktemp -d /tmp/lint-unchanged.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0 bad=0

# compare WHAT: the two runs' outputs, errors and exit codes must agree.
compare() {
    if [ "$ro" != "$rn" ] || ! cmp -s "$T/o.out" "$T/n.out" || ! cmp -s "$T/o.err" "$T/n.err"; then
        bad=$((bad + 1))
        echo "DIFFERS: $1 (exit $ro / $rn)"
    fi
}

# same ARGS...: `bvh lint ARGS` of both binaries, byte for byte.
same() {
    n=$((n + 1))
    "$OLD" lint "$@" >"$T/o.out" 2>"$T/o.err" </dev/null
    ro=$?
    "$NEW" lint "$@" >"$T/n.out" 2>"$T/n.err" </dev/null
    rn=$?
    compare "bvh lint $*"
}

# one ARGS...: the new binary on one thread against the old one.
one() {
    n=$((n + 1))
    "$OLD" lint "$@" >"$T/o.out" 2>"$T/o.err" </dev/null
    ro=$?
    RAYON_NUM_THREADS=1 "$NEW" lint "$@" >"$T/n.out" 2>"$T/n.err" </dev/null
    rn=$?
    compare "RAYON_NUM_THREADS=1 bvh lint $*"
}

# samepipe FILE ARGS...: the same with FILE on standard input.
samepipe() {
    local f=$1
    shift
    n=$((n + 1))
    "$OLD" lint "$@" <"$f" >"$T/o.out" 2>"$T/o.err"
    ro=$?
    "$NEW" lint "$@" <"$f" >"$T/n.out" 2>"$T/n.err"
    rn=$?
    compare "bvh lint $* < $f"
}

for f in "$CORPUS"/*.bvh "$@"; do
    first=$(awk '$1 == "JOINT" { print $2; exit }' "$f" | tr -d '\r')
    same --json "$f"
    same "$f" --max-findings 0
    same --json "$f" --ground 0
    same --json "$f" --ground lowest
    same --json "$f" --units m
    same --json "$f" --units cm
    same --json "$f" --up z
    same --json "$f" --up -y --units in
    same --json "$f" --feet LeftFoot,RightFoot
    [ -n "$first" ] && same --json "$f" --feet "$first"
    same --json "$f" --loop
    same --json "$f" --position-channels add
    same --json "$f" --spike-k 2 --pop-factor 1.5 --far 0.3
    one --json "$f"
    samepipe "$f" --json -
done
echo "$n runs, $bad differ"
[ $bad = 0 ]
