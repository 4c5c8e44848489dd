//! Motion quality: the metrics an animator checks by eye (feet that slide,
//! jitter, pops, joints far from the body, feet through the floor, Euler
//! wraps), measured on a clip's world positions, and the distance between
//! two clips ([`diff()`]).
//!
//! [`lint`] computes every metric of one clip and lists what it finds as
//! [`Finding`]s (a kind, a span of frames, the joints, a value); `bvh lint`
//! prints them and `Bvh.lint` returns them in Python. Every metric works in
//! metres (after the unit guess of [`crate::units`] or
//! [`Options::metres_per_unit`]), along the up axis that
//! [`crate::edit::axes::detect_up`] finds (or [`Options::up`]), at the
//! file's frame rate. `docs/quality.md` in the repository gives each
//! formula, its default threshold and where it comes from.
//!
//! The feet are the ankle, foot and toe joints that the retarget name
//! families recognise ([`crate::retarget::names`]) and their End Sites, or
//! the joints named in [`Options::feet`]. The ground is not `y = 0`: it is
//! the height of the feet while they are in contact ([`Ground`]).
//!
//! # Example
//! ```
//! use bvhkit::{Bvh, quality};
//! let bvh = Bvh::parse("HIERARCHY
//! ROOT Hips { OFFSET 0 0.9 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
//!   JOINT LeftFoot { OFFSET 0.1 -0.85 0 CHANNELS 3 Zrotation Xrotation Yrotation
//!     End Site { OFFSET 0 -0.05 0.1 } }
//!   JOINT RightFoot { OFFSET -0.1 -0.85 0 CHANNELS 3 Zrotation Xrotation Yrotation
//!     End Site { OFFSET 0 -0.05 0.1 } }
//!   JOINT Head { OFFSET 0 0.8 0 CHANNELS 3 Zrotation Xrotation Yrotation
//!     End Site { OFFSET 0 0.1 0 } } }
//! MOTION
//! Frames: 3
//! Frame Time: 0.1
//! 0 0.9 0 0 0 0 0 0 0 0 0 0 0 0 0
//! 0 0.9 0 0 0 0 0 0 0 0 0 0 0 0 0
//! 0 0.9 0 0 0 0 0 0 0 0 0 0 0 0 0
//! ")?;
//! let report = quality::lint(&bvh, &quality::Options::default());
//! assert_eq!(report.feet.len(), 2);
//! assert!((report.ground - 0.0).abs() < 1e-12);
//! assert_eq!(report.metrics.foot_slide, Some(0.0));
//! assert!(report.findings.is_empty());
//! # Ok::<(), bvhkit::Error>(())
//! ```

mod diff;
pub(crate) mod feet;
pub(crate) mod stats;
mod stream;

use std::fmt;

use glam::DVec3;

pub use self::diff::{
    Diff, DiffOptions, JointDiff, Similarity, Streamed, diff, diff_stream, procrustes,
};
pub use self::feet::Foot;
pub use self::stats::runs;
pub use self::stream::LintStream;

use crate::edit::axes::{SignedAxis, detect_up};
use crate::kinematics::{Kinematics, PositionChannels};
use crate::retarget::names::{Bone, Limb, Side, classify};
use crate::rotation::euler_to_quat;
use crate::units::{UnitGuess, Units};
use crate::{Bvh, JointId};

/// Where the ground is, along the up axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ground {
    /// From the feet in contact (the default): a first guess at the 10th
    /// percentile of the lowest foot point's height over the clip; the
    /// band one contact height high that holds the most slow steps below
    /// the guess plus three contact heights; per foot the median of its
    /// height over its slow steps in that band; the lowest of these
    /// (docs/quality.md, "Ground").
    Contacts,
    /// The default ground until 2026-11-30, which the retarget still
    /// places its feet by (`retarget`'s grounding, stance and swing lift
    /// were tuned to it): the same first guess, then the median of both
    /// feet's heights pooled over the steps in which they are slow and
    /// within one contact height of the guess. With feet at two levels it
    /// sits on whichever holds more of those steps (docs/quality.md,
    /// "Ground"); `bvh lint` does not offer it.
    Pooled,
    /// The lowest point of any joint over the whole clip, the floor that
    /// HumanML3D-style data is normalised to (numbers comparable with
    /// papers).
    Lowest,
    /// A given height in metres along the up axis (at most
    /// [`GROUND_MAX_M`] either side of zero where a user gives it).
    Height(f64),
}

/// The largest ground height the command and Python accept, in metres
/// either side of zero: a million metres is far beyond any capture
/// volume, and a larger number would only print as hundreds of digits.
pub const GROUND_MAX_M: f64 = 1.0e6;

/// The gimbal window [`Options::gimbal_deg`] must stay below: a middle
/// angle is never more than 90° from ±90°, so a window of 90° or more
/// would flag every frame.
pub const GIMBAL_MAX_DEG: f64 = 90.0;

/// Thresholds and choices of [`lint`]; `Options::default()` gives the
/// documented defaults (`docs/quality.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Metres per file unit; `None` guesses the unit ([`UnitGuess::of_bvh`]).
    pub metres_per_unit: Option<f64>,
    /// The up axis; `None` detects it ([`detect_up`]), +Y when nothing is
    /// found.
    pub up: Option<SignedAxis>,
    /// How position channels are read.
    pub position_channels: PositionChannels,
    /// The feet, by joint name (each joint one foot); `None` finds them by
    /// the name families.
    pub feet: Option<Vec<String>>,
    /// The ground height.
    pub ground: Ground,
    /// A foot is in contact below this height above the ground (m).
    pub contact_height: f64,
    /// ... and below this horizontal speed (m/s).
    pub contact_speed: f64,
    /// `skate_ratio`: contact height (m), GMD's 0.05.
    pub skate_height: f64,
    /// `skate_ratio`: skating speed (m/s), GMD's 0.5.
    pub skate_speed: f64,
    /// `skate_ratio`: frames of the moving mean of the speed, GMD's 5.
    pub skate_window: usize,
    /// `skate_ratio_kimodo`: skating speed of the toes (m/s), 0.2.
    pub kimodo_speed: f64,
    /// Skating spans shorter than this (s) count in `skate_ratio` but are
    /// no finding (a toe-off at 120 fps skates for a few frames).
    pub skate_seconds: f64,
    /// Spikes: an acceleration above median + `spike_k` × MAD of the
    /// joint's accelerations over the clip ...
    pub spike_k: f64,
    /// ... and above this (m/s²).
    pub spike_min: f64,
    /// Pops: a one-frame step `pop_factor` times the steps before and after
    /// it (and twice the joint's 95th-percentile step) ...
    pub pop_factor: f64,
    /// ... and longer than this (m).
    pub pop_min: f64,
    /// Euler jumps: a rotation channel changing by more than this in one
    /// frame (degrees) while the rotation itself turns less than half of it.
    pub euler_jump_deg: f64,
    /// Gimbal lock: the middle Euler angle within this of ±90° (degrees,
    /// below [`GIMBAL_MAX_DEG`]).
    pub gimbal_deg: f64,
    /// Bone stretch: a bone whose length varies by more than this fraction.
    pub stretch: f64,
    /// Far joints: farther from the hips than this times the figure's size.
    pub far_factor: f64,
    /// Ground penetration: the feet this far below the ground (m).
    pub penetration: f64,
    /// Floating: no foot within this height of the ground (m) ...
    pub float_height: f64,
    /// ... for at least this long (s).
    pub float_seconds: f64,
    /// Frozen: a joint's channels held bit for bit this long (s) while they
    /// move elsewhere in the clip.
    pub frozen_seconds: f64,
    /// Measure the seam from the last frame to the first (a loop).
    pub seam: bool,
    /// Seam: a pose or velocity jump this many times the clip's fast steps
    /// (95th percentile) is a finding.
    pub seam_factor: f64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            metres_per_unit: None,
            up: None,
            position_channels: PositionChannels::Replace,
            feet: None,
            ground: Ground::Contacts,
            contact_height: 0.05,
            contact_speed: 0.5,
            skate_height: 0.05,
            skate_speed: 0.5,
            skate_window: 5,
            kimodo_speed: 0.2,
            skate_seconds: 0.15,
            spike_k: 40.0,
            spike_min: 150.0,
            pop_factor: 4.0,
            pop_min: 0.02,
            euler_jump_deg: 90.0,
            gimbal_deg: 1.0,
            stretch: 0.01,
            far_factor: 1.0,
            penetration: 0.03,
            float_height: 0.15,
            float_seconds: 1.0,
            frozen_seconds: 1.0,
            seam: false,
            seam_factor: 2.0,
        }
    }
}

/// What a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Non-finite channel values (NaN, infinite).
    Nan,
    /// A foot sliding while in contact (`skate_ratio`'s skating frames).
    Skate,
    /// A joint's acceleration far above its own in the clip.
    Spike,
    /// A joint (or the figure) moving far more in one frame than around it.
    Pop,
    /// A rotation channel jumping while the rotation does not (a wrap).
    EulerJump,
    /// The middle Euler angle near ±90°.
    Gimbal,
    /// A bone whose length changes.
    BoneStretch,
    /// A joint farther from the hips than the figure's size.
    FarJoint,
    /// The feet below the ground.
    GroundPenetration,
    /// No foot near the ground for a long time.
    Floating,
    /// A joint's channels held while they move elsewhere.
    Frozen,
    /// The loop seam jumps.
    Seam,
}

