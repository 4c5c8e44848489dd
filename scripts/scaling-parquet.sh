#!/usr/bin/env bash
# The folder Parquet export on one core against two (issue #30), written to
# the disk and to memory, with the CPU time of each run and, optionally, a
# baseline binary paired against this one (docs/performance.md "Scaling").
#
#   scripts/scaling-parquet.sh [PAIRS]
#
# For each output folder (a temporary folder under $TMPDIR or /tmp, and one
# under /dev/shm): PAIRS pairs of runs, one core (`taskset -c 0`, `-j 1`) then
# two (`taskset -c 0,1`, `-j 2`), each replacing the table the run before
# wrote, as a re-export does ("replacing"), then PAIRS pairs more into a
# fresh output path ("fresh": the table and skeleton table of the run before
# removed first, outside the timed run, so that no old table is released at
# the end; on tmpfs that release is 0.07 s of one thread). Prints the median wall and CPU seconds (user +
# system, from /usr/bin/time) of each side, the median of the pairs' speedups
# S = one core / two cores and Amdahl's serial fraction s = 2/S - 1, the
# median of the pairs' CPU ratios (two cores' CPU seconds over one core's:
# what two cores cost beyond the work itself) and the median minor page
# faults and voluntary context switches of each side. With
# $BASE set to another `bvh` binary, the same pairs for it run in turn with
# this one's (A B A B), so both see the same minutes; the tables of every
# run are compared byte for byte (every build, both thread counts) at the end.
# With SPLIT=1, each pair also runs the machine's own ceiling for this work:
# the folder's files dealt into two halves, exported at once by two one-core
# runs (`taskset -c 0` and `-c 1`, `-j 1` each); its row gives the one-core
# run of the whole folder (of the first binary, in the same pair) over the
# later of the two halves' wall times. No code is shared between the two
# halves, so what keeps that below 2x is the machine (two virtual processors
# sharing a host's caches, memory and disk), not the program; the export's
# own speedup is then best read against it.
# With SERIAL=1, two two-core runs of each binary, replacing and fresh, are
# recorded with `perf sched record` and their serial CPU time printed
# (scripts/serial-time.py), with Amdahl's bound from it.
# With RT=1 every run is started at real-time priority (`chrt -f 10`, root
# only): on a machine loaded by other work the runs then take the cores
# first, and their wall times are close to a quiet machine's (on /dev/shm;
# on a disk the kernel's writeback threads, at normal priority, wait).
#
# Needs a release build (`cargo build --release -p bvhkit-cli`, or $BVH),
# taskset, /usr/bin/time, two processors; the input folder is the corpus's
# well-formed files copied 12 times (432 files, about 184 MB), made in a
# temporary folder ($CORPUS, default ../shared/corpus), removed at the end
# with every output. Run it on a quiet machine: under load the wall times
# stretch and only the CPU times and the serial time mean anything.
set -euo pipefail
pairs=${1:-7}
here=$(cd "$(dirname "$0")" && pwd)
bvh=${BVH:-$here/../target/release/bvh}
base=${BASE:-}
corpus=${CORPUS:-$here/../../shared/corpus}
rt=()
[ "${RT:-0}" = 1 ] && rt=(chrt -f 10)
for tool in taskset /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "scaling-parquet: needs $tool"; exit 2; }
done
[ -x "$bvh" ] || { echo "scaling-parquet: no $bvh (cargo build --release -p bvhkit-cli)"; exit 2; }
[ -z "$base" ] || [ -x "$base" ] || { echo "scaling-parquet: no baseline binary $base"; exit 2; }
[ -d "$corpus" ] || { echo "scaling-parquet: no corpus folder $corpus (set CORPUS)"; exit 2; }
tmp=$(mktemp -d)
shm=$(mktemp -d /dev/shm/scaling-parquet.XXXXXX)
trap 'rm -rf "$tmp" "$shm"' EXIT

