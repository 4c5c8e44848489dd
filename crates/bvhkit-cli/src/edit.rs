//! `bvh edit`: single-clip transforms, applied in the order given.
//!
//! Every transform is one of `bvhkit::edit`'s; this module only parses the
//! flags, keeps their command-line order (values from clap, order from the
//! raw arguments: `ArgMatches::indices_of` reports a repeated flag without
//! a value only once), and
//! runs them either as a stream (every transform works frame by frame:
//! `FrameReader` over a mapped file or a pipe in, frames written as they
//! come, constant memory) or on the whole clip (when one of them needs it:
//! `--reverse`, `--fps`, `--height`, `--up` and the root-motion transforms
//! without `--source-up`; the transforms that look at frames first, root
//! motion, `--rest-pose FRAME` and the mirror, on standard input or a pipe;
//! and the mirror when its plane comes from the first frame).
//!
//! # Implementation notes
//!
//! `bvh edit`, the transform flags in command-line order (values from clap,
//! order from the raw arguments, since `ArgMatches::indices_of` reports a
//! repeated flag without a value once); streams through `FrameReader` (a
//! regular file memory-mapped and scanned in place, `io::Input::open_stream`
//! and `ReadOptions::frame_reader_slice`; standard input and pipes read a chunk
//! at a time; `io::read_batches` parses a batch of frames (a mapped file's
//! window, handed over without a copy by `FrameReader::read_window`) while the
//! plan runs on the batch before, both on rayon's pool (`rayon::join`, the loop
//! itself on a worker, so the parse, its halves and the maps share the cores by
//! work stealing); every per-frame map through `edit::ChunkedMap` on rayon's
//! pool, then formats the batch in pieces on the pool, and a writing thread
//! appends them in order while the next batch is mapped: into the output's own
//! temporary file after room left for the header (sized for the frame count the
//! frame steps leave of `Frames:`, `expected_frames`), which is written into
//! that room at the end (when its size came out otherwise, header + frames are
//! copied file to file into a new temporary file, `io::write_atomic_with_body`,
//! `copy_file_range`); standard output, FIFOs and devices get the header and
//! then the frames from an anonymous temporary file; the bytes are those of one
//! frame at a time through one map, whatever the thread count or batch size)
//! unless a transform needs the whole clip (`--reverse`, `--fps`, `--height`).
//! Renaming and End Sites change only the skeleton (the frames are copied);
//! joint removal, rest pose and root motion are stages
//! (`edit::joints::RemoveJoints`, `edit::rest::RestMap`, `edit::root::{InPlace,
//! ToOrigin, Extract}`); those that must see frames first (the carrier through
//! `edit::root::CarrierSearch` and the first frame, `--rest-pose FRAME`;
//! without `--source-up`/`--source-units`, the up axis through
//! `Lookahead::detect_up`, on the frames `edit::axes::sampled_frames` names for
//! the count `Frames:` promises through the frame steps (`expected_frames`):
//! behind frame steps alone (and no later bounded `--frames`), read from their
//! own lines (`Lookahead::sampled_up`: the input frames by index arithmetic,
//! `input_frames`, then `sample::Sample::read` over
//! `ReadOptions::sample_frames`), which the real pass confirms
//! (`sample::SampleCheck`, counting the frames the steps leave through
//! `sample::FrameSteps`: the sampled input frames bit for bit and the count of
//! frames the steps left; any difference gives up to the whole clip after the
//! pass, like a failed map); else in a pass that keeps only those frames and
//! gives up to the whole clip when the file holds another count; and the unit
//! guess: behind frame steps alone (and no later bounded `--frames`) made on
//! the same sampled lines (`Lookahead::sampled_units`, through
//! `sample::Sample::read`, as `sampled_up`) and confirmed by the stage itself,
//! `Stage::Units`, which measures every frame it scales (`GuessCheck`:
//! `FrameSizes::push_many` beside `ScaleMap`'s `map_many`, both on the pool;
//! another unit from the whole clip's sizes fails the stage, so the whole clip
//! takes over after the pass); else through `units::FrameSizes` in a first
//! pass, a batch at a time on lanes, through `Lookahead::batches`, while the
//! next batch is parsed) read the mapped file again through the steps before
//! them (`Lookahead::frames`, stopping as soon as decided). A streamed edit's
//! notes come in the whole clip's order: the reader's warnings, then each
//! transform's set-up notes and its map's. `edit_stream` gives up with
//! `NEEDS_WHOLE_CLIP` (a `sample::GaveUp`), having written nothing, when such
//! a transform meets
//! standard input or a pipe, a mirror's plane comes from the first frame, a
//! `--rest-pose` frame is past the end or a root-motion frame fails (the
//! whole-clip path, `edit_b`, then gives the error with its frame).

use std::collections::HashMap;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use bvhkit::edit::axes::{Axes, AxesMap, SignedAxis, UpAxis, detect_up};
use bvhkit::edit::joints::RemoveJoints;
use bvhkit::edit::layout::{LayoutMap, Positions};
use bvhkit::edit::mirror::{Mirror, MirrorOptions};
use bvhkit::edit::order::OrderMap;
use bvhkit::edit::rest::RestMap;
use bvhkit::edit::root::{CarrierSearch, Extract, InPlace, ToOrigin};
use bvhkit::edit::scale::{ScaleMap, factor_to_height};
use bvhkit::edit::{
    ChunkedMap, FrameMap, SplitFrameMap, frames, map_frames, map_frames_chunked, resample,
};
use bvhkit::rotation::RotationOrder;
use bvhkit::units::{FrameSizes, UnitGuess, Units};
use bvhkit::{Bvh, Motion, PositionChannels, ReadOptions, Skeleton, WriteOptions};
use clap::{ArgAction, ArgMatches, CommandFactory};

use crate::PosMode;
use crate::io::{
    Dest, Input, Streamed, WriteBehind, expand_rel, load, located, located_warning, par_map,
    write_atomic,
};
use crate::range::FrameRange;
use crate::sample::{FrameSteps, GaveUp, Sample, SampleCheck};

/// The transform flags, in the order `--help` lists them.
const TRANSFORMS: [&str; 19] = [
    "frames",
    "every",
    "reverse",
    "fps",
    "order",
    "layout",
    "up",
    "scale",
    "units",
    "height",
    "mirror",
    "in-place-root",
    "root-to-origin",
    "extract-root",
    "rename",
    "remove-joints",
    "strip-end-sites",
    "add-end-sites",
    "rest-pose",
];

#[derive(Debug, clap::Args)]
#[command(after_help = "Transforms are applied in the order given and may repeat, e.g.
  bvh edit take.bvh -o clip.bvh --frames 100..400 --fps 30 --up y --units m