impl Kind {
    /// The name in the text and JSON output (`skate`, `euler_jump`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Nan => "nan",
            Kind::Skate => "skate",
            Kind::Spike => "spike",
            Kind::Pop => "pop",
            Kind::EulerJump => "euler_jump",
            Kind::Gimbal => "gimbal",
            Kind::BoneStretch => "bone_stretch",
            Kind::FarJoint => "far_joint",
            Kind::GroundPenetration => "ground_penetration",
            Kind::Floating => "floating",
            Kind::Frozen => "frozen",
            Kind::Seam => "seam",
        }
    }

    /// Every kind, in output order.
    pub const ALL: [Kind; 12] = [
        Kind::Nan,
        Kind::Skate,
        Kind::Spike,
        Kind::Pop,
        Kind::EulerJump,
        Kind::Gimbal,
        Kind::BoneStretch,
        Kind::FarJoint,
        Kind::GroundPenetration,
        Kind::Floating,
        Kind::Frozen,
        Kind::Seam,
    ];
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One thing [`lint`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// What it is.
    pub kind: Kind,
    /// The first and last frame it spans (inclusive).
    pub frames: (usize, usize),
    /// The joints concerned (indices into the skeleton, file order).
    pub joints: Vec<usize>,
    /// Its size, in the unit the message gives (m/s², m, degrees, ...).
    pub value: f64,
    /// A sentence for a person.
    pub message: String,
}

/// The clip's metrics; `None` where a metric has nothing to measure (no
/// feet found, fewer frames than it needs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metrics {
    /// Fraction of frame steps in which a foot skates, as GMD's
    /// `calculate_skating_ratio`.
    pub skate_ratio: Option<f64>,
    /// Fraction of the toes' contact steps in which they move faster than
    /// [`Options::kimodo_speed`].
    pub skate_ratio_kimodo: Option<f64>,
    /// Mean horizontal speed of the feet while in contact by height (m/s).
    pub foot_slide: Option<f64>,
    /// Mean norm of the third finite difference of world positions times
    /// fps³ (m/s³), over joints and frames.
    pub jitter: Option<f64>,
    /// Acceleration spikes found (joint-frames).
    pub spikes: usize,
    /// Pops found (joint-frame steps).
    pub pops: usize,
    /// Euler channel jumps found (joint-frame steps).
    pub euler_jumps: usize,
    /// Joint-frames near gimbal lock.
    pub gimbal_frames: usize,
    /// Steps where a joint's quaternion from its Euler channels changes
    /// hemisphere (a naive Euler-to-quaternion conversion's sign flips).
    pub quat_flips: usize,
    /// Largest relative change of a bone's length over the clip.
    pub bone_stretch: f64,
    /// Joints ever farther from the hips than the figure's size.
    pub far_joints: usize,
    /// Deepest the feet go below the ground (m, 0 when never).
    pub ground_penetration: Option<f64>,
    /// Fraction of frames floating (no foot near the ground, long spans).
    pub floating: Option<f64>,
    /// Joints with frozen spans.
    pub frozen: usize,
    /// Non-finite channel values.
    pub nan: usize,
    /// Seam pose jump over the clip's 95th-percentile step (with
    /// [`Options::seam`]).
    pub seam_pose: Option<f64>,
    /// Seam velocity jump over the clip's 95th-percentile velocity change.
    pub seam_velocity: Option<f64>,
}

impl Metrics {
    /// Every metric as a name and a value (`None`: not measured), in a
    /// fixed order: the JSON output's keys.
    pub fn entries(&self) -> Vec<(&'static str, Option<f64>)> {
        let n = |v: usize| Some(v as f64);
        vec![
            ("skate_ratio", self.skate_ratio),
            ("skate_ratio_kimodo", self.skate_ratio_kimodo),
            ("foot_slide", self.foot_slide),
            ("jitter", self.jitter),
            ("spikes", n(self.spikes)),
            ("pops", n(self.pops)),
            ("euler_jumps", n(self.euler_jumps)),
            ("gimbal_frames", n(self.gimbal_frames)),
            ("quat_flips", n(self.quat_flips)),
            ("bone_stretch", Some(self.bone_stretch)),
            ("far_joints", n(self.far_joints)),
            ("ground_penetration", self.ground_penetration),
            ("floating", self.floating),
            ("frozen", n(self.frozen)),
            ("nan", n(self.nan)),
            ("seam_pose", self.seam_pose),
            ("seam_velocity", self.seam_velocity),
        ]
    }
}

/// Per-frame curves behind the metrics, for plots (`bvh lint --html`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// Per foot, per frame: the lowest point's height above the ground (m).
    pub foot_height: Vec<Vec<f64>>,
    /// Per foot, per frame step: the foot's horizontal speed (m/s).
    pub foot_speed: Vec<Vec<f64>>,
    /// Per foot, per frame: in contact (height and speed).
    pub contact: Vec<Vec<bool>>,
    /// Per frame: the largest ratio of a joint's acceleration to its spike
    /// threshold (above 1 is a spike).
    pub spike_ratio: Vec<f64>,
    /// Per frame: mean jerk norm over joints (m/s³), at the first frame of
    /// the four it spans.
    pub jerk: Vec<f64>,
}

/// Everything [`lint`] measured of a clip.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The unit the metres came from.
    pub units: Units,
    /// Metres per file unit used.
    pub metres_per_unit: f64,
    /// The up axis used.
    pub up: SignedAxis,
    /// Whether the up axis was detected (false: given, or +Y by default).
    pub up_detected: bool,
    /// Frames per second.
    pub fps: f64,
    /// Frames in the clip.
    pub frames: usize,
    /// Joint names, file order (End Sites named as `bvh positions` names
    /// them).
    pub joint_names: Vec<String>,
    /// The feet measured.
    pub feet: Vec<Foot>,
    /// The ground height along the up axis (m).
    pub ground: f64,
    /// The figure's size (m): [`crate::units::motion_size`] of the clip.
    pub size: f64,
    /// The metrics.
    pub metrics: Metrics,
    /// What was found, by kind then first frame.
    pub findings: Vec<Finding>,
    /// Per-frame curves.
    pub series: Series,
    /// Remarks on what could not be measured and why.
    pub notes: Vec<String>,
}

impl Report {
    /// The names of `joints`.
    pub fn names(&self, joints: &[usize]) -> Vec<&str> {
        joints.iter().map(|&j| self.joint_names[j].as_str()).collect()
    }
}

/// World positions of a clip in metres with what was decided on the way.
pub(crate) struct World {
    pub(crate) pos: Vec<DVec3>,
    pub(crate) n_joints: usize,
    pub(crate) guess: UnitGuess,
    pub(crate) mpu: f64,
}

/// Frames per piece of the frame-parallel passes of [`lint`]: a fixed
/// size, so that what each piece computes, and the order the pieces are
/// put together in, do not depend on the number of threads.
const PIECE: usize = 512;

/// Frames per call of [`Kinematics::positions_many`] in [`world_positions`].
const RUN: usize = 64;

/// `f` of each piece of [`PIECE`] frames of a clip of `n` frames (the
/// piece's index and its frames), on rayon's pool with the `parallel`
/// feature, in piece order.
fn per_piece<T: Send>(
    n: usize,
    f: impl Fn(usize, std::ops::Range<usize>) -> T + Sync + Send,
) -> Vec<T> {
    let piece = |k: usize| f(k, k * PIECE..((k + 1) * PIECE).min(n));
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        (0..n.div_ceil(PIECE)).into_par_iter().map(piece).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        (0..n.div_ceil(PIECE)).map(piece).collect()
    }
}

/// `len` zero points, the memory written (and so first touched) on the
/// pool rather than by one thread.
fn zeros(len: usize) -> Vec<DVec3> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        rayon::iter::repeat_n(DVec3::ZERO, len).with_min_len(1 << 16).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        vec![DVec3::ZERO; len]
    }
}