dir=$tmp/dir
# shellcheck source=scripts/corpus-copies.sh
. "$here/corpus-copies.sh"
corpus_copies "$corpus" "$dir" 12
if [ "${SPLIT:-0}" = 1 ]; then
  mkdir -p "$tmp/half0" "$tmp/half1"
  find "$dir" -name '*.bvh' | sort | awk '{print (NR % 2) " " $0}' | while read -r h f; do
    ln "$f" "$tmp/half$h/$(echo "${f#"$dir"/}" | tr / _)"
  done
fi
echo "input: $(find "$dir" -name '*.bvh' | wc -l) files, $(du -sm "$dir" | cut -f1) MB; $(nproc) processors, load $(cut -d' ' -f1-3 /proc/loadavg)"

# "wall cpu faults switches" of one run of BIN CORES JOBS OUT [fresh] (exit 0 or 1 counts as
# done); with "fresh", OUT and its skeleton table are removed first (not
# timed).
run() {
  local bin=$1 cores=$2 jobs=$3 out=$4 rc=0
  [ "${5:-}" = fresh ] && rm -f "$out" "${out%.parquet}.skeleton.parquet"
  /usr/bin/time -f '%e %U %S %R %w' -o "$tmp/time" "${rt[@]}" taskset -c "$cores" "$bin" export "$dir" -o "$out" -j "$jobs" \
    >/dev/null 2>"$tmp/err" || rc=$?
  [ "$rc" -le 1 ] || { echo "scaling-parquet: $bin failed (exit $rc):" >&2; cat "$tmp/err" >&2; exit 1; }
  awk '{printf "%.4f %.4f %d %d\n", $1, $2 + $3, $4, $5}' "$tmp/time"
}

# "wall cpu" of the two halves exported at once, one core each, into OUTDIR
# (wall: the later of the two; cpu: both).
split_run() {
  local outdir=$1 mode=$2 k
  for k in 0 1; do
    [ "$mode" = fresh ] && rm -f "$outdir/h$k.parquet" "$outdir/h$k.skeleton.parquet"
    /usr/bin/time -f '%e %U %S %x' -o "$tmp/time$k" "${rt[@]}" taskset -c "$k" "$bvh" export "$tmp/half$k" \
      -o "$outdir/h$k.parquet" -j 1 >/dev/null 2>"$tmp/err$k" &
  done
  wait
  for k in 0 1; do
    awk '$4 > 1 {exit 1}' "$tmp/time$k" ||
      { echo "scaling-parquet: the export of half $k failed:" >&2; cat "$tmp/err$k" >&2; exit 1; }
  done
  cat "$tmp/time0" "$tmp/time1" | awk '{w = ($1 > w) ? $1 : w; c += $2 + $3} END {printf "%.4f %.4f\n", w, c}'
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# The table row NAME of LOG's pairs ("w1 c1 w2 c2 [f1 f2 v1 v2]" a line:
# one core's wall and CPU, two cores', then the page faults and voluntary
# switches of each when LOG has them).
row() {
  local name=$1 log=$2
  col() { cut -d' ' -f"$1" "$log" | median; }
  speedups() { awk '{print ($3 > 0 ? $1 / $3 : 0)}' "$log"; }
  local counters='| | |'
  if [ "$(head -1 "$log" | wc -w)" -ge 8 ]; then
    counters="| $(col 5 | cut -d. -f1) / $(col 6 | cut -d. -f1) | $(col 7 | cut -d. -f1) / $(col 8 | cut -d. -f1) |"
  fi
  awk -v n="$name" -v w1="$(col 1)" -v c1="$(col 2)" -v w2="$(col 3)" -v c2="$(col 4)" \
    -v s="$(speedups | median)" -v lo="$(speedups | sort -g | head -1)" -v hi="$(speedups | sort -g | tail -1)" \
    -v cr="$(awk '{print ($2 > 0 ? $4 / $2 : 0)}' "$log" | median)" -v tail="$counters" \
    'BEGIN {printf "| %s | %.3f (%.3f CPU) | %.3f (%.3f CPU) | %.2fx (%.2f to %.2f) | %.2f | %.3f %s\n", n, w1, c1, w2, c2, s, lo, hi, 2 / s - 1, cr, tail}'
}

# One table row per binary for the output folder OUTDIR (WHERE names it),
# replacing the table of the run before or, with MODE "fresh", not.
measure() {
  local outdir=$1 where=$2 mode=${3:-replacing}
  local -a bins=("$bvh")
  [ -z "$base" ] || bins+=("$base")
  for b in "${bins[@]}"; do
    run "$b" 0 1 "$outdir/x.parquet" >/dev/null # warm-up: an old table to replace
    : >"$tmp/$(basename "$b").log"
  done
  for _ in $(seq "$pairs"); do
    for b in "${bins[@]}"; do
      read -r w1 c1 f1 v1 < <(run "$b" 0 1 "$outdir/x.parquet" "$mode")
      read -r w2 c2 f2 v2 < <(run "$b" 0,1 2 "$outdir/x.parquet" "$mode")
      echo "$w1 $c1 $w2 $c2 $f1 $f2 $v1 $v2" >>"$tmp/$(basename "$b").log"
      if [ "${SPLIT:-0}" = 1 ] && [ "$b" = "$bvh" ]; then
        read -r ws cs < <(split_run "$outdir" "$mode")
        echo "$w1 $c1 $ws $cs" >>"$tmp/split.log"
      fi
    done
  done
  for b in "${bins[@]}"; do
    row "$b ($where, $mode)" "$tmp/$(basename "$b").log"
  done
  if [ "${SPLIT:-0}" = 1 ]; then
    local log=$tmp/split.log
    row "two halves at once, one core each ($where, $mode)" "$log"
    rm -f "$log" "$outdir"/h?.parquet "$outdir"/h?.skeleton.parquet
  fi
}

printf '| binary (output) | one core: wall s (CPU s) | two cores: wall s (CPU s) | speedup S (range) | serial fraction s | CPU two / one | page faults one / two | voluntary switches one / two |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|\n'
for mode in replacing fresh; do
  measure "$tmp" "$(df --output=fstype "$tmp" | tail -1)" "$mode"
  measure "$shm" "$(df --output=fstype "$shm" | tail -1)" "$mode"
done
rm -f "$tmp/x.parquet" "$tmp/x.skeleton.parquet" "$shm/x.parquet" "$shm/x.skeleton.parquet"

# The bytes: every build and thread count gives the same table and skeleton table.
mkdir -p "$shm/cmp"
for b in "$bvh" ${base:+"$base"}; do
  for j in 1 2; do
    "$b" export "$dir" -o "$shm/cmp/$j-$(basename "$b").parquet" -j "$j" >/dev/null 2>&1 || true
  done
done
sums=$(cd "$shm/cmp" && for f in *.skeleton.parquet; do
  sha256sum "$f" "${f%.skeleton.parquet}.parquet" | cut -d' ' -f1 | tr '\n' ' '
  echo
done | sort -u | wc -l)
if [ "$sums" = 1 ]; then echo "bytes: the same table and skeleton table from every run compared"; else
  echo "bytes: the tables DIFFER between builds or thread counts"; exit 1; fi

if [ "${SERIAL:-0}" = 1 ]; then
  command -v perf >/dev/null || { echo "scaling-parquet: SERIAL=1 needs perf"; exit 2; }
  for b in "$bvh" ${base:+"$base"}; do
    for mode in replacing fresh; do
      run "$b" 0,1 2 "$shm/x.parquet" >/dev/null
      [ "$mode" = fresh ] && rm -f "$shm/x.parquet" "$shm/x.skeleton.parquet"
      "${rt[@]}" perf sched record -q -o "$tmp/sched.data" -- taskset -c 0,1 "$b" export "$dir" -o "$shm/x.parquet" -j 2 \
        >/dev/null 2>&1
      echo "serial time of $b (two cores, /dev/shm, $mode):"
      perf script -i "$tmp/sched.data" -F comm,pid,tid,cpu,time,event,trace 2>/dev/null |
        python3 "$here/serial-time.py" "$(basename "$b" | cut -c1-15)" | sed -n '1,8p'
    done
  done
fi
