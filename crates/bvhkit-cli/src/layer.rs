//! `bvh layer`: an additive layer on top of a clip (`bvhkit::mix::layer`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use bvhkit::mix::layer::{LayerOptions, layer_named};
use bvhkit::mix::weights::Weight;

use crate::concat::{parse_weight, run_pair};

pub(crate) const LONG_ABOUT: &str = "\
Add a clip's motion since its reference pose on top of another clip (an additive layer).

For each joint the layer's rotation since its reference frame, q_ref^-1 * \
q_add (in the joint's own local frame), is applied after the base's: \
q_base * slerp(identity, delta, W), as Blender's additive strips do; \
position channels add W * (add - ref). So a nod or a breathing layer \
recorded from any pose adds just its change. --reference FRAME picks the \
layer's reference pose (default its first frame); a layer frame equal to \
the reference changes nothing (the base's channels are copied bit for bit). \
--weight is the influence: a number, a ramp 0..1 (0..1:smooth) or keys \
time:weight over the base's length. --joints SUBTREE adds the layer only \
there. The layer is converted into the base's channel layout and resampled \
to its rate when they differ; the output has the base's length (a shorter \
layer holds its last frame, a longer one is cut).

Example: bvh layer walk.bvh nod.bvh -o walk_nod.bvh --joints Neck --weight 0.8";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The base clip.
    #[arg(value_name = "BASE")]
    base: PathBuf,
    /// The layer: its motion since its reference frame is added.
    #[arg(value_name = "ADD")]
    add: PathBuf,
    /// Where to write (`-`: standard output); never one of the inputs.
    #[arg(short, long, value_name = "OUT", required = true)]
    output: PathBuf,
    /// The layer's influence: 1, 0.5, a ramp 0..1 (0..1:smooth), or keys 0:0,0.5:1,1:0.
    #[arg(long, value_name = "W", default_value = "1", value_parser = parse_weight, allow_hyphen_values = true)]
    weight: Weight,
    /// Add the layer only to this joint and its subtree.
    #[arg(long, value_name = "SUBTREE")]
    joints: Option<String>,
    /// The layer's reference frame: its motion is measured from this pose.
    #[arg(long, value_name = "FRAME", default_value = "0", allow_hyphen_values = true,
          value_parser = crate::range::parse_frame)]
    reference: usize,
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
    let opts = LayerOptions { weight: args.weight, joints: args.joints, reference: args.reference };
    run_pair(
        &args.base,
        &args.add,
        &args.output,
        (args.strict, args.repair),
        args.portable,
        |a, an, b, bn| layer_named(a, an, b, bn, &opts),
    )
}
