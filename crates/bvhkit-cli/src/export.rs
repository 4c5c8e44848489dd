//! `bvh positions` and `bvh rotations`: per-joint, per-frame arrays, streamed
//! frame by frame so memory stays constant whatever the file length. Several
//! inputs (or `-o OUTDIR/`) give one output per input under the folder, made
//! in parallel.
//!
//! # Implementation notes
//!
//! `positions` and `rotations`, streamed through `FrameReader` (`--up auto`
//! from a mapped file into a regular file detects the up axis on the sampled
//! frames read from their own lines, `export::stream::sampled_up` over
//! `sample::Sample`, and the real pass checks them (`sample::SampleCheck`: the
//! sampled frames bit for bit, the frame count, a reading that reached the
//! end); when it fails the output, dropped before its commit, is never put in
//! place and the exact path runs: a first pass that keeps only the sampled
//! frames, `export::stream::detect_up_of` over `clip::detect_up_in_one_pass`, which
//! `bvh edit`'s lookahead shares, also taken at once for standard output, FIFOs
//! and devices (an output that cannot be taken back) and for a `--frames` range
//! that ends before `Frames:`; standard input and pipes are read into memory
//! for it first, and a file holding another frame count than `Frames:` says is
//! parsed whole; a regular file scanned in place from its mapping, standard
//! input and pipes read; parsed a window at a time (two halves on the pool; the
//! mapping is not populated up front, so its pages are mapped by the threads
//! that scan them while earlier frames are computed) by `io::read_batches`
//! while forward kinematics with batched sines runs on the batch before, both
//! on the pool, `positions_many`/`positions_with`/`world_with`/`local_with`,
//! and a writing thread writes the batch before, its buffer sent back to be
//! filled again) into CSV, JSON or NPY sinks (NPY patches its frame count at
//! the end, in the output file itself (through `io::WriteBehind`; the sidecar
//! is written first and its writeback started, `io::write_unsynced` (which
//! `write_atomic` also goes through), so that the array's sync commits both
//! files' new blocks in one journal transaction and the sidecar's own sync has
//! only its bytes to wait for, `Output::stage`; then both are put in place, the
//! array first) or, for a FIFO or device, in an anonymous temporary file copied
//! out at the end, and writes the JSON sidecar `OUT.npy.json`); several inputs
//! go to one file each under `-o OUTDIR/` through `par_map`.

mod sink;
mod stream;

use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use bvhkit::edit::FrameMap;
use bvhkit::edit::axes::UpAxis;
use bvhkit::glam::{DAffine3, DVec3};
use bvhkit::rotation::{RotationOrder, RotationRepr, mat3_to_repr};
use bvhkit::{Kinematics, ReadOptions, Skeleton};
use bvhkit_render::units::UnitGuess;
use clap::ValueEnum;

use crate::PosMode;
use crate::io::{Dest, Input, Output, Streamed, WriteBehind, located_warning};
use crate::range::FrameRange;
use crate::sample::{GaveUp, Sample, SampleCheck};
use sink::Layout;
use stream::{FrameWork, stream};

/// The long help of `bvh positions` (`bvh positions --help`).
pub(crate) const POSITIONS_ABOUT: &str = "\
World positions of every joint (CSV, JSON or NPY), streamed frame by frame.

Forward kinematics as the format defines it (rotation channels multiplied \
in the order listed, position channels replacing the OFFSET components they \
name unless --position-channels add), computed one frame at a time so \
memory stays constant however long the file. The format comes from the \
extension of -o (.csv, .json, .npy; any other extension is an error, so \
nothing is written under a misleading name) or from --format; without -o, \
CSV goes to standard output. NPY is a [frames, joints, 3] array with a JSON \
sidecar, OUT.npy.json: joint names, parent indices (-1 for roots), offsets, \
frame time, axes and the unit guess. The output may not be the input. \
Several files (or folders, walked for *.bvh) need -o OUTDIR/: one output \
per input, named after it with the folder structure kept, --format choosing \
the format (CSV by default), made in parallel (-j). --frames \
takes A..B (B excluded), A..=B, A.., ..B or N, counted from 0.

