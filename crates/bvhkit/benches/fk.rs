//! Forward kinematics throughput in joint world transforms per second.
//!
//! `cargo bench -p bvhkit --bench fk`. Inputs: the largest corpus file and
//! a synthetic 100-joint skeleton with 100,000 frames (`$BVHKIT_FK_FRAMES`
//! to change). Each group also times the floor: `sin_cos` of three angles
//! per joint over the same joints and frames, so FK / floor can be read off.

#[allow(dead_code)]
mod common;

use std::hint::black_box;

use bvhkit::glam::DVec3;
use bvhkit::{Bvh, Kinematics, PositionChannels};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion, name: &str, bvh: &Bvh) {
    let skel = bvh.skeleton();
    let motion = bvh.motion();
    let joints = skel.len();
    let frames = motion.n_frames();
    eprintln!("fk/{name}: {joints} joints (End Sites included) x {frames} frames");
    let fk = Kinematics::new(skel, PositionChannels::Replace);
    let mut g = c.benchmark_group(format!("fk/{name}"));
    common::configure(&mut g);
    g.throughput(Throughput::Elements((frames * joints) as u64));
    g.bench_function("positions_all_serial", |b| {
        b.iter(|| fk.positions_all_serial(black_box(motion)))
    });
    g.bench_function("positions_all", |b| b.iter(|| fk.positions_all(black_box(motion))));
    // The kernel alone: one reused output buffer, no allocation.
    let mut scratch = fk.scratch();
    let mut out = vec![DVec3::ZERO; joints];
    g.bench_function("positions_with_reused_buffers", |b| {
        b.iter(|| common::fk_every_frame(&fk, &mut scratch, &mut out, black_box(motion)))
    });
    let idx = common::floor_indices(motion, joints);
    g.bench_function("floor_std_sin_cos_3_per_joint", |b| {
        b.iter(|| common::fk_floor(black_box(motion), &idx, common::std_sin_cos_deg))
    });
    g.bench_function("floor_sin_cos_deg_3_per_joint", |b| {
        b.iter(|| common::fk_floor(black_box(motion), &idx, bvhkit::rotation::sin_cos_deg))
    });
    g.finish();
}

fn fk(c: &mut Criterion) {
    // Without a corpus, corpus_inputs printed the skip message.
    if let Some(input) = common::corpus_inputs(1).pop() {
        bench(c, &input.name, &input.parse());
    }
    let frames = common::fk_frames();
    let bvh = common::synth_fk(100, frames);
    bench(c, &format!("synth_100j_{frames}f"), &bvh);
}

criterion_group!(benches, fk);
criterion_main!(benches);