Every transform but --reverse, --fps and --height (which need the whole clip
in memory) streams in constant memory from a memory-mapped file. Some look at
frames before streaming, reading a regular file twice: --up and the
root-motion transforms without --source-up (the up axis is detected on frames
spread over the clip; behind --frames and --every alone, only those frames'
lines are read first, and the stream checks them), --units without
--source-units (the unit is guessed from every frame's size: behind --frames
and --every alone, on the same sampled lines first, and the stream measures
every frame to confirm it), the root-motion transforms (the carrier),
--rest-pose FRAME and --mirror (when its plane comes from the first frame);
from standard input or a pipe, which cannot be read twice, they load the
whole clip.")]
pub(crate) struct Args {
    /// Files to edit; directories are walked for *.bvh; `-` reads standard input.
    #[arg(required = true, value_name = "IN")]
    files: Vec<PathBuf>,
    /// Where to write: a file (one input), a directory (several inputs) or `-` for standard output.
    /// Never one of the inputs.
    #[arg(short, long, value_name = "OUT", required = true)]
    output: PathBuf,
    /// Keep frames RANGE (A..B, A..=B, A.., ..B or N; counted in the frames reaching this step).
    #[arg(long, value_name = "RANGE", action = ArgAction::Append)]
    frames: Vec<FrameRange>,
    /// Keep every Nth frame, starting with the first (Frame Time times N, same speed).
    #[arg(long, value_name = "N", action = ArgAction::Append, value_parser = clap::value_parser!(u64).range(1..))]
    every: Vec<u64>,
    /// Reverse the frames (whole clip).
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    reverse: Vec<bool>,
    /// Resample to N frames per second: rotations by quaternion SLERP, positions linearly, frames
    /// that fall on input frames copied exactly; the same rate (within 0.01%) changes nothing (whole clip).
    #[arg(long, value_name = "N", action = ArgAction::Append)]
    fps: Vec<f64>,
    /// Rotation channel order of every joint with three rotation channels (XYZ, XZY, YXZ, YZX, ZXY, ZYX);
    /// world motion is unchanged, angles stay continuous. Angles it computes (here, --layout and
    /// --up) are written to nine decimal places of a degree, well inside 1e-9 of the figure's size.
    #[arg(long, value_name = "ORDER", action = ArgAction::Append, value_parser = parse_order)]
    order: Vec<RotationOrder>,
    /// Channel layout: every joint three rotation channels in ORDER, position channels as
    /// --layout-positions says (root six, joints three by default); reports the largest world
    /// position error when position channels are dropped.
    #[arg(long, value_name = "ORDER", action = ArgAction::Append, value_parser = parse_order)]
    layout: Vec<RotationOrder>,
    /// Which joints get position channels with --layout.
    #[arg(long, value_name = "WHICH", default_value = "root")]
    layout_positions: LayoutPositions,
    /// Convert so that AXIS is up (x, y, z, -x, -y, -z), from --source-up or the detected up axis
    /// (Blender's axis conversion: offsets, positions and rotations turned together).
    #[arg(long, value_name = "AXIS", action = ArgAction::Append, value_parser = crate::concat::parse_axis, allow_hyphen_values = true)]
    up: Vec<SignedAxis>,
    /// The input's up axis for --up and root motion, instead of detecting it (a first pass over the clip).
    #[arg(long, value_name = "AXIS", value_parser = crate::concat::parse_axis, allow_hyphen_values = true)]
    source_up: Option<SignedAxis>,
    /// Multiply offsets and position channels by F.
    #[arg(long, value_name = "F", action = ArgAction::Append)]
    scale: Vec<f64>,
    /// Convert lengths to UNIT (m, cm, mm, in, cmu) from --source-units or the guessed unit.
    #[arg(long, value_name = "UNIT", action = ArgAction::Append, value_parser = parse_units)]
    units: Vec<Units>,
    /// The input's length unit for --units, instead of guessing it from the figure's size (the median size of every frame).
    #[arg(long, value_name = "UNIT", value_parser = parse_units)]
    source_units: Option<Units>,
    /// Scale so that the skeleton is H units tall along its up axis (whole clip).
    #[arg(long, value_name = "H", action = ArgAction::Append)]
    height: Vec<f64>,
    /// Mirror left and right: pairs by name, confirmed by the rest pose; the clip is reflected across the character's lateral plane.
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    mirror: Vec<bool>,
    /// Remove horizontal root travel (the carrier's height and every rotation kept).
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    in_place_root: Vec<bool>,
    /// Move the first frame's root above the origin, facing +Z.
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    root_to_origin: Vec<bool>,
    /// Extract root motion onto a new ground-projected root joint (default name Root).
    #[arg(long, value_name = "NAME", action = ArgAction::Append, num_args = 0..=1, default_missing_value = "Root")]
    extract_root: Vec<String>,
    /// Rename joints: a map file (`OLD<TAB>NEW` or `OLD = NEW` per line), or `FROM=TO` replaced in every name.
    #[arg(long, value_name = "MAP|FROM=TO", action = ArgAction::Append)]
    rename: Vec<String>,
    /// Remove joints (comma-separated names), folding their motion into their children.
    #[arg(long, value_name = "A,B", action = ArgAction::Append)]
    remove_joints: Vec<String>,
    /// Remove every End Site.
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    strip_end_sites: Vec<bool>,
    /// Add an End Site to every joint without children (continuing its bone).
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    add_end_sites: Vec<bool>,
    /// Make a frame (a number) or another file's rest pose the rest pose, world motion kept.
    #[arg(long, value_name = "FRAME|FILE", action = ArgAction::Append)]
    rest_pose: Vec<String>,
    /// How position channels combine with OFFSET (matters for --layout).
    #[arg(long, value_name = "MODE", default_value = "replace")]
    position_channels: PosMode,
    /// Refuse files with any problem instead of repairing what lenient reading recovers.
    #[arg(long)]
    strict: bool,
    /// Number of files processed at once (default: all cores).
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LayoutPositions {
    /// Roots only.
    Root,
    /// Every joint.
    All,
    /// Joints that had position channels.
    Keep,
    /// No joint.
    None,
}

fn parse_order(s: &str) -> Result<RotationOrder, String> {
    RotationOrder::from_name(s)
        .ok_or_else(|| format!("'{s}' is not one of XYZ, XZY, YXZ, YZX, ZXY, ZYX"))
}

pub(crate) fn parse_units(s: &str) -> Result<Units, String> {
    Units::from_name(s).ok_or_else(|| format!("'{s}' is not a unit (m, cm, mm, in, cmu)"))
}

/// One transform, as given on the command line.
#[derive(Clone, Debug, PartialEq)]
enum Transform {
    Frames(FrameRange),
    Every(usize),
    Reverse,
    Fps(f64),
    Order(RotationOrder),
    Layout(RotationOrder),
    Up(SignedAxis),
    Scale(f64),
    Units(Units),
    Height(f64),
    Mirror,
    InPlaceRoot,
    RootToOrigin,
    ExtractRoot(String),
    Rename(String),
    RemoveJoints(String),
    StripEndSites,
    AddEndSites,
    RestPose(String),
}

impl Transform {
    /// Whether the transform needs the whole clip in memory.
    fn whole_clip(&self) -> bool {
        matches!(self, Transform::Reverse | Transform::Fps(_) | Transform::Height(_))
    }

    /// Whether a stream may need to look at frames first (a first pass
    /// over a mapped file): the root-motion transforms (the carrier, the
    /// first frame, and the up axis unless `--source-up` gives it), `--up`
    /// without `--source-up` (the up axis, detected on frames spread over
    /// the clip: their lines alone behind frame steps only, else a whole
    /// pass), `--units` without `--source-units` (the unit guess, from
    /// every frame's size: on the sampled frames' lines behind frame steps
    /// only, confirmed by the stream, else a whole pass), `--rest-pose
    /// FRAME` and the mirror (whose
    /// plane may come from the first frame, when the whole clip takes
    /// over). Standard input and pipes, read once, take the whole clip
    /// instead.
    fn looks_ahead(&self, source_up: Option<SignedAxis>, source_units: Option<Units>) -> bool {
        match self {
            Transform::InPlaceRoot
            | Transform::RootToOrigin
            | Transform::ExtractRoot(_)
            | Transform::Mirror => true,
            Transform::Up(_) => source_up.is_none(),
            Transform::Units(_) => source_units.is_none(),
            Transform::RestPose(spec) => spec.parse::<usize>().is_ok(),
            _ => false,
        }
    }
}

/// Options of `bvh edit` that take a value (so the token after them is not a flag).
const WITH_VALUE: [&str; 20] = [
    "output",
    "rename",
    "remove-joints",
    "rest-pose",
    "frames",
    "every",
    "fps",
    "order",
    "layout",
    "layout-positions",
    "up",
    "source-up",
    "scale",
    "units",
    "source-units",
    "height",
    "position-channels",
    "threads",
    "o",
    "j",
];

/// The transform flags of a raw `bvh edit` command line, in order. Clap
/// checks the command line; this only recovers the order of repeated
/// flags without values (`--reverse --fps 30 --reverse`), which
/// `ArgMatches::indices_of` reports only once.
fn raw_order(raw: &[std::ffi::OsString]) -> Vec<&'static str> {
    let mut out = Vec::new();
    let args: Vec<String> = raw.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let Some(start) = args.iter().position(|a| a == "edit") else { return out };
    let mut i = start + 1;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            break;
        }
        let Some(name) =
            a.strip_prefix("--").or_else(|| a.strip_prefix('-').filter(|n| n.len() == 1))
        else {
            continue;
        };
        let (name, inline) = match name.split_once('=') {
            Some((n, _)) => (n, true),
            None => (name, false),
        };
        if let Some(t) = TRANSFORMS.iter().find(|t| **t == name) {
            out.push(*t);
        }
        if !inline && WITH_VALUE.contains(&name) {
            i += 1;
        }
        // `--extract-root` takes its name only when one follows.
        if !inline && name == "extract-root" && args.get(i).is_some_and(|n| !n.starts_with('-')) {
            i += 1;
        }
    }
    out
}