Example: bvh positions walk.bvh --frames 0..100 --joints Hips,Head -o hips_head.npy";

/// The long help of `bvh rotations` (`bvh rotations --help`).
pub(crate) const ROTATIONS_ABOUT: &str = "\
Local or world rotations of every joint (CSV, JSON or NPY), streamed frame by frame.

--space local gives each joint's rotation relative to its parent, world \
relative to the world; --repr picks Euler angles in degrees (in each \
joint's own channel order, or --order for all), unit quaternions x y z w, \
row-major 3x3 matrices, the 6D representation (the matrix's first two \
columns) or axis-angle vectors in radians. Local Euler angles in a joint's \
own order are the file's values, exactly; --continuous makes Euler angles \
and quaternion signs continuous from frame to frame instead (the same \
rotations, without 360° jumps or sign flips). Outputs, formats and \
--frames work as for `bvh positions`.

Example: bvh rotations walk.bvh --space world --repr 6d -o rot.npy";

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// One row per joint per frame: `frame,joint,<components>`.
    Csv,
    /// One JSON object with joint names and a frames × joints × components array.
    Json,
    /// A NumPy array [frames, joints, components] plus a JSON sidecar (`OUT.npy.json`: joints, parents, offsets, frame time, units).
    Npy,
}

/// NPY element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Dtype {
    /// 32-bit floats (what ML pipelines usually want).
    F32,
    /// 64-bit floats (exact).
    F64,
}

#[derive(Debug, clap::Args)]
pub(crate) struct Common {
    /// BVH files; directories are walked for *.bvh; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Output file for one input (default: standard output; NPY needs a file), or a folder
    /// (`OUTDIR/` or an existing folder; required for several inputs) that gets one output per
    /// input, named after it, the walked folders' structure kept.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Output format (default: from the extension of OUT, else csv).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Frames to export: `A..B` (B excluded), `A..=B`, `A..`, `..B` or `N`; 0-based.
    #[arg(long, value_name = "RANGE")]
    frames: Option<FrameRange>,
    /// Only these joints (names as `bvh info` shows them, comma-separated); End Sites are `<Parent>_End`.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    joints: Vec<String>,
    /// How position channels combine with OFFSET.
    #[arg(long, value_enum, default_value = "replace")]
    position_channels: PosMode,
    /// NPY element type.
    #[arg(long, value_enum, default_value = "f32")]
    dtype: Dtype,
    /// Refuse files with problems instead of reading them leniently.
    #[arg(long)]
    strict: bool,
    /// Convert the output to Y up from this up axis (x, y, z, -x, -y, -z, as `bvh edit --up y
    /// --source-up AXIS`), or `auto` to detect it (on frames spread over the clip: from a file into a
    /// file, read from their own lines and checked as the file is read, else in a first pass over
    /// the file; standard input is read into memory); default `keep`: the file's own numbers.
    #[arg(long, value_name = "AXIS", default_value = "keep", allow_hyphen_values = true, value_parser = crate::clip::parse_up)]
    up: crate::clip::Up,
    /// Number of files processed at once (default: all cores).
    #[arg(short = 'j', long, value_name = "N", value_parser = crate::io::parse_jobs)]
    threads: Option<usize>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct PositionsArgs {
    #[command(flatten)]
    common: Common,
}

/// Rotation spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Space {
    /// Relative to the parent joint.
    Local,
    /// Relative to the world.
    World,
}

/// Rotation representations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Repr {
    /// Euler angles in degrees, in the joint's own channel order (or --order).
    Euler,
    /// Unit quaternion `x, y, z, w`.
    Quat,
    /// 3x3 matrix, row-major `m00 m01 m02 m10 ... m22`, acting on column vectors.
    Matrix,
    /// The first two columns of the matrix (Zhou et al. 2019): `c0x c0y c0z c1x c1y c1z`.
    #[value(name = "6d")]
    SixD,
    /// Rotation vector (axis times angle, radians): the exponential map.
    AxisAngle,
}

