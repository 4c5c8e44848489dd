#!/usr/bin/env bash
# Checksums of what every writing `bvh` command makes of the corpus: a
# refactoring that "changes no output byte" must print the same list before
# and after.
#
#   scripts/outputs-unchanged.sh OLD_BVH > /tmp/before.sums   # the binary of the base commit
#   scripts/outputs-unchanged.sh NEW_BVH > /tmp/after.sums    # the binary of the change
#   diff /tmp/before.sums /tmp/after.sums                     # must print nothing
#
# Each line is `sha256  case/what`: every output file, the command's
# standard output and standard error (the temporary directory's path
# replaced by `$T`, the times `export` prints masked) and its exit code, so notes, errors and exit codes are
# compared as well as files. Covers: fmt; edit with each transform alone,
# in streamed combinations (frame steps before a sampled --up/--units, maps
# before a lookahead, a bounded --frames after one) and from a pipe (the
# whole-clip path); positions and rotations in every format and
# representation; export glb/gltf/fbx/parquet/npz; import (FBX); concat,
# blend, layer, loop, retarget, replay, lint --html, diff, render (a
# subset). Corpus: BVHKIT_CORPUS or ../shared/corpus from the repository root.
set -u
BVH=$(realpath "${1:?usage: outputs-unchanged.sh PATH/TO/bvh}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=${BVHKIT_CORPUS:-$ROOT/../shared/corpus}
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS" >&2; exit 2; }
T=$(mktemp -d /tmp/outputs-unchanged.XXXXXX)
trap 'rm -rf "$T"' EXIT

# run CASE ARGS...: runs `bvh ARGS` in a fresh $T/out, then prints the
# checksums of everything it wrote, its stdout, stderr and exit code.
run() {
    local case=$1
    shift
    rm -rf "$T/out" && mkdir -p "$T/out"
    (cd "$T/out" && "$BVH" "$@" >"$T/stdout" 2>"$T/stderr" </dev/null)
    local rc=$?
    sums "$case" "$rc"
}

# runpipe CASE FILE ARGS...: as run, FILE piped to standard input.
runpipe() {
    local case=$1 file=$2
    shift 2
    rm -rf "$T/out" && mkdir -p "$T/out"
    (cd "$T/out" && cat "$file" | "$BVH" "$@" >"$T/stdout" 2>"$T/stderr")
    local rc=$?
    sums "$case" "$rc"
}

sums() {
    local case=$1 rc=$2
    (cd "$T/out" && find . -type f | LC_ALL=C sort | while read -r f; do
        printf '%s  %s/%s\n' "$(sha256sum <"$f" | cut -c1-64)" "$case" "${f#./}"
    done)
    for s in stdout stderr; do
        # The temporary folder and the times of `export`'s summary line vary.
        printf '%s  %s/%s\n' "$(sed -E -e "s#$T#\$T#g" \
            -e 's# in [0-9.]+ s \([0-9.]+ [KMG]?B/s\)# in N s (N MB/s)#' "$T/$s" |
            sha256sum | cut -c1-64)" "$case" "$s"
    done
    printf 'exit %s  %s\n' "$rc" "$case"
}

EDITS=(
    "frames:--frames 10..50"
    "frames-open:--frames 5.."
    "every:--every 3"
    "reverse:--reverse"
    "fps:--fps 30"
    "order:--order XYZ"
    "layout:--layout ZXY"
    "layout-all:--layout YXZ --layout-positions all"
    "up-z:--up z"
    "up-y-src:--up y --source-up z"
    "scale:--scale 2.5"
    "units:--units m"
    "units-src:--units cm --source-units in"
    "height:--height 1.7"
    "mirror:--mirror"
    "in-place:--in-place-root"
    "to-origin:--root-to-origin"
    "extract:--extract-root"
    "rename:--rename Left=L_"
    "strip:--strip-end-sites"
    "add:--add-end-sites"
    "rest0:--rest-pose 0"
    "rest-late:--rest-pose 100000"
    "sampled-up:--frames 5.. --every 2 --up z"
    "sampled-units:--every 2 --frames 3.. --units cm"
    "sampled-bounded:--frames 2.. --up -y --frames 0..40"
    "map-then-up:--order ZXY --up z --units m"
    "combo:--frames 0..200 --every 2 --order YXZ --scale 0.5 --mirror --in-place-root"
    "combo-whole:--up z --reverse --frames 3 --reverse --fps 24"
    "add-mode:--layout ZYX --position-channels add"
)

