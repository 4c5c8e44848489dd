//! `bvh concat`: clips of one skeleton one after another
//! (`bvhkit::mix::concat`), and the I/O the mix commands share (`blend`,
//! `layer`, `loop`): whole clips in, one file out through
//! `io::write_atomic`, never over an input.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use bvhkit::edit::axes::SignedAxis;
use bvhkit::mix::Span;
use bvhkit::mix::concat::{ConcatOptions, concat};
use bvhkit::mix::weights::Curve;
use bvhkit::{Bvh, WriteOptions};

use crate::io::{Input, load, located_warning, refuse_overwriting_input, write_atomic};
use crate::text::escape;

pub(crate) const LONG_ABOUT: &str = "\
Concatenate clips of one skeleton: each continues from where the one before ends.

The clips must have the same joints in the same tree (an error names the \
first difference); channel orders may differ (converted into the first \
clip's layout), and a clip at another frame rate is resampled to the first's \
(said on stderr). Each clip is moved on the ground and turned about the up \
axis so that its first frame stands where the previous clip's last frame \
stands, facing the same way: the joint that carries the travel (the topmost \
joint whose position channels move) is moved, heights are kept \
(--keep-position leaves every clip where it is). Without --crossfade the \
output has exactly the frames of A then B. --crossfade N (frames) or 0.4s \
(seconds) overlaps each seam: A + B - N frames, per-joint quaternion SLERP \
from A to the aligned B with a smoothstep weight (--linear for a straight \
ramp), positions mixed linearly; outside the crossfades every frame is a \
bit-for-bit copy. A crossfade longer than a clip is refused. The output has \
the first clip's skeleton and frame time.

Example: bvh concat walk.bvh turn.bvh walk.bvh -o path.bvh --crossfade 0.4s";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The clips, in order (at least two); `-` reads one of them from standard input.
    #[arg(required = true, num_args = 2.., value_name = "CLIP")]
    files: Vec<PathBuf>,
    /// Where to write (`-`: standard output); never one of the inputs.
    #[arg(short, long, value_name = "OUT", required = true)]
    output: PathBuf,
    /// Overlap each seam by N frames, or by seconds with an `s` (0.4s).
    #[arg(long, value_name = "N|SECONDSs", default_value = "0", value_parser = parse_span)]
    crossfade: Span,
    /// A linear crossfade weight instead of smoothstep.
    #[arg(long)]
    linear: bool,
    /// Leave every clip where it is instead of continuing from the previous one.
    #[arg(long)]
    keep_position: bool,
    /// The clips' up axis for the alignment (x, y, z, -x, -y, -z); default: detected from the first clip, else Y.
    #[arg(long, value_name = "AXIS", value_parser = parse_axis, allow_hyphen_values = true)]
    up: Option<SignedAxis>,
    /// Refuse inputs that need lenient reading.
    #[arg(long)]
    strict: bool,
}

pub(crate) fn parse_span(s: &str) -> Result<Span, String> {
    s.parse::<Span>().map_err(|e| e.to_string())
}

pub(crate) fn parse_axis(s: &str) -> Result<SignedAxis, String> {
    SignedAxis::from_name(s).ok_or_else(|| format!("'{s}' is not an axis (x, y, z, -x, -y, -z)"))
}

pub(crate) fn parse_weight(s: &str) -> Result<bvhkit::mix::weights::Weight, String> {
    s.parse().map_err(|e: bvhkit::Error| e.to_string())
}

/// The inputs of a mix command: at most one `-`.
pub(crate) fn inputs(files: &[PathBuf]) -> Result<Vec<Input>> {
    if files.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        bail!("standard input can be read only once");
    }
    Ok(files
        .iter()
        .map(|p| if p.as_os_str() == "-" { Input::Stdin } else { Input::File(p.clone()) })
        .collect())
}

/// Loads every input whole (leniently unless `strict`), adding its warnings
/// to `notes`.
pub(crate) fn load_all(
    inputs: &[Input],
    strict: bool,
    notes: &mut Vec<String>,
) -> Result<Vec<Bvh>> {
    inputs
        .iter()
        .map(|input| {
            let (bvh, warnings) = load(input, strict).map_err(|e| anyhow!(e.describe(input)))?;
            notes.extend(warnings.iter().map(|w| located_warning(input, w)));
            Ok(bvh)
        })
        .collect()
}

/// Prints `notes` on stderr (escaped), then writes `bvh` to `out` whole or
/// not at all (after refusing an output that is an input).
pub(crate) fn finish(
    out: &Path,
    inputs: &[Input],
    bvh: &Bvh,
    notes: &[String],
) -> Result<ExitCode> {
    refuse_overwriting_input(out, inputs)?;
    for n in notes {
        eprintln!("bvh: note: {}", escape(n));
    }
    let opts = WriteOptions::new();
    write_atomic(out, |w| opts.write(bvh, w).map_err(anyhow::Error::from))
        .with_context(|| format!("writing {}", out.display()))?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let inputs = inputs(&args.files)?;
    refuse_overwriting_input(&args.output, &inputs)?;
    let mut notes = Vec::new();
    let clips = load_all(&inputs, args.strict, &mut notes)?;
    let names: Vec<String> = inputs.iter().map(Input::display).collect();
    let named: Vec<(&str, &Bvh)> = names.iter().map(String::as_str).zip(&clips).collect();
    let opts = ConcatOptions {
        crossfade: args.crossfade,
        curve: if args.linear { Curve::Linear } else { Curve::Smoothstep },
        keep_position: args.keep_position,
        up: args.up,
    };
    let (out, report) = concat(&named, &opts).map_err(|e| anyhow!("{e}"))?;
    notes.extend(report.to_string().lines().map(str::to_string));
    notes.push(format!("{} frames from {} clips", out.motion().n_frames(), clips.len()));
    finish(&args.output, &inputs, &out, &notes)
}