impl From<Repr> for RotationRepr {
    fn from(r: Repr) -> RotationRepr {
        match r {
            Repr::Euler => RotationRepr::Euler,
            Repr::Quat => RotationRepr::Quat,
            Repr::Matrix => RotationRepr::Matrix,
            Repr::SixD => RotationRepr::SixD,
            Repr::AxisAngle => RotationRepr::AxisAngle,
        }
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct RotationsArgs {
    #[command(flatten)]
    common: Common,
    /// Local (relative to the parent) or world rotations.
    #[arg(long, value_enum, default_value = "local")]
    space: Space,
    /// Representation.
    #[arg(long, value_enum, default_value = "quat")]
    repr: Repr,
    /// Euler order for every joint (XYZ, ZXY, ...; default: each joint's own channel order, ZXY for joints without three rotation channels).
    #[arg(long, value_name = "ORDER", value_parser = parse_order)]
    order: Option<RotationOrder>,
    /// Keep Euler angles and quaternion signs continuous from frame to frame (no ±180°/360° or
    /// sign flips). Without it, local Euler angles in a joint's own order are the file's values.
    #[arg(long)]
    continuous: bool,
}

fn parse_order(s: &str) -> Result<RotationOrder, String> {
    RotationOrder::from_name(s)
        .ok_or_else(|| format!("'{s}' is not a rotation order (XYZ, XZY, YXZ, YZX, ZXY, ZYX)"))
}

/// The joints to export, by display name, in file order.
fn select(skeleton: &Skeleton, wanted: &[String]) -> Result<(Vec<usize>, Vec<String>)> {
    let names = skeleton.display_names();
    if wanted.is_empty() {
        return Ok(((0..names.len()).collect(), names));
    }
    let mut idx = Vec::new();
    for w in wanted {
        match names.iter().position(|n| n == w) {
            Some(i) => idx.push(i),
            None => bail!("no joint named '{w}'; the joints are: {}", names.join(", ")),
        }
    }
    idx.sort_unstable();
    idx.dedup();
    let sel = idx.iter().map(|&i| names[i].clone()).collect();
    Ok((idx, sel))
}

/// The extension of `format`'s files.
fn extension(format: Format) -> &'static str {
    match format {
        Format::Csv => "csv",
        Format::Json => "json",
        Format::Npy => "npy",
    }
}

/// Runs `one(input, output)` for every input: one input (and `-o` not a
/// folder) as given; several into `-o OUTDIR/`, one file per input named
/// after it (the structure under a walked folder kept, the extension that of
/// `--format`, CSV by default), in parallel with a progress bar.
fn export_all(
    c: &Common,
    one: impl Fn(&Input, Option<&Path>) -> Result<Vec<String>> + Sync + Send,
) -> Result<ExitCode> {
    let inputs = crate::io::expand_rel(&c.files)?;
    let to_folder = c.output.as_deref().is_some_and(crate::io::names_folder);
    if inputs.len() == 1 && !to_folder {
        for l in one(&inputs[0].0, c.output.as_deref())? {
            eprintln!("{l}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let dir = match c.output.as_deref() {
        // An existing file is not a folder (as `fmt`, `edit` and `clean`
        // say): it gave "File exists (os error 17)" once per input. A new
        // name becomes the folder, as theirs do.
        Some(o) if o.exists() && !o.is_dir() => bail!(
            "{}: several inputs need -o to name a folder, not a file (OUTDIR/ gets one output \
             file per input)",
            o.display()
        ),
        Some(o) if o.as_os_str() != "-" => o,
        _ => bail!(
            "several inputs need -o OUTDIR/, a folder that gets one output file per input \
             (--format chooses csv, json or npy)"
        ),
    };
    let ext = extension(c.format.unwrap_or(Format::Csv));
    let mut pairs: Vec<(&Input, PathBuf)> = Vec::with_capacity(inputs.len());
    for (input, rel) in &inputs {
        if *input == Input::Stdin {
            bail!("standard input (-) cannot be one of several inputs to an output folder");
        }
        pairs.push((input, dir.join(rel).with_extension(ext)));
    }
    // No two inputs on one output, and no output that is an input.
    crate::io::check_targets(pairs.iter().map(|(i, t)| (*i, t.as_path())))?;
    let targets: HashMap<&Input, PathBuf> = pairs.into_iter().collect();
    let list: Vec<Input> = inputs.iter().map(|(i, _)| i.clone()).collect();
    let results = crate::io::par_map(&list, c.threads, |input| -> Result<Vec<String>> {
        let t = &targets[input];
        one(input, Some(t)).with_context(|| format!("{} → {}", input.display(), t.display()))
    })?;
    Ok(crate::io::report(results))
}

pub(crate) fn run_positions(a: PositionsArgs) -> Result<ExitCode> {
    let c = &a.common;
    export_all(c, |input, out| positions_one(c, input, out))
}

/// `bvh positions`' frame: every joint's world position, the selected ones
/// written.
struct Positions {
    fk: Kinematics,
    sel: Vec<usize>,
}

impl FrameWork for Positions {
    /// Buffers of one frame, and of runs of frames on lanes.
    type State = (bvhkit::FkScratch, Vec<DVec3>, bvhkit::FkLanes, Vec<DVec3>);

    fn in_order(&self) -> bool {
        false
    }

    fn state(&self) -> Self::State {
        let n = self.fk.len();
        (self.fk.scratch(), vec![DVec3::ZERO; n], self.fk.lanes_scratch(), Vec::new())
    }

    fn frame(
        &self,
        (scratch, pos, ..): &mut Self::State,
        frame: &[f64],
        out: &mut [f64],
    ) -> Option<f64> {
        self.fk.positions_with(frame, scratch, pos);
        self.select(pos, out)
    }

    /// Runs of frames on SIMD lanes ([`Kinematics::positions_many`], the
    /// same bits as frame by frame), [`POSITIONS_RUN`] frames at a time.
    fn frames(
        &self,
        (.., lanes, pos): &mut Self::State,
        frames: &[f64],
        n: usize,
        out: &mut [f64],
        sizes: &mut [f64],
    ) -> bool {
        let (joints, w_in, w_out) = (self.fk.len(), frames.len() / n.max(1), self.sel.len() * 3);
        for start in (0..n).step_by(POSITIONS_RUN) {
            let m = POSITIONS_RUN.min(n - start);
            pos.resize(m * joints, DVec3::ZERO);
            self.fk.positions_many(&frames[start * w_in..(start + m) * w_in], lanes, pos);
            for k in 0..m {
                let size = self.select(
                    &pos[k * joints..(k + 1) * joints],
                    &mut out[(start + k) * w_out..(start + k + 1) * w_out],
                );
                if let (Some(s), Some(v)) = (sizes.get_mut(start + k), size) {
                    *s = v;
                }
            }
        }
        true
    }
}

/// Frames per call of [`Kinematics::positions_many`] in `bvh positions`
/// (their positions stay in the cache until they are copied out).
const POSITIONS_RUN: usize = 64;

impl Positions {
    /// The selected joints' positions of one frame into `out`, and the
    /// frame's size.
    fn select(&self, pos: &[DVec3], out: &mut [f64]) -> Option<f64> {
        for (o, &i) in out.chunks_exact_mut(3).zip(&self.sel) {
            o.copy_from_slice(&pos[i].to_array());
        }
        // Every joint's position, as the unit guess computes it (same
        // skeleton, same position-channel rule).
        Some(bvhkit::units::pose_size(pos))
    }
}

fn positions_one(c: &Common, input: &Input, out: Option<&Path>) -> Result<Vec<String>> {
    let settings = vec![
        ("command", "positions".into()),
        ("position_channels", format!("{:?}", c.position_channels).to_lowercase().into()),
    ];
    stream(
        c,
        input,
        out,
        "positions",
        settings,
        |_, _, names, frame_time| Layout {
            joints: names,
            labels: None,
            components: vec!["x", "y", "z"],
            frame_time,
        },
        |skel, sel| Positions {
            fk: Kinematics::new(skel, c.position_channels.into()),
            sel: sel.to_vec(),
        },
    )
}

pub(crate) fn run_rotations(a: RotationsArgs) -> Result<ExitCode> {
    export_all(&a.common, |input, out| rotations_one(&a, input, out))
}

/// `bvh rotations`' frame: local or world rotations of the selected joints
/// in one representation.
struct Rotations {
    fk: Kinematics,
    skeleton: Skeleton,
    sel: Vec<usize>,
    /// Each joint's Euler order.
    orders: Vec<RotationOrder>,
    space: Space,
    repr: RotationRepr,
    continuous: bool,
}

/// [`Rotations`]' buffers, and each joint's previous output (`--continuous`).
struct RotationsState {
    scratch: bvhkit::FkScratch,
    xf: Vec<DAffine3>,
    prev: Vec<f64>,
    have_prev: bool,
}

impl FrameWork for Rotations {
    type State = RotationsState;

    /// `--continuous` chooses each frame's angles and signs near the
    /// previous frame's.
    fn in_order(&self) -> bool {
        self.continuous
    }

    fn state(&self) -> RotationsState {
        RotationsState {
            scratch: self.fk.scratch(),
            xf: vec![DAffine3::IDENTITY; self.fk.len()],
            prev: vec![0.0; self.fk.len() * self.repr.width()],
            have_prev: false,
        }
    }

    fn frame(&self, st: &mut RotationsState, frame: &[f64], out: &mut [f64]) -> Option<f64> {
        let width = self.repr.width();
        // The frame's sines and cosines in one batch.
        match self.space {
            Space::Local => self.fk.local_with(frame, &mut st.scratch, &mut st.xf),
            Space::World => self.fk.world_with(frame, &mut st.scratch, &mut st.xf),
        }
        for (o, &i) in out.chunks_exact_mut(width).zip(&self.sel) {
            let j = &self.skeleton.joints()[i];
            let order = self.orders[i];
            // Local angles in the joint's own order are the file's values, exactly.
            let exact =
                (self.space == Space::Local).then(|| j.euler_angles(frame, order)).flatten();
            let slot = &mut st.prev[i * width..(i + 1) * width];
            let mut value = [0.0; 9];
            let previous = (self.continuous && st.have_prev).then_some(&*slot);
            mat3_to_repr(st.xf[i].matrix3, self.repr, order, exact, previous, &mut value);
            slot.copy_from_slice(&value[..width]);
            o.copy_from_slice(&value[..width]);
        }
        st.have_prev = true;
        None
    }
}

fn rotations_one(a: &RotationsArgs, input: &Input, out: Option<&Path>) -> Result<Vec<String>> {
    let c = &a.common;
    let (repr, space, continuous, fixed_order) = (a.repr, a.space, a.continuous, a.order);
    let rrepr = RotationRepr::from(repr);
    let name = |v: &dyn std::fmt::Debug| format!("{v:?}").to_lowercase();
    let settings = vec![
        ("command", "rotations".into()),
        ("space", name(&space).into()),
        (
            "repr",
            a.repr
                .to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string())
                .into(),
        ),
        ("continuous", continuous.into()),
        ("position_channels", name(&c.position_channels).into()),
    ];
    let order_of =
        |j: &bvhkit::Joint| fixed_order.or(j.rotation_order()).unwrap_or(RotationOrder::ZXY);
    stream(
        c,
        input,
        out,
        "rotations",
        settings,
        |skel, sel, names, frame_time| {
            let labels = (repr == Repr::Euler).then(|| {
                sel.iter().map(|&i| order_of(&skel.joints()[i]).name().to_string()).collect()
            });
            let components = rrepr.components().to_vec();
            Layout { joints: names, labels, components, frame_time }
        },
        |skel, sel| Rotations {
            fk: Kinematics::new(skel, c.position_channels.into()),
            skeleton: skel.clone(),
            sel: sel.to_vec(),
            orders: skel.joints().iter().map(order_of).collect(),
            space,
            repr: rrepr,
            continuous,
        },
    )
}