/// The transforms of an `edit` command line, in the order given: the
/// values from clap, the order from the raw arguments.
fn transforms(m: &ArgMatches, raw: &[std::ffi::OsString]) -> Result<Vec<Transform>> {
    fn values<T: Clone + Send + Sync + 'static>(m: &ArgMatches, id: &str) -> std::vec::IntoIter<T> {
        let v: Vec<T> = if m.value_source(id) == Some(clap::parser::ValueSource::CommandLine) {
            m.get_many::<T>(id).into_iter().flatten().cloned().collect()
        } else {
            Vec::new()
        };
        v.into_iter()
    }
    let mut frames = values::<FrameRange>(m, "frames");
    let mut every = values::<u64>(m, "every");
    let mut fps = values::<f64>(m, "fps");
    let mut order = values::<RotationOrder>(m, "order");
    let mut layout = values::<RotationOrder>(m, "layout");
    let mut up = values::<SignedAxis>(m, "up");
    let mut scale = values::<f64>(m, "scale");
    let mut units = values::<Units>(m, "units");
    let mut height = values::<f64>(m, "height");
    let mut extract_root = values::<String>(m, "extract_root");
    let mut rename = values::<String>(m, "rename");
    let mut remove_joints = values::<String>(m, "remove_joints");
    let mut rest_pose = values::<String>(m, "rest_pose");
    let mut out = Vec::new();
    for name in raw_order(raw) {
        let t = match name {
            "frames" => frames.next().map(Transform::Frames),
            "every" => every.next().map(|n| Transform::Every(n as usize)),
            "fps" => fps.next().map(Transform::Fps),
            "order" => order.next().map(Transform::Order),
            "layout" => layout.next().map(Transform::Layout),
            "up" => up.next().map(Transform::Up),
            "scale" => scale.next().map(Transform::Scale),
            "units" => units.next().map(Transform::Units),
            "height" => height.next().map(Transform::Height),
            "reverse" => Some(Transform::Reverse),
            "mirror" => Some(Transform::Mirror),
            "in-place-root" => Some(Transform::InPlaceRoot),
            "root-to-origin" => Some(Transform::RootToOrigin),
            "strip-end-sites" => Some(Transform::StripEndSites),
            "add-end-sites" => Some(Transform::AddEndSites),
            "extract-root" => extract_root.next().map(Transform::ExtractRoot),
            "rename" => rename.next().map(Transform::Rename),
            "remove-joints" => remove_joints.next().map(Transform::RemoveJoints),
            "rest-pose" => rest_pose.next().map(Transform::RestPose),
            _ => None,
        };
        out.push(t.with_context(|| format!("internal error: no value for --{name}"))?);
    }
    Ok(out)
}

/// The `edit` subcommand's matches of this process's command line.
fn matches_of_this_process() -> Result<ArgMatches> {
    let m = crate::Cli::command().try_get_matches_from(std::env::args_os())?;
    m.subcommand_matches("edit").cloned().context("not an edit command line")
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let plan = transforms(&matches_of_this_process()?, &raw)?;
    run_plan(&args, &plan)
}

fn run_plan(args: &Args, plan: &[Transform]) -> Result<ExitCode> {
    let found = expand_rel(&args.files)?;
    if found.is_empty() {
        bail!("no input file");
    }
    for t in plan {
        check_values(t)?;
    }
    let targets = targets(&args.output, &args.files, &found)?;
    let inputs: Vec<Input> = found.into_iter().map(|(i, _)| i).collect();
    let stream = !plan.iter().any(Transform::whole_clip);
    let looks_ahead = plan.iter().any(|t| t.looks_ahead(args.source_up, args.source_units));
    let results = par_map(&inputs, args.threads, |input| -> Result<Vec<String>> {
        let out = &targets[input];
        if let Some(dir) =
            out.parent().filter(|d| !d.as_os_str().is_empty() && out != Path::new("-"))
        {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        // A transform that looks at frames first reads the input twice: a
        // regular file only (never standard input, a pipe or a FIFO).
        let rereadable = match input {
            Input::File(p) => std::fs::metadata(p).is_ok_and(|m| m.is_file()),
            Input::Stdin => false,
        };
        if stream && (rereadable || !looks_ahead) {
            match edit_stream(args, plan, input, out) {
                Err(e) if e.is::<GaveUp>() => edit_whole(args, plan, input, out),
                r => r,
            }
        } else {
            edit_whole(args, plan, input, out)
        }
    })?;
    Ok(crate::io::report(results))
}

/// Why [`edit_stream`] gave up, having written nothing: a mirror whose
/// plane comes from the first frame
/// ([`bvhkit::edit::mirror::Mirror::rest_pose_decides`]); a transform that
/// must look at frames first on an input that cannot be read twice (a
/// pipe, a file the system refuses to map); or a transform that failed on
/// a frame (`--rest-pose` past the last frame, a carrier that cannot hold
/// its root motion), whose error the whole-clip path gives with its frame.
const NEEDS_WHOLE_CLIP: GaveUp = GaveUp("this edit needs the whole clip");

/// The mirror of `bvh`'s skeleton, with a note naming the name pairs it
/// did not swap.
fn mirror_of(bvh: &Bvh, input: &Input, notes: &mut Vec<String>) -> Result<Mirror> {
    let m = Mirror::new(bvh, &MirrorOptions::default())
        .map_err(|e| anyhow!("{}: {e}", input.display()))?;
    if !m.rejected().is_empty() {
        let names = bvh.skeleton().display_names();
        let list: Vec<String> = m
            .rejected()
            .iter()
            .map(|(l, r, why)| format!("{}|{} ({why})", names[l.index()], names[r.index()]))
            .collect();
        notes.push(format!(
            "{}: --mirror: {} pairs, {} name pairs not swapped: {}",
            input.display(),
            m.pairs().len(),
            list.len(),
            list.join(", ")
        ));
    }
    Ok(m)
}

fn check_values(t: &Transform) -> Result<()> {
    let positive = |what: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(anyhow!("{what} must be positive, found {v}"))
        }
    };
    match *t {
        Transform::Fps(f) => positive("--fps", f),
        Transform::Scale(f) => positive("--scale", f),
        Transform::Height(h) => positive("--height", h),
        _ => Ok(()),
    }
}

/// Where each input is written: `-o` itself for one file named directly
/// (unless `-o` is a directory or ends with `/`), else under the folder
/// `-o` at the path the input has below the folder argument it was found
/// in (its file name when named directly), as `bvh fmt` does. Two inputs
/// on one output, or an output that is an input, are refused before
/// anything is read.
fn targets(
    output: &Path,
    args: &[PathBuf],
    found: &[(Input, PathBuf)],
) -> Result<HashMap<Input, PathBuf>> {
    let any_dir = args.iter().any(|a| a.as_os_str() != "-" && a.is_dir());
    let single = found.len() == 1 && !any_dir;
    let is_stdout = output.as_os_str() == "-";
    let as_dir = crate::io::names_folder(output);
    if !single && is_stdout {
        bail!("several inputs cannot all go to standard output; use -o DIR");
    }
    if !single && output.exists() && !output.is_dir() {
        bail!("{}: several inputs need -o to name a directory, not a file", output.display());
    }
    let mut pairs = Vec::with_capacity(found.len());
    for (input, rel) in found {
        let out = match input {
            _ if single && (is_stdout || !as_dir) => output.to_path_buf(),
            Input::Stdin => {
                bail!("standard input cannot be written under a directory; use -o FILE or -o -")
            }
            Input::File(_) => output.join(rel),
        };
        pairs.push((input, out));
    }
    crate::io::check_targets(pairs.iter().map(|(i, o)| (*i, o.as_path())))?;
    Ok(pairs.into_iter().map(|(i, o)| (i.clone(), o)).collect())
}

fn units_factor(
    args: &Args,
    guess: impl FnOnce() -> Result<UnitGuess>,
    to: Units,
    input: &Input,
    notes: &mut Vec<String>,
) -> Result<f64> {
    let from = match args.source_units {
        Some(u) => u,
        None => {
            let guess = guess()?;
            notes.push(guessed_note(&guess, input));
            guess.units
        }
    };
    units_between(from, to)
        .with_context(|| format!("{}: the skeleton's unit cannot be guessed from its size; give --source-units or use --scale", input.display()))
}

/// The factor from `from` to `to`; `None` when either has no size.
fn units_between(from: Units, to: Units) -> Option<f64> {
    Some(from.metres_per_unit()? / to.metres_per_unit()?)
}

/// What `--units` says of the unit it guessed.
fn guessed_note(guess: &UnitGuess, input: &Input) -> String {
    format!("{}: units guessed: {}", input.display(), guess.label())
}

/// Runs the plan on the whole clip.
fn edit_whole(args: &Args, plan: &[Transform], input: &Input, out: &Path) -> Result<Vec<String>> {
    let (mut bvh, warnings) = load(input, args.strict).map_err(|e| anyhow!(e.describe(input)))?;
    let mut notes: Vec<String> = warnings.iter().map(|w| located_warning(input, w)).collect();
    let mode: PositionChannels = args.position_channels.into();
    for t in plan {
        if let Some(edited) = edit_b(args, t, &bvh, input, &mut notes)? {
            bvh = edited;
            continue;
        }
        bvh = match *t {
            Transform::Frames(r) => {
                let n = bvh.motion().n_frames();
                let start = (0..n).find(|&i| r.contains(i)).unwrap_or(n);
                let end = (start..n).find(|&i| !r.contains(i)).unwrap_or(n);
                frames::range(&bvh, start..end)?
            }
            Transform::Every(n) => frames::every(&bvh, n)?,
            Transform::Reverse => frames::reverse(&bvh)?,
            Transform::Fps(f) => resample::to_fps(&bvh, f).map_err(|e| {
                let f = crate::text::num(f);
                anyhow!("{}: --fps {f}: {}", input.display(), e.message())
            })?,
            Transform::Height(h) => {
                let f =
                    factor_to_height(&bvh, h).map_err(|e| anyhow!("{}: {}", input.display(), e))?;
                map_frames(&bvh, &mut ScaleMap::new(bvh.skeleton(), f)?)?
            }
            Transform::Units(u) => {
                let guess = || Ok(UnitGuess::of_bvh(&bvh, mode));
                let f = units_factor(args, guess, u, input, &mut notes)?;
                map_frames(&bvh, &mut ScaleMap::new(bvh.skeleton(), f)?)?
            }
            Transform::Up(to) => {
                let from = source_up(args, &bvh, input, &mut notes)?;
                map_frames(
                    &bvh,
                    &mut AxesMap::new(bvh.skeleton(), Axes::with_up(from), Axes::with_up(to)),
                )?
            }
            _ => {
                let map = frame_map(args, t, bvh.skeleton(), mode)?;
                let (edited, map) = map_frames_chunked(&bvh, map)?;
                notes.extend(map.note(input));
                edited
            }
        };
    }
    let opts = WriteOptions::new();
    write_atomic(out, |w| opts.write(&bvh, w).map_err(anyhow::Error::from))
        .with_context(|| format!("{}: writing {}", input.display(), shown(out)))?;
    Ok(notes)
}

