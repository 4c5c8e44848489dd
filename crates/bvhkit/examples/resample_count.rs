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

mod common;

fn main() {
    let common::Args { kernel, bvh, repeats, more } = common::args("resample");
    let kernel = kernel.as_str();
    let skel = bvh.skeleton();
    let motion = bvh.motion();
    let rotating = skel.joints().iter().filter(|j| j.rotation_axes().count() > 0).count();
    let rate: f64 = more.first().map_or(2.5, |r| r.parse().expect("RATE"));
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
            for _ in 0..repeats {
                acc += common::fk_every_frame(&bvh);
                covered += motion.n_frames() * skel.len();
            }
        }
        other => panic!("unknown kernel {other:?}: none, resample or fk"),
    }
    println!("{kernel}: {covered} joint-frames ({acc})");
}
