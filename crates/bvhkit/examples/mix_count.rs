//! The per-frame kernels of `benches/mix.rs` run once over one clip, for
//! instruction counts under callgrind (which load does not move):
//!
//! ```text
//! cargo build --release -p bvhkit --example mix_count
//! valgrind --tool=callgrind target/release/examples/mix_count KERNEL [FILE]
//! ```
//!
//! KERNEL is `none` (the set-up alone: subtract its count), `fk`,
//! `crossfade`, `blend`, `masked` or `layer`; FILE a BVH file, or
//! `synthetic` (or nothing) for a 100-joint clip of random angles (2,000
//! frames); REPEATS (default 1) runs the kernel that many times, for
//! wall-clock comparisons of whole processes. Prints the joint-frames the
//! kernel covered, to divide the difference by.

use bvhkit::edit::frames;
use bvhkit::mix::Mixer;
use bvhkit::mix::weights::{Curve, fade};
use bvhkit::{Bvh, JointId, Kinematics, PositionChannels, ReadOptions};

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
    let kernel = args.get(1).map(String::as_str).unwrap_or("blend");
    let a = match args.get(2).map(String::as_str) {
        Some("synthetic") | None => synthetic(100, 2_000),
        Some(path) => {
            ReadOptions::new().lenient(true).read_path(std::path::Path::new(path)).expect("read").0
        }
    };
    let repeats: usize = args.get(3).map_or(1, |r| r.parse().expect("REPEATS"));
    let b = frames::reverse(&a).expect("reverse");
    let skel = a.skeleton();
    let n = a.motion().n_frames();
    let (am, bm) = (a.motion(), b.motion());
    let mut out = vec![0.0; skel.n_channels()];
    let mut prev = am.frame(0).to_vec();
    let mut all = Mixer::new(skel, None);
    let with_channels = skel.joints().iter().filter(|j| !j.channels().is_empty()).count();
    let mut acc = 0.0;
    for _ in 0..repeats {
        match kernel {
            "none" => {}
            "fk" => {
                let fk = Kinematics::new(skel, PositionChannels::Replace);
                let mut scratch = fk.scratch();
                let mut pos = vec![bvhkit::glam::DVec3::ZERO; skel.len()];
                for frame in am.frames() {
                    fk.positions_with(frame, &mut scratch, &mut pos);
                    acc += pos[pos.len() - 1].x;
                }
                println!("{} joint-frames", n * skel.len());
            }
            "crossfade" | "blend" | "masked" => {
                let sub = (1..skel.len())
                    .max_by_key(|&i| skel.subtree_end(JointId::new(i)) - i)
                    .map(JointId::new);
                let mut masked = Mixer::new(skel, sub);
                let m = if kernel == "masked" { &mut masked } else { &mut all };
                for k in 0..n {
                    let w = if kernel == "crossfade" { fade(k, n, Curve::Smoothstep) } else { 0.5 };
                    m.blend(am.frame(k), bm.frame(k), w, &prev, &mut out);
                    std::mem::swap(&mut prev, &mut out);
                }
                println!("{} joint-frames", n * with_channels);
            }
            "layer" => {
                let reference = all.reference(bm.frame(0));
                for k in 0..n {
                    all.layer(am.frame(k), bm.frame(k), &reference, 0.8, &prev, &mut out);
                    std::mem::swap(&mut prev, &mut out);
                }
                println!("{} joint-frames", n * with_channels);
            }
            other => panic!("unknown kernel {other}"),
        }
    }
    println!("{}", acc + prev[0]);
}
