#!/usr/bin/env bash
# `bvh clean` of one binary against another on every corpus file, with the
# options that stream (--spikes at several K, --one-euro, both): output
# bytes, stderr (the summary and notes) and exit code must agree. A change
# that "changes no result" must print nothing but the final count. The
# file on standard input (cleaned whole) is compared too.
#
#   scripts/clean-stream-unchanged.sh OLD_BVH NEW_BVH
#
# Corpus: BVHKIT_CORPUS or ../shared/corpus from the repository root.
set -u
. "$(dirname "$0")/unchanged-lib.sh"
unchanged_init "clean-stream-unchanged.sh OLD_BVH NEW_BVH" "$@"
# One output path for both binaries, so messages that name it agree.
OUTPUT=$T/out.bvh

for f in "$CORPUS"/*.bvh; do
    same clean "$f" --spikes
    same clean "$f" --spikes=10
    same clean "$f" --spikes=3
    same clean "$f" --spikes=200
    same clean "$f" --spikes --strict
    same clean "$f" --spikes --one-euro 1,0.05
    same clean "$f" --spikes=5 --one-euro 2,0.01,2 --joints "$(sed -n 's/^ROOT[[:space:]]*//p' "$f" | head -1 | tr -d '\r')"
    same clean "$f" --one-euro 1,0.05
    STDIN=$f same clean - --spikes
    STDIN=$f same clean - --spikes=3 --one-euro 1,0.05
done
echo "$n cases, $bad differ"
[ "$bad" = 0 ]