/// World positions of every frame in metres, frame-major
/// (`pos[f * nj + j]`) or, with `joint_major`, joint-major
/// (`pos[j * n + f]`: every frame of joint 0, then of joint 1, ...), which
/// the per-joint passes of [`lint`] read contiguously.
///
/// One pass over the frames, [`PIECE`] frames per task on the pool: each
/// piece's positions come from [`Kinematics::positions_many`] [`RUN`]
/// frames at a time (the bits of [`Kinematics::positions_all`]), whose
/// frames give their [`crate::units::pose_size`] (the unit guess, the
/// same as [`UnitGuess::of_positions`]); joint-major, they go through a
/// small frame-major buffer into each joint's row. The scale to metres is
/// applied afterwards on the pool, once the unit is known.
pub(crate) fn world_positions(
    bvh: &Bvh,
    mode: PositionChannels,
    mpu: Option<f64>,
    joint_major: bool,
) -> World {
    let fk = Kinematics::new(bvh.skeleton(), mode);
    let motion = bvh.motion();
    let (n, nj, width) = (motion.n_frames(), fk.len(), motion.n_channels());
    let mut pos = zeros(n * nj);
    let guess = if n == 0 || nj == 0 {
        UnitGuess::of_positions(nj, &crate::units::rest_pose(bvh.skeleton(), mode))
    } else {
        let mut sizes = vec![0.0; n];
        // Each piece's part of the output: its frames' rows (frame-major)
        // or its slice of every joint's row (joint-major).
        let mut parts: Vec<Vec<&mut [DVec3]>> = Vec::with_capacity(n.div_ceil(PIECE));
        if joint_major {
            parts.extend((0..n.div_ceil(PIECE)).map(|_| Vec::with_capacity(nj)));
            for row in pos.chunks_mut(n) {
                for (k, part) in row.chunks_mut(PIECE).enumerate() {
                    parts[k].push(part);
                }
            }
        } else {
            parts.extend(pos.chunks_mut(PIECE * nj).map(|p| vec![p]));
        }
        let values = motion.values();
        let work = |(k, (mut out, sizes)): (usize, (Vec<&mut [DVec3]>, &mut [f64])),
                    (lanes, run): &mut (crate::FkLanes, Vec<DVec3>)| {
            let f0 = k * PIECE;
            for (r, sizes) in sizes.chunks_mut(RUN).enumerate() {
                let (a, len) = (f0 + r * RUN, sizes.len());
                let frames = &values[a * width..(a + len) * width];
                let measure = |sizes: &mut [f64], run: &[DVec3]| {
                    for (s, p) in sizes.iter_mut().zip(run.chunks_exact(nj)) {
                        *s = crate::units::pose_size(p);
                    }
                };
                if joint_major {
                    run.resize(len * nj, DVec3::ZERO);
                    fk.positions_many(frames, lanes, run);
                    measure(sizes, run);
                    for (j, row) in out.iter_mut().enumerate() {
                        let dst = &mut row[r * RUN..r * RUN + len];
                        for (d, p) in dst.iter_mut().zip(run[j..].iter().step_by(nj)) {
                            *d = *p;
                        }
                    }
                } else {
                    let rows = &mut out[0][r * RUN * nj..(r * RUN + len) * nj];
                    fk.positions_many(frames, lanes, rows);
                    measure(sizes, rows);
                }
            }
        };
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            parts
                .into_par_iter()
                .zip(sizes.par_chunks_mut(PIECE))
                .enumerate()
                .for_each_init(|| (fk.lanes_scratch(), Vec::new()), |st, item| work(item, st));
        }
        #[cfg(not(feature = "parallel"))]
        {
            let mut st = (fk.lanes_scratch(), Vec::new());
            for item in parts.into_iter().zip(sizes.chunks_mut(PIECE)).enumerate() {
                work(item, &mut st);
            }
        }
        UnitGuess::of_pose_sizes(sizes)
    }
    .named(&crate::units::Limbs::of(bvh.skeleton()));
    let mpu = mpu.unwrap_or_else(|| guess.metres_per_unit());
    if mpu != 1.0 {
        let scale = |p: &mut DVec3| *p *= mpu;
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            pos.par_iter_mut().with_min_len(1 << 14).for_each(scale);
        }
        #[cfg(not(feature = "parallel"))]
        pos.iter_mut().for_each(scale);
    }
    World { pos, n_joints: nj, guess, mpu }
}

/// Joint names as `bvh positions` names them (End Sites `Parent_End`).
pub(crate) fn joint_names(bvh: &Bvh) -> Vec<String> {
    bvh.skeleton().display_names()
}

/// Measures every metric of `bvh` (see the module documentation).
pub fn lint(bvh: &Bvh, options: &Options) -> Report {
    measure(bvh, options, true)
}

/// [`lint`]'s measure of the feet alone, for callers that need the contacts
/// and not the other metrics (`clean`'s foot locking, drift and ground):
/// the same `units`, `metres_per_unit`, `up`, `feet`, `ground`, `size` and
/// the feet's series (`foot_height`, `foot_speed`, `contact`) and metrics,
/// bit for bit, and the feet's findings and notes. The other metrics keep
/// their defaults, the other series are empty and the other findings are
/// not looked for (no smoothness, channel, bone, far-joint or seam pass).
pub fn contacts(bvh: &Bvh, options: &Options) -> Report {
    measure(bvh, options, false)
}

/// [`lint`] (`all`) or [`contacts`] (the feet alone).
fn measure(bvh: &Bvh, options: &Options, all: bool) -> Report {
    let skel = bvh.skeleton();
    let motion = bvh.motion();
    let n = motion.n_frames();
    let fps = motion.fps();
    let mut notes = Vec::new();

    let (up, up_detected) = up_of(options.up, || detect_up(bvh).axis, &mut notes);
    let world = world_positions(bvh, options.position_channels, options.metres_per_unit, true);
    let units = units_of(options, &world.guess, &mut notes);
    let nj = world.n_joints;
    // Joint-major positions (every frame of joint 0, then of joint 1, ...):
    // the per-joint passes below read them contiguously.
    let jm = &world.pos[..];
    let row = |j: usize| &jm[j * n..(j + 1) * n];
    let u = up.vector();
    let size = world.guess.size * world.mpu;
    let bones = classify(skel);
    let names = joint_names(bvh);

    // Feet, ground and contacts.
    let feet = feet::find(skel, &bones, &names, options.feet.as_deref(), &mut notes);
    // The feet, the per-joint smoothness and the passes over the channels
    // at once on the pool (each of them also splits its own work).
    let (feet_data, rest) = join(
        || feet::measure(&feet, row, || lowest(jm, u), n, fps, u, options),
        || {
            all.then(|| {
                join(|| smoothness(jm, nj, n, fps, options), || channels(bvh, &names, options))
            })
        },
    );
    let (mut metrics, mut findings, series, ground) =
        combine(&feet, feet_data, rest, &names, || lowest(jm, u), options, &mut notes);

    // Everything else, for lint (`contacts` stops at the feet).
    if all {
        // Bones that stretch: joints under a parent that have position channels.
        let hips = bones.iter().position(|b| *b == Some(Bone::Hips)).unwrap_or(0);
        for (j, parent) in stretching(skel) {
            if n == 0 {
                break;
            }
            let lens: Vec<f64> = (0..n).map(|f| (row(j)[f] - row(parent)[f]).length()).collect();
            if let Some(found) = stretch_of(j, parent, &lens, size, &names, options) {
                stretched(found, &mut metrics, &mut findings);
            }
        }

        // Joints far from the hips.
        if n > 0 && size.is_finite() && size > 0.0 {
            let limit = options.far_factor * size;
            let far_of = |j: usize| -> Vec<Finding> {
                let (pj, ph) = (row(j), row(hips));
                let dist = |f: usize| (pj[f] - ph[f]).length();
                stats::runs((0..n).map(|f| dist(f) > limit))
                    .into_iter()
                    .map(|(a, b)| {
                        let worst = (a..=b).map(dist).fold(0.0, f64::max);
                        far_finding(j, (a, b), worst, &names[j], &names[hips], size)
                    })
                    .collect()
            };
            for far in per_joint(nj, far_of) {
                metrics.far_joints += usize::from(!far.is_empty());
                findings.extend(far);
            }
        }

        // The loop seam.
        if options.seam {
            let leg =
                |side| bones.iter().position(|b| *b == Some(Bone::Limb(side, Limb::UpperLeg)));
            let legs = leg(Side::Left).zip(leg(Side::Right));
            seam(jm, nj, n, hips, legs, u, options, &mut metrics, &mut findings);
        }
    }

    sort_findings(&mut findings);
    Report {
        units,
        metres_per_unit: world.mpu,
        up,
        up_detected,
        fps,
        frames: n,
        joint_names: names,
        feet,
        ground,
        size,
        metrics,
        findings,
        series,
        notes,
    }
}

/// The up axis of a lint: `given`, else `detect()`'s, else +Y with a note;
/// and whether it was detected.
pub(crate) fn up_of(
    given: Option<SignedAxis>,
    detect: impl FnOnce() -> Option<SignedAxis>,
    notes: &mut Vec<String>,
) -> (SignedAxis, bool) {
    match given {
        Some(a) => (a, false),
        None => match detect() {
            Some(a) => (a, true),
            None => {
                notes.push("up axis not found (no head above hips above feet); +y assumed".into());
                (SignedAxis::PosY, false)
            }
        },
    }
}

/// The unit a lint reports for the unit guess `guess`, with a note when
/// the guess found none.
pub(crate) fn units_of(o: &Options, guess: &UnitGuess, notes: &mut Vec<String>) -> Units {
    let units = if o.metres_per_unit.is_some() { Units::Metres } else { guess.units };
    if o.metres_per_unit.is_none() && units.metres_per_unit().is_none() {
        notes.push(format!(
            "unit unknown ({}); scaled to a {} m figure",
            guess.label(),
            crate::units::HUMAN_SIZE_M
        ));
    }
    units
}

/// The joints whose bone to their parent can stretch (those with
/// position channels), with that parent, in joint order.
pub(crate) fn stretching(skel: &crate::Skeleton) -> Vec<(usize, usize)> {
    skel.joints()
        .iter()
        .enumerate()
        .filter(|(_, joint)| joint.channels().iter().any(|c| c.is_position()))
        .filter_map(|(j, joint)| Some((j, joint.parent()?.index())))
        .collect()
}

