#!/usr/bin/env bash
# Retarget throughput onto every human target of the corpus, in paired runs
# of two builds of the `retarget_bench` example (A B A B), beside FK of the
# source in the same runs: joint-frames per CPU second of `map_frame` alone
# (the streamed `bvh retarget`'s per-frame work, less the text), medians.
#
#   scripts/bench-retarget.sh A_BIN B_BIN SRC.bvh [PAIRS]
#
# A_BIN and B_BIN are builds of
#   cargo build --release -p bvhkit --example retarget_bench
# (target/release/examples/retarget_bench), copied aside. SRC: a long clip,
# e.g. the 105 MB synthetic file (cargo run --release -p bvhkit-testdata
# --example synth > synth.bvh) or the CMU walk repeated.
set -euo pipefail
a=$1 b=$2 src=$3 pairs=${4:-5}
corpus=${BVHKIT_CORPUS:-$(dirname "$0")/../../shared/corpus}
targets="cmu_12_01_walk_cgspeed_pybvh bandai_namco_ds1_kick_6ch_every_joint
rokoko_jesse_dance_yxz_fingers perception_neuron_axis_yxz_fingers_crlf
second_life_avatar_walk_poser_per_joint_orders xsens_mvn_style_mpi_1space_yxz_crlf
cmu_02_03_daz_names_165_joints_face_hands kinect_v1_custom_writer_nonzero_root_offset
mediapipe_to_bvh_dance_zxy pymo_demo_av_8walk_meredith makehuman_163_joints_6ch_every_joint_deep"
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
rate() { "$@" 2>&1 | sed -n 's/^map_frame alone: .*(\([0-9.]*\) M joint-frames per CPU second)/\1/p'; }
fk() { "$@" 2>&1 | sed -n 's/.*, \([0-9.]*\) M per CPU second;.*/\1/p'; }
printf '%-46s %8s %8s %8s %8s %6s\n' target A B 'FK(A)' 'FK(B)' 'B/A'
for t in $targets; do
    ra=() rb=() fa=() fb=()
    for _ in $(seq "$pairs"); do
        ra+=("$(rate "$a" retarget "$src" "$corpus/$t.bvh")")
        fa+=("$(fk "$a" fk "$src")")
        rb+=("$(rate "$b" retarget "$src" "$corpus/$t.bvh")")
        fb+=("$(fk "$b" fk "$src")")
    done
    ma=$(printf '%s\n' "${ra[@]}" | median) mb=$(printf '%s\n' "${rb[@]}" | median)
    printf '%-46s %8s %8s %8s %8s %6.2f\n' "$t" "$ma" "$mb" \
        "$(printf '%s\n' "${fa[@]}" | median)" "$(printf '%s\n' "${fb[@]}" | median)" \
        "$(echo "$mb / $ma" | bc -l)"
done
