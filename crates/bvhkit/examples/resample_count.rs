//! `benches/edit.rs`'s resample case (`resample::to_fps` at 2.5 times the
//! clip's rate) run over one clip, for instruction counts under callgrind
//! (which load does not move):
//!
//! ```text
//! cargo build --release -p bvhkit --example resample_count
//! valgrind --tool=callgrind target/release/examples/resample_count KERNEL [FILE [REPEATS [RATE]]]
//! ```
//!
//! KERNEL is `none` (the set-up alone: subtract its count), `resample` or
//! `fk` (forward kinematics of every input frame, the bench's baseline);
//! FILE a BVH file, or `synthetic` (or nothing) for a 100-joint clip of
//! random angles (2,000 frames); REPEATS (default 1) runs the kernel that
//! many times, for wall-clock comparisons of whole processes; RATE (default
//! 2.5) is the new rate over the clip's. Prints the joint-frames the kernel
//! covered (output joint rotations for `resample`, joint positions for
//! `fk`), to divide the difference by.

use bvhkit::edit::resample;
use bvhkit::{Bvh, Kinematics, PositionChannels, ReadOptions};

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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kernel = args.get(1).map(String::as_str).unwrap_or("resample");
    let bvh = match args.get(2).map(String::as_str) {
        Some("synthetic") | None => synthetic(100, 2_000),
        Some(path) => {
            ReadOptions::new().lenient(true).read_path(std::path::Path::new(path)).expect("read").0
        }
    };
    let repeats: usize = args.get(3).map_or(1, |r| r.parse().expect("REPEATS"));
    let skel = bvh.skeleton();
    let motion = bvh.motion();
    let rotating = skel.joints().iter().filter(|j| j.rotation_axes().count() > 0).count();
    let rate: f64 = args.get(4).map_or(2.5, |r| r.parse().expect("RATE"));
    let fps = motion.fps() * rate;
    let (mut covered, mut acc) = (0usize, 0.0);
    match kernel {
        "none" => {}
        "resample" => {
            for _ in 0..repeats {
                let out = resample::to_fps(std::hint::black_box(&bvh), fps).expect("resample");
                let m = out.motion();
                covered += m.n_frames() * rotating;
                acc += m.frame(m.n_frames() - 1).first().copied().unwrap_or(0.0);
            }
        }
        "fk" => {
            let fk = Kinematics::new(skel, PositionChannels::Replace);
            let mut scratch = fk.scratch();
            let mut pos = vec![bvhkit::glam::DVec3::ZERO; skel.len()];
            for _ in 0..repeats {
                for frame in std::hint::black_box(motion).frames() {
                    fk.positions_with(frame, &mut scratch, &mut pos);
                    acc += pos[pos.len() - 1].x;
                }
                covered += motion.n_frames() * skel.len();
            }
        }
        other => panic!("unknown kernel {other:?}: none, resample or fk"),
    }
    println!("{kernel}: {covered} joint-frames ({acc})");
}
