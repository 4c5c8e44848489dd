//! `bvh blend`: two clips pose by pose, on every joint or a subtree
//! (`bvhkit::mix::blend`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use bvhkit::mix::blend::{BlendOptions, blend_named};
use bvhkit::mix::weights::Weight;

use crate::concat::{parse_weight, run_pair};

pub(crate) const LONG_ABOUT: &str = "\
Blend two clips of one skeleton pose by pose, on every joint or on a subtree.

Each output frame takes, per joint, the quaternion SLERP from A's local \
rotation towards B's at the weight (0: A, 1: B) and mixes position channels \
linearly; a joint at weight exactly 0 keeps A's channels bit for bit, at 1 \
B's, and a joint whose rotation channels are the same in A and B keeps them \
(unless the angles must be written next to the previous frame's, where the \
clip's own angles jump), so a clip blended with itself is itself. --weight \
is a number, a ramp over the clip (0..1 linear, 0..1:smooth smoothstep) or \
keys time:weight with times as fractions of the clip (0:0,0.5:1,1:0). \
--joints SUBTREE blends only that joint and everything below it (Spine: the \
upper body from B) and keeps the rest of A bit for bit. B is converted into \
A's channel layout and resampled to A's rate when they differ; the shorter \
clip holds its last frame to the end of the longer. Nothing is moved: blend \
clips that stand in the same place (bvh edit --root-to-origin first).

Example: bvh blend walk.bvh wave.bvh -o walk_wave.bvh --weight 1 --joints Spine";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The first clip (weight 0).
    #[arg(value_name = "A")]
    a: PathBuf,
    /// The second clip (weight 1).
    #[arg(value_name = "B")]
    b: PathBuf,
    /// Where to write (`-`: standard output); never one of the inputs.
    #[arg(short, long, value_name = "OUT", required = true)]
    output: PathBuf,
    /// How much of B: 0.3, a ramp 0..1 (0..1:smooth), or keys 0:0,0.5:1,1:0 (time as a fraction of the clip).
    #[arg(long, value_name = "W", required = true, value_parser = parse_weight, allow_hyphen_values = true)]
    weight: Weight,
    /// Blend only this joint and its subtree; the rest stays A's.
    #[arg(long, value_name = "SUBTREE")]
    joints: Option<String>,
    /// Refuse inputs that need lenient reading.
    #[arg(long, conflicts_with = "repair")]
    strict: bool,
    /// Also write from inputs whose reading invents or discards values (zero-filled or cut
    /// motion lines, a dropped incomplete frame, an assumed Frame Time or OFFSET), as
    /// `bvh fmt --repair`; without it they are refused.
    #[arg(long)]
    repair: bool,
    /// Write position channels every reader reads the same way: constant ones below a root
    /// folded into the OFFSET, the OFFSET zeroed under varying ones (docs/format.md).
    #[arg(long)]
    portable: bool,
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let opts = BlendOptions { weight: args.weight, joints: args.joints };
    run_pair(
        &args.a,
        &args.b,
        &args.output,
        (args.strict, args.repair),
        args.portable,
        |a, an, b, bn| blend_named(a, an, b, bn, &opts),
    )
}
