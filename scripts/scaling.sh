#!/usr/bin/env bash
# How each main command scales from one core to two (README, docs/performance.md
# "Scaling"): every command is run on one core (`taskset -c 0`, `-j 1`) and on
# two (`taskset -c 0,1`, `-j 2`) in turn, A B A B ..., and each pair's
# wall-time ratio is the speedup S = one core / two cores; the medians are
# printed with Amdahl's serial fraction s = 2/S - 1 (0: all of the work
# splits in two; 1: none of it does).
#
#   scripts/scaling.sh [RUNS]
#
# Needs a release build (`cargo build --release -p bvhkit-cli`; the binary is
# taken from $BVH, default target/release/bvh), taskset (util-linux) and two
# processors. Inputs: $SYNTH, a large file (default: the synthetic 100 MB
# file, made once with `cargo run --release -p bvhkit-testdata --example
# synth`), and $CORPUS, a folder of BVH files (default ../shared/corpus; its
# well-formed files are copied ten times under other names into a temporary
# folder, about 150 MB, for the folder commands). Outputs go to a temporary
# folder, removed at the end. On a machine shared with other work the ratios
# move: run it quiet.
set -euo pipefail
runs=${1:-5}
here=$(cd "$(dirname "$0")" && pwd)
bvh=${BVH:-$here/../target/release/bvh}
corpus=${CORPUS:-$here/../../shared/corpus}
command -v taskset >/dev/null || { echo "scaling: needs taskset (util-linux)"; exit 2; }
[ -x "$bvh" ] || { echo "scaling: no $bvh (cargo build --release -p bvhkit-cli)"; exit 2; }
[ -d "$corpus" ] || { echo "scaling: no corpus folder $corpus (set CORPUS)"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

synth=${SYNTH:-}
if [ -z "$synth" ]; then
  synth=$tmp/synth.bvh
  (cd "$here/.." && cargo run -q --release -p bvhkit-testdata --example synth) >"$synth"
fi
dir=$tmp/dir
# shellcheck source=scripts/corpus-copies.sh
. "$here/corpus-copies.sh"
corpus_copies "$corpus" "$dir" 10
walk=$corpus/cmu_01_01_walk_cgspeed_mb_names.bvh
target=$corpus/rokoko_jesse_dance_yxz_fingers.bvh

# Wall seconds of one run of "$@" (start to exit, from the shell).
wall() {
  local t0 t1
  t0=$(date +%s%N)
  # Exit 1 is a finished run that found something (lint's findings).
  local rc=0
  "$@" >/dev/null 2>&1 || rc=$?
  [ "$rc" -le 1 ] || { echo "scaling: failed (exit $rc): $*" >&2; exit 1; }
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f\n", (b - a) / 1e9}'
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

printf '| command | one core (s) | two cores (s) | speedup S | serial fraction s |\n'
printf '|---|---:|---:|---:|---:|\n'

# row NAME JOBS ARGS...: ARGS on one core and on two; JOBS is yes when the
# command takes -j.
row() {
  local name=$1 jobs=$2
  shift 2
  local one=(taskset -c 0 "$bvh" "$@") two=(taskset -c 0,1 "$bvh" "$@")
  if [ "$jobs" = yes ]; then one+=(-j 1); two+=(-j 2); fi
  wall "${one[@]}" >/dev/null; wall "${two[@]}" >/dev/null # warm-up
  : >"$tmp/t1"; : >"$tmp/t2"; : >"$tmp/r"
  for _ in $(seq "$runs"); do
    t1=$(wall "${one[@]}"); t2=$(wall "${two[@]}")
    echo "$t1" >>"$tmp/t1"; echo "$t2" >>"$tmp/t2"
    awk -v a="$t1" -v b="$t2" 'BEGIN {print (b > 0 ? a / b : 0)}' >>"$tmp/r"
  done
  awk -v n="$name" -v a="$(median <"$tmp/t1")" -v b="$(median <"$tmp/t2")" -v s="$(median <"$tmp/r")" \
    'BEGIN {printf "| %s | %.3f | %.3f | %.2fx | %.2f |\n", n, a, b, s, 2 / s - 1}'
}

row "check (100 MB file)" yes check "$synth"
row "fmt (100 MB file)" yes fmt "$synth" -o "$tmp/fmt.bvh"
row "positions (100 MB file, NPY)" yes positions "$synth" -o "$tmp/p.npy"
row "edit --order XYZ (100 MB file)" yes edit "$synth" --order XYZ -o "$tmp/e.bvh"
row "export .glb (100 MB file)" yes export "$synth" -o "$tmp/x.glb"
row "check (folder, 360 files)" yes check "$dir"
row "positions (folder, NPY)" yes positions "$dir" -o "$tmp/pos/"
row "export .parquet (folder)" yes export "$dir" -o "$tmp/x.parquet"
row "export .glb (folder)" yes export "$dir" -o "$tmp/glb/"
row "lint (folder)" yes lint "$dir"
row "clean --spikes --butterworth 6 --lock-feet (CMU walk)" yes clean "$walk" --spikes --butterworth 6 --lock-feet -o "$tmp/c.bvh"
row "retarget (CMU walk onto Rokoko)" no retarget "$walk" --to "$target" -o "$tmp/r.bvh"
