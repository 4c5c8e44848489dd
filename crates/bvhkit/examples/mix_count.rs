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
//! kernel covered (all repeats together, one line), to divide the difference
//! by. The mixers are made once, before the repeats: a repeat costs its
//! frames only (a mixer made and a line printed per repeat were 20% of a
//! 14-frame clip's blend, Second Life's, and charged to its frames).

use bvhkit::JointId;
use bvhkit::edit::frames;
use bvhkit::mix::Mixer;
use bvhkit::mix::weights::{Curve, fade};

mod common;

fn main() {
    let common::Args { kernel, bvh: a, repeats, .. } = common::args("blend");
    let kernel = kernel.as_str();
    let b = frames::reverse(&a).expect("reverse");
    let skel = a.skeleton();
    let n = a.motion().n_frames();
    let (am, bm) = (a.motion(), b.motion());
    let mut out = vec![0.0; skel.n_channels()];
    let mut prev = am.frame(0).to_vec();
    let mut all = Mixer::new(skel, None);
    let sub =
        (1..skel.len()).max_by_key(|&i| skel.subtree_end(JointId::new(i)) - i).map(JointId::new);
    let mut masked = Mixer::new(skel, sub);
    let with_channels = skel.joints().iter().filter(|j| !j.channels().is_empty()).count();
    let mut acc = 0.0;
    let mut joint_frames = 0;
    for _ in 0..repeats {
        match kernel {
            "none" => {}
            "fk" => {
                acc += common::fk_every_frame(&a);
                joint_frames += n * skel.len();
            }
            "crossfade" | "blend" | "masked" => {
                let m = if kernel == "masked" { &mut masked } else { &mut all };
                for k in 0..n {
                    let w = if kernel == "crossfade" { fade(k, n, Curve::Smoothstep) } else { 0.5 };
                    m.blend(am.frame(k), bm.frame(k), w, &prev, &mut out);
                    std::mem::swap(&mut prev, &mut out);
                }
                joint_frames += n * with_channels;
            }
            "layer" => {
                let reference = all.reference(bm.frame(0));
                for k in 0..n {
                    all.layer(am.frame(k), bm.frame(k), &reference, 0.8, &prev, &mut out);
                    std::mem::swap(&mut prev, &mut out);
                }
                joint_frames += n * with_channels;
            }
            other => panic!("unknown kernel {other}"),
        }
    }
    if joint_frames > 0 {
        println!("{joint_frames} joint-frames");
    }
    println!("{}", acc + prev[0]);
}
