//! `bvh concat`: clips of one skeleton one after another
//! (`bvhkit::mix::concat`), and the I/O the mix commands share (`blend`,
//! `layer`, `loop`): whole clips in, one file out through
//! `io::write_atomic`, never over an input.
//!
//! # Implementation notes
//!
//! `concat.rs`, `blend.rs`, `layer.rs`, `loop.rs` (module `loop_cmd`): the mix
//! commands over `bvhkit::mix`, whole clips in (`concat::load_all`; `bvh
//! concat` expands folders in natural order of paths, `concat::natural_cmp`),
//! the library's report on stderr, one output through `io::write_atomic` after
//! `io::refuse_overwriting_input` (and, before the clips are read,
//! `io::refuse_unplaceable_output`) (`concat::finish`, shared by the four;
//! `concat::run_pair` is all of `blend` and `layer` but their options).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use bvhkit::edit::axes::SignedAxis;
use bvhkit::mix::Span;
use bvhkit::mix::concat::{ConcatOptions, Heading, concat};
use bvhkit::mix::weights::Curve;
use bvhkit::{Bvh, WriteOptions};

use crate::io::{Input, load, located_warning, refuse_overwriting_input, write_atomic};
use crate::text::escape;

pub(crate) const LONG_ABOUT: &str = "\
Concatenate clips of one skeleton: each continues from where the one before ends.

The clips must have the same joints in the same tree (an error names the \
first difference); channel orders may differ (converted into the first \
clip's layout), and a clip at another frame rate is resampled to the first's \
(said on stderr). The output has the first clip's skeleton and frame time.

Alignment: each clip is moved on the ground and turned about the up axis so \
that it continues the previous clip. Its first frames are laid onto the \
previous clip's last (the frames that overlap in the crossfade, else one \
frame each), the travel and the hip and shoulder lines fitted together, so \
a straight walk stays straight (--frame-heading: one frame's pairs each, \
which sway with the gait). The joint that carries the travel (the topmost \
joint whose position channels move) is moved and heights are kept; \
--keep-position leaves every clip where it is.

Crossfades: without --crossfade the output has exactly the frames of A then \
B. --crossfade N (frames) or 0.4s (seconds) overlaps each seam: A + B - N \
frames, less the frames --search drops (by default up to 0.5 s from each \
side, so that the overlapping frames are in the same gait phase). Each joint \
is mixed by quaternion SLERP from A to the aligned B with a smoothstep \
weight (--linear for a straight ramp), positions linearly; a foot planted \
through both overlaps is pinned to one point through the crossfade by \
two-bone IK of its leg (not with --keep-position). Outside the crossfades \
every frame is A's, or the aligned B's, bit for bit. A crossfade longer \
than a clip is refused.

Folders: a folder stands for the *.bvh files under it (any depth), in \
natural order of their paths: runs of digits compare as numbers, so \
take2.bvh comes before take10.bvh, and otherwise byte by byte (the order \
used is printed).

Example: bvh concat walk.bvh turn.bvh walk.bvh -o path.bvh --crossfade 0.4s
Example: bvh concat takes/ -o session.bvh";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The clips, in order (at least two); a folder gives its *.bvh files in natural order; `-` reads one of them from standard input.
    #[arg(required = true, num_args = 1.., value_name = "CLIP")]
    files: Vec<PathBuf>,
    /// Where to write (`-`: standard output); never one of the inputs.
    #[arg(short, long, value_name = "OUT", required = true)]
    output: PathBuf,
    /// Overlap each seam by N frames, or by seconds with an `s` (0.4s); at most 1000000 frames or 3600s.
    #[arg(long, value_name = "N|SECONDSs", default_value = "0", value_parser = parse_span)]
    crossfade: Span,
    /// With --crossfade, move each seam by up to this much (frames, or seconds with an `s`) to match the gait phase: frames dropped from the end of the clip before and the start of the next so that the crossfaded frames are most alike; 0 keeps the seam where the clips meet; at most 1000000 frames or 3600s.
    #[arg(long, value_name = "N|SECONDSs", default_value = "0.5s", value_parser = parse_span)]
    search: Span,
    /// Turn each clip by one frame's hip and shoulder lines (which sway with the gait) instead of the travel and those lines over the crossfade.
    #[arg(long)]
    frame_heading: bool,
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

