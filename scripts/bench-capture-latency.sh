#!/usr/bin/env bash
# Loopback UDP latency of `bvh record`: a synthetic 72-joint clip (72 sensors)
# replayed at 1,000 frames per second by `bvh replay --to udp --realtime`,
# one datagram per frame; `bvh record --latency` reports the median, p99 and
# largest delay from reading a datagram to the frame it completed written.
#
#   scripts/bench-capture-latency.sh [FRAMES] [RUNS]    (defaults 5000, 3)
#
# Builds the release `bvh` and the synth example; temporary files go to
# target/tmp and are removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
frames=${1:-5000}
runs=${2:-3}
cargo build --release -q -p bvhkit-cli -p bvhkit-testdata --example synth
target=${CARGO_TARGET_DIR:-target}
bvh="$target/release/bvh"
tmp=$(mktemp -d "${target}/tmp-latency.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$target/release/examples/synth" 72 "$frames" | sed 's/^Frame Time:.*/Frame Time: 0.001/' > "$tmp/clip.bvh"
printf 'skeleton = "clip.bvh"\nframe_rate = 1000\nbind_all = true\n' > "$tmp/all.toml"
for run in $(seq "$runs"); do
    rm -f "$tmp/rec.err"
    "$bvh" record --config "$tmp/all.toml" --input udp://127.0.0.1:0 --idle 30 --latency \
        -o "$tmp/take.bvh" 2> "$tmp/rec.err" &
    rec=$!
    addr=
    for _ in $(seq 200); do
        addr=$(sed -n 's/^bvh: listening on udp:\/\///p' "$tmp/rec.err")
        [ -n "$addr" ] && break
        sleep 0.05
    done
    [ -n "$addr" ] || { cat "$tmp/rec.err"; kill "$rec"; exit 1; }
    "$bvh" replay "$tmp/clip.bvh" --as sensors --to "udp://$addr" --realtime 2> /dev/null
    wait "$rec"
    echo "run $run: $(grep -h 'frames;' "$tmp/rec.err" | sed 's/^.*take.bvh: //')"
    echo "run $run: $(grep -h '^bvh: latency' "$tmp/rec.err" | sed 's/^bvh: //')"
done