for f in "$CORPUS"/*.bvh; do
    b=$(basename "$f" .bvh)
    run "$b/fmt" fmt "$f" -o fmt.bvh
    run "$b/fmt-repair" fmt "$f" -o fmt.bvh --repair
    for e in "${EDITS[@]}"; do
        # shellcheck disable=SC2086 # the options split on purpose
        run "$b/edit-${e%%:*}" edit "$f" -o e.bvh ${e#*:}
    done
    run "$b/edit-stdout" edit "$f" -o - --every 2 --units m
    runpipe "$b/edit-pipe-up" "$f" edit - -o e.bvh --every 2 --up z --units m
    runpipe "$b/edit-pipe-stream" "$f" edit - -o e.bvh --frames 1.. --order ZYX
    for fmt in csv json npy; do
        run "$b/positions-$fmt" positions "$f" -o "p.$fmt"
    done
    run "$b/positions-opts" positions "$f" -o p.npy --dtype f64 --frames 3..30 --up auto
    run "$b/positions-stdout" positions "$f" --frames 0..5
    for r in euler quat matrix 6d axis-angle; do
        run "$b/rotations-$r" rotations "$f" -o r.npy --repr "$r"
    done
    run "$b/rotations-world" rotations "$f" -o r.csv --space world --repr quat --continuous
    run "$b/rotations-json" rotations "$f" -o r.json --order XYZ --frames 2.. --up z
    run "$b/replay" replay "$f" --as sensors -o s.csv
    run "$b/loop" loop "$f" -o l.bvh --crossfade 5
    run "$b/lint" lint "$f" --json
done

# The slower commands on a subset.
SOME=(cmu_01_01_walk_cgspeed_mb_names bandai_namco_ds1_kick_6ch_every_joint
    godot_vr_mocap_root_0_channels_trackers bvh_anim_test_simple
    second_life_avatar_walk_poser_per_joint_orders xia_style_angry_13_000
    malformed_frames_3069_rows_3070_boxing_toes truebones_elephant_idle_6ch_every_joint)
for b in "${SOME[@]}"; do
    f=$CORPUS/$b.bvh
    run "$b/glb" export "$f" -o x.glb
    run "$b/gltf" export "$f" -o x.gltf --bin-file --no-mesh --up z
    run "$b/fbx" export "$f" -o x.fbx
    run "$b/parquet" export "$f" -o x.parquet --rotations 6d --velocities --contacts
    run "$b/parquet-wide" export "$f" -o x.parquet --layout wide --dtype f32
    run "$b/npz" export "$f" -o x.npz --root-relative
    "$BVH" export "$f" -o "$T/x.fbx" >/dev/null 2>&1
    run "$b/import" import "$T/x.fbx" -o i.bvh
    run "$b/concat" concat "$f" "$f" -o c.bvh --crossfade 4
    run "$b/blend" blend "$f" "$f" -o b.bvh --weight 0.3
    run "$b/layer" layer "$f" "$f" -o l.bvh --weight 0.5
    run "$b/retarget" retarget "$f" --to "$CORPUS/xia_style_angry_13_000.bvh" -o r.bvh
    run "$b/diff" diff "$f" "$f"
    run "$b/lint-html" lint "$f" --html l.html
    run "$b/render" render "$f" -o r.png --frame 3
done
run "folder/fmt" fmt "$CORPUS" -o f
run "folder/edit" edit "$CORPUS" -o e --every 4 --up y
run "folder/positions" positions "$CORPUS" -o p --format npy
