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
//! joint rotation. The mirror (`mirror_joint_rotations`) counts a joint
//! rotation read and written per joint and frame, as the rotation order
//! does.

#[allow(dead_code)]
mod common;

use std::hint::black_box;

use bvhkit::Bvh;
use bvhkit::edit::mirror::{Mirror, MirrorOptions};
use bvhkit::edit::order::OrderMap;
use bvhkit::edit::scale::ScaleMap;
use bvhkit::edit::{FrameMap, resample};
use bvhkit::rotation::RotationOrder;
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
    common::bench_fk(&mut g, skel, motion);
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
    let mut mirror = Mirror::new(bvh, &MirrorOptions::default()).expect("mirror");
    eprintln!(
        "edit/{name}: mirror: {} pairs, every joint by sign flips: {}",
        mirror.pairs().len(),
        mirror.is_sign_flip()
    );
    g.bench_function("mirror_joint_rotations", |b| {
        b.iter(|| {
            for frame in black_box(motion).frames() {
                mirror.map(frame, &mut buf);
            }
            buf[0]
        })
    });
    g.finish();
}

fn edit(c: &mut Criterion) {
    common::corpus_then_synthetic(c, bench);
}

criterion_group!(benches, edit);
criterion_main!(benches);
