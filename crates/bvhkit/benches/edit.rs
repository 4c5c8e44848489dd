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
//! does. Both inputs mirror by sign flips only, so two more cases take
//! the mirror's rotation path (`mirror_rotations`, counting the joints
//! that go through rotations per frame): the corpus's Bandai Namco clip,
//! whose rest pose keeps bones along X (its hips' own frames reflect Y,
//! the chest's Z, while the world reflects X), and the synthetic humanoid
//! (52 joints) in the usual layout with every right-side joint's channels in another
//! order than its partner's (every paired joint then goes through
//! rotations). The synthetic skeleton as it is has no mirrorable pair
//! (its random six-channel joints differ between sides), so its
//! `mirror_joint_rotations` measures the plan's copies only.

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

/// The mirror's rotation path on `bvh`, beside FK on the same clip.
fn bench_mirror_rotations(c: &mut Criterion, name: &str, bvh: &Bvh) {
    let skel = bvh.skeleton();
    let motion = bvh.motion();
    let mut mirror = Mirror::new(bvh, &MirrorOptions::default()).expect("mirror");
    let rotated = mirror.rotated_joints();
    eprintln!(
        "edit/{name}: mirror: {} pairs, {rotated} of {} joints through rotations, the rest by sign flips",
        mirror.pairs().len(),
        skel.joints().iter().filter(|j| !j.is_end_site()).count()
    );
    assert!(rotated > 0, "{name}: the mirror takes no rotation path");
    let mut g = c.benchmark_group(format!("edit/{name}"));
    common::configure(&mut g);
    g.throughput(Throughput::Elements((motion.n_frames() * skel.len()) as u64));
    common::bench_fk(&mut g, skel, motion);
    g.throughput(Throughput::Elements((motion.n_frames() * rotated) as u64));
    let mut buf = vec![0.0; skel.n_channels()];
    g.bench_function("mirror_rotations", |b| {
        b.iter(|| {
            for frame in black_box(motion).frames() {
                mirror.map(frame, &mut buf);
            }
            buf[0]
        })
    });
    g.finish();
}

/// The synthetic humanoid with fingers ([`bvhkit_testdata::SIZED_JOINTS`]
/// joints, no extra chains, which would leave no pair in mirrored places)
/// in the usual layout (root six channels, joints three, ZXY: its random
/// six-channel joints would leave no pair mirrorable), then every right-side joint's rotation channels in the
/// next order of [`RotationOrder::ALL`] (the world motion kept).
fn synthetic_reordered() -> Bvh {
    use bvhkit::edit::layout::{LayoutMap, Positions};
    let bvh = common::synth_fk(bvhkit_testdata::SIZED_JOINTS, 20_000);
    let mut layout = LayoutMap::new(
        bvh.skeleton(),
        RotationOrder::ZXY,
        Positions::Root,
        bvhkit::PositionChannels::Replace,
    )
    .expect("layout");
    let mut bvh = bvhkit::edit::map_frames(&bvh, &mut layout).expect("layout");
    let right: Vec<_> = bvh
        .skeleton()
        .ids()
        .filter(|&id| {
            let j = bvh.skeleton().joint(id);
            j.name().starts_with("Right") && j.rotation_order().is_some()
        })
        .collect();
    for id in right {
        let o = bvh.skeleton().joint(id).rotation_order().expect("three rotation channels");
        let next = RotationOrder::ALL[(o as usize + 1) % 6];
        let mut map = OrderMap::joint(bvh.skeleton(), id, next).expect("order");
        bvh = bvhkit::edit::map_frames(&bvh, &mut map).expect("reorder");
    }
    bvh
}

fn edit(c: &mut Criterion) {
    common::corpus_then_synthetic(c, bench);
    let test = "benches/edit: mirror rotations";
    if let Some(path) =
        bvhkit_testdata::corpus_file_or_skip(test, "bandai_namco_ds1_kick_6ch_every_joint.bvh")
    {
        let bytes = std::fs::read(&path).expect("corpus file");
        let (bvh, _) = bvhkit::ReadOptions::new().lenient(true).parse(&bytes).expect("corpus file");
        bench_mirror_rotations(c, "bandai_namco_mirror", &bvh);
    }
    bench_mirror_rotations(c, "synthetic_reordered_mirror", &synthetic_reordered());
}

criterion_group!(benches, edit);
criterion_main!(benches);