/// The up axis for root motion: `--source-up`, else detected, else Y (said).
fn up_for_root(args: &Args, bvh: &Bvh, input: &Input, notes: &mut Vec<String>) -> SignedAxis {
    if let Some(a) = args.source_up {
        return a;
    }
    root_up(detect_up(bvh), input, notes)
}

/// The up axis root motion uses when `up` was detected: its axis, else Y
/// (said).
fn root_up(up: UpAxis, input: &Input, notes: &mut Vec<String>) -> SignedAxis {
    match up.axis {
        Some(a) => a,
        None => {
            notes.push(format!(
                "{}: up axis not detected ({up}); root motion uses Y up (give --source-up)",
                input.display()
            ));
            SignedAxis::PosY
        }
    }
}

/// The edit-b transforms (mirror, root motion, names and joints, rest
/// pose); `None` for the others.
fn edit_b(
    args: &Args,
    t: &Transform,
    bvh: &Bvh,
    input: &Input,
    notes: &mut Vec<String>,
) -> Result<Option<Bvh>> {
    use bvhkit::edit::{joints, rest, root};
    let mode: PositionChannels = args.position_channels.into();
    let at = |e: bvhkit::Error| anyhow!("{}: {e}", input.display());
    Ok(Some(match t {
        Transform::Mirror => mirror_of(bvh, input, notes)?.apply(bvh).map_err(at)?,
        Transform::InPlaceRoot => {
            let up = up_for_root(args, bvh, input, notes);
            root::in_place(bvh, up).map_err(at)?
        }
        Transform::RootToOrigin => {
            let up = up_for_root(args, bvh, input, notes);
            root::to_origin(bvh, up).map_err(at)?
        }
        Transform::ExtractRoot(name) => {
            let up = up_for_root(args, bvh, input, notes);
            root::extract(bvh, up, name).map_err(at)?
        }
        Transform::Rename(spec) => {
            Bvh::new(renamed(spec, bvh.skeleton(), input)?, bvh.motion().clone())?
        }
        Transform::RemoveJoints(list) => {
            let (out, error) = joints::remove_joints(bvh, &joint_list(list), mode).map_err(at)?;
            notes.extend(lossy_note("--remove-joints", error, bvh.skeleton(), input));
            out
        }
        Transform::StripEndSites => joints::strip_end_sites(bvh).map_err(at)?,
        Transform::AddEndSites => joints::add_end_sites(bvh).map_err(at)?,
        Transform::RestPose(spec) => {
            let (out, error) = if let Ok(frame) = spec.parse::<usize>() {
                rest::from_frame(bvh, frame, mode).map_err(at)?
            } else {
                rest::from_skeleton(bvh, other_skeleton(spec)?.skeleton(), mode).map_err(at)?
            };
            notes.extend(lossy_note("--rest-pose", error, bvh.skeleton(), input));
            out
        }
        _ => return Ok(None),
    }))
}

