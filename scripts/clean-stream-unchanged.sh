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
OLD=$(realpath "${1:?usage: clean-stream-unchanged.sh OLD_BVH NEW_BVH}")
NEW=$(realpath "${2:?usage: clean-stream-unchanged.sh OLD_BVH NEW_BVH}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=${BVHKIT_CORPUS:-$ROOT/../shared/corpus}
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS" >&2; exit 2; }
T=$(mktemp -d /tmp/clean-stream-unchanged.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0 bad=0

# run BIN TAG ARGS...: `BIN clean ARGS -o $T/out.bvh`, its output, stderr
# and exit code kept under TAG (one output path, so messages that name it
# agree).
run() {
    local bin=$1 tag=$2
    shift 2
    rm -f "$T/out.bvh"
    "$bin" clean "$@" -o "$T/out.bvh" >"$T/$tag.stdout" 2>"$T/$tag.err" <"${STDIN:-/dev/null}"
    echo $? >"$T/$tag.rc"
    if [ -f "$T/out.bvh" ]; then mv "$T/out.bvh" "$T/$tag.bvh"; else : >"$T/$tag.bvh"; fi
}

same() {
    n=$((n + 1))
    run "$OLD" o "$@"
    run "$NEW" n "$@"
    for x in rc stdout err bvh; do
        if ! cmp -s "$T/o.$x" "$T/n.$x"; then
            bad=$((bad + 1))
            echo "DIFFERS ($x): bvh clean $*"
            break
        fi
    done
}

for f in "$CORPUS"/*.bvh; do
    same "$f" --spikes
    same "$f" --spikes=10
    same "$f" --spikes=3
    same "$f" --spikes=200
    same "$f" --spikes --strict
    same "$f" --spikes --one-euro 1,0.05
    same "$f" --spikes=5 --one-euro 2,0.01,2 --joints "$(sed -n 's/^ROOT[[:space:]]*//p' "$f" | head -1 | tr -d '\r')"
    same "$f" --one-euro 1,0.05
    STDIN=$f same - --spikes
    STDIN=$f same - --spikes=3 --one-euro 1,0.05
done
echo "$n cases, $bad differ"
[ "$bad" = 0 ]