/// The bone from `parent` to `j` over the clip (`lens`, per frame, m): its
/// relative change (for `bone_stretch`) and a finding when above the
/// threshold, without the metrics and findings they go into: bones can be
/// measured apart (on the pool), then put in, in joint order, by
/// [`stretched`].
pub(crate) fn stretch_of(
    j: usize,
    parent: usize,
    lens: &[f64],
    size: f64,
    names: &[String],
    o: &Options,
) -> Option<(f64, Option<Finding>)> {
    let finite = lens.iter().copied().filter(|l| l.is_finite());
    let (lo, hi) =
        finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), l| (a.min(l), b.max(l)));
    let med = stats::quantile(lens, 0.5)?;
    let base = med.max(size * 1e-3).max(f64::MIN_POSITIVE);
    let rel = (hi - lo) / base;
    let found = (rel > o.stretch).then(|| {
        let (fa, fb) = (
            lens.iter().position(|&l| l == lo).unwrap_or(0),
            lens.iter().position(|&l| l == hi).unwrap_or(0),
        );
        Finding {
            kind: Kind::BoneStretch,
            frames: (fa.min(fb), fa.max(fb)),
            joints: vec![j],
            value: rel,
            message: format!(
                "bone {} to {} changes length by {:.1}% ({:.3} m to {:.3} m)",
                names[parent],
                names[j],
                rel * 100.0,
                lo,
                hi
            ),
        }
    });
    Some((rel, found))
}

/// One bone's [`stretch_of`] into the clip's metrics and findings.
pub(crate) fn stretched(
    (rel, found): (f64, Option<Finding>),
    metrics: &mut Metrics,
    findings: &mut Vec<Finding>,
) {
    metrics.bone_stretch = metrics.bone_stretch.max(rel);
    findings.extend(found);
}

/// The findings in the report's order: by kind, then by first frame, the
/// order among equals kept (`sort_by_key(|f| (f.kind, f.frames.0))`, a
/// stable sort, gives the same order). Done as a stable counting sort by
/// kind (the findings come in long runs of one kind, each mostly in frame
/// order already), then a stable sort by first frame of each kind's run
/// that is not in frame order: each finding moved twice, where the merge
/// sort of the whole list moved the tens of thousands of findings of a
/// long noisy clip once per merge level.
pub(crate) fn sort_findings(findings: &mut Vec<Finding>) {
    let kinds = findings.iter().map(|f| f.kind as usize + 1).max().unwrap_or(0);
    let mut counts = vec![0usize; kinds];
    for f in findings.iter() {
        counts[f.kind as usize] += 1;
    }
    let by_kind = findings.windows(2).all(|w| w[0].kind <= w[1].kind);
    if !by_kind {
        let mut groups: Vec<Vec<Finding>> = counts.iter().map(|&c| Vec::with_capacity(c)).collect();
        for f in findings.drain(..) {
            groups[f.kind as usize].push(f);
        }
        for g in groups {
            findings.extend(g);
        }
    }
    let mut start = 0;
    for c in counts {
        let group = &mut findings[start..start + c];
        if !group.is_sorted_by_key(|f| f.frames.0) {
            group.sort_by_key(|f| f.frames.0);
        }
        start += c;
    }
}

/// The metrics, findings, curves and ground of the feet, the smoothness
/// and the channels' pass, as both forms of lint put them together;
/// `lowest` is the ground of [`Ground::Lowest`] when no feet were measured.
#[allow(clippy::too_many_arguments)]
fn combine(
    feet: &[Foot],
    feet_data: Option<feet::FeetData>,
    rest: Option<(Smoothness, (Metrics, Vec<Finding>))>,
    names: &[String],
    lowest: impl FnOnce() -> f64,
    options: &Options,
    notes: &mut Vec<String>,
) -> (Metrics, Vec<Finding>, Series, f64) {
    let mut metrics = Metrics::default();
    let mut findings = Vec::new();
    let ground = feet_data.as_ref().map_or_else(
        || match options.ground {
            Ground::Height(h) => h,
            Ground::Lowest => lowest(),
            Ground::Contacts | Ground::Pooled => f64::NAN,
        },
        |d| d.ground,
    );
    let mut series = Series::default();
    if let Some(d) = feet_data {
        metrics.skate_ratio = d.skate_ratio;
        metrics.skate_ratio_kimodo = d.skate_ratio_kimodo;
        metrics.foot_slide = d.foot_slide;
        metrics.ground_penetration = d.penetration_depth;
        metrics.floating = d.floating;
        findings.extend(d.findings);
        series.foot_height = d.height;
        series.foot_speed = d.speed;
        series.contact = d.contact;
    } else if !feet.is_empty() {
        notes.push("too few frames to measure the feet".into());
    }

    // The rest is lint's alone ([`contacts`] stops at the feet).
    let Some((smooth, (chan_metrics, chan_findings))) = rest else {
        return (metrics, findings, series, ground);
    };
    // Per-joint smoothness: jitter, spikes, pops.
    metrics.jitter = smooth.jitter;
    metrics.spikes = smooth.spikes.len();
    metrics.pops = smooth.pops.len();
    series.spike_ratio = smooth.spike_ratio;
    series.jerk = smooth.jerk;
    // The two groupings (a sort and a message each) at once.
    let (spikes, pops) = join(
        || group(Kind::Spike, &smooth.spikes, names, "acceleration", "m/s²", 1),
        || group(Kind::Pop, &smooth.pops, names, "one-frame step", "m", 1),
    );
    findings.extend(spikes);
    findings.extend(pops);

    // From the channels: non-finite values, Euler jumps, gimbal lock,
    // quaternion hemisphere flips, frozen joints.
    metrics.nan = chan_metrics.nan;
    metrics.quat_flips = chan_metrics.quat_flips;
    metrics.euler_jumps = chan_metrics.euler_jumps;
    metrics.gimbal_frames = chan_metrics.gimbal_frames;
    metrics.frozen = chan_metrics.frozen;
    findings.extend(chan_findings);
    (metrics, findings, series, ground)
}

/// The finding of joint `j` (named `name`) farther than the limit from
/// the hips (named `hips`) over `frames`, `worst` metres at most, in a
/// figure of `size` metres.
pub(crate) fn far_finding(
    j: usize,
    frames: (usize, usize),
    worst: f64,
    name: &str,
    hips: &str,
    size: f64,
) -> Finding {
    Finding {
        kind: Kind::FarJoint,
        frames,
        joints: vec![j],
        value: worst,
        message: format!("{name} is {worst:.2} m from {hips} (the figure is {size:.2} m)"),
    }
}

/// The lowest finite height of `points` along `u` (`Ground::Lowest`).
pub(crate) fn lowest(points: &[DVec3], u: DVec3) -> f64 {
    points.iter().map(|p| p.dot(u)).filter(|h| h.is_finite()).fold(f64::INFINITY, f64::min)
}

/// `a()` and `b()`, at once on rayon's pool with the `parallel` feature.
fn join<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    #[cfg(feature = "parallel")]
    {
        rayon::join(a, b)
    }
    #[cfg(not(feature = "parallel"))]
    {
        (a(), b())
    }
}

/// `f` of every joint index below `n`, on rayon's pool with the
/// `parallel` feature, in joint order.
fn per_joint<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        (0..n).into_par_iter().map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        (0..n).map(f).collect()
    }
}

/// Findings of one kind from (frame, joint, value, threshold) hits: hits
/// at frames within `gap` of each other merge into one finding over all
/// their joints.
fn group(
    kind: Kind,
    hits: &[(usize, usize, f64, f64)],
    names: &[String],
    what: &str,
    unit: &str,
    gap: usize,
) -> Vec<Finding> {
    let hits = in_frame_order(hits);
    let mut out: Vec<Finding> = Vec::new();
    let mut worst: Vec<(f64, f64, usize)> = Vec::new();
    for &(f, j, v, t) in &hits {
        match out.last_mut() {
            Some(last) if f <= last.frames.1 + gap => {
                last.frames.1 = last.frames.1.max(f);
                if !last.joints.contains(&j) {
                    last.joints.push(j);
                }
                let w = worst.last_mut().expect("one per finding");
                if v > w.0 {
                    *w = (v, t, j);
                }
                last.value = last.value.max(v);
            }
            _ => {
                out.push(Finding {
                    kind,
                    frames: (f, f),
                    joints: vec![j],
                    value: v,
                    message: String::new(),
                });
                worst.push((v, t, j));
            }
        }
    }
    // The messages, on the pool (thousands of findings in a long noisy
    // clip, each a formatted line).
    let message = |(fi, &(v, t, j)): (&mut Finding, &(f64, f64, usize))| {
        fi.joints.sort_unstable();
        let more = fi.joints.len() - 1;
        fi.message = format!(
            "{what} {v:.3} {unit} on {} (threshold {t:.3} {unit}){}",
            names[j],
            if more > 0 {
                format!(" and {more} more joint(s) from {}", names[fi.joints[0]])
            } else {
                String::new()
            }
        );
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        out.par_iter_mut().zip(worst.par_iter()).for_each(message);
    }
    #[cfg(not(feature = "parallel"))]
    out.iter_mut().zip(worst.iter()).for_each(message);
    out
}

/// `hits` ordered by frame, then joint, keeping the order of equal ones (a
/// stable sort by `(frame, joint)`). The hits of a clip's joints come
/// joint after joint, each in frame order: counted into their frames (a
/// stable counting sort) they are in that order already, checked in one
/// pass; others are then sorted.
fn in_frame_order(hits: &[(usize, usize, f64, f64)]) -> Vec<(usize, usize, f64, f64)> {
    let key = |h: &(usize, usize, f64, f64)| (h.0, h.1);
    let frames = hits.iter().map(|h| h.0).max().map_or(0, |f| f + 1);
    if hits.is_sorted_by_key(key) || frames > 4 * hits.len() + 1024 {
        let mut out = hits.to_vec();
        out.sort_by_key(key);
        return out;
    }
    // Where each frame's hits start, then each hit in its place.
    let mut start = vec![0usize; frames + 1];
    for h in hits {
        start[h.0 + 1] += 1;
    }
    for f in 0..frames {
        start[f + 1] += start[f];
    }
    let mut out = vec![(0, 0, 0.0, 0.0); hits.len()];
    for h in hits {
        out[start[h.0]] = *h;
        start[h.0] += 1;
    }
    if !out.is_sorted_by_key(key) {
        out.sort_by_key(key);
    }
    out
}