/// `--rename SPEC` of `skel`: a map file, or a `FROM=TO` pattern. Frames
/// are unchanged (the channels keep their order).
fn renamed(spec: &str, skel: &Skeleton, input: &Input) -> Result<Skeleton> {
    use bvhkit::edit::joints;
    let at = |e: bvhkit::Error| anyhow!("{}: {e}", input.display());
    let path = Path::new(spec);
    if path.is_file() {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading rename map {}", path.display()))?;
        let map =
            joints::parse_rename_map(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        joints::rename_map_skeleton(skel, &map).map_err(at)
    } else if let Some((from, to)) = spec.split_once('=') {
        joints::rename_pattern_skeleton(skel, from, to).map_err(at)
    } else {
        bail!("--rename {spec}: not a map file, nor a FROM=TO pattern");
    }
}

/// The names of `--remove-joints A,B`.
fn joint_list(list: &str) -> Vec<&str> {
    list.split(',').map(str::trim).filter(|n| !n.is_empty()).collect()
}

/// The file of `--rest-pose FILE`.
fn other_skeleton(spec: &str) -> Result<Bvh> {
    Bvh::from_path(spec).map_err(|e| anyhow!("--rest-pose: {e}"))
}

/// The note of a transform whose channels could not hold all of the world
/// motion (`error` against the size of `skel`, its input skeleton).
fn lossy_note(flag: &str, error: f64, skel: &Skeleton, input: &Input) -> Option<String> {
    let what = if flag == "--remove-joints" {
        "the remaining joints' channels cannot hold all of the removed motion"
    } else {
        "some joints' channels cannot hold the compensation"
    };
    (error > 1e-9 * bvhkit::edit::rest_height(skel)).then(|| {
        format!("{}: {flag}: {what}: largest world position error {error}", input.display())
    })
}

fn source_up(args: &Args, bvh: &Bvh, input: &Input, notes: &mut Vec<String>) -> Result<SignedAxis> {
    if let Some(a) = args.source_up {
        return Ok(a);
    }
    detected_up(detect_up(bvh), input, notes)
}

/// The up axis `--up` converts from when `up` was detected (said), else an
/// error asking for `--source-up`.
fn detected_up(up: UpAxis, input: &Input, notes: &mut Vec<String>) -> Result<SignedAxis> {
    match up.axis {
        Some(a) => {
            notes.push(format!("{}: up axis detected: {up}", input.display()));
            Ok(a)
        }
        None => bail!("{}: cannot detect the up axis: {up}; give --source-up", input.display()),
    }
}

/// A per-frame transform: one of the library's [`FrameMap`]s, which
/// [`ChunkedMap`] maps on all cores with the output of one frame at a
/// time.
#[derive(Clone, Debug)]
enum Stage {
    Order(OrderMap),
    Axes(AxesMap),
    Scale(ScaleMap),
    /// `--units` from a unit guessed on sampled frames
    /// ([`Lookahead::sampled_units`]), with what the whole clip must
    /// confirm.
    Units(ScaleMap, Box<GuessCheck>),
    Layout(Box<LayoutMap>),
    Mirror(Box<Mirror>),
    /// With its input skeleton (its size scales the note's tolerance).
    Remove(Box<RemoveJoints>, Box<Skeleton>),
    /// With its input skeleton.
    Rest(Box<RestMap>, Box<Skeleton>),
    InPlace(Box<InPlace>),
    ToOrigin(Box<ToOrigin>),
    Extract(Box<Extract>),
}

impl Stage {
    fn inner(&self) -> &dyn FrameMap {
        match self {
            Stage::Order(m) => m,
            Stage::Axes(m) => m,
            Stage::Scale(m) | Stage::Units(m, _) => m,
            Stage::Layout(m) => &**m,
            Stage::Mirror(m) => &**m,
            Stage::Remove(m, _) => &**m,
            Stage::Rest(m, _) => &**m,
            Stage::InPlace(m) => &**m,
            Stage::ToOrigin(m) => &**m,
            Stage::Extract(m) => &**m,
        }
    }

    /// What the transform reports at the end.
    fn note(&self, input: &Input) -> Option<String> {
        match self {
            Stage::Layout(m) => m.is_lossy().then(|| {
                format!(
                    "{}: --layout dropped position channels: largest world position error {}",
                    input.display(),
                    m.max_position_error()
                )
            }),
            Stage::Remove(m, skel) => {
                lossy_note("--remove-joints", m.max_position_error(), skel, input)
            }
            Stage::Rest(m, skel) => lossy_note("--rest-pose", m.max_position_error(), skel, input),
            Stage::Units(_, check) => Some(guessed_note(&check.sizes.guess(), input)),
            _ => None,
        }
    }

    /// Whether a frame failed (the whole clip gives the error, naming it),
    /// or the whole clip did not confirm a guess made on a sample.
    fn failed(&self) -> bool {
        match self {
            Stage::Units(_, check) => check.sizes.guess().units != check.sampled,
            Stage::InPlace(m) => m.failed(),
            Stage::ToOrigin(m) => m.failed(),
            Stage::Extract(m) => m.failed(),
            _ => false,
        }
    }
}

impl FrameMap for Stage {
    fn output_skeleton(&self) -> &Skeleton {
        self.inner().output_skeleton()
    }

    fn map(&mut self, input: &[f64], output: &mut [f64]) {
        match self {
            Stage::Order(m) => m.map(input, output),
            Stage::Axes(m) => m.map(input, output),
            Stage::Scale(m) => m.map(input, output),
            Stage::Units(m, check) => {
                m.map(input, output);
                check.sizes.push(input);
            }
            Stage::Layout(m) => m.map(input, output),
            Stage::Mirror(m) => m.map(input, output),
            Stage::Remove(m, _) => m.map(input, output),
            Stage::Rest(m, _) => m.map(input, output),
            Stage::InPlace(m) => m.map(input, output),
            Stage::ToOrigin(m) => m.map(input, output),
            Stage::Extract(m) => m.map(input, output),
        }
    }
}

impl SplitFrameMap for Stage {
    fn absorb(&mut self, earlier: &Self) {
        match (self, earlier) {
            (Stage::Layout(m), Stage::Layout(e)) => m.absorb(e),
            (Stage::Remove(m, _), Stage::Remove(e, _)) => m.absorb(e),
            (Stage::Rest(m, _), Stage::Rest(e, _)) => m.absorb(e),
            (Stage::InPlace(m), Stage::InPlace(e)) => m.absorb(e),
            (Stage::ToOrigin(m), Stage::ToOrigin(e)) => m.absorb(e),
            (Stage::Extract(m), Stage::Extract(e)) => m.absorb(e),
            _ => {}
        }
    }

    fn map_many(&mut self, frames: usize, input: &[f64], output: &mut [f64]) -> bool {
        match self {
            Stage::Order(m) => m.map_many(frames, input, output),
            Stage::Axes(m) => m.map_many(frames, input, output),
            Stage::Scale(m) => m.map_many(frames, input, output),
            Stage::Units(m, check) => {
                // The frames measured while they are scaled; the whole run
                // is mapped here (never cut by `ChunkedMap`, whose copies
                // would measure their parts apart).
                // `ScaleMap::map_many` declines only frames without channels
                // (or lengths that do not fit, which `ChunkedMap` rules out):
                // those are mapped, and measured, one by one through `map`.
                if m.output_skeleton().n_channels() == 0 {
                    return false;
                }
                let (scaled, ()) = rayon::join(
                    || m.map_many(frames, input, output),
                    || check.sizes.push_many(frames, input),
                );
                debug_assert!(scaled, "ScaleMap maps any run of whole frames");
                scaled
            }
            Stage::Layout(m) => m.map_many(frames, input, output),
            Stage::Mirror(m) => m.map_many(frames, input, output),
            Stage::Remove(m, _) => m.map_many(frames, input, output),
            Stage::Rest(m, _) => m.map_many(frames, input, output),
            Stage::InPlace(m) => m.map_many(frames, input, output),
            Stage::ToOrigin(m) => m.map_many(frames, input, output),
            Stage::Extract(m) => m.map_many(frames, input, output),
        }
    }
}

/// A unit guessed on sampled frames, and the sizes of every frame the
/// real pass maps: the guess holds when the sizes of the whole clip (as it
/// reaches the step) give the same unit ([`Stage::failed`] otherwise).
#[derive(Clone, Debug)]
struct GuessCheck {
    sizes: FrameSizes,
    sampled: Units,
}

/// The [`FrameMap`] of a per-frame transform.
fn frame_map(args: &Args, t: &Transform, skel: &Skeleton, mode: PositionChannels) -> Result<Stage> {
    Ok(match *t {
        Transform::Order(o) => Stage::Order(OrderMap::all(skel, o)),
        Transform::Layout(o) => {
            let p = match args.layout_positions {
                LayoutPositions::Root => Positions::Root,
                LayoutPositions::All => Positions::All,
                LayoutPositions::Keep => Positions::Keep,
                LayoutPositions::None => Positions::None,
            };
            Stage::Layout(Box::new(LayoutMap::new(skel, o, p, mode)?))
        }
        Transform::Scale(f) => Stage::Scale(ScaleMap::new(skel, f)?),
        _ => bail!("internal error: {t:?} is not a per-frame transform"),
    })
}

/// One step of the streamed pipeline.
#[derive(Clone)]
enum Step {
    Range(FrameRange, usize),
    Every(usize, usize),
    /// The map, and its output buffer (reused from batch to batch).
    Map(Box<ChunkedMap<Stage>>, Vec<f64>),
}

/// Values per piece of frames formatted by one task.
const FORMAT_VALUES: usize = 16 * 1024;

/// Runs the plan frame by frame in constant memory: the frames are written
/// to a temporary file as they come, and the output is the header (which
/// needs the frame count) followed by that file, written atomically.
///
/// A regular file is mapped (or read whole when small) and scanned in
/// place ([`Input::open_stream`]); standard input and pipes are read a
/// chunk at a time. Three stages overlap: a thread reads and parses
/// batches of frames ([`crate::io::read_batches`]); this thread runs the
/// plan on each batch, every map on rayon's pool through [`ChunkedMap`]
/// (the output of one frame at a time, whatever the cutting), then formats
/// the batch's frames in pieces on the pool and writes them in order.
fn edit_stream(args: &Args, plan: &[Transform], input: &Input, out: &Path) -> Result<Vec<String>> {
    let mut opts = ReadOptions::new();
    opts.lenient(!args.strict);
    let located = |e: bvhkit::Error| anyhow!(located(input, &e));
    match input.open_stream()? {
        Streamed::Bytes(bytes) => {
            let rdr = opts.frame_reader_slice(&bytes).map_err(located)?;
            stream_frames(
                args,
                plan,
                input,
                out,
                rdr,
                Some(Lookahead { opts: &opts, bytes: &bytes, input }),
            )
        }
        Streamed::Reader(r) => {
            let rdr = opts.frame_reader(r).map_err(located)?;
            stream_frames(args, plan, input, out, rdr, None)
        }
    }
}

/// An input that can be read again from the start: the bytes of a mapped
/// (or small, read) regular file.
#[derive(Clone, Copy)]
struct Lookahead<'a> {
    opts: &'a ReadOptions,
    bytes: &'a [u8],
    /// The input, to name in errors.
    input: &'a Input,
}

