//! `bvh loop`: a clip made to loop (`bvhkit::mix::looping`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use bvhkit::edit::axes::SignedAxis;
use bvhkit::mix::Span;
use bvhkit::mix::looping::{LoopOptions, Travel, make_loop};
use bvhkit::mix::weights::Curve;

use crate::concat::{finish, inputs, load_all, parse_axis, parse_span};

pub(crate) const LONG_ABOUT: &str = "\
Make a clip loop seamlessly: its end is crossfaded into its start.

A loop of a clip of n frames with a crossfade of N frames is one cycle of \
n - N frames: its last N frames are taken to be the first N of the next \
cycle, so they are laid onto the first N and mixed into them. Played again \
and again, the last frame flows into the first as the clip flowed on, \
velocity included. A loop needs at least 2 frames.

The crossfade: --crossfade N frames, or seconds with an `s` (0.4s; default \
0.25s), at least one frame and at most half the clip. The last N frames \
are moved back on the ground by the cycle's move (its turn about the up \
axis, from the direction of travel over a whole gait cycle at each end, \
or from the hip and shoulder lines when the clip does not walk; its shift, \
from the carrier's mean over the two ends) and mixed into the first N: \
per-joint quaternion SLERP, positions linear, starting on the moved-back \
frame itself with a weight that has no speed at either end (10x^3 - \
15x^4 + 6x^5; --linear for a straight ramp). Every other frame is copied \
bit for bit. --search 0.5s lets the loop's ends move: up to that many \
frames are dropped from the start and from the end, chosen so that the two \
ends the crossfade lays onto each other are most alike in pose and \
velocity (stderr says how many).

Travel: kept by default (a walk keeps walking: play it again from where \
the cycle ends, as an engine does with root motion; stderr says the \
cycle's travel). --in-place removes it at a constant rate, turn included, \
so the file loops in place while the sway within the cycle stays.

The feet, held by IK of the leg (thigh, knee and ankle) through the \
crossfade: a foot planted through both ends lands on itself (the mean of \
such feet is the pivot of the move, and the line between two of them gives \
the turn) and is held there; a foot in contact on both sides in some \
crossfade frames is held in one place there, with 0.1 s ramps in and \
out; a foot in contact on one side only (planted through the clip's \
last frames, or in its first ones from some crossfade frame on, for at \
least 0.1 s) is held where it stands with that side's weight, and handed \
over smoothly to the other side's foot. Where a held foot would have to \
move more than 5 cm on the ground (its place on one side far from the \
other's), it takes a step instead: lifted along an eased arc, up to 10 cm \
above the place it leaves, over the frames a step takes, the knee \
bending into it before the foot lifts. The knee is never pulled straight. A clip whose top joint never moves on the \
ground has no travel and no lock.

Example: bvh loop walk.bvh -o walk_loop.bvh --crossfade 0.3s --in-place";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The clip (`-`: standard input).
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// Where to write (`-`: standard output); never the input.
    #[arg(short, long, value_name = "OUT", required = true)]
    output: PathBuf,
    /// Crossfade N frames, or seconds with an `s` (0.4s).
    #[arg(long, value_name = "N|SECONDSs", default_value = "0.25s", value_parser = parse_span)]
    crossfade: Span,
    /// Let the loop's ends move by up to this many frames, or seconds with an `s` (0.5s), dropped from the clip's start and end so that the crossfaded ends are most alike (poses and velocities); 0 keeps every frame.
    #[arg(long, value_name = "N|SECONDSs", default_value = "0", value_parser = parse_span)]
    search: Span,
    /// A linear crossfade weight instead of the quintic smoothstep (10x^3 - 15x^4 + 6x^5).
    #[arg(long)]
    linear: bool,
    /// Remove the travel per cycle (loop in place) instead of keeping it.
    #[arg(long)]
    in_place: bool,
    /// The clip's up axis (x, y, z, -x, -y, -z); default: detected, else Y.
    #[arg(long, value_name = "AXIS", value_parser = parse_axis, allow_hyphen_values = true)]
    up: Option<SignedAxis>,
    /// Refuse an input that needs lenient reading.
    #[arg(long, conflicts_with = "repair")]
    strict: bool,
    /// Also write from an input whose reading invents or discards values (zero-filled or cut
    /// motion lines, a dropped incomplete frame, an assumed Frame Time or OFFSET), as
    /// `bvh fmt --repair`; without it it is refused.
    #[arg(long)]
    repair: bool,
    /// Write position channels every reader reads the same way: constant ones below a root
    /// folded into the OFFSET, the OFFSET zeroed under varying ones (docs/format.md).
    #[arg(long)]
    portable: bool,
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let inputs = inputs(std::slice::from_ref(&args.input))?;
    crate::io::refuse_overwriting_input(&args.output, &inputs)?;
    crate::io::refuse_unplaceable_output(&args.output)?;
    let mut notes = Vec::new();
    let clips = load_all(&inputs, args.strict, args.repair, &mut notes)?;
    let opts = LoopOptions {
        crossfade: args.crossfade,
        curve: if args.linear { Curve::Linear } else { Curve::Smoothstep },
        search: args.search,
        travel: if args.in_place { Travel::Remove } else { Travel::Keep },
        up: args.up,
    };
    let (out, report) =
        make_loop(&clips[0], &opts).map_err(|e| anyhow!("{}: {e}", inputs[0].display()))?;
    notes.push(format!("{}: {report}", inputs[0].display()));
    finish(&args.output, &inputs, &out, &notes, args.portable)
}
