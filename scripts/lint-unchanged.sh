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
. "$(dirname "$0")/unchanged-lib.sh"
unchanged_init "lint-unchanged.sh OLD_BVH NEW_BVH [MORE.bvh ...]" "$@"
shift 2

for f in "$CORPUS"/*.bvh "$@"; do
    first=$(awk '$1 == "JOINT" { print $2; exit }' "$f" | tr -d '\r')
    same lint --json "$f"
    same lint "$f" --max-findings 0
    same lint --json "$f" --ground 0
    same lint --json "$f" --ground lowest
    same lint --json "$f" --units m
    same lint --json "$f" --units cm
    same lint --json "$f" --up z
    same lint --json "$f" --up -y --units in
    same lint --json "$f" --feet LeftFoot,RightFoot
    [ -n "$first" ] && same lint --json "$f" --feet "$first"
    same lint --json "$f" --loop
    same lint --json "$f" --position-channels add
    same lint --json "$f" --spike-k 2 --pop-factor 1.5 --far 0.3
    NEW_ENV=RAYON_NUM_THREADS=1 same lint --json "$f"
    STDIN=$f same lint --json -
done
echo "$n runs, $bad differ"
[ $bad = 0 ]