/// What [`judge`] found of one joint.
pub(crate) struct Judged {
    /// The spike threshold, when any acceleration is finite.
    pub(crate) spike_t: Option<f64>,
    pub(crate) spikes: Vec<(usize, usize, f64, f64)>,
    pub(crate) pops: Vec<(usize, usize, f64, f64)>,
}

/// The spikes and pops of joint `j` from its accelerations (`acc[f - 1]`:
/// frame `f`'s, m/s²) and steps (`step[f]`: frame `f` to `f + 1`, m) over
/// the whole clip: the acceleration against the joint's own robust
/// threshold, the step against the steps around it. `sorted` is a buffer
/// the caller reuses.
pub(crate) fn judge(
    j: usize,
    acc: &[f64],
    step: &[f64],
    o: &Options,
    sorted: &mut Vec<f64>,
) -> Judged {
    let mut r = Judged { spike_t: None, spikes: Vec::new(), pops: Vec::new() };
    if let Some((med, mad)) = stats::median_mad_with(acc, sorted) {
        let t = (med + o.spike_k * mad).max(o.spike_min);
        r.spike_t = Some(t);
        for (i, &a) in acc.iter().enumerate() {
            if a > t {
                r.spikes.push((i + 1, j, a, t));
            }
        }
    }
    // A step much longer than the steps both before and after it
    // (skipping the neighbours a one-frame pop also lengthens); a
    // motion that speeds up has long steps after, so it is no pop.
    // ... and longer than the joint's fast steps (twice the 95th
    // percentile of its steps over the clip), so that a kick at
    // 15 fps, over in two frames, is no pop.
    let fast = 2.0 * stats::quantile_with(step, 0.95, sorted).unwrap_or(0.0);
    for f in 3..step.len().saturating_sub(3) {
        if let Some(t) = pop_at(step, f, fast, o) {
            r.pops.push((f + 1, j, step[f], t));
        }
    }
    r
}

/// The pop rule at step `f` of a joint's `step`s (see [`judge`]; `fast`
/// twice the joint's 95th-percentile step): the threshold the step passes,
/// if it is a pop. The steps around it are taken on both sides where the
/// clip has them (lint judges only those steps), else on the side it has
/// (a retarget's lock judges the source's first and last three steps so).
#[inline]
pub(crate) fn pop_at(step: &[f64], f: usize, fast: f64, o: &Options) -> Option<f64> {
    // Every threshold below is at least `least` (`max` passes over a NaN
    // operand): a step not above it is no pop, whatever the steps around.
    let least = o.pop_min.max(fast);
    let above = step[f] > least;
    if !above {
        return None;
    }
    let side = |a: usize, b: usize| (step[a] + step[b]) / 2.0;
    let before = (f >= 3).then(|| side(f - 3, f - 2));
    let after = (f + 3 < step.len()).then(|| side(f + 2, f + 3));
    let typical = match (before, after) {
        (Some(x), Some(y)) => x.max(y),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => return None,
    };
    if !typical.is_finite() {
        return None;
    }
    let t = (o.pop_factor * typical).max(o.pop_min).max(fast);
    (step[f] > t).then_some(t)
}

struct Smoothness {
    jitter: Option<f64>,
    spikes: Vec<(usize, usize, f64, f64)>,
    pops: Vec<(usize, usize, f64, f64)>,
    spike_ratio: Vec<f64>,
    jerk: Vec<f64>,
}

/// Per joint: the third difference (jitter), the second difference against
/// the joint's own robust threshold (spikes), the step against the steps
/// around it (pops).
///
/// The joints are measured on the pool, each with buffers its thread
/// reuses; the per-frame curves (the largest spike ratio and the mean jerk
/// over the joints) are then taken over pieces of frames on the pool, each
/// frame's joints in joint order, the differences computed again by the
/// same expressions (the same bits) instead of kept per joint.
fn smoothness(jm: &[DVec3], nj: usize, n: usize, fps: f64, o: &Options) -> Smoothness {
    struct PerJoint {
        jerk_sum: f64,
        jerk_count: usize,
        /// The spike threshold, when any acceleration is finite.
        spike_t: Option<f64>,
        spikes: Vec<(usize, usize, f64, f64)>,
        pops: Vec<(usize, usize, f64, f64)>,
    }
    #[derive(Default)]
    struct Scratch {
        acc: Vec<f64>,
        step: Vec<f64>,
        sorted: Vec<f64>,
    }
    let fps2 = fps * fps;
    let fps3 = fps2 * fps;
    let row = |j: usize| &jm[j * n..(j + 1) * n];
    // Nested first differences, as NumPy's `diff(p, n=3)` computes them.
    let jerk_at = |p: &[DVec3], f: usize| {
        let (a, b, c) = (p[f + 1] - p[f], p[f + 2] - p[f + 1], p[f + 3] - p[f + 2]);
        ((c - b) - (b - a)).length() * fps3
    };
    let acc_at = |p: &[DVec3], f: usize| ((p[f + 1] - p[f]) - (p[f] - p[f - 1])).length() * fps2;
    let per_joint = |sc: &mut Scratch, j: usize| -> PerJoint {
        let p = row(j);
        let (mut jerk_sum, mut jerk_count) = (0.0, 0);
        for f in 0..n.saturating_sub(3) {
            let d3 = jerk_at(p, f);
            if d3.is_finite() {
                jerk_sum += d3;
                jerk_count += 1;
            }
        }
        sc.acc.clear();
        if n >= 3 {
            sc.acc.extend((1..n - 1).map(|f| acc_at(p, f)));
        }
        sc.step.clear();
        if n >= 2 {
            sc.step.extend((0..n - 1).map(|f| (p[f + 1] - p[f]).length()));
        }
        let judged = judge(j, &sc.acc, &sc.step, o, &mut sc.sorted);
        PerJoint {
            jerk_sum,
            jerk_count,
            spike_t: judged.spike_t,
            spikes: judged.spikes,
            pops: judged.pops,
        }
    };
    let all: Vec<PerJoint> = crate::par::map_with_scratch(nj, Scratch::default, per_joint);

    let (sum, count) = all.iter().fold((0.0, 0), |(s, c), r| (s + r.jerk_sum, c + r.jerk_count));
    // Per frame over the joints in joint order, pieces of frames on the pool.
    let mut spike_ratio = vec![0.0f64; n];
    let mut jerk = vec![0.0f64; n.saturating_sub(3)];
    let ratio_piece = |(k, out): (usize, &mut [f64])| {
        let f0 = k * PIECE;
        for (j, r) in all.iter().enumerate() {
            let Some(t) = r.spike_t else { continue };
            let p = row(j);
            for (i, a) in out.iter_mut().enumerate() {
                let f = f0 + i;
                if f >= 1 && f + 1 < n {
                    *a = a.max(acc_at(p, f) / t);
                }
            }
        }
    };
    let jerk_piece = |(k, out): (usize, &mut [f64])| {
        let f0 = k * PIECE;
        for j in 0..nj {
            let p = row(j);
            for (i, a) in out.iter_mut().enumerate() {
                *a += jerk_at(p, f0 + i) / nj as f64;
            }
        }
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        spike_ratio.par_chunks_mut(PIECE).enumerate().for_each(ratio_piece);
        jerk.par_chunks_mut(PIECE).enumerate().for_each(jerk_piece);
    }
    #[cfg(not(feature = "parallel"))]
    {
        spike_ratio.chunks_mut(PIECE).enumerate().for_each(ratio_piece);
        jerk.chunks_mut(PIECE).enumerate().for_each(jerk_piece);
    }
    Smoothness {
        jitter: (count > 0).then(|| sum / count as f64),
        spikes: all.iter().flat_map(|r| r.spikes.iter().copied()).collect(),
        pops: all.iter().flat_map(|r| r.pops.iter().copied()).collect(),
        spike_ratio,
        jerk,
    }
}

/// Runs of `(first, last)` frames found piece by piece, in piece order,
/// joined where one ends just before the next begins: the runs of the
/// whole sequence ([`stats::runs`]).
fn join_runs<'a>(parts: impl IntoIterator<Item = &'a [(usize, usize)]>) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &(a, b) in parts.into_iter().flatten() {
        match out.last_mut() {
            Some(last) if last.1 + 1 == a => last.1 = b,
            _ => out.push((a, b)),
        }
    }
    out
}

/// Extends the runs in `runs` with index `i` (met in increasing order);
/// whether `i` began a new run.
fn push_run(runs: &mut Vec<(usize, usize)>, i: usize) -> bool {
    match runs.last_mut() {
        Some(last) if last.1 + 1 == i => {
            last.1 = i;
            false
        }
        _ => {
            runs.push((i, i));
            true
        }
    }
}

/// `x.rem_euclid(180.0)`, without the division where `|x| < 180` (the
/// same bits: `x % 180` is `x` there).
fn rem_180(x: f64) -> f64 {
    if x.abs() < 180.0 { if x < 0.0 { x + 180.0 } else { x } } else { x.rem_euclid(180.0) }
}

