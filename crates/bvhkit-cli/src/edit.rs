//! `bvh edit`: single-clip transforms, applied in the order given.
//!
//! The edit itself is the core's [`bvhkit::edit::run::Edit`] (its steps,
//! what each needs to see, whether it streams, the lookahead and its retry
//! on the whole clip, the streamed writer); this module parses the flags,
//! keeps their command-line order ([`transform`]: values from clap, order
//! from the raw arguments, since `ArgMatches::indices_of` reports a
//! repeated flag without a value only once), reads rename maps and
//! `--rest-pose FILE`, chooses the input's form (a mapped file, read again
//! where a step looks ahead; a pipe or standard input read once, which
//! loads the whole clip when a step must look at frames first) and the
//! output files ([`FileOutput`]: the output's own temporary file with room
//! for the header, or an anonymous one for standard output, FIFOs and
//! devices), and says the notes and errors, naming the input.

mod transform;

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use bvhkit::edit::axes::SignedAxis;
use bvhkit::edit::layout::Positions;
use bvhkit::edit::run::{Edit, EditError, Note, Output, Rename, RestSource, Settings, Step};
use bvhkit::rotation::RotationOrder;
use bvhkit::units::Units;
use bvhkit::{Bvh, WriteOptions};
use clap::{ArgAction, ArgMatches, CommandFactory};

use crate::PosMode;
use crate::io::{Dest, Input, Streamed, WriteBehind, expand_rel, load, located, par_map};
use crate::range::FrameRange;
use transform::{Transform, check_values, transforms};

#[derive(Debug, clap::Args)]
#[command(after_help = "Transforms are applied in the order given and may repeat, e.g.
  bvh edit take.bvh -o clip.bvh --frames 100..400 --fps 30 --up y --units m
