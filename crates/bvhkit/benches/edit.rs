//! Edit throughput: resampling in joint rotations per second (a rotation
//! read in and written out per joint and output frame), beside forward
//! kinematics (joint world positions per second) on the same clip in the
//! same run, and the per-frame transforms.
//!
//! `cargo bench -p bvhkit --bench edit`. Inputs: the largest corpus file
//! and a synthetic 100-joint skeleton with 20,000 frames of random angles.
//! Resampling goes to 2.5 times the rate (a time step of 0.4 frames), so
//! four output frames in five are interpolated (SLERP and Euler extraction
//! per joint) and one in five is a copy; the throughput counts every output
//! joint rotation.

#[allow(dead_code)]
mod common;

use std::hint::black_box;

use bvhkit::edit::order::OrderMap;
use bvhkit::edit::scale::ScaleMap;
use bvhkit::edit::{FrameMap, resample};
use bvhkit::glam::DVec3;
use bvhkit::rotation::RotationOrder;
use bvhkit::{Bvh, Kinematics, PositionChannels};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion, name: &str, bvh: &Bvh) {
    let skel = bvh.skeleton();
    let motion = bvh.motion();
    let rotating = skel.joints().iter().filter(|j| j.rotation_axes().count() > 0).count();
    let fps = motion.fps() * 2.5;
    let out_frames = resample::to_fps(bvh, fps).expect("resample").motion().n_frames();
    eprintln!(
        "edit/{name}: {rotating} joints with rotations x {} frames -> {out_frames} frames",
        motion.n_frames()
    );
    let mut g = c.benchmark_group(format!("edit/{name}"));
    common::configure(&mut g);
    g.throughput(Throughput::Elements((out_frames * rotating) as u64));
    g.bench_function("resample_x2.5_joint_rotations", |b| {
        b.iter(|| resample::to_fps(black_box(bvh), fps).expect("resample"))
    });
    // FK on the same clip, reused buffers: joint world positions per second.
    let joints = skel.len();
    g.throughput(Throughput::Elements((motion.n_frames() * joints) as u64));
    let fk = Kinematics::new(skel, PositionChannels::Replace);
    let mut scratch = fk.scratch();
    let mut out = vec![DVec3::ZERO; joints];
    g.bench_function("fk_positions_with_reused_buffers", |b| {
        b.iter(|| common::fk_every_frame(&fk, &mut scratch, &mut out, black_box(motion)))
    });
    // Per-frame transforms, joint rotations (or joints) per second.
    g.throughput(Throughput::Elements((motion.n_frames() * rotating) as u64));
    let mut buf = vec![0.0; skel.n_channels()];
    let mut order = OrderMap::all(skel, RotationOrder::XYZ);
    g.bench_function("order_to_xyz_joint_rotations", |b| {
        b.iter(|| {
            for frame in black_box(motion).frames() {
                order.map(frame, &mut buf);
            }
            buf[0]
        })
    });
    let mut scale = ScaleMap::new(skel, 0.01).expect("scale");
    g.bench_function("scale_joints", |b| {
        b.iter(|| {
            for frame in black_box(motion).frames() {
                scale.map(frame, &mut buf);
            }
            buf[0]
        })
    });
    g.finish();
}

fn edit(c: &mut Criterion) {
    if let Some(input) = common::corpus_inputs(1).pop() {
        bench(c, &input.name, &input.parse());
    }
    bench(c, "synthetic", &common::synth_fk(100, 20_000));
}

criterion_group!(benches, edit);
criterion_main!(benches);