impl Lookahead<'_> {
    /// [`detect_up`] of the frames as they leave `steps` (frames of `n_in`
    /// values in, of `skel`'s channels out); `None` when the number of
    /// frames differs from the one `declared` promised through the steps,
    /// on which the sample was chosen (the whole clip then decides).
    ///
    /// When `steps` are frame steps only (`--frames`, `--every`) and no
    /// later step can stop the reading (`later_stops`: a later `--frames`
    /// with an end), the sampled frames are read from their own lines
    /// alone ([`Lookahead::sampled_up`]) and `checks` gets what the real
    /// pass must confirm; otherwise (or when the lines are not the frames)
    /// in one pass over the whole motion that keeps only the sampled frames
    /// (`crate::clip::detect_up_in_one_pass`).
    fn detect_up(
        &self,
        steps: &[Step],
        n_in: usize,
        skel: &Skeleton,
        declared: Option<u64>,
        later_stops: bool,
        checks: &mut Vec<SampleCheck<Vec<Step>>>,
    ) -> Result<Option<UpAxis>> {
        if !later_stops && let Some((up, check)) = self.sampled_up(steps, n_in, skel, declared)? {
            checks.push(check);
            return Ok(Some(up));
        }
        let n = expected_frames(steps, declared);
        crate::clip::detect_up_in_one_pass(skel, n, |each| {
            self.frames(steps, n_in, skel.n_channels(), each)
        })
    }

    /// [`detect_up`] of the frames [`bvhkit::edit::axes::sampled_frames`]
    /// names among the `declared` frames as they leave `steps`, which must
    /// be frame steps only: the input frames they come from, found by
    /// index arithmetic, are read from their lines alone
    /// ([`ReadOptions::sample_frames`], no other frame is parsed), with
    /// the [`SampleCheck`] that the real pass must pass for the answer to
    /// be the whole clip's. `None` when a step is a map or the motion's
    /// lines are visibly not its frames.
    fn sampled_up(
        &self,
        steps: &[Step],
        n_in: usize,
        skel: &Skeleton,
        declared: Option<u64>,
    ) -> Result<Option<(UpAxis, SampleCheck<Vec<Step>>)>> {
        let Some(sample) = self.sample(steps, n_in, skel, declared)? else {
            return Ok(None);
        };
        let up = sample.up(skel);
        Ok(Some((up, sample.check(steps.to_vec()))))
    }

    /// The unit [`FrameSizes`] guesses from the frames
    /// [`bvhkit::edit::axes::sampled_frames`] names among the `declared`
    /// frames as they leave `steps` (frame steps only), read from their
    /// lines alone as [`Lookahead::sampled_up`] reads them. A guess only:
    /// the real pass measures every frame and must confirm it
    /// ([`GuessCheck`]). `None` when the frames cannot be sampled.
    fn sampled_units(
        &self,
        steps: &[Step],
        n_in: usize,
        skel: &Skeleton,
        declared: Option<u64>,
        mode: PositionChannels,
    ) -> Result<Option<Units>> {
        let Some(sample) = self.sample(steps, n_in, skel, declared)? else {
            return Ok(None);
        };
        let mut sizes = FrameSizes::new(skel, mode);
        for frame in sample.values() {
            sizes.push(frame);
        }
        Ok(Some(sizes.guess().units))
    }

    /// The input frames that become the sampled frames
    /// ([`bvhkit::edit::axes::sampled_frames`] of the frames `steps` should
    /// leave of the `declared` ones), read from their lines alone
    /// ([`Sample::read`]), chosen for that expected count; `None` when a
    /// step is a map, the frames have no values, or the motion's lines are
    /// visibly not its frames.
    fn sample(
        &self,
        steps: &[Step],
        n_in: usize,
        skel: &Skeleton,
        declared: Option<u64>,
    ) -> Result<Option<Sample>> {
        let expected = expected_frames(steps, declared);
        let wanted = bvhkit::edit::axes::sampled_frames(expected);
        let Some(frames) = input_frames(steps, &wanted) else { return Ok(None) };
        if skel.n_channels() != n_in {
            return Ok(None);
        }
        Sample::read(self.opts, self.bytes, self.input, frames, n_in, expected)
    }

    /// Reads the frames again from the start through `steps` (a copy: the
    /// stream's own steps are not moved on), handing each frame they leave
    /// (of `width` values) to `each` until it says it has seen enough, the
    /// steps keep no later frame, or the frames end. Reading stops there:
    /// most clips decide in their first batch. The next batch is parsed
    /// while the steps and `each` run on the one before
    /// ([`crate::io::read_batches`]).
    fn frames(
        &self,
        steps: &[Step],
        n_in: usize,
        width: usize,
        mut each: impl FnMut(&[f64]) -> bool + Send,
    ) -> Result<()> {
        self.batches(steps, n_in, |count, values| {
            (0..count).any(|k| each(&values[k * width..(k + 1) * width]))
        })
    }

    /// [`Lookahead::frames`] a batch at a time: `each(count, values)` gets
    /// the frames of each batch that `steps` leave, one after the other,
    /// and says whether it has seen enough.
    fn batches(
        &self,
        steps: &[Step],
        n_in: usize,
        mut each: impl FnMut(usize, &[f64]) -> bool + Send,
    ) -> Result<()> {
        let located = |e: bvhkit::Error| anyhow!(located(self.input, &e));
        let mut rdr = self.opts.frame_reader_slice(self.bytes).map_err(located)?;
        let mut steps = steps.to_vec();
        let mut a = Vec::new();
        let read = crate::io::read_batches(&mut rdr, |n, batch| {
            let left = run_steps(&mut steps, n, batch, n_in, &mut a);
            let values = if left.in_batch { batch } else { &a[..] };
            if each(left.count, values) {
                return Ok(false);
            }
            Ok(left.more)
        })?;
        read.map_err(located)
    }
}

/// `bvh edit`'s frame steps before a transform that sampled frames: the
/// [`SampleCheck`] counts the frames they leave.
impl FrameSteps for Vec<Step> {
    fn through(&self, n: usize) -> (usize, bool) {
        through_steps(self, n)
    }
}

/// The input frames that frame steps (`--frames`, `--every`) turn into
/// their output frames `wanted` (ascending, so are they); `None` when a
/// step is a map (which could change the values) or the numbers overflow.
fn input_frames(steps: &[Step], wanted: &[usize]) -> Option<Vec<usize>> {
    wanted
        .iter()
        .map(|&k| {
            steps.iter().rev().try_fold(k, |k, step| match step {
                Step::Range(r, _) => k.checked_add(r.first()),
                Step::Every(n, _) => k.checked_mul(*n),
                Step::Map(..) => None,
            })
        })
        .collect()
}

/// The up axis a transform detects from the frames as they leave `steps`
/// ([`Lookahead::detect_up`]; `later` are the transforms after it, whose
/// frame ranges may stop the reading early): [`NEEDS_WHOLE_CLIP`] without a
/// mapped input or when the sample cannot decide.
fn up_of(
    again: Option<Lookahead<'_>>,
    steps: &[Step],
    n_in: usize,
    skel: &Skeleton,
    declared: Option<u64>,
    later: &[Transform],
    checks: &mut Vec<SampleCheck<Vec<Step>>>,
) -> Result<UpAxis> {
    let Some(again) = again else { return Err(NEEDS_WHOLE_CLIP.into()) };
    let up = again.detect_up(steps, n_in, skel, declared, stops_reading(later), checks)?;
    up.ok_or_else(|| NEEDS_WHOLE_CLIP.into())
}