/// What [`channel_piece`] measured of one piece of frames.
pub(crate) struct ChannelPiece {
    /// Per channel: runs of non-finite values.
    nan: Vec<Vec<(usize, usize)>>,
    /// Per joint: quaternion flips and Euler jumps.
    flips: Vec<usize>,
    jumps: Vec<usize>,
    /// Per joint: Euler jump findings, by frame.
    euler: Vec<Vec<Finding>>,
    /// Per joint: runs of frames near gimbal lock, and the middle angle at
    /// the first frame of each.
    gimbal: Vec<Vec<(usize, usize)>>,
    gimbal_first: Vec<Vec<f64>>,
    /// Per joint: runs of steps (step `s` from frame `s` to `s + 1`) that
    /// hold every channel bit for bit.
    held: Vec<Vec<(usize, usize)>>,
}

/// The rotation channels of one joint, as [`channel_piece`] reads them.
struct Rot {
    channels: Vec<usize>,
    axes: Vec<crate::rotation::Axis>,
    /// The middle channel, when three distinct axes can lock.
    gimbal: Option<usize>,
}

/// What the pass over the channels needs of a skeleton: each joint's
/// rotation channels and channel range.
pub(crate) struct Channels {
    rots: Vec<Rot>,
    ranges: Vec<std::ops::Range<usize>>,
    width: usize,
    /// The most rotation channels of one joint.
    rot_max: usize,
    /// The joints that can lock, with their middle channel.
    gimbals: Vec<(usize, usize)>,
    /// The joints with rotation channels.
    rotated: Vec<usize>,
    /// Per channel: its joint, and whether it is a rotation.
    joint_of: Vec<usize>,
    rotation: Vec<bool>,
}

impl Channels {
    pub(crate) fn new(skel: &crate::Skeleton) -> Channels {
        let rots = skel
            .joints()
            .iter()
            .map(|joint| {
                let (axes, channels): (Vec<_>, Vec<_>) = joint
                    .channels()
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.is_rotation())
                    .map(|(k, c)| (c.axis(), joint.first_channel() + k))
                    .unzip();
                let gimbal = (axes.len() == 3
                    && axes[0] != axes[1]
                    && axes[1] != axes[2]
                    && axes[0] != axes[2])
                    .then(|| channels[1]);
                Rot { channels, axes, gimbal }
            })
            .collect::<Vec<Rot>>();
        let ranges: Vec<_> = skel.joints().iter().map(|j| j.channel_range()).collect();
        let rot_max = rots.iter().map(|r| r.channels.len()).max().unwrap_or(0);
        let gimbals =
            rots.iter().enumerate().filter_map(|(j, r)| r.gimbal.map(|c| (j, c))).collect();
        let rotated = (0..rots.len()).filter(|&j| !rots[j].channels.is_empty()).collect();
        let width = skel.n_channels();
        let (mut joint_of, mut rotation) = (vec![0; width], vec![false; width]);
        for (j, (r, rot)) in ranges.iter().zip(&rots).enumerate() {
            joint_of[r.clone()].fill(j);
            rot.channels.iter().for_each(|&c| rotation[c] = true);
        }
        Channels { rots, ranges, width, rot_max, gimbals, rotated, joint_of, rotation }
    }
}

/// The channels' metrics of frames `frames`, `frame(f)` giving frame `f`'s
/// row (and frame `frames.start - 1`'s, when there is one): a piece starts
/// from the frame before it, so it measures its steps as the whole clip
/// does, whatever its bounds, and the pieces' runs are joined in order
/// afterwards ([`channel_findings`]).
pub(crate) fn channel_piece<'a>(
    ch: &Channels,
    names: &[String],
    o: &Options,
    frames: std::ops::Range<usize>,
    frame: impl Fn(usize) -> &'a [f64],
) -> ChannelPiece {
    let (rots, ranges) = (&ch.rots, &ch.ranges);
    let nj = rots.len();
    let mut out = ChannelPiece {
        nan: vec![Vec::new(); ch.width],
        flips: vec![0; nj],
        jumps: vec![0; nj],
        euler: vec![Vec::new(); nj],
        gimbal: vec![Vec::new(); nj],
        gimbal_first: vec![Vec::new(); nj],
        held: vec![Vec::new(); nj],
    };
    // Per joint: the last quaternion computed and its frame (it counts
    // only at the frame after it: every frame either computes a joint's
    // quaternion or forgets it).
    let mut prev_q = vec![(usize::MAX, glam::DQuat::IDENTITY); nj];
    let mut q = Quats { prev_q: &mut prev_q, qa: Vec::new(), qb: Vec::new() };
    // Whether every value of the previous frame is finite (then no joint
    // checks its angles there again).
    let finite = |row: &[f64]| row.iter().all(|x| x.is_finite());
    let mut prev_finite = frames.start > 0 && finite(frame(frames.start - 1));
    // A joint whose rotation channels all move by at most `quiet` from the
    // frame before (every value of both finite) needs no quaternions: no
    // channel passes `o.euler_jump_deg`, and its sum of moves (at most
    // `rot_max` of them, summed with a rounding far below the margin) does
    // not reach 160° < 2√2 rad (162.1°). Its quaternion is then forgotten,
    // as [`Quats::turn`] would.
    let quiet = o.euler_jump_deg.min(160.0 / ch.rot_max.max(1) as f64);
    let limit: Vec<f64> =
        (0..ch.width).map(|c| if ch.rotation[c] { quiet } else { f64::INFINITY }).collect();
    for f in frames {
        let row = frame(f);
        let prev = (f > 0).then(|| frame(f - 1));
        // One pass over the row: whether every value is finite and
        // whether any is held bit for bit from the frame before.
        let (row_finite, any_held) = match prev {
            Some(prev) => row.iter().zip(prev).fold((true, false), |(fin, held), (x, y)| {
                (fin & x.is_finite(), held | (x.to_bits() == y.to_bits()))
            }),
            None => (finite(row), false),
        };
        if !row_finite {
            for (c, x) in row.iter().enumerate() {
                if !x.is_finite() {
                    push_run(&mut out.nan[c], f);
                }
            }
        }
        if let Some(prev) = prev.filter(|_| any_held) {
            for (j, r) in ranges.iter().enumerate() {
                let r = r.clone();
                if !r.is_empty()
                    && row[r.clone()].iter().zip(&prev[r]).all(|(x, y)| x.to_bits() == y.to_bits())
                {
                    push_run(&mut out.held[j], f - 1);
                }
            }
        }
        for &(j, c) in &ch.gimbals {
            if (rem_180(row[c]) - 90.0).abs() < o.gimbal_deg && push_run(&mut out.gimbal[j], f) {
                out.gimbal_first[j].push(row[c]);
            }
        }
        match prev {
            // Every value of both frames finite (most frames): only the
            // joints with a channel moving by more than `quiet` are
            // measured, found by a test of the whole row on SIMD lanes
            // (`limit`: `quiet` for a rotation channel, infinity for the
            // others), eight channels at a time; a joint's channels are
            // next to each other, so it is measured once.
            Some(prev) if row_finite && prev_finite => {
                let mut last = usize::MAX;
                let blocks = row.chunks(8).zip(prev.chunks(8)).zip(limit.chunks(8));
                for (b, ((x, y), l)) in blocks.enumerate() {
                    let mut mask = moved_mask(x, y, l);
                    while mask != 0 {
                        let c = b * 8 + mask.trailing_zeros() as usize;
                        mask &= mask - 1;
                        let j = ch.joint_of[c];
                        if j != last {
                            last = j;
                            q.turn(j, &rots[j], row, prev, f, names, o, &mut out);
                        }
                    }
                }
            }
            _ => {
                for &j in &ch.rotated {
                    let rot = &rots[j];
                    if !row_finite && rot.channels.iter().any(|&c| !row[c].is_finite()) {
                        continue;
                    }
                    // The previous frame counts when its angles are finite.
                    if let Some(prev) = prev
                        .filter(|p| prev_finite || rot.channels.iter().all(|&c| p[c].is_finite()))
                    {
                        q.turn(j, rot, row, prev, f, names, o, &mut out);
                    }
                }
            }
        }
        prev_finite = row_finite;
    }
    out
}

/// Bit `k` set where channel `k` of a block of (at most eight) channels
/// moves by more than `limit[k]` from `prev` to `row`, or by a NaN: one
/// comparison per lane, no branch.
#[inline]
// `!(d <= limit)`: a NaN moves (the negation is the point).
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn moved_mask(row: &[f64], prev: &[f64], limit: &[f64]) -> u32 {
    if let (Ok(x), Ok(y), Ok(l)) =
        (<&[f64; 8]>::try_from(row), <&[f64; 8]>::try_from(prev), <&[f64; 8]>::try_from(limit))
    {
        let mut mask = 0;
        for k in 0..8 {
            mask |= u32::from(!((x[k] - y[k]).abs() <= l[k])) << k;
        }
        return mask;
    }
    let moves = row.iter().zip(prev).zip(limit).map(|((x, y), l)| !((x - y).abs() <= *l));
    moves.enumerate().fold(0, |mask, (k, m)| mask | u32::from(m) << k)
}

/// The quaternions [`channel_piece`] keeps from frame to frame, and its
/// buffers for one joint's angles.
struct Quats<'a> {
    prev_q: &'a mut [(usize, glam::DQuat)],
    qa: Vec<f64>,
    qb: Vec<f64>,
}

