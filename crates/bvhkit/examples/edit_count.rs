//! The per-frame maps of `bvh edit` that rewrite rotation channels
//! (`--order`, `--layout`, `--up`) run once over one clip, for instruction
//! counts under callgrind (which load does not move):
//!
//! ```text
//! cargo build --release -p bvhkit --example edit_count
//! valgrind --tool=callgrind target/release/examples/edit_count KERNEL [FILE]
//! ```
//!
//! KERNEL is `none` (the set-up alone: subtract its count), `order` (every
//! joint to ZXY), `layout` (ZXY, positions on the root only) or `axes`
//! (Y up to Z up), each one frame at a time through `FrameMap::map`; with
//! `-many` (`order-many`, ...) the whole clip through `ChunkedMap`, as the
//! CLI maps a batch (on rayon's pool: count with `RAYON_NUM_THREADS=2`,
//! and expect the pool's own instructions in the count). FILE as for
//! `mix_count`; REPEATS (default 1) runs the kernel that many times.
//! Prints the joint-frames whose rotation the map rewrote, to divide the
//! difference by.

use bvhkit::edit::axes::{Axes, AxesMap, SignedAxis};
use bvhkit::edit::layout::{LayoutMap, Positions};
use bvhkit::edit::order::OrderMap;
use bvhkit::edit::{ChunkedMap, SplitFrameMap};
use bvhkit::rotation::RotationOrder;
use bvhkit::{Bvh, PositionChannels};

// The forward kinematics baseline is not used here.
#[allow(dead_code)]
mod common;

/// Maps every frame of `bvh` through `map`, one at a time or (`many`)
/// through [`ChunkedMap`]; returns a value of the output.
fn run<M: SplitFrameMap>(bvh: &Bvh, map: M, many: bool) -> f64 {
    let m = bvh.motion();
    let n_out = map.output_skeleton().n_channels();
    let mut out = vec![0.0; m.n_frames() * n_out];
    if many {
        ChunkedMap::new(map).map(m.n_frames(), m.values(), &mut out);
    } else {
        let mut map = map;
        for (f, o) in m.frames().zip(out.chunks_exact_mut(n_out)) {
            map.map(f, o);
        }
    }
    out.iter().sum()
}

fn main() {
    let common::Args { kernel, bvh, repeats, .. } = common::args("order");
    let kernel = kernel.as_str();
    let skel = bvh.skeleton();
    let (name, many) = match kernel.strip_suffix("-many") {
        Some(k) => (k, true),
        None => (kernel, false),
    };
    let order = RotationOrder::ZXY;
    // The joints whose rotation each map rewrites.
    let rotated = |keep: &dyn Fn(RotationOrder) -> bool| {
        skel.joints().iter().filter(|j| j.rotation_order().is_some_and(|o| !keep(o))).count()
    };
    let mut acc = 0.0;
    let mut joints = 0;
    for _ in 0..repeats {
        match name {
            "none" => {}
            "order" => {
                acc += run(&bvh, OrderMap::all(skel, order), many);
                joints = rotated(&|o| o == order);
            }
            "layout" => {
                let map = LayoutMap::new(skel, order, Positions::Root, PositionChannels::Replace)
                    .expect("layout");
                acc += run(&bvh, map, many);
                joints = rotated(&|o| o == order);
            }
            "axes" => {
                let map = AxesMap::new(skel, Axes::BVH, Axes::with_up(SignedAxis::PosZ));
                acc += run(&bvh, map, many);
                joints = rotated(&|_| false);
            }
            other => panic!("unknown kernel {other}"),
        }
    }
    println!("{} joint-frames", joints * bvh.motion().n_frames());
    println!("{acc}");
}