/// [`edit_stream`] on a reader; `again` reads the input again from the
/// start for the transforms that look at frames first (`None`: they need
/// the whole clip).
fn stream_frames<R: bvhkit::FrameSource + Send>(
    args: &Args,
    plan: &[Transform],
    input: &Input,
    out: &Path,
    mut rdr: bvhkit::FrameReader<R>,
    again: Option<Lookahead<'_>>,
) -> Result<Vec<String>> {
    let mode: PositionChannels = args.position_channels.into();
    let at = |e: bvhkit::Error| anyhow!("{}: {e}", input.display());
    let located = |e: bvhkit::Error| anyhow!(located(input, &e));
    let mut skel = rdr.skeleton().clone();
    let mut frame_time = rdr.frame_time();
    let n_in = rdr.skeleton().n_channels();
    let declared = rdr.frames_declared();
    // Each transform's notes, said after the reader's warnings in the order
    // of the plan (the whole clip's order): those of its set-up, then its
    // map's. `map_of[k]` is the transform of the `k`th map step.
    let mut notes_of: Vec<Vec<String>> = vec![Vec::new(); plan.len()];
    let mut steps: Vec<Step> = Vec::with_capacity(plan.len());
    let mut map_of: Vec<usize> = Vec::with_capacity(plan.len());
    // What the real pass must confirm of frames read from their lines alone.
    let mut checks: Vec<SampleCheck<Vec<Step>>> = Vec::new();
    for (i, t) in plan.iter().enumerate() {
        let notes = &mut notes_of[i];
        let stage = match t {
            Transform::Frames(r) => {
                steps.push(Step::Range(*r, 0));
                continue;
            }
            Transform::Every(n) => {
                let before = frame_time;
                frame_time *= *n as f64;
                if !frame_time.is_finite() {
                    bail!(
                        "{}: --every {n}: every {n} frames of a Frame Time of {} s is more \
                         seconds per frame than a number holds",
                        input.display(),
                        crate::text::num(before)
                    );
                }
                steps.push(Step::Every(*n, 0));
                continue;
            }
            // Names and End Sites: only the skeleton changes; the
            // channels keep their order, so the frames are copied.
            Transform::Rename(spec) => {
                skel = renamed(spec, &skel, input)?;
                continue;
            }
            Transform::StripEndSites => {
                skel = bvhkit::edit::joints::strip_end_sites_skeleton(&skel).map_err(at)?;
                continue;
            }
            Transform::AddEndSites => {
                skel = bvhkit::edit::joints::add_end_sites_skeleton(&skel).map_err(at)?;
                continue;
            }
            Transform::Units(u) => {
                // The guess, the whole clip's (the median size of the frames
                // as they reach this step), is made on sampled frames when
                // they can be read from their own lines and the real pass
                // will meet every frame that reaches this step, to measure
                // them and confirm it.
                if args.source_units.is_none()
                    && !stops_reading(&plan[i + 1..])
                    && let Some(again) = again
                    && let Some(sampled) =
                        again.sampled_units(&steps, n_in, &skel, declared, mode)?
                    && let Some(f) = units_between(sampled, *u)
                {
                    let check = GuessCheck { sizes: FrameSizes::new(&skel, mode), sampled };
                    Stage::Units(ScaleMap::new(&skel, f)?, Box::new(check))
                } else {
                    // Otherwise a first pass over every frame.
                    let guess = || -> Result<UnitGuess> {
                        let Some(again) = again else { return Err(NEEDS_WHOLE_CLIP.into()) };
                        let mut sizes = FrameSizes::new(&skel, mode);
                        // Each batch's frames measured eight at a time on SIMD
                        // lanes while the next batch is parsed
                        // (`crate::io::read_batches`).
                        let w = skel.n_channels();
                        again.batches(&steps, n_in, |count, values| {
                            sizes.push_many(count, &values[..count * w]);
                            false
                        })?;
                        Ok(sizes.guess())
                    };
                    let f = units_factor(args, guess, *u, input, notes)?;
                    Stage::Scale(ScaleMap::new(&skel, f)?)
                }
            }
            Transform::Mirror => {
                // The pairs and planes need only the skeleton when the rest
                // pose decides the plane.
                let rest = Bvh::new(
                    skel.clone(),
                    Motion::with_frames(frame_time, 0, skel.n_channels(), Vec::new())?,
                )?;
                let m = mirror_of(&rest, input, notes)?;
                if !m.rest_pose_decides() {
                    return Err(NEEDS_WHOLE_CLIP.into());
                }
                Stage::Mirror(Box::new(m))
            }
            Transform::RemoveJoints(list) => Stage::Remove(
                Box::new(RemoveJoints::new(&skel, &joint_list(list), mode).map_err(at)?),
                Box::new(skel.clone()),
            ),
            Transform::RestPose(spec) => {
                let map = match spec.parse::<usize>() {
                    Ok(frame) => {
                        let Some(again) = again else { return Err(NEEDS_WHOLE_CLIP.into()) };
                        // That frame as it reaches this step.
                        let mut k = 0;
                        let mut pose = None;
                        again.frames(&steps, n_in, skel.n_channels(), |f| {
                            if k == frame {
                                pose = Some(f.to_vec());
                            }
                            k += 1;
                            pose.is_some()
                        })?;
                        // Past the last frame: the whole clip says so.
                        let Some(pose) = pose else { return Err(NEEDS_WHOLE_CLIP.into()) };
                        RestMap::from_frame(&skel, &pose, mode)
                    }
                    Err(_) => RestMap::from_skeleton(&skel, other_skeleton(spec)?.skeleton(), mode)
                        .map_err(at)?,
                };
                Stage::Rest(Box::new(map), Box::new(skel.clone()))
            }
            Transform::Up(to) => {
                let from = match args.source_up {
                    Some(a) => a,
                    None => {
                        let later = &plan[i + 1..];
                        let up = up_of(again, &steps, n_in, &skel, declared, later, &mut checks)?;
                        detected_up(up, input, notes)?
                    }
                };
                Stage::Axes(AxesMap::new(&skel, Axes::with_up(from), Axes::with_up(*to)))
            }
            Transform::InPlaceRoot | Transform::RootToOrigin | Transform::ExtractRoot(_) => {
                let Some(again) = again else { return Err(NEEDS_WHOLE_CLIP.into()) };
                let up = match args.source_up {
                    Some(a) => a,
                    None => {
                        let later = &plan[i + 1..];
                        let up =
                            up_of(Some(again), &steps, n_in, &skel, declared, later, &mut checks)?;
                        root_up(up, input, notes)
                    }
                };
                // The carrier and the first frame as they reach this step:
                // read until they are decided.
                let mut search = CarrierSearch::new(&skel);
                again.frames(&steps, n_in, skel.n_channels(), |f| search.push(f))?;
                let carrier = search
                    .carrier()
                    .context("the skeleton has no joints")
                    .map_err(|e| anyhow!("{}: {e}", input.display()))?;
                let first = search.first_frame();
                match t {
                    Transform::InPlaceRoot => Stage::InPlace(Box::new(
                        InPlace::new(&skel, carrier, first, up).map_err(at)?,
                    )),
                    Transform::RootToOrigin => Stage::ToOrigin(Box::new(
                        ToOrigin::new(&skel, carrier, first, up).map_err(at)?,
                    )),
                    Transform::ExtractRoot(name) => Stage::Extract(Box::new(
                        Extract::new(&skel, carrier, first, up, name).map_err(at)?,
                    )),
                    _ => unreachable!("a root-motion transform"),
                }
            }
            _ => frame_map(args, t, &skel, mode)?,
        };
        skel = stage.output_skeleton().clone();
        steps.push(Step::Map(Box::new(ChunkedMap::new(stage)), Vec::new()));
        map_of.push(i);
    }
    let opts = WriteOptions::new();
    let n_width = skel.n_channels();
    // A regular file is written in place: the frames after room for the
    // header, sized for the frame count the frame steps should leave of
    // `Frames:`; the header fills that room at the end when its size came
    // out right, else the output is made again from the header and those
    // frames, file to file. Standard output, FIFOs and devices get the
    // header and then the frames from an anonymous temporary file (it has
    // no name, so a crash or `kill -9` leaves nothing behind, as the
    // output's own temporary file does).
    let mut room = Vec::new();
    let expected = expected_frames(&steps, declared);
    opts.write_header(&skel, expected, frame_time, &mut room)?;
    let (atomic, mut body) = match crate::io::destination(out)? {
        Dest::Replace(target) => {
            let atomic = crate::io::AtomicFile::create(&target)?;
            let mut body = atomic.write_behind()?;
            body.seek(SeekFrom::Start(room.len() as u64))?;
            (Some(atomic), body)
        }
        _ => {
            let dir = std::env::temp_dir();
            let file = tempfile::tempfile_in(&dir)
                .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
            (None, WriteBehind::new(file))
        }
    };
    let mut n_out = 0usize;
    // Whether the reading went on to the end (no frame range stopped it).
    let mut ended = true;
    std::thread::scope(|scope| -> Result<()> {
        // A thread of its own writes each batch's formatted pieces while
        // this one maps and formats the next (the buffers come back to be
        // reused).
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Vec<Vec<u8>>>(1);
        let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<Vec<u8>>>();
        // Shared with the pool's workers, where the batches are mapped.
        let empty_rx = std::sync::Mutex::new(empty_rx);
        let file = &mut body;
        let writer = scope.spawn(move || -> std::io::Result<()> {
            for pieces in full_rx {
                for p in &pieces {
                    file.write_all(p)?;
                }
                let _ = empty_tx.send(pieces);
            }
            Ok(())
        });
        let mut a: Vec<f64> = Vec::new();
        let read = crate::io::read_batches(&mut rdr, |frames, batch| {
            for c in &mut checks {
                c.batch(frames, batch);
            }
            let left = run_steps(&mut steps, frames, batch, n_in, &mut a);
            ended = left.more;
            let values = if left.in_batch { batch } else { &a[..] };
            let mut pieces = crate::io::take_free(&empty_rx);
            format_frames(&opts, values, left.count, n_width, &mut pieces)?;
            if full_tx.send(pieces).is_err() {
                bail!("the writing thread stopped");
            }
            n_out += left.count;
            Ok(left.more)
        });
        drop(full_tx);
        let written = writer.join().map_err(|_| anyhow!("the writing thread panicked"))?;
        // The writer's own error first (a full disk stops the mapping too).
        written.with_context(|| format!("{}: writing {}", input.display(), shown(out)))?;
        let read = read?;
        read.map_err(located)
    })?;
    if steps.iter().any(|s| matches!(s, Step::Map(m, _) if m.get().failed())) {
        return Err(NEEDS_WHOLE_CLIP.into());
    }
    // Frames read from their lines alone that were not the reader's (or a
    // count other than the sample's): the whole clip decides.
    if !checks.iter().all(|c| c.holds(ended)) {
        return Err(NEEDS_WHOLE_CLIP.into());
    }
    let maps = steps.iter().filter_map(|s| if let Step::Map(m, _) = s { Some(m) } else { None });
    for (m, &i) in maps.zip(&map_of) {
        notes_of[i].extend(m.get().note(input));
    }
    let mut notes: Vec<String> =
        rdr.take_warnings().iter().map(|w| located_warning(input, w)).collect();
    notes.extend(notes_of.into_iter().flatten());
    let mut header = Vec::new();
    opts.write_header(&skel, n_out, frame_time, &mut header)?;
    let mut file = body.into_inner();
    // Where the frames start: after the room, or at the start of the
    // anonymous file.
    let frames_at = if atomic.is_some() { room.len() as u64 } else { 0 };
    let finished = match atomic {
        Some(atomic) if header.len() == room.len() => file
            .rewind()
            .and_then(|()| file.write_all(&header))
            .and_then(|()| {
                drop(file);
                atomic.commit()
            })
            .map_err(anyhow::Error::from),
        // No room, or not the header's size: header and frames are copied.
        _ => file
            .seek(SeekFrom::Start(frames_at))
            .map_err(anyhow::Error::from)
            .and_then(|_| crate::io::write_atomic_with_body(out, &header, &mut file)),
    };
    finished.with_context(|| format!("{}: writing {}", input.display(), shown(out)))?;
    Ok(notes)
}

/// Whether one of `plan`'s transforms can stop the reading before the end
/// of the input (a frame range with an end).
fn stops_reading(plan: &[Transform]) -> bool {
    plan.iter().any(|t| matches!(t, Transform::Frames(r) if r.is_bounded()))
}

/// The frames `steps` should leave of the `declared` input frames, to size
/// the header's room before any frame is read (a wrong guess costs a copy
/// of the frames, never a wrong output).
fn expected_frames(steps: &[Step], declared: Option<u64>) -> usize {
    through_steps(steps, crate::clip::frame_count(declared)).0
}