impl Quats<'_> {
    /// Joint `j`'s turn from frame `f - 1` (`prev`) to `f` (`row`), both
    /// with finite angles: a quaternion flip or an Euler jump, counted in
    /// `out`; the quaternion of frame `f` kept when it was computed.
    #[allow(clippy::too_many_arguments)]
    fn turn(
        &mut self,
        j: usize,
        rot: &Rot,
        row: &[f64],
        prev: &[f64],
        f: usize,
        names: &[String],
        o: &Options,
        out: &mut ChannelPiece,
    ) {
        // The quaternions are only needed where the angles move far:
        // a factor `q(θ)` moves by at most |Δθ|/2 (chord), so the
        // product can change hemisphere (a chord above √2) only when
        // the angles move by more than 2√2 rad (162°) in all.
        let (mut delta, mut total) = (0.0f64, 0.0f64);
        for &c in &rot.channels {
            let d = (row[c] - prev[c]).abs();
            // `delta.max(d)`'s value (`d` is never -0; a NaN `d` leaves
            // `delta`) as one select (a `maxsd`), without a branch or
            // `max`'s NaN handling.
            delta = if d > delta { d } else { delta };
            total += d;
        }
        if !(delta > o.euler_jump_deg || total.to_radians() > 2.0 * std::f64::consts::SQRT_2) {
            return;
        }
        self.qa.clear();
        self.qa.extend(rot.channels.iter().map(|&c| row[c]));
        let q = euler_to_quat(&rot.axes, &self.qa);
        let pq = match self.prev_q[j] {
            (at, pq) if at.wrapping_add(1) == f => pq,
            _ => {
                self.qb.clear();
                self.qb.extend(rot.channels.iter().map(|&c| prev[c]));
                euler_to_quat(&rot.axes, &self.qb)
            }
        };
        if pq.dot(q) < 0.0 {
            out.flips[j] += 1;
        }
        if delta > o.euler_jump_deg {
            let turn = 2.0 * pq.dot(q).abs().min(1.0).acos().to_degrees();
            if turn < delta / 2.0 {
                out.jumps[j] += 1;
                out.euler[j].push(Finding {
                    kind: Kind::EulerJump,
                    frames: (f - 1, f),
                    joints: vec![j],
                    value: delta,
                    message: format!(
                        "{} rotation channel jumps {:.1}° while the joint turns {:.1}° (a wrap or an Euler flip)",
                        names[j], delta, turn
                    ),
                });
            }
        }
        self.prev_q[j] = (f, q);
    }
}

/// The metrics read from the channels themselves: non-finite values, Euler
/// jumps, gimbal lock, quaternion flips and frozen joints.
///
/// One pass over the frames, [`PIECE`] frames per task on the pool, every
/// joint of a frame inside (the frames' rows are read in order, once); the
/// pieces' runs are joined in order afterwards.
fn channels(bvh: &Bvh, names: &[String], o: &Options) -> (Metrics, Vec<Finding>) {
    let motion = bvh.motion();
    let ch = Channels::new(bvh.skeleton());
    let pieces = per_piece(motion.n_frames(), |_, frames| {
        channel_piece(&ch, names, o, frames, |f| motion.frame(f))
    });
    let (n, fps, dt) = (motion.n_frames(), motion.fps(), motion.frame_time());
    channel_findings(&ch, bvh.skeleton(), names, o, pieces, n, (fps, dt))
}

/// The channels' metrics and findings of a clip of `n` frames at `fps`
/// (`dt` seconds per frame) from its pieces ([`channel_piece`]), in frame
/// order.
pub(crate) fn channel_findings(
    ch: &Channels,
    skel: &crate::Skeleton,
    names: &[String],
    o: &Options,
    mut pieces: Vec<ChannelPiece>,
    n: usize,
    (fps, dt): (f64, f64),
) -> (Metrics, Vec<Finding>) {
    let mut metrics = Metrics::default();
    let mut findings = Vec::new();
    let m = &mut metrics;
    let (rots, ranges) = (&ch.rots, &ch.ranges);
    let nj = rots.len();

    // Non-finite values, by channel runs.
    for c in 0..ch.width {
        let runs = join_runs(pieces.iter().map(|p| &p.nan[c][..]));
        if runs.is_empty() {
            continue;
        }
        let joint = skel.joints().iter().position(|j| j.channel_range().contains(&c)).unwrap_or(0);
        for (a, b) in runs {
            m.nan += b - a + 1;
            findings.push(Finding {
                kind: Kind::Nan,
                frames: (a, b),
                joints: vec![joint],
                value: (b - a + 1) as f64,
                message: format!(
                    "{} {} is not a finite number in {} frame(s)",
                    names[joint],
                    skel.joints()[joint].channels()[c - skel.joints()[joint].first_channel()]
                        .name(),
                    b - a + 1
                ),
            });
        }
    }

    // Euler jumps, gimbal lock, quaternion hemisphere flips.
    for (j, rot) in rots.iter().enumerate() {
        for p in &pieces {
            m.quat_flips += p.flips[j];
            m.euler_jumps += p.jumps[j];
        }
        findings.extend(pieces.iter_mut().flat_map(|p| std::mem::take(&mut p.euler[j])));
        if rot.gimbal.is_none() {
            continue;
        }
        let firsts = pieces.iter().flat_map(|p| p.gimbal_first[j].iter().copied());
        let runs = pieces.iter().flat_map(|p| p.gimbal[j].iter().copied());
        let mut joined: Vec<((usize, usize), f64)> = Vec::new();
        for ((a, b), v) in runs.zip(firsts) {
            match joined.last_mut() {
                Some((last, _)) if last.1 + 1 == a => last.1 = b,
                _ => joined.push(((a, b), v)),
            }
        }
        for ((a, b), value) in joined {
            m.gimbal_frames += b - a + 1;
            findings.push(Finding {
                kind: Kind::Gimbal,
                frames: (a, b),
                joints: vec![j],
                value,
                message: format!(
                    "{} middle angle ({}rotation) within {}° of ±90° (gimbal lock) for {} frame(s)",
                    names[j],
                    rot.axes[1].letter().to_ascii_uppercase(),
                    o.gimbal_deg,
                    b - a + 1
                ),
            });
        }
    }

    // Frozen joints: channels held bit for bit while they move elsewhere.
    let min_run = ((o.frozen_seconds * fps).ceil() as usize).max(3);
    for j in 0..nj {
        if ranges[j].is_empty() || n < 2 {
            continue;
        }
        let held = join_runs(pieces.iter().map(|p| &p.held[j][..]));
        if held == [(0, n - 2)] {
            continue;
        }
        // Steps a..=b hold: frames a..=b+1 are equal.
        let mut any = false;
        for (a, b) in held.into_iter().filter(|(a, b)| b - a + 2 >= min_run) {
            any = true;
            let frames = b - a + 2;
            findings.push(Finding {
                kind: Kind::Frozen,
                frames: (a, b + 1),
                joints: vec![j],
                value: frames as f64 * dt,
                message: format!(
                    "{} holds the same values for {} frames ({:.2} s)",
                    names[j],
                    frames,
                    frames as f64 * dt
                ),
            });
        }
        m.frozen += usize::from(any);
    }
    (metrics, findings)
}

/// The loop seam: the last frame to the first against the clip's typical
/// step, in place (the hips' horizontal travel removed).
#[allow(clippy::too_many_arguments)]
fn seam(
    jm: &[DVec3],
    nj: usize,
    n: usize,
    hips: usize,
    legs: Option<(usize, usize)>,
    u: DVec3,
    o: &Options,
    m: &mut Metrics,
    findings: &mut Vec<Finding>,
) {
    if n < 4 || nj == 0 {
        return;
    }
    // In place and facing one way: the hips' horizontal travel removed and
    // the figure turned about the up axis so that its pelvis line (right
    // to left upper leg) points one way, since a loop that travels may
    // also turn per cycle.
    let (e1, e2) = u.any_orthonormal_pair();
    let turn = |f: usize| -> glam::DQuat {
        let Some((l, r)) = legs else { return glam::DQuat::IDENTITY };
        let v = jm[l * n + f] - jm[r * n + f];
        let (x, y) = (v.dot(e1), v.dot(e2));
        if x.hypot(y) <= 1e-12 || !x.is_finite() || !y.is_finite() {
            return glam::DQuat::IDENTITY;
        }
        glam::DQuat::from_axis_angle(u, -y.atan2(x))
    };
    let turns: Vec<glam::DQuat> = (0..n).map(turn).collect();
    let local = |f: usize, j: usize| {
        let h = jm[hips * n + f];
        turns[f] * (jm[j * n + f] - (h - u * h.dot(u)))
    };
    let pose_dist = |a: usize, b: usize| {
        (0..nj).map(|j| (local(a, j) - local(b, j)).length()).sum::<f64>() / nj as f64
    };
    let vel_dist = |a0: usize, a1: usize, b0: usize, b1: usize| {
        (0..nj)
            .map(|j| ((local(a1, j) - local(a0, j)) - (local(b1, j) - local(b0, j))).length())
            .sum::<f64>()
            / nj as f64
    };
    let steps: Vec<f64> = (0..n - 1).map(|f| pose_dist(f, f + 1)).collect();
    // The seam's velocity change is the step after it against the step
    // before it, two steps apart (the seam step between them): the clip's
    // own changes are measured the same way, so a loop that goes on as
    // its clip moved reads about 1 however fast the clip accelerates.
    let dvel: Vec<f64> = (1..n - 2).map(|f| vel_dist(f + 1, f + 2, f - 1, f)).collect();
    let (Some(step), Some(dv)) = (stats::quantile(&steps, 0.5), stats::quantile(&dvel, 0.5)) else {
        return;
    };
    let jump = pose_dist(n - 1, 0);
    let vjump = vel_dist(0, 1, n - 2, n - 1);
    let pose_ratio = jump / step.max(1e-9);
    let vel_ratio = vjump / dv.max(1e-9);
    m.seam_pose = Some(pose_ratio);
    m.seam_velocity = Some(vel_ratio);
    if pose_ratio > o.seam_factor || vel_ratio > o.seam_factor {
        findings.push(Finding {
            kind: Kind::Seam,
            frames: (n - 1, n - 1),
            joints: Vec::new(),
            value: pose_ratio.max(vel_ratio),
            message: format!(
                "the seam from the last frame to the first moves {:.3} m ({:.1}x the clip's median step) and changes velocity {:.1}x its median change",
                jump, pose_ratio, vel_ratio
            ),
        });
    }
}

