#!/usr/bin/env bash
# Whole-process timings of the FBX export and import beside their
# yardsticks (README "Performance", docs/fbx.md): pairs of commands run in
# turn, A B A B ..., each pair's wall-time ratio A/B, medians printed.
#
#   scripts/bench-fbx.sh FILE.bvh [RUNS]
#
# Needs a release build (`cargo build --release -p bvhkit-cli`; the binary
# is taken from $BVH, default target/release/bvh). With `blender` on the PATH it also times Blender's own
# route, its BVH importer then its FBX exporter (scripts/blender-bvh-to-fbx.py),
# against `bvh export` (fewer runs: it takes seconds).
set -euo pipefail
file=${1:?usage: scripts/bench-fbx.sh FILE.bvh [RUNS]}
runs=${2:-11}
here=$(cd "$(dirname "$0")" && pwd)
bvh=${BVH:-$here/../target/release/bvh}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Wall seconds of one run of "$@" (start to exit, from the shell).
wall() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f\n", (b - a) / 1e9}'
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# pair NAME RUNS -- A... -- B...
pair() {
  local name=$1 n=$2
  shift 3
  local a=() b=()
  while [ "$1" != -- ]; do a+=("$1"); shift; done
  shift
  b=("$@")
  "${a[@]}" >/dev/null 2>&1; "${b[@]}" >/dev/null 2>&1 # warm-up
  : >"$tmp/ta"; : >"$tmp/tb"; : >"$tmp/r"
  for _ in $(seq "$n"); do
    ta=$(wall "${a[@]}"); tb=$(wall "${b[@]}")
    echo "$ta" >>"$tmp/ta"; echo "$tb" >>"$tmp/tb"
    awk -v a="$ta" -v b="$tb" 'BEGIN {print (b > 0 ? a / b : 0)}' >>"$tmp/r"
  done
  printf '%-40s A %8ss  B %8ss  A/B %6s (median of %d pairs)\n' "$name" \
    "$(median <"$tmp/ta")" "$(median <"$tmp/tb")" "$(median <"$tmp/r")" "$n"
}

pair "export .fbx / positions .npy" "$runs" -- "$bvh" export "$file" -o "$tmp/x.fbx" -- "$bvh" positions "$file" -o "$tmp/p.npy"
"$bvh" export "$file" -o "$tmp/in.fbx" >/dev/null 2>&1
pair "import .fbx / export .glb" "$runs" -- "$bvh" import "$tmp/in.fbx" -o "$tmp/y.bvh" -- "$bvh" export "$file" -o "$tmp/x.glb"
if command -v blender >/dev/null; then
  pair "export .fbx / Blender BVH->FBX" 3 -- "$bvh" export "$file" -o "$tmp/x.fbx" -- \
    blender -b --factory-startup --python "$here/blender-bvh-to-fbx.py" -- "$file" "$tmp/b.fbx"
fi