Every transform but --reverse, --fps and --height (which need the whole clip
in memory) streams in constant memory from a memory-mapped file. A --layout
that drops position channels whose motion is lost is refused (naming the
joints) unless --drop-motion. Some look at frames before streaming, reading a
regular file twice: --up and the root-motion transforms without --source-up
(the up axis is detected on frames spread over the clip; behind --frames and
--every alone, only those frames' lines are read first, and the stream checks
them), --units without --source-units (the unit is guessed from every frame's
size: behind --frames and --every alone, on the same sampled lines first, and
the stream measures every frame to confirm it), the root-motion transforms
(the carrier), --rest-pose FRAME, --mirror (when its plane comes from the
first frame) and --portable (which position channels stay constant, over every
frame); from standard input or a pipe, which cannot be read twice, they load
the whole clip.")]
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
    /// Keep every Nth frame, starting with the first (Frame Time times N, same speed); N from 1 to
    /// 1000000.
    #[arg(long, value_name = "N", action = ArgAction::Append, value_parser = clap::value_parser!(u64).range(1..=crate::range::EVERY_MAX))]
    every: Vec<u64>,
    /// Reverse the frames (whole clip).
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    reverse: Vec<bool>,
    /// Resample to N frames per second: rotations by quaternion SLERP, positions linearly, frames
    /// that fall on input frames copied exactly; the same rate (within 0.01%) changes nothing (whole clip).
    /// N from 0.001 to 100000 (a Frame Time from 10 µs to 1000 s).
    #[arg(long, value_name = "N", action = ArgAction::Append, value_parser = crate::range::parse_resample_fps, allow_hyphen_values = true)]
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
    /// folded into the OFFSET, the OFFSET zeroed under varying ones (docs/format.md); streams after a first pass over the frames finds which stay constant.
    #[arg(long)]
    portable: bool,
    /// Convert so that AXIS is up (x, y, z, -x, -y, -z), from --source-up or the detected up axis
    /// (Blender's axis conversion: offsets, positions and rotations turned together).
    #[arg(long, value_name = "AXIS", action = ArgAction::Append, value_parser = crate::concat::parse_axis, allow_hyphen_values = true)]
    up: Vec<SignedAxis>,
    /// The input's up axis for --up and root motion, instead of detecting it (a first pass over the clip).
    #[arg(long, value_name = "AXIS", value_parser = crate::concat::parse_axis, allow_hyphen_values = true)]
    source_up: Option<SignedAxis>,
    /// Multiply offsets and position channels by F; F from 0.000001 to 1000000.
    #[arg(long, value_name = "F", action = ArgAction::Append, value_parser = crate::range::parse_scale, allow_hyphen_values = true)]
    scale: Vec<f64>,
    /// Convert lengths to UNIT (m, cm, mm, in, cmu) from --source-units or the guessed unit.
    #[arg(long, value_name = "UNIT", action = ArgAction::Append, value_parser = parse_units)]
    units: Vec<Units>,
    /// The input's length unit for --units, instead of guessing it from the figure's size (the median size of every frame).
    #[arg(long, value_name = "UNIT", value_parser = parse_units)]
    source_units: Option<Units>,
    /// Scale so that the skeleton is H units tall along its up axis (whole clip); H from 0.000001 to
    /// 1000000.
    #[arg(long, value_name = "H", action = ArgAction::Append, value_parser = crate::range::parse_height, allow_hyphen_values = true)]
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
    /// Remove joints (comma-separated names), folding their motion into their children; a root
    /// only when one joint takes its place (it becomes the root).
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
    #[arg(long, conflicts_with = "repair")]
    strict: bool,
    /// Also edit inputs whose reading invents or discards values (zero-filled or cut motion
    /// lines, a dropped incomplete frame, an assumed Frame Time or OFFSET), as `bvh fmt --repair`;
    /// without it they are refused.
    #[arg(long)]
    repair: bool,
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
    for t in plan {
        check_values(t)?;
    }
    let targets = crate::io::targets(&args.output, &args.files, &found)?;
    let inputs: Vec<Input> = found.into_iter().map(|(i, _)| i).collect();
    let results = par_map(&inputs, args.threads, |input| -> Result<Vec<String>> {
        let out = &targets[input];
        let edit = edit_of(args, plan)?;
        // A step that looks at frames first reads the input twice: a
        // regular file only (never standard input, a pipe or a FIFO).
        let rereadable = input.is_regular_file();
        let mut sink = FileOutput::new(out, input, args.repair);
        let notes = if edit.streams() && (rereadable || !edit.looks_ahead()) {
            match input.open_stream()? {
                // Streamed, and on the whole clip when the stream gives up.
                // A mapped file's pages are dropped behind the stream, which
                // then holds a constant few; when it gives up, the whole
                // clip is read anew.
                Streamed::Bytes(crate::io::Bytes::Mapped(map)) => {
                    let mut done = 0;
                    let mut release = |upto| crate::io::release_pages(&map, upto, &mut done);
                    match edit.stream_bytes_releasing(&map, &mut sink, &mut release) {
                        Err(EditError::GaveUp) => {
                            drop(map);
                            // As `run_bytes` reads the whole clip, on the
                            // file mapped anew.
                            edit.whole_bytes(&input.read()?, &mut sink)
                        }
                        r => r,
                    }
                }
                Streamed::Bytes(bytes) => edit.run_bytes(&bytes, &mut sink),
                Streamed::Reader(r) => match edit.stream_reader(r, &mut sink) {
                    Err(EditError::GaveUp) => edit_whole(&edit, input, &mut sink),
                    r => r,
                },
            }
        } else {
            edit_whole(&edit, input, &mut sink)
        };
        Ok(notes
            .map_err(|e| cli_error(e, input, out))?
            .into_iter()
            .map(|n| match n {
                Note::Warning(w) => crate::io::located_warning(input, &w),
                Note::Said(s) => format!("{}: {s}", input.display()),
            })
            .collect())
    })?;
    Ok(crate::io::report(results))
}