/// The hips joint of a skeleton as the quality metrics take it: the joint
/// the name families call the hips, else the first root.
pub fn hips_of(bvh: &Bvh) -> JointId {
    let bones = classify(bvh.skeleton());
    JointId::new(bones.iter().position(|b| *b == Some(Bone::Hips)).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::{Finding, Kind, in_frame_order, sort_findings};
    use crate::xorshift;

    /// The findings' order is the stable sort's by kind and first frame,
    /// finding for finding: runs of kinds out of order, a kind's run out of
    /// frame order, equal keys (told apart by their values), a list already
    /// in order and an empty one.
    #[test]
    fn findings_are_in_the_stable_sorts_order() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut rnd = move |m: u64| (next() % m) as usize;
        let kinds = [Kind::Spike, Kind::Pop, Kind::Skate, Kind::FarJoint, Kind::Nan, Kind::Seam];
        let finding = |kind, frame, value| Finding {
            kind,
            frames: (frame, frame + 1),
            joints: vec![frame % 7],
            value,
            message: format!("{kind:?} {value}"),
        };
        for case in 0..5 {
            let mut found: Vec<Finding> = Vec::new();
            if case < 4 {
                // Runs of one kind each (as lint makes them), in frame order
                // but for case 1 (shuffled frames) and case 2 (few frames:
                // equal keys).
                for (r, &kind) in kinds.iter().enumerate() {
                    let mut frame = 0;
                    for i in 0..200 {
                        frame = match case {
                            1 => rnd(1000),
                            2 => rnd(4),
                            _ => frame + rnd(3),
                        };
                        found.push(finding(kind, frame, (r * 1000 + i) as f64));
                    }
                }
                if case == 3 {
                    found.sort_by_key(|f| (f.kind, f.frames.0));
                }
            }
            let mut want = found.clone();
            want.sort_by_key(|f| (f.kind, f.frames.0));
            sort_findings(&mut found);
            assert_eq!(found, want, "case {case}");
        }
    }

    /// The counting sort gives the stable sort's order, bit for bit: on
    /// hits joint after joint (its own path), on shuffled hits and on hits
    /// with equal (frame, joint) keys (the fallback), and with frames far
    /// apart (the plain sort).
    #[test]
    fn hits_are_in_the_stable_sorts_order() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut rnd = move |m: u64| next() % m;
        let stable = |h: &[(usize, usize, f64, f64)]| {
            let mut s = h.to_vec();
            s.sort_by_key(|h| (h.0, h.1));
            s
        };
        let bits = |h: Vec<(usize, usize, f64, f64)>| {
            h.into_iter().map(|(f, j, v, t)| (f, j, v.to_bits(), t.to_bits())).collect::<Vec<_>>()
        };
        // Joint-major: each joint's frames ascending.
        let mut joint_major = Vec::new();
        for j in 0..20 {
            for f in 0..3000 {
                if rnd(4) == 0 {
                    joint_major.push((f, j, rnd(1000) as f64, j as f64));
                }
            }
        }
        let mut shuffled = joint_major.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rnd(i as u64 + 1) as usize);
        }
        let dup: Vec<_> = (0..500).map(|i| (rnd(50) as usize, 1, i as f64, 0.0)).collect();
        let far = vec![(1_000_000, 2, 1.0, 0.0), (3, 1, 2.0, 0.0), (3, 0, 3.0, 0.0)];
        for hits in [joint_major, shuffled, dup, far, Vec::new()] {
            assert_eq!(bits(in_frame_order(&hits)), bits(stable(&hits)));
        }
    }
}

#[cfg(test)]
mod channel_tests {
    use super::{Channels, Options, channel_piece};
    use crate::Bvh;
    use crate::rotation::euler_to_quat;

    /// Every joint's flips and Euler jumps of [`channel_piece`], against a
    /// reference that computes both frames' quaternions of every joint at
    /// every step (no test of which joints move, none kept from the frame
    /// before): channels of a joint split across the blocks of eight,
    /// position channels between rotations, a joint with two rotation
    /// channels, moves around the `quiet` bound and above the jump
    /// threshold, NaNs and infinities, pieces starting anywhere.
    #[test]
    fn channel_pieces_find_the_flips_and_jumps_of_every_joint() {
        let bvh = Bvh::parse(
            "HIERARCHY
ROOT Hips { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT A { OFFSET 0 1 0 CHANNELS 3 Yrotation Xrotation Zrotation
    JOINT B { OFFSET 0 1 0 CHANNELS 6 Xrotation Xposition Yrotation Yposition Zrotation Zposition
      JOINT C { OFFSET 0 1 0 CHANNELS 2 Zrotation Xrotation
        JOINT D { OFFSET 0 1 0 CHANNELS 3 Xposition Yposition Zposition
          JOINT E { OFFSET 0 1 0 CHANNELS 3 Zrotation Yrotation Xrotation
            End Site { OFFSET 0 1 0 } } } } } } }
MOTION
Frames: 1
Frame Time: 0.1
0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
",
        )
        .unwrap();
        let skel = bvh.skeleton();
        let ch = Channels::new(skel);
        let w = skel.n_channels();
        let names = skel.display_names();
        let mut next = crate::xorshift(0x2545_f491_4f6c_dd1d);
        let mut uniform = move || (next() >> 11) as f64 / (1u64 << 53) as f64;
        let mut rows: Vec<Vec<f64>> = vec![vec![0.0; w]];
        for _ in 1..600 {
            let mut row = rows.last().unwrap().clone();
            for x in &mut row {
                let r = uniform();
                *x = match (r * 100.0) as usize {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    2..=9 => *x + (uniform() - 0.5) * 400.0,
                    10..=19 => *x + 53.0 + uniform(),
                    20..=24 => (uniform() - 0.5) * 720.0,
                    _ if !x.is_finite() => 0.0,
                    _ => *x + (uniform() - 0.5) * 20.0,
                };
            }
            rows.push(row);
        }
        for jump in [90.0, 30.0, 200.0] {
            let o = Options { euler_jump_deg: jump, ..Options::default() };
            // The reference, joint by joint.
            let (mut flips, mut jumps) = (vec![0; skel.len()], vec![Vec::new(); skel.len()]);
            for (j, rot) in ch.rots.iter().enumerate() {
                let cs = &rot.channels;
                for f in 1..rows.len() {
                    let (row, prev) = (&rows[f], &rows[f - 1]);
                    if cs.is_empty()
                        || cs.iter().any(|&c| !row[c].is_finite() || !prev[c].is_finite())
                    {
                        continue;
                    }
                    let d: Vec<f64> = cs.iter().map(|&c| (row[c] - prev[c]).abs()).collect();
                    let delta = d.iter().copied().fold(0.0, f64::max);
                    let total: f64 = d.iter().sum();
                    if delta > jump || total.to_radians() > 2.0 * std::f64::consts::SQRT_2 {
                        let angles = |r: &[f64]| cs.iter().map(|&c| r[c]).collect::<Vec<_>>();
                        let q = euler_to_quat(&rot.axes, &angles(row));
                        let pq = euler_to_quat(&rot.axes, &angles(prev));
                        flips[j] += usize::from(pq.dot(q) < 0.0);
                        let turn = 2.0 * pq.dot(q).abs().min(1.0).acos().to_degrees();
                        if delta > jump && turn < delta / 2.0 {
                            jumps[j].push(f);
                        }
                    }
                }
            }
            assert!(flips.iter().sum::<usize>() > 20, "{flips:?}");
            assert!(jumps.iter().map(Vec::len).sum::<usize>() > 10, "{jumps:?}");
            for starts in [vec![0, rows.len()], vec![0, 1, 7, 8, 300, 301, 599, rows.len()]] {
                let (mut got_flips, mut got_jumps) =
                    (vec![0; skel.len()], vec![Vec::new(); skel.len()]);
                for piece in starts.windows(2) {
                    let p = channel_piece(&ch, &names, &o, piece[0]..piece[1], |f| &rows[f][..]);
                    for j in 0..skel.len() {
                        got_flips[j] += p.flips[j];
                        assert_eq!(p.jumps[j], p.euler[j].len());
                        got_jumps[j].extend(p.euler[j].iter().map(|e| e.frames.1));
                    }
                }
                assert_eq!(got_flips, flips, "jump {jump} pieces {starts:?}");
                assert_eq!(got_jumps, jumps, "jump {jump} pieces {starts:?}");
            }
        }
    }
}