/// The longest span of `--crossfade` and `--search`: an hour, or a million
/// frames.
pub(crate) const SPAN_MAX: (f64, usize) = (3600.0, 1_000_000);

/// `--crossfade`, `--search`: frames or seconds, at most [`SPAN_MAX`].
pub(crate) fn parse_span(s: &str) -> Result<Span, String> {
    let span = s.parse::<Span>().map_err(|e| e.to_string())?;
    match span {
        Span::Seconds(v) if v > SPAN_MAX.0 => {
            Err(format!("at most {} seconds ({}s), found {}", SPAN_MAX.0, SPAN_MAX.0, compact(v)))
        }
        Span::Frames(n) if n > SPAN_MAX.1 => {
            Err(format!("at most {} frames, found {n}", SPAN_MAX.1))
        }
        _ => Ok(span),
    }
}

/// `v` for a message: scientific beyond a million or below a millionth, so
/// that `1e300` is never three hundred digits.
pub(crate) fn compact(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-6..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
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

/// The clips of `bvh concat`: [`inputs`], with each folder replaced by the
/// `*.bvh` files under it in [`natural_cmp`] order of their paths; at least
/// two in all. Each folder's order is added to `notes`.
fn concat_inputs(files: &[PathBuf], notes: &mut Vec<String>) -> Result<Vec<Input>> {
    let mut out = Vec::new();
    for f in files {
        if f.as_os_str() != "-" && f.is_dir() {
            // An empty folder is no error here: the clips are counted over
            // all the arguments below.
            let mut found = crate::io::walk_folder(f)?;
            found.sort_by(|a, b| natural_cmp(a, b));
            let shown: Vec<String> = found
                .iter()
                .map(|p| p.strip_prefix(f).unwrap_or(p).display().to_string())
                .collect();
            notes.push(match found.len() {
                0 => {
                    format!("{}: no *.bvh file in this folder; nothing taken from it", f.display())
                }
                n => format!(
                    "{}: {n} {} in this order: {}",
                    f.display(),
                    if n == 1 { "clip" } else { "clips" },
                    shown.join(", ")
                ),
            });
            out.extend(found.into_iter().map(Input::File));
        } else {
            out.extend(inputs(std::slice::from_ref(f))?);
        }
    }
    if out.iter().filter(|i| **i == Input::Stdin).count() > 1 {
        bail!("standard input can be read only once");
    }
    if out.len() < 2 {
        bail!("concat needs at least two clips; found {}", out.len());
    }
    Ok(out)
}

/// Natural order of paths: runs of ASCII digits compare as numbers (a
/// shorter run of leading zeros first when equal), everything else byte by
/// byte, so `take2` < `take10` and `a/b` < `a-b` stays path order only
/// where no digits differ.
pub(crate) fn natural_cmp(a: &Path, b: &Path) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (a, b) = (a.as_os_str().as_encoded_bytes(), b.as_os_str().as_encoded_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let run =
                |s: &[u8], k: usize| k + s[k..].iter().take_while(|c| c.is_ascii_digit()).count();
            let (ie, je) = (run(a, i), run(b, j));
            let trim = |s: &[u8]| {
                let z = s.iter().take_while(|&&c| c == b'0').count();
                s[z..].to_vec()
            };
            let (x, y) = (trim(&a[i..ie]), trim(&b[j..je]));
            let by_value = x.len().cmp(&y.len()).then_with(|| x.cmp(&y));
            let order = by_value.then_with(|| (ie - i).cmp(&(je - j)));
            if order != Ordering::Equal {
                return order;
            }
            (i, j) = (ie, je);
        } else {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

/// Loads every input whole (leniently unless `strict`), adding its warnings
/// to `notes`, refusing an input whose reading invents or discards values
/// unless `repair` (`fmt::refuse_losses`, as `bvh fmt` does): the one rule of
/// the mix commands, `loop` among them.
pub(crate) fn load_all(
    inputs: &[Input],
    strict: bool,
    repair: bool,
    notes: &mut Vec<String>,
) -> Result<Vec<Bvh>> {
    inputs
        .iter()
        .map(|input| {
            let (bvh, warnings) = load(input, strict).map_err(|e| anyhow!(e.describe(input)))?;
            let frames = bvh.motion().n_frames();
            crate::fmt::refuse_losses(&input.display(), &warnings, frames, repair)?;
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
    portable: bool,
) -> Result<ExitCode> {
    refuse_overwriting_input(out, inputs)?;
    let mut notes = notes.to_vec();
    let made;
    let bvh = if portable {
        let name = if out.as_os_str() == "-" {
            "standard output".into()
        } else {
            out.display().to_string()
        };
        made = crate::portable::apply(bvh, bvhkit::PositionChannels::Replace, &name, &mut notes)?;
        &made
    } else {
        bvh
    };
    for n in &notes {
        eprintln!("bvh: note: {}", escape(n));
    }
    let opts = WriteOptions::new();
    write_atomic(out, |w| opts.write(bvh, w).map_err(anyhow::Error::from))
        .with_context(|| format!("writing {}", out.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// The two-clip mix commands (`blend`, `layer`): loads `a` and `b` whole
/// (after refusing an output that is one of them), runs `mix` on the clips
/// and their names, adds its report (when not empty) to the notes and
/// writes the result through [`finish`].
pub(crate) fn run_pair<R: std::fmt::Display, E: std::fmt::Display>(
    a: &Path,
    b: &Path,
    output: &Path,
    (strict, repair): (bool, bool),
    portable: bool,
    mix: impl FnOnce(&Bvh, &str, &Bvh, &str) -> Result<(Bvh, R), E>,
) -> Result<ExitCode> {
    let inputs = inputs(&[a.to_path_buf(), b.to_path_buf()])?;
    refuse_overwriting_input(output, &inputs)?;
    crate::io::refuse_unplaceable_output(output)?;
    let mut notes = Vec::new();
    let clips = load_all(&inputs, strict, repair, &mut notes)?;
    let (out, report) = mix(&clips[0], &inputs[0].display(), &clips[1], &inputs[1].display())
        .map_err(|e| anyhow!("{e}"))?;
    let r = report.to_string();
    if !r.is_empty() {
        notes.push(r);
    }
    finish(output, &inputs, &out, &notes, portable)
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let mut notes = Vec::new();
    let inputs = concat_inputs(&args.files, &mut notes)?;
    refuse_overwriting_input(&args.output, &inputs)?;
    crate::io::refuse_unplaceable_output(&args.output)?;
    let clips = load_all(&inputs, args.strict, args.repair, &mut notes)?;
    let names: Vec<String> = inputs.iter().map(Input::display).collect();
    let named: Vec<(&str, &Bvh)> = names.iter().map(String::as_str).zip(&clips).collect();
    let opts = ConcatOptions {
        crossfade: args.crossfade,
        search: args.search,
        heading: if args.frame_heading { Heading::Frame } else { Heading::Travel },
        curve: if args.linear { Curve::Linear } else { Curve::Smoothstep },
        keep_position: args.keep_position,
        up: args.up,
    };
    let (out, report) = concat(&named, &opts).map_err(|e| anyhow!("{e}"))?;
    notes.extend(report.to_string().lines().map(str::to_string));
    notes.push(format!("{} frames from {} clips", out.motion().n_frames(), clips.len()));
    finish(&args.output, &inputs, &out, &notes, args.portable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_compares_digit_runs_as_numbers() {
        let mut v: Vec<PathBuf> = [
            "t/take10.bvh",
            "t/take2.bvh",
            "t/take02.bvh",
            "t/take1.bvh",
            "t/b/take3.bvh",
            "t/Take5.bvh",
            "t/take.bvh",
            "t/take1a.bvh",
            "t/take100.bvh",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        v.sort_by(|a, b| natural_cmp(a, b));
        let got: Vec<&str> = v.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(
            got,
            [
                "t/Take5.bvh",
                "t/b/take3.bvh",
                "t/take.bvh",
                "t/take1.bvh",
                "t/take1a.bvh",
                "t/take2.bvh",
                "t/take02.bvh",
                "t/take10.bvh",
                "t/take100.bvh",
            ]
        );
        assert_eq!(natural_cmp(Path::new("a9"), Path::new("a9")), std::cmp::Ordering::Equal);
    }
}