/// The core's edit of `plan`: rename maps and `--rest-pose FILE` read.
fn edit_of(args: &Args, plan: &[Transform]) -> Result<Edit> {
    let mut steps = Vec::with_capacity(plan.len());
    for t in plan {
        steps.push(match t {
            Transform::Frames(r) => Step::Frames(r.span()),
            Transform::Every(n) => Step::Every(*n),
            Transform::Reverse => Step::Reverse,
            Transform::Fps(f) => Step::Fps(*f),
            Transform::Order(o) => Step::Order(*o),
            Transform::Layout(o) => Step::Layout(*o),
            Transform::Up(a) => Step::Up(*a),
            Transform::Scale(f) => Step::Scale(*f),
            Transform::Units(u) => Step::Units(*u),
            Transform::Height(h) => Step::Height(*h),
            Transform::Mirror => Step::Mirror,
            Transform::InPlaceRoot => Step::InPlaceRoot,
            Transform::RootToOrigin => Step::RootToOrigin,
            Transform::ExtractRoot(name) => Step::ExtractRoot(name.clone()),
            Transform::Rename(spec) => Step::Rename(rename_of(spec)?),
            Transform::RemoveJoints(list) => {
                Step::RemoveJoints(joint_list(list).into_iter().map(String::from).collect())
            }
            Transform::StripEndSites => Step::StripEndSites,
            Transform::AddEndSites => Step::AddEndSites,
            Transform::RestPose(spec) => Step::RestPose(match spec.parse::<usize>() {
                Ok(frame) => RestSource::Frame(frame),
                Err(_) => RestSource::Skeleton(other_skeleton(spec)?.skeleton().clone()),
            }),
        });
    }
    let settings = Settings {
        source_up: args.source_up,
        source_units: args.source_units,
        layout_positions: match args.layout_positions {
            LayoutPositions::Root => Positions::Root,
            LayoutPositions::All => Positions::All,
            LayoutPositions::Keep => Positions::Keep,
            LayoutPositions::None => Positions::None,
        },
        drop_motion: args.drop_motion,
        portable: args.portable,
        position_channels: args.position_channels.into(),
        lenient: !args.strict,
    };
    Ok(Edit::new(steps, settings))
}

/// The edit on the whole clip, loaded from `input`.
fn edit_whole(
    edit: &Edit,
    input: &Input,
    sink: &mut FileOutput<'_>,
) -> Result<Vec<Note>, EditError<anyhow::Error>> {
    let (bvh, warnings) =
        load(input, !edit.settings.lenient).map_err(|e| EditError::Other(e.describe(input)))?;
    edit.whole(bvh, warnings, sink)
}

/// The error of an edit of `input` into `out`, as the command says it.
fn cli_error(e: EditError<anyhow::Error>, input: &Input, out: &Path) -> anyhow::Error {
    match e {
        EditError::Read(e) => anyhow!(located(input, &e)),
        EditError::Input(m) => anyhow!("{}: {m}", input.display()),
        EditError::Step(e) => e.into(),
        EditError::Other(m) => anyhow!(m),
        EditError::Write(e) => anyhow::Error::from(e).context(format!(
            "{}: writing {}",
            input.display(),
            bvhkit_write::shown(out)
        )),
        EditError::Output(e) => e,
        EditError::GaveUp => anyhow!("{}: this edit needs the whole clip", input.display()),
    }
}

