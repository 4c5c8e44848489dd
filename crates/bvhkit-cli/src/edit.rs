//! `bvh edit`: single-clip transforms, applied in the order given.
//!
//! Every transform is one of `bvhkit::edit`'s, and the streamed pipeline
//! is the core's [`bvhkit::edit::plan::Steps`]; this module parses the
//! flags, keeps their command-line order ([`transform`]: values from clap,
//! order from the raw arguments, since `ArgMatches::indices_of` reports a
//! repeated flag without a value only once), chooses the output files and
//! runs the transforms either as a stream ([`stream`]: every transform
//! works frame by frame, `FrameReader` over a mapped file or a pipe in,
//! frames written as they come, constant memory; those that look at frames
//! first read a mapped file again, [`lookahead`]) or on the whole clip
//! ([`whole`]: when one of them needs it, `--reverse`, `--fps`, `--height`;
//! the transforms that look at frames first, root motion, `--up`,
//! `--units`, `--rest-pose FRAME` and the mirror, on standard input or a
//! pipe; and whenever the stream gives up, [`NEEDS_WHOLE_CLIP`]).
//!
//! Notes and errors name the input; the helpers shared by both paths
//! (renaming, joint lists, the lossy and unit notes, the up axis said) are
//! here.

mod lookahead;
mod stream;
mod transform;
mod whole;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use bvhkit::edit::axes::{SignedAxis, UpAxis};
use bvhkit::edit::layout::{LayoutMap, Positions};
use bvhkit::edit::mirror::{Mirror, MirrorOptions};
use bvhkit::edit::order::OrderMap;
use bvhkit::edit::plan::Stage;
use bvhkit::edit::scale::ScaleMap;
use bvhkit::rotation::RotationOrder;
use bvhkit::units::{UnitGuess, Units};
use bvhkit::{Bvh, PositionChannels, Skeleton};
use clap::{ArgAction, ArgMatches, CommandFactory};

use crate::PosMode;
use crate::io::{Input, expand_rel, par_map};
use crate::range::FrameRange;
use crate::sample::GaveUp;
use transform::{Transform, check_values, transforms};

#[derive(Debug, clap::Args)]
#[command(after_help = "Transforms are applied in the order given and may repeat, e.g.
  bvh edit take.bvh -o clip.bvh --frames 100..400 --fps 30 --up y --units m
Every transform but --reverse, --fps and --height (which need the whole clip
in memory, as --portable does) streams in constant memory from a memory-mapped
file. A --layout that drops position channels whose motion is lost is refused
(naming the joints) unless --drop-motion. Some look at
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
    /// Also make a --layout that drops position channels whose values are not the OFFSET
    /// (their motion is lost); without it such a layout is refused, naming the joints.
    #[arg(long)]
    drop_motion: bool,
    /// Write position channels every reader reads the same way: constant ones below a root
    /// folded into the OFFSET, the OFFSET zeroed under varying ones (docs/format.md); whole clip.
    #[arg(long)]
    portable: bool,
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
    #[arg(short = 'j', long, value_name = "N", value_parser = crate::io::parse_jobs)]
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
    let targets = crate::io::targets(&args.output, &args.files, &found)?;
    let inputs: Vec<Input> = found.into_iter().map(|(i, _)| i).collect();
    let stream = !args.portable && !plan.iter().any(Transform::whole_clip);
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
            match stream::edit_stream(args, plan, input, out) {
                Err(e) if e.is::<GaveUp>() => whole::edit_whole(args, plan, input, out),
                r => r,
            }
        } else {
            whole::edit_whole(args, plan, input, out)
        }
    })?;
    Ok(crate::io::report(results))
}

/// Why [`stream::edit_stream`] gave up, having written nothing: a mirror whose
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

/// The [`bvhkit::edit::FrameMap`] of a per-frame transform.
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

/// A `--layout` that lost motion, refused without `--drop-motion`
/// ([`LayoutMap::lost_motion`] says what).
fn layout_refusal(args: &Args, stage: &Stage, input: &Input) -> Result<()> {
    let Stage::Layout(m) = stage else { return Ok(()) };
    match m.lost_motion() {
        Some(what) if !args.drop_motion => bail!(
            "{}: --layout {what}; give --drop-motion to drop them anyway, or keep them with \
             --layout-positions keep or all",
            input.display()
        ),
        _ => Ok(()),
    }
}

/// What a per-frame transform reports at the end.
fn stage_note(stage: &Stage, input: &Input) -> Option<String> {
    match stage {
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
        Stage::Units(_, check) => Some(guessed_note(&check.sizes().guess(), input)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use bvhkit::edit::plan::Steps;

    use crate::sample::{Sample, SampleCheck};

    /// A check of input frames `frames` (one value each, the frame's
    /// number) behind the frame steps `prefix`, expecting `expected`
    /// frames out of them.
    fn check(frames: &[usize], prefix: Steps, expected: usize) -> SampleCheck<Steps> {
        let values = frames.iter().map(|&f| f as f64).collect();
        Sample::new(frames.to_vec(), values, 1, expected).check(prefix)
    }

    /// `check` after a pass over input frames `0..n` (frame `f` holding
    /// `f`) in batches of `batch` frames.
    fn passed(mut check: SampleCheck<Steps>, n: usize, batch: usize) -> SampleCheck<Steps> {
        let values: Vec<f64> = (0..n).map(|f| f as f64).collect();
        for b in values.chunks(batch) {
            check.batch(b.len(), b);
        }
        check
    }

    /// Frame steps of `--frames` ranges (`Ok`) and `--every` counts (`Err`).
    fn steps(list: &[Result<&str, usize>]) -> Steps {
        let mut s = Steps::new();
        for step in list {
            match *step {
                Ok(r) => s.push_range(r.parse::<crate::range::FrameRange>().unwrap().span()),
                Err(n) => s.push_every(n),
            }
        }
        s
    }

    /// The frame steps' part of the check (its bits and counts are
    /// `crate::sample`'s tests; the steps' own counts, `bvhkit::edit::plan`'s).
    #[test]
    fn sampled_frames_behind_frame_steps_are_confirmed_by_the_pass_or_refused() {
        // Output frame k of `--frames 10.. --every 3` is input 10 + 3k.
        let steps_ = steps(&[Ok("10.."), Err(3)]);
        assert_eq!(steps_.input_frames(&[0, 1, 5]), Some(vec![10, 13, 25]));
        assert_eq!(steps(&[Err(2), Ok("4..")]).input_frames(&[0, 1]), Some(vec![8, 10]));
        assert_eq!(steps(&[Err(usize::MAX)]).input_frames(&[2]), None);
        // 100 input frames leave 30 of those steps; the sample is chosen on 30.
        assert_eq!(steps_.through(100), (30, false));
        let wanted = steps_.input_frames(&bvhkit::edit::axes::sampled_frames(30)).unwrap();
        let fresh = || check(&wanted, steps_.clone(), 30);
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
        let bounded = steps(&[Ok("10..40"), Err(3)]);
        let wanted = bounded.input_frames(&bvhkit::edit::axes::sampled_frames(10)).unwrap();
        assert!(passed(check(&wanted, bounded.clone(), 10), 50, 25).holds(false));
        assert!(passed(check(&wanted, bounded.clone(), 10), 41, 41).holds(false));
        assert!(!passed(check(&wanted, bounded, 10), 40, 40).holds(false));
        let wanted = steps_.input_frames(&bvhkit::edit::axes::sampled_frames(30)).unwrap();
        assert!(!passed(check(&wanted, steps_, 30), 100, 100).holds(false));
    }
}
