//! What the instruction-counting examples (`mix_count`, `resample_count`,
//! `edit_count`) share: their command line, their clip (a file, or a
//! synthetic one) and the forward kinematics baseline.

use bvhkit::{Bvh, Kinematics, PositionChannels, ReadOptions};

/// A `joints`-joint chain (a six-channel root, then three rotation
/// channels per joint, ZXY) with `frames` frames of random angles in
/// [-180, 180).
fn synthetic(joints: usize, frames: usize) -> Bvh {
    let mut text = String::from(
        "HIERARCHY\nROOT J0\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n",
    );
    for k in 1..joints {
        text +=
            &format!("JOINT J{k}\n{{\nOFFSET 1 2 3\nCHANNELS 3 Zrotation Xrotation Yrotation\n");
    }
    text += "End Site\n{\nOFFSET 0 1 0\n}\n";
    text += &"}\n".repeat(joints);
    let c = 3 * joints + 3;
    text += &format!("MOTION\nFrames: {frames}\nFrame Time: 0.008333\n");
    let mut x: u64 = 0x1234_5678;
    for _ in 0..frames {
        for _ in 0..c {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            text += &format!("{} ", ((x >> 11) as f64 / (1u64 << 53) as f64) * 360.0 - 180.0);
        }
        text += "\n";
    }
    Bvh::parse(text).expect("synthetic clip")
}

/// The benches' synthetic clip (`benches/common`'s `synth_fk`): the
/// 100-joint skeleton of `bvhkit_testdata::synth_text(5, 100, 0)` (a
/// humanoid with fingers, mixed rotation orders, position channels on a
/// few joints) with `frames` frames of random values in [-180, 180) on
/// every channel.
fn bench_synthetic(frames: usize) -> Bvh {
    bvhkit_testdata::random_angles_clip(100, frames)
}

/// The command line of a counting example, `[KERNEL [FILE [REPEATS
/// [MORE...]]]]`.
pub(crate) struct Args {
    /// The kernel to run (the example's default when not given).
    pub(crate) kernel: String,
    /// The clip FILE names ([`clip`]).
    pub(crate) bvh: Bvh,
    /// How many times to run the kernel (1 when not given).
    pub(crate) repeats: usize,
    /// The arguments after REPEATS (`resample_count`'s RATE; the others
    /// take none).
    #[allow(dead_code)]
    pub(crate) more: Vec<String>,
}

/// This process's [`Args`], with `kernel` the default kernel.
pub(crate) fn args(kernel: &str) -> Args {
    let mut args = std::env::args().skip(1);
    let kernel = args.next().unwrap_or_else(|| kernel.to_string());
    let bvh = clip(args.next().as_deref());
    let repeats = args.next().map_or(1, |r| r.parse().expect("REPEATS"));
    Args { kernel, bvh, repeats, more: args.collect() }
}

/// The clip the FILE argument names: a BVH file read leniently; for
/// `synthetic` (or no argument) a 100-joint chain of 2,000 frames; for
/// `bench` or `bench:FRAMES` the benches' synthetic clip with 2,000 (or
/// FRAMES) frames (20,000 in the benches).
pub(crate) fn clip(arg: Option<&str>) -> Bvh {
    match arg {
        Some("synthetic") | None => synthetic(100, 2_000),
        Some("bench") => bench_synthetic(2_000),
        Some(b) if b.starts_with("bench:") => {
            bench_synthetic(b["bench:".len()..].parse().expect("bench:FRAMES"))
        }
        Some(path) => {
            ReadOptions::new().lenient(true).read_path(std::path::Path::new(path)).expect("read").0
        }
    }
}

/// World positions of every joint of every frame of `bvh` (the benches'
/// baseline); returns a value of the result, so that none of it is
/// optimised away.
pub(crate) fn fk_every_frame(bvh: &Bvh) -> f64 {
    let skel = bvh.skeleton();
    let fk = Kinematics::new(skel, PositionChannels::Replace);
    let mut scratch = fk.scratch();
    let mut pos = vec![bvhkit::glam::DVec3::ZERO; skel.len()];
    let mut acc = 0.0;
    for frame in std::hint::black_box(bvh.motion()).frames() {
        fk.positions_with(frame, &mut scratch, &mut pos);
        acc += pos[pos.len() - 1].x;
    }
    acc
}
