//! Mix throughput: crossfade, blend, masked blend and additive layer in
//! joint-frames per second (one joint with channels of one output frame),
//! beside forward kinematics (joint world positions per second) on the same
//! clip in the same run.
//!
//! `cargo bench -p bvhkit --bench mix`. Inputs: the largest corpus file and
//! a synthetic 100-joint skeleton with 20,000 frames of random angles. The
//! second clip is the same clip reversed, so every pair of poses differs.
//! Each kernel is the per-frame work of the library ([`Mixer`] on
//! caller-owned buffers): a crossfade is a blend at the fade weight of
//! each frame (here one window over the whole clip), a layer adds the
//! reversed clip's change since its first frame.

#[allow(dead_code)]
mod common;

use std::hint::black_box;

use bvhkit::edit::frames;
use bvhkit::mix::Mixer;
use bvhkit::mix::weights::{Curve, fade};
use bvhkit::{Bvh, JointId};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Blends every frame of `a` with `b`'s at `w(k)` into one reused buffer.
fn run_blend(m: &mut Mixer, a: &Bvh, b: &Bvh, w: impl Fn(usize) -> f64, out: &mut Vec<f64>) -> f64 {
    let nc = m.n_channels();
    let (am, bm) = (a.motion(), b.motion());
    let mut prev = am.frame(0).to_vec();
    for k in 0..am.n_frames() {
        m.blend(am.frame(k), bm.frame(k), w(k), &prev, out);
        std::mem::swap(&mut prev, out);
    }
    prev[nc - 1]
}

fn bench(c: &mut Criterion, name: &str, a: &Bvh) {
    let skel = a.skeleton();
    let b = frames::reverse(a).expect("reverse");
    let n = a.motion().n_frames();
    let with_channels = skel.joints().iter().filter(|j| !j.channels().is_empty()).count();
    eprintln!("mix/{name}: {with_channels} joints with channels x {n} frames");
    let mut g = c.benchmark_group(format!("mix/{name}"));
    common::configure(&mut g);
    g.throughput(Throughput::Elements((n * with_channels) as u64));
    let mut all = Mixer::new(skel, None);
    let mut out = vec![0.0; skel.n_channels()];
    g.bench_function("crossfade_joint_frames", |bch| {
        bch.iter(|| {
            run_blend(&mut all, black_box(a), &b, |k| fade(k, n, Curve::Smoothstep), &mut out)
        })
    });
    g.bench_function("blend_0.5_joint_frames", |bch| {
        bch.iter(|| run_blend(&mut all, black_box(a), &b, |_| 0.5, &mut out))
    });
    // The subtree of the root's child with the most joints (the upper body,
    // usually): the rest is copied.
    let sub =
        (1..skel.len()).max_by_key(|&i| skel.subtree_end(JointId::new(i)) - i).map(JointId::new);
    let mut masked = Mixer::new(skel, sub);
    g.bench_function("blend_masked_joint_frames", |bch| {
        bch.iter(|| run_blend(&mut masked, black_box(a), &b, |_| 0.5, &mut out))
    });
    let reference = all.reference(b.motion().frame(0));
    g.bench_function("layer_joint_frames", |bch| {
        bch.iter(|| {
            let (am, bm) = (black_box(a).motion(), b.motion());
            let mut prev = am.frame(0).to_vec();
            for k in 0..n {
                all.layer(am.frame(k), bm.frame(k), &reference, 0.8, &prev, &mut out);
                std::mem::swap(&mut prev, &mut out);
            }
            prev[0]
        })
    });
    // FK on the same clip, reused buffers: joint world positions per second.
    let joints = skel.len();
    g.throughput(Throughput::Elements((n * joints) as u64));
    common::bench_fk(&mut g, skel, a.motion());
    g.finish();
}

fn mix(c: &mut Criterion) {
    common::corpus_then_synthetic(c, bench);
}

criterion_group!(benches, mix);
criterion_main!(benches);