/// The frames `steps` leave of `n` input frames, and whether a frame range
/// among them is past once they have met those frames (so that no later
/// input frame can leave them).
fn through_steps(steps: &[Step], mut n: usize) -> (usize, bool) {
    let mut past = false;
    for step in steps {
        n = match step {
            Step::Range(r, _) => {
                past |= n > 0 && r.past(n - 1);
                r.count_in(n)
            }
            Step::Every(e, _) => n.div_ceil((*e).max(1)),
            Step::Map(..) => n,
        };
    }
    (n, past)
}

/// Runs the steps on one batch of `frames` input frames of `n_in` values.
/// Returns the number of frames left and whether later frames can still be
/// kept (a frame range that is past stops the reading); the frames left
/// are in `a`, or still in `batch` when no step changed them ([`Left`]).
fn run_steps(
    steps: &mut [Step],
    frames: usize,
    batch: &[f64],
    n_in: usize,
    a: &mut Vec<f64>,
) -> Left {
    // The frames so far: `batch` itself until a step writes them into `a`.
    let mut in_batch = true;
    let mut width = n_in;
    let mut count = frames;
    let mut more = true;
    for step in steps.iter_mut() {
        let keep: Box<dyn Fn(usize) -> bool> = match step {
            Step::Range(r, i) => {
                let first = *i;
                *i += count;
                if count > 0 && r.past(first + count - 1) {
                    more = false;
                }
                let r = *r;
                Box::new(move |k| r.contains(first + k))
            }
            Step::Every(n, i) => {
                let first = *i;
                *i += count;
                let n = *n;
                Box::new(move |k| (first + k) % n == 0)
            }
            Step::Map(m, buf) => {
                let w = m.get().output_skeleton().n_channels();
                buf.clear();
                buf.resize(count * w, 0.0);
                m.map(count, if in_batch { batch } else { &a[..count * width] }, buf);
                std::mem::swap(a, buf);
                in_batch = false;
                width = w;
                continue;
            }
        };
        // Keep the selected frames, in order, at the front of `a`.
        let mut n = 0;
        for k in 0..count {
            if keep(k) {
                if in_batch {
                    if n == 0 {
                        a.clear();
                    }
                    a.extend_from_slice(&batch[k * width..(k + 1) * width]);
                } else {
                    a.copy_within(k * width..(k + 1) * width, n * width);
                }
                n += 1;
            }
        }
        if in_batch && n == 0 {
            a.clear();
        }
        in_batch = false;
        count = n;
        a.truncate(count * width);
    }
    Left { count, in_batch, more }
}

/// What [`run_steps`] leaves.
struct Left {
    /// Frames left.
    count: usize,
    /// Whether they are the batch itself (no step changed it), else in `a`.
    in_batch: bool,
    /// Whether later frames can still be kept.
    more: bool,
}

/// Formats `count` frames of `width` values into `pieces`, on rayon's pool
/// in pieces of whole frames, to be written in order.
fn format_frames(
    opts: &WriteOptions,
    values: &[f64],
    count: usize,
    width: usize,
    pieces: &mut Vec<Vec<u8>>,
) -> Result<()> {
    use rayon::prelude::*;
    let per_piece = (FORMAT_VALUES / width.max(1)).max(1);
    let n_pieces = count.div_ceil(per_piece);
    pieces.resize_with(n_pieces, Vec::new);
    pieces.par_iter_mut().enumerate().try_for_each(|(p, line)| -> Result<()> {
        line.clear();
        for f in p * per_piece..((p + 1) * per_piece).min(count) {
            opts.write_frame(&values[f * width..(f + 1) * width], line)?;
        }
        Ok(())
    })
}

fn shown(p: &Path) -> String {
    if p.as_os_str() == "-" { "standard output".into() } else { p.display().to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &[&str]) -> Result<Vec<Transform>> {
        let raw: Vec<std::ffi::OsString> =
            ["bvh", "edit", "in.bvh", "-o", "out.bvh"].iter().chain(args).map(Into::into).collect();
        let m = crate::Cli::command().try_get_matches_from(&raw)?;
        transforms(m.subcommand_matches("edit").context("edit")?, &raw)
    }

    /// A check of input frames `frames` (one value each, the frame's
    /// number) behind the frame steps `prefix`, expecting `expected`
    /// frames out of them.
    fn check(frames: &[usize], prefix: Vec<Step>, expected: usize) -> SampleCheck<Vec<Step>> {
        let values = frames.iter().map(|&f| f as f64).collect();
        Sample::new(frames.to_vec(), values, 1, expected).check(prefix)
    }

    /// `check` after a pass over input frames `0..n` (frame `f` holding
    /// `f`) in batches of `batch` frames.
    fn passed(mut check: SampleCheck<Vec<Step>>, n: usize, batch: usize) -> SampleCheck<Vec<Step>> {
        let values: Vec<f64> = (0..n).map(|f| f as f64).collect();
        for b in values.chunks(batch) {
            check.batch(b.len(), b);
        }
        check
    }

    /// The frame steps' part of the check (its bits and counts are
    /// `crate::sample`'s tests).
    #[test]
    fn sampled_frames_behind_frame_steps_are_confirmed_by_the_pass_or_refused() {
        let r = |s: &str| Step::Range(s.parse().unwrap(), 0);
        // Output frame k of `--frames 10.. --every 3` is input 10 + 3k.
        let steps = vec![r("10.."), Step::Every(3, 0)];
        assert_eq!(input_frames(&steps, &[0, 1, 5]), Some(vec![10, 13, 25]));
        assert_eq!(input_frames(&[Step::Every(2, 0), r("4..")], &[0, 1]), Some(vec![8, 10]));
        assert_eq!(input_frames(&[Step::Every(usize::MAX, 0)], &[2]), None);
        // 100 input frames leave 30 of those steps; the sample is chosen on 30.
        assert_eq!(through_steps(&steps, 100), (30, false));
        let wanted = input_frames(&steps, &bvhkit::edit::axes::sampled_frames(30)).unwrap();
        let fresh = || check(&wanted, steps.clone(), 30);
        for batch in [1, 7, 100] {
            assert!(passed(fresh(), 100, batch).holds(true));
        }
        // Another count of frames, or a sampled frame never met; but 98
        // input frames leave the same 30 frames of the steps.
        assert!(!passed(fresh(), 101, 10).holds(true));
        assert!(!passed(fresh(), 97, 10).holds(true));
        assert!(passed(fresh(), 98, 10).holds(true));
        assert!(!passed(fresh(), 90, 10).holds(true));
        // Reading that stopped early: fine when a range of the steps was
        // past (nothing later can leave them), not otherwise.
        let bounded = vec![r("10..40"), Step::Every(3, 0)];
        let wanted = input_frames(&bounded, &bvhkit::edit::axes::sampled_frames(10)).unwrap();
        assert!(passed(check(&wanted, bounded.clone(), 10), 50, 25).holds(false));
        assert!(passed(check(&wanted, bounded.clone(), 10), 41, 41).holds(false));
        assert!(!passed(check(&wanted, bounded, 10), 40, 40).holds(false));
        let wanted = input_frames(&steps, &bvhkit::edit::axes::sampled_frames(30)).unwrap();
        assert!(!passed(check(&wanted, steps, 30), 100, 100).holds(false));
    }

    #[test]
    fn transforms_keep_their_command_line_order() {
        let p = plan(&[
            "--up",
            "z",
            "--reverse",
            "--frames",
            "100..400",
            "--fps",
            "30",
            "--scale",
            "2",
            "--frames",
            "3",
            "--reverse",
            "--units",
            "m",
        ])
        .unwrap();
        assert_eq!(
            p,
            [
                Transform::Up(SignedAxis::PosZ),
                Transform::Reverse,
                Transform::Frames("100..400".parse().unwrap()),
                Transform::Fps(30.0),
                Transform::Scale(2.0),
                Transform::Frames("3".parse().unwrap()),
                Transform::Reverse,
                Transform::Units(Units::Metres),
            ]
        );
        assert_eq!(
            plan(&[
                "--order", "xyz", "--every", "2", "--mirror", "--layout", "ZXY", "--height", "1.7"
            ])
            .unwrap()
            .len(),
            5
        );
        assert_eq!(
            plan(&["--up", "-z", "--scale=2", "--reverse", "-j", "2", "--source-up", "y"]).unwrap(),
            [Transform::Up(SignedAxis::NegZ), Transform::Scale(2.0), Transform::Reverse]
        );
        assert!(plan(&["--every", "0"]).is_err());
        assert!(plan(&["--order", "xxy"]).is_err());
        assert!(plan(&["--up", "w"]).is_err());
        assert!(plan(&["--units", "furlong"]).is_err());
        assert_eq!(parse_units("cm"), Ok(Units::Centimetres));
        assert_eq!(parse_units("metres"), Ok(Units::Metres));
    }
}
