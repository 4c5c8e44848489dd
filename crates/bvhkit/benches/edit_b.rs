//! Mirror throughput in joint-frames per second, beside forward kinematics
//! of the same clips measured in the same run.
//!
//! `cargo bench -p bvhkit --bench edit_b`. Inputs: the corpus files with
//! the most left/right pairs among the largest ones, and a synthetic
//! 100-joint clip (no pairs: the plan is then sign flips only). Criterion
//! reports elements/s with one element = one joint in one frame (End Sites
//! included), the unit FK uses too.

#[allow(dead_code)]
mod common;

use std::hint::black_box;

use bvhkit::Bvh;
use bvhkit::edit::mirror::{Mirror, MirrorOptions};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion, name: &str, bvh: &Bvh) {
    let joints = bvh.skeleton().len();
    let frames = bvh.motion().n_frames();
    let m = Mirror::new(bvh, &MirrorOptions::default()).expect("mirror");
    eprintln!("edit_b/{name}: {joints} joints x {frames} frames, {} pairs", m.pairs().len());
    let mut g = c.benchmark_group(format!("edit_b/{name}"));
    common::configure(&mut g);
    g.throughput(Throughput::Elements((frames * joints) as u64));
    // The kernel: one reused output frame, no allocation.
    let n = bvh.skeleton().n_channels();
    let (mut prev, mut out) = (vec![0.0; n], vec![0.0; n]);
    g.bench_function("mirror_apply_frame", |b| {
        b.iter(|| {
            let mut acc = 0.0;
            for (i, frame) in black_box(bvh.motion()).frames().enumerate() {
                m.apply_frame(frame, (i > 0).then_some(&prev[..]), &mut out);
                acc += out[0];
                std::mem::swap(&mut prev, &mut out);
            }
            acc
        })
    });
    g.bench_function("mirror_apply_whole_clip", |b| b.iter(|| m.apply(black_box(bvh)).unwrap()));
    common::bench_fk(&mut g, bvh.skeleton(), bvh.motion());
    g.finish();
}

fn edit_b(c: &mut Criterion) {
    for input in common::corpus_inputs(4) {
        let bvh = input.parse();
        if bvh.motion().n_frames() > 0 {
            bench(c, &input.name, &bvh);
        }
    }
    let bvh = common::synth_fk(100, common::fk_frames() / 10);
    bench(c, "synthetic_100_joints", &bvh);
}

criterion_group!(benches, edit_b);
criterion_main!(benches);