/// Where an edit of `input` writes `out`. A regular file is written in
/// place: a stream's frames after room for the header, sized for the
/// frame count the frame steps should leave of `Frames:`; the header
/// fills that room at the end when its size came out right, else the
/// output is made again from the header and those frames, file to file
/// (`io::write_atomic_with_body`, `copy_file_range`). Standard output,
/// FIFOs and devices get the header and then the frames from an anonymous
/// temporary file (it has no name, so a crash or `kill -9` leaves nothing
/// behind, as the output's own temporary file does). The whole clip is
/// written at once (`io::write_atomic`). `bvh clean`'s stream writes
/// through it too.
pub(crate) struct FileOutput<'a> {
    out: &'a Path,
    input: &'a Input,
    /// Whether an input whose reading invents or discards values is
    /// written (`--repair`; else refused: `fmt::refuse_losses`).
    repair: bool,
    /// The output's own temporary file, while a stream writes it.
    atomic: Option<crate::io::AtomicFile>,
}

impl<'a> FileOutput<'a> {
    /// The output of `input` into `out`, refusing an input whose reading
    /// invents or discards values unless `repair`.
    pub(crate) fn new(out: &'a Path, input: &'a Input, repair: bool) -> FileOutput<'a> {
        FileOutput { out, input, repair, atomic: None }
    }

    fn writing(&self) -> String {
        format!("{}: writing {}", self.input.display(), bvhkit_write::shown(self.out))
    }
}

impl Output for FileOutput<'_> {
    type Body = WriteBehind;
    type Error = anyhow::Error;

    fn begin(&mut self, room: &[u8]) -> Result<WriteBehind> {
        self.atomic = None;
        crate::io::make_folders(self.out)?;
        match crate::io::destination(self.out)? {
            Dest::Replace(target) => {
                let atomic = crate::io::AtomicFile::create(&target)?;
                let mut body = atomic.write_behind()?;
                body.seek(SeekFrom::Start(room.len() as u64))?;
                self.atomic = Some(atomic);
                Ok(body)
            }
            _ => {
                let dir = std::env::temp_dir();
                let file = tempfile::tempfile_in(&dir)
                    .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
                Ok(WriteBehind::new(file))
            }
        }
    }

    fn finish(&mut self, body: WriteBehind, room: &[u8], header: &[u8]) -> Result<()> {
        let mut file = body.into_inner();
        let atomic = self.atomic.take();
        // Where the frames start: after the room, or at the start of the
        // anonymous file.
        let frames_at = if atomic.is_some() { room.len() as u64 } else { 0 };
        let finished = match atomic {
            Some(atomic) if header.len() == room.len() => file
                .rewind()
                .and_then(|()| file.write_all(header))
                .and_then(|()| {
                    drop(file);
                    atomic.commit()
                })
                .map_err(anyhow::Error::from),
            // No room, or not the header's size: header and frames are copied.
            _ => file
                .seek(SeekFrom::Start(frames_at))
                .map_err(anyhow::Error::from)
                .and_then(|_| crate::io::write_atomic_with_body(self.out, header, &mut file)),
        };
        finished.with_context(|| self.writing())
    }

    fn accept(&mut self, warnings: &[bvhkit::Warning], frames: usize) -> Result<()> {
        let refused =
            crate::fmt::refuse_losses(&self.input.display(), warnings, frames, self.repair);
        if refused.is_err() {
            // The stream's temporary file goes with it.
            self.atomic = None;
        }
        refused
    }

    fn whole(&mut self, bvh: &Bvh) -> Result<()> {
        // A stream that gave up leaves no temporary file behind.
        self.atomic = None;
        let opts = WriteOptions::new();
        crate::io::write_atomic(self.out, |w| opts.write(bvh, w).map_err(anyhow::Error::from))
            .with_context(|| self.writing())
    }
}

/// `--rename SPEC`: a map file, or a `FROM=TO` pattern.
fn rename_of(spec: &str) -> Result<Rename> {
    let path = Path::new(spec);
    if path.is_file() {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading rename map {}", path.display()))?;
        let map = bvhkit::edit::joints::parse_rename_map(&text)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        Ok(Rename::Map(map))
    } else if let Some((from, to)) = spec.split_once('=') {
        Ok(Rename::Pattern { from: from.to_string(), to: to.to_string() })
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
