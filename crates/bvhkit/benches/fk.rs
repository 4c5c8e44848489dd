//! Forward kinematics throughput in joint world transforms per second.
//!
//! `cargo bench -p bvhkit --bench fk`. Inputs: the largest corpus file and
//! a synthetic 100-joint skeleton with 100,000 frames (`$BVHKIT_FK_FRAMES`
//! to change). Each group also times the floor: `sin_cos` of three angles
//! per joint over the same joints and frames, so FK / floor can be read off.

#[allow(dead_code)]
mod common;

use std::hint::black_box;

use bvhkit::glam::{DMat3, DVec3};
use bvhkit::{Bvh, Kinematics, Motion, PositionChannels};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// A synthetic skeleton of `joints` joints with `frames` frames of random
/// values (made directly, without going through text).
fn synth(joints: usize, frames: usize) -> Bvh {
    let skel = Bvh::parse(bvhkit_testdata::synth_text(5, joints, 0)).expect("synthetic skeleton");
    let (skel, _) = skel.into_parts();
    let c = skel.n_channels();
    let mut x: u64 = 0x1234_5678;
    let values = (0..c * frames)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 11) as f64 / (1u64 << 53) as f64) * 360.0 - 180.0
        })
        .collect();
    let motion = Motion::new(1.0 / 120.0, c, values).expect("motion");
    Bvh::new(skel, motion).expect("bvh")
}

/// The floor: `sin_cos` of three angles per joint, per frame.
fn floor(motion: &Motion, idx: &[usize]) -> f64 {
    let mut acc = 0.0;
    for frame in motion.frames() {
        for &i in idx {
            let (s, c) = frame[i].to_radians().sin_cos();
            acc += s + c;
        }
    }
    acc
}

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
    let mut rot = vec![DMat3::IDENTITY; joints];
    let mut out = vec![DVec3::ZERO; joints];
    g.bench_function("positions_with_reused_buffers", |b| {
        b.iter(|| {
            let mut acc = 0.0;
            for frame in black_box(motion).frames() {
                fk.positions_with(frame, &mut rot, &mut out);
                acc += out[joints - 1].x;
            }
            acc
        })
    });
    let n_ch = motion.n_channels().max(1);
    let idx: Vec<usize> = (0..3 * joints).map(|i| i % n_ch).collect();
    g.bench_function("floor_sin_cos_3_per_joint", |b| b.iter(|| floor(black_box(motion), &idx)));
    g.finish();
}

fn fk(c: &mut Criterion) {
    // Without a corpus, corpus_inputs printed the skip message.
    if let Some(input) = common::corpus_inputs(1).pop() {
        bench(c, &input.name, &input.parse());
    }
    let frames =
        std::env::var("BVHKIT_FK_FRAMES").ok().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let bvh = synth(100, frames);
    bench(c, &format!("synth_100j_{frames}f"), &bvh);
}

criterion_group!(benches, fk);
criterion_main!(benches);
