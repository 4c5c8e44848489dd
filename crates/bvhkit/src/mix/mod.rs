//! Blend and mix: operations on two or more clips of one skeleton.
//!
//! - [`concat`](mod@concat): clips one after another, each continuing from where the
//!   one before ends (moved on the ground and turned about the up axis, the
//!   heading from the travel over a gait cycle), with an optional
//!   crossfade whose seam is searched for the gait phase.
//! - [`blend`]: two clips pose by pose with a weight (constant or a curve
//!   over time, [`weights::Weight`]), optionally only on a subtree (masked
//!   blend).
//! - [`layer`]: an additive layer: a clip's change since its reference pose
//!   added on top of another clip.
//! - [`looping`]: a clip made to loop, its end crossfaded into its start,
//!   with the travel per cycle kept or removed.
//!
//! Everything is built on the edit transforms: local rotations are read
//! and written by [`JointChannels`] (the core's
//! [`rotation`](crate::rotation) rules), interpolated by
//! [`resample::slerp`], clips of another
//! frame rate resampled by [`resample::to_fps`],
//! the travel carried by [`root::carrier`], the
//! up axis found by [`detect_up`]. The
//! per-frame work ([`Mixer`]) runs on caller-owned buffers.
//!
//! Clips are "of the same skeleton" when they have the same joints (names,
//! kinds) in the same tree ([`check_same_skeleton`]); offsets and channel
//! layouts may differ. The output has the first clip's skeleton: the
//! other clips' motion is converted into its channel layout first
//! ([`conform`]). Position channels are read as
//! [`PositionChannels::Replace`](crate::PositionChannels::Replace).
//!
//! `docs/editing.md` in the repository gives the semantics ("Blend and
//! mix").
//!
//! # Example
//! ```
//! use bvhkit::Bvh;
//! use bvhkit::mix::{blend, weights::Weight};
//! let a = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
//!     End Site { OFFSET 0 10 0 } }
//!     MOTION Frames: 2 Frame Time: 0.1
//!     0 0 0
//!     0 0 0")?;
//! let b = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
//!     End Site { OFFSET 0 10 0 } }
//!     MOTION Frames: 2 Frame Time: 0.1
//!     40 0 0
//!     80 0 0")?;
//! let (out, _) = blend::blend(&a, &b, &blend::BlendOptions { weight: Weight::Constant(0.25), joints: None })?;
//! assert!((out.motion().frame(1)[0] - 20.0).abs() < 1e-9);
//! # Ok::<(), bvhkit::Error>(())
//! ```
//!
//! # Implementation notes
//!
//! `check_same_skeleton` (names the first difference), `conform` (another clip
//! into the first's channel layout), `prepare` (+ resampling to the first
//! clip's rate, with a `Prepared` report), `Span` (frames or seconds),
//! `align`/`GroundMove` (the carrier moved on the ground and turned about up,
//! through `edit::root::move_carrier`, which `root::to_origin` shares; the
//! moved clip's first angles chosen closest to the frame it continues, so
//! its carrier's Euler angles go on from the output's instead of flipping
//! to another triple of the same rotation at the seam),
//! `fit_ground_move` (the move that continues one clip with another or
//! closes a loop: the turn from `cycle_travel`, the travel over a gait
//! cycle found by `pose_features`, else from the hip and shoulder lines
//! summed over the overlap when they are steady; the shift from the mean
//! of the planted feet or the carrier), `feet` (the feet planted across a
//! concat's seam and their lock over the crossfade by two-bone IK).

use std::fmt;
use std::str::FromStr;

use glam::{DAffine3, DQuat, DVec3};

use crate::bvh::Bvh;
use crate::edit::axes::{SignedAxis, detect_up};
use crate::edit::root::{self, Setup, horizontal, move_carrier_after, yaw_between};
use crate::edit::{JointChannels, resample, same_rate};
use crate::error::{Error, Result, num};
use crate::motion::Motion;
use crate::skeleton::{JointId, JointKind, Skeleton};

pub mod blend;
pub mod concat;
mod feet;
pub mod layer;
pub mod looping;
mod mixer;
pub mod weights;

pub use mixer::{Mixer, Reference};

/// A length of time: frames, or seconds (`12`, `0.4s` in text).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Span {
    /// A number of frames.
    Frames(usize),
    /// A number of seconds, rounded to the nearest whole frame.
    Seconds(f64),
}

impl Span {
    /// The number of frames at `frame_time` seconds per frame.
    ///
    /// # Example
    /// ```
    /// use bvhkit::mix::Span;
    /// assert_eq!(Span::Seconds(0.4).frames(1.0 / 30.0), 12);
    /// assert_eq!(Span::Frames(7).frames(0.1), 7);
    /// ```
    ///
    /// A span of seconds too long for a count of frames (`1e308s`, or any
    /// span at an extreme `Frame Time`) saturates at [`Span::MAX_FRAMES`],
    /// longer than any clip, so a check against a clip's length refuses it.
    pub fn frames(self, frame_time: f64) -> usize {
        match self {
            Span::Frames(n) => n,
            Span::Seconds(s) => {
                let n = (s / frame_time).round();
                // NaN (an undefined ratio) is no length; +inf saturates.
                if n > 0.0 { n.min(Span::MAX_FRAMES as f64) as usize } else { 0 }
            }
        }
    }

    /// The most frames [`Span::frames`] gives for a span of seconds (10^15,
    /// more than any clip holds, and twice it still fits in a `usize`).
    pub const MAX_FRAMES: usize = 1_000_000_000_000_000;

    /// The span as given with its length in frames at `frame_time`, for
    /// messages: `12 frames`, `0.4s = 12 frames`, `1e300s = 1.000e301 frames`.
    ///
    /// # Example
    /// ```
    /// use bvhkit::mix::Span;
    /// assert_eq!(Span::Seconds(0.4).describe(1.0 / 30.0), "0.4s = 12 frames");
    /// assert_eq!(Span::Seconds(1e300).describe(0.1), "1e300s = 1.000e301 frames");
    /// assert_eq!(Span::Seconds(1e308).describe(0.01), "1e308s = about 1e310 frames");
    /// ```
    pub fn describe(self, frame_time: f64) -> String {
        match self {
            Span::Frames(n) => format!("{n} frames"),
            Span::Seconds(s) => {
                let n = (s / frame_time).round();
                if n < Span::MAX_FRAMES as f64 {
                    format!("{}s = {n} frames", num(s))
                } else if (s / frame_time).is_finite() {
                    format!("{}s = {:.3e} frames", num(s), s / frame_time)
                } else {
                    // Beyond f64: the power of ten alone.
                    format!("{}s = about 1e{:.0} frames", num(s), s.log10() - frame_time.log10())
                }
            }
        }
    }
}

impl Default for Span {
    fn default() -> Span {
        Span::Frames(0)
    }
}

impl FromStr for Span {
    type Err = Error;

    /// `12` (frames) or `0.4s` (seconds).
    fn from_str(s: &str) -> Result<Span> {
        let s = s.trim();
        let bad = || {
            Error::invalid(format!(
                "expected a number of frames (12) or seconds (0.4s), found {s:?}"
            ))
        };
        if let Some(secs) = s.strip_suffix('s') {
            let v: f64 = secs.trim().parse().map_err(|_| bad())?;
            if v.is_finite() && v >= 0.0 { Ok(Span::Seconds(v)) } else { Err(bad()) }
        } else {
            s.parse::<usize>().map(Span::Frames).map_err(|_| bad())
        }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Span::Frames(n) => write!(f, "{n}"),
            Span::Seconds(s) => write!(f, "{s}s"),
        }
    }
}

fn describe(s: &Skeleton, i: usize) -> String {
    let j = &s.joints()[i];
    let parent = j.parent().map(|p| s.joint(p).name().to_string());
    match (j.kind(), parent) {
        (JointKind::EndSite, Some(p)) => format!("an End Site under {p:?}"),
        (_, Some(p)) => format!("joint {:?} under {p:?}", j.name()),
        (_, None) => format!("root {:?}", j.name()),
    }
}

/// Checks that two skeletons have the same joints (names and kinds) in the
/// same tree, in the same file order; offsets and channels may differ.
///
/// # Errors
/// Naming the first difference, as `first`/`second` call the clips.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// let a = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 0 JOINT Spine { OFFSET 0 1 0 CHANNELS 0 } } MOTION Frames: 0 Frame Time: 0.1")?;
/// let b = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 0 JOINT Chest { OFFSET 0 1 0 CHANNELS 0 } } MOTION Frames: 0 Frame Time: 0.1")?;
/// let e = bvhkit::mix::check_same_skeleton(a.skeleton(), b.skeleton(), "a.bvh", "b.bvh").unwrap_err();
/// assert_eq!(e.to_string(), "the skeletons differ at joint 1: joint \"Spine\" under \"Hips\" in a.bvh, joint \"Chest\" under \"Hips\" in b.bvh");
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn check_same_skeleton(a: &Skeleton, b: &Skeleton, first: &str, second: &str) -> Result<()> {
    let n = a.len().min(b.len());
    for i in 0..n {
        let (ja, jb) = (&a.joints()[i], &b.joints()[i]);
        let same_parent = match (ja.parent(), jb.parent()) {
            (Some(p), Some(q)) => p == q,
            (None, None) => true,
            _ => false,
        };
        if ja.kind() != jb.kind() || ja.name() != jb.name() || !same_parent {
            return Err(Error::invalid(format!(
                "the skeletons differ at joint {i}: {} in {first}, {} in {second}",
                describe(a, i),
                describe(b, i)
            )));
        }
    }
    if a.len() != b.len() {
        let (longer, name) = if a.len() > b.len() { (a, first) } else { (b, second) };
        return Err(Error::invalid(format!(
            "the skeletons differ at joint {n}: {first} has {} joints, {second} has {}; {} is only in {name}",
            a.len(),
            b.len(),
            describe(longer, n)
        )));
    }
    Ok(())
}

/// `bvh`'s motion in the channel layout of `to` (a skeleton with the same
/// joints, [`check_same_skeleton`]): joints whose channel lists are the
/// same are copied bit for bit; the others are read as local rotations
/// and translations from their own channels and written into `to`'s
/// (Euler angles in `to`'s order, closest to the previous frame). The
/// result has `to` as its skeleton and `bvh`'s frame time. `None` when
/// every channel list is the same already (nothing to convert).
///
/// # Errors
/// When the skeletons differ, or a joint's channels in `to` cannot hold
/// its motion (fewer rotation channels, or a position channel missing
/// where the motion moves off the `OFFSET`), naming the joint and frame.
pub fn conform(bvh: &Bvh, to: &Skeleton) -> Result<Option<Bvh>> {
    let from = bvh.skeleton();
    check_same_skeleton(to, from, "the first clip", "the other clip")?;
    let differ: Vec<usize> = (0..from.len())
        .filter(|&i| from.joints()[i].channels() != to.joints()[i].channels())
        .collect();
    if differ.is_empty() {
        return Ok(None);
    }
    let src: Vec<JointChannels> = from.joints().iter().map(JointChannels::of).collect();
    let dst: Vec<JointChannels> = to.joints().iter().map(JointChannels::of).collect();
    let tol = 1e-9 * crate::edit::rest_height(from).max(1.0);
    let mode = crate::PositionChannels::Replace;
    let m = bvh.motion();
    let nc = to.n_channels();
    let mut values = vec![0.0; m.n_frames() * nc];
    for f in 0..m.n_frames() {
        let input = m.frame(f);
        let (done, rest) = values.split_at_mut(f * nc);
        let out = &mut rest[..nc];
        for i in 0..from.len() {
            let (s, d) = (&src[i], &dst[i]);
            let (ja, jb) = (&from.joints()[i], &to.joints()[i]);
            if !differ.contains(&i) {
                out[jb.channel_range()].copy_from_slice(&input[ja.channel_range()]);
                continue;
            }
            let near = (f > 0).then(|| d.angles(&done[(f - 1) * nc..]));
            let rot_ok = d.write_rotation(s.rotation(input), near, out)
                || s.rotation(input).abs_diff_eq(DQuat::IDENTITY, 1e-12);
            let miss = d.write_translation(s.translation(input, mode), mode, out);
            if !rot_ok || miss > tol {
                return Err(Error::invalid(format!(
                    "joint {:?} cannot be converted from channels {} to {} (frame {f}): its motion does not fit",
                    ja.name(),
                    channel_list(ja.channels()),
                    channel_list(jb.channels()),
                )));
            }
        }
    }
    let motion = Motion::with_frames(m.frame_time(), m.n_frames(), nc, values)?;
    Ok(Some(Bvh::new(to.clone(), motion)?))
}

fn channel_list(c: &[crate::Channel]) -> String {
    if c.is_empty() {
        return "(none)".to_string();
    }
    c.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" ")
}

/// What was done to a clip before it was mixed with the first one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prepared {
    /// Resampled from this rate to the first clip's (frames per second),
    /// when the rates differ ([`same_rate`]).
    pub resampled_from: Option<f64>,
    /// Frames before resampling.
    pub frames_before: usize,
    /// Frames after resampling.
    pub frames_after: usize,
    /// Whether its channels were converted into the first clip's layout.
    pub converted: bool,
}

impl fmt::Display for Prepared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(r) = self.resampled_from {
            parts.push(format!(
                "resampled from {r:.6} fps ({} frames) to the first clip's rate ({} frames)",
                self.frames_before, self.frames_after
            ));
        }
        if self.converted {
            parts.push("channels converted to the first clip's layout".to_string());
        }
        f.write_str(&parts.join("; "))
    }
}

/// `b` made ready to mix with `a`: the same skeleton checked, resampled to
/// `a`'s rate ([`resample::to_fps`]) when the rates differ, and converted
/// into `a`'s channel layout ([`conform`]). The result has `a`'s skeleton
/// and frame time.
///
/// # Errors
/// When the skeletons differ, the channels cannot be converted, or the
/// resampled clip would be too large ([`resample::output_frames`]).
pub fn prepare(a: &Bvh, b: &Bvh, a_name: &str, b_name: &str) -> Result<(Bvh, Prepared)> {
    check_same_skeleton(a.skeleton(), b.skeleton(), a_name, b_name)?;
    let mut report = Prepared {
        frames_before: b.motion().n_frames(),
        frames_after: b.motion().n_frames(),
        ..Prepared::default()
    };
    let (fa, fb) = (a.motion().fps(), b.motion().fps());
    let mut b = if same_rate(fa, fb) {
        b.clone()
    } else {
        // Extreme Frame Times (1e300, 1e-300) are refused before anything
        // is allocated, naming both files' Frame Times.
        let r = resample::to_fps(b, fa).map_err(|e| {
            Error::invalid(format!(
                "{b_name} (Frame Time {}) cannot be resampled to the rate of {a_name} \
                 (Frame Time {}): {}",
                num(b.motion().frame_time()),
                num(a.motion().frame_time()),
                e.message()
            ))
        })?;
        report.resampled_from = Some(fb);
        report.frames_after = r.motion().n_frames();
        r
    };
    if let Some(c) = conform(&b, a.skeleton())
        .map_err(|e| Error::invalid(format!("{b_name}: {}", e.message())))?
    {
        b = c;
        report.converted = true;
    }
    let ft = a.motion().frame_time();
    b.motion_mut().set_frame_time(ft)?;
    Ok((b, report))
}

/// The up axis for alignments: `up`, else the one [`detect_up`] finds in
/// `bvh`, else Y. Returns the axis and whether it was detected or given
/// (`false`: Y by default).
pub fn up_axis(bvh: &Bvh, up: Option<SignedAxis>) -> (SignedAxis, bool) {
    match up.or_else(|| detect_up(bvh).axis) {
        Some(a) => (a, true),
        None => (SignedAxis::PosY, false),
    }
}

/// A move on the ground: a turn about the up axis and a horizontal shift.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroundMove {
    /// The world transform applied to the carrier (and so to everything
    /// below it).
    pub transform: DAffine3,
    /// The horizontal shift of the carrier, in file units.
    pub shift: DVec3,
    /// The turn about the up axis, in degrees (positive: counterclockwise
    /// seen from above).
    pub turn_deg: f64,
}

/// The ground move that puts clip `b`'s carrier, in the frame whose world
/// transforms are `wb`, where clip `a`'s is in the frame `wa` (horizontally;
/// heights are kept) and turns `b` about the up axis so that its facing
/// there matches `a`'s. Both clips have the same skeleton and carrier.
pub(crate) fn ground_move(
    a: &Setup,
    wa: &[DAffine3],
    b: &Setup,
    wb: &[DAffine3],
    up: SignedAxis,
) -> GroundMove {
    let c = a.carrier;
    let yaw = yaw_between(b.facing(wb, up), a.facing(wa, up), up.vector());
    let pa = horizontal(wa[c].translation, up);
    let pb = horizontal(wb[b.carrier].translation, up);
    let transform = DAffine3::from_translation(pa)
        * DAffine3::from_quat(DQuat::from_axis_angle(up.vector(), yaw))
        * DAffine3::from_translation(-pb);
    GroundMove { transform, shift: pa - pb, turn_deg: yaw.to_degrees() }
}

/// Whether and how [`fit_ground_move`] takes the turn from the travel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum TravelHeading {
    /// From the hip and shoulder lines only.
    None,
    /// `b` continues `a`: its heading at its start turned onto `a`'s at its end.
    Continue,
    /// `a` is `b` (a loop of `len` frames): the turn between the headings
    /// at its start and at its end, scaled to one cycle.
    Cycle(usize),
}

/// The left-to-right lines of one frame that [`fit_ground_move`] averages:
/// the sum over the left/right pairs at the top of their chains (the hip
/// and shoulder lines; the limbs below them move with the pose, not with
/// the heading) of left minus right, on the ground; all pairs when none
/// is at the top.
fn side_line(setup: &Setup, world: &[DAffine3], up: SignedAxis) -> DVec3 {
    let pairs = if setup.top_pairs.is_empty() { &setup.pairs } else { &setup.top_pairs };
    let v: DVec3 = pairs.iter().map(|&(l, r)| world[l].translation - world[r].translation).sum();
    horizontal(v, up)
}

/// Degrees within which the heading from the travel must agree with the
/// heading from the hip and shoulder lines for a concat to take it.
const TRAVEL_AGREES: f64 = 60.0;

/// How steady the hip and shoulder lines must be over both overlaps for a
/// concat without a gait cycle to take its turn from them: the length of
/// their sum over the sum of their lengths (1: one direction throughout;
/// 0.95: two directions about 18 degrees either side of their mean, or
/// directions spread evenly about 32 degrees either side). Bandai Namco's
/// kick turns its lines from 47 to -93 degrees in the first half second
/// of a kick (0.87 over that half second).
const LINES_STEADY: f64 = 0.95;

/// The ground move that continues clip `a` with clip `b`, from frames
/// `fa ..` of `a` and `fb ..` of `b` (`len` frames each, at least one,
/// frame `fb + k` of `b` taking the place of frame `fa + k` of `a`, as in a
/// crossfade):
/// - the turn about the up axis: with `travel`, the one between the
///   directions of travel at the end of `a` and at the start of `b` over a
///   whole gait cycle each ([`cycle_travel`]) when both clips travel at
///   least a quarter of the skeleton's height (from a pose to the same pose
///   one cycle on, the sway of the gait cancels, which it does not over
///   part of a step or between frames of different gait phases);
///   otherwise the one between the hip and shoulder lines ([`side_line`])
///   summed over the `len` frames of each; but when a continuation
///   ([`TravelHeading::Continue`]) has no gait cycle and those lines swing
///   over either overlap ([`LINES_STEADY`]: a kick or a dance turns the
///   hips and shoulders), no turn: the clip keeps its own heading;
/// - the shift that puts the mean of `b`'s pivot positions over its
///   frames, turned, on the mean of `a`'s (over a single frame: exactly),
///   the pivot being the mean of the `anchor` joints (the feet planted
///   through both overlaps, so that they land on each other) or, without
///   them, the carrier.
///
/// Also returns the mean of `b`'s pivot positions on the ground (the
/// pivot of the turn).
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_ground_move(
    a: &Setup,
    am: &Motion,
    fa: usize,
    b: &Setup,
    bm: &Motion,
    fb: usize,
    len: usize,
    up: SignedAxis,
    travel: TravelHeading,
    anchor: &[usize],
) -> (GroundMove, DVec3) {
    let n = a.fk.len();
    let mut w = vec![DAffine3::IDENTITY; n];
    let (mut ca, mut cb) = (DVec3::ZERO, DVec3::ZERO);
    let (mut la, mut lb) = (DVec3::ZERO, DVec3::ZERO);
    // The lines' lengths summed: with the length of their sum, how steady
    // their direction is over the overlap.
    let (mut sa, mut sb) = (0.0, 0.0);
    let pivot = |s: &Setup, w: &[DAffine3]| {
        if anchor.is_empty() {
            horizontal(w[s.carrier].translation, up)
        } else {
            let sum: DVec3 = anchor.iter().map(|&j| w[j].translation).sum();
            horizontal(sum / anchor.len() as f64, up)
        }
    };
    for k in 0..len.max(1) {
        a.fk.world(am.frame(fa + k), &mut w);
        ca += pivot(a, &w);
        let l = side_line(a, &w, up);
        (la, sa) = (la + l, sa + l.length());
        b.fk.world(bm.frame(fb + k), &mut w);
        cb += pivot(b, &w);
        let l = side_line(b, &w, up);
        (lb, sb) = (lb + l, sb + l.length());
    }
    let frames = len.max(1) as f64;
    let (ca, cb) = (ca / frames, cb / frames);
    let u = up.vector();
    let lines = (travel != TravelHeading::None).then(|| {
        let (va, ta) = cycle_travel(a, am, true, up)?;
        let (vb, tb) = cycle_travel(b, bm, false, up)?;
        let yaw = yaw_between(vb, va, u);
        match travel {
            // `a` and `b` are one clip (`b` its tail, laid back onto its
            // start): `yaw` turns its start's heading onto its end's; the
            // way back, at the rate the clip turns, over one cycle.
            TravelHeading::Cycle(len) => {
                let apart = ta - tb;
                (apart >= 0.25 * len as f64).then(|| -yaw * len as f64 / apart)
            }
            _ => Some(yaw),
        }
    });
    let tiny = |v: DVec3, s: &Setup| v.length().is_nan() || v.length() <= 1e-9 * s.height * frames;
    let line_yaw = (!tiny(la, a) && !tiny(lb, b)).then(|| yaw_between(lb, la, u));
    // The travel turns a clip only when both clips travel the same way
    // relative to their bodies: a walk joined to its reverse (walking
    // backwards) travels the other way, and turning it by the travel would
    // spin the figure half round inside the crossfade; the hip and shoulder
    // lines over the overlap decide then.
    let agrees = |t: f64, l: f64| {
        let d = (t - l).rem_euclid(std::f64::consts::TAU);
        d.min(std::f64::consts::TAU - d) <= TRAVEL_AGREES.to_radians()
    };
    let travel_yaw = match (lines.flatten(), line_yaw, travel) {
        (Some(t), Some(l), TravelHeading::Continue) if !agrees(t, l) => None,
        (t, ..) => t,
    };
    // A clip that does not walk (a kick, a dance) turns its hips and
    // shoulders with the motion: when the lines of either overlap swing
    // (their sum shorter than `LINES_STEADY` of their summed lengths), they
    // give no heading, and a continuation keeps its own heading.
    let steady = la.length() >= LINES_STEADY * sa && lb.length() >= LINES_STEADY * sb;
    let yaw = if let Some(yaw) = travel_yaw {
        yaw
    } else if travel == TravelHeading::Continue && !steady {
        0.0
    } else if let Some(yaw) = line_yaw {
        yaw
    } else {
        let wa = {
            a.fk.world(am.frame(fa), &mut w);
            a.facing(&w, up)
        };
        b.fk.world(bm.frame(fb), &mut w);
        yaw_between(b.facing(&w, up), wa, u)
    };
    let transform = DAffine3::from_translation(ca)
        * DAffine3::from_quat(DQuat::from_axis_angle(u, yaw))
        * DAffine3::from_translation(-cb);
    (GroundMove { transform, shift: ca - cb, turn_deg: yaw.to_degrees() }, cb)
}

/// Per frame of `frames`, the pose as the search for the gait phase compares it: every
/// joint's position from the carrier's point on the ground, turned about
/// the up axis so that the figure faces one way (joint-major per frame).
pub(crate) fn pose_features(
    setup: &Setup,
    m: &Motion,
    frames: std::ops::Range<usize>,
    up: SignedAxis,
) -> Vec<DVec3> {
    let n = setup.fk.len();
    let u = up.vector();
    let (e1, e2) = u.any_orthonormal_pair();
    let mut w = vec![DAffine3::IDENTITY; n];
    let mut out = Vec::with_capacity(frames.len() * n);
    for f in frames {
        setup.fk.world(m.frame(f), &mut w);
        let facing = setup.facing(&w, up);
        let turn = DQuat::from_axis_angle(u, -facing.dot(e2).atan2(facing.dot(e1)));
        let base = horizontal(w[setup.carrier].translation, up);
        out.extend(w.iter().map(|x| turn * (x.translation - base)));
    }
    out
}

/// The carrier's travel over one gait cycle at the end of `m` (`end`) or
/// at its start, on the ground: from frame `f` to frame `f + T` summed
/// over the anchors `f` of the first (or last) quarter second, `T` the
/// lag between 0.5 s and 1.6 s at which the poses ([`pose_features`])
/// come back most alike (one cycle of a walk). Over a cycle the sway
/// cancels. Also returns the frame at the middle of that travel. `None`
/// when the clip is too short, when no lag brings the
/// poses back within 10% of the rest height (no cycle), or when the travel
/// is shorter than a quarter of the rest height (no clear heading).
fn cycle_travel(setup: &Setup, m: &Motion, end: bool, up: SignedAxis) -> Option<(DVec3, f64)> {
    let n = m.n_frames();
    let fps = 1.0 / m.frame_time();
    let (lo, hi) = ((0.5 * fps).round() as usize, (1.6 * fps).round() as usize);
    let anchors = ((0.25 * fps).round() as usize).max(1);
    let hi = hi.min(n.checked_sub(anchors)?);
    if lo < 1 || hi < lo {
        return None;
    }
    let span = hi + anchors;
    let first = if end { n - span } else { 0 };
    let feat = pose_features(setup, m, first..first + span, up);
    let nj = setup.fk.len();
    // Window-relative: the anchors and their frames `T` later (at the
    // start) or earlier (at the end).
    let pair = |k: usize, t: usize| if end { (span - 1 - k, span - 1 - k - t) } else { (k, k + t) };
    let mut best = (f64::INFINITY, 0);
    for t in lo..=hi {
        let mut cost = 0.0;
        for k in 0..anchors {
            let (x, y) = pair(k, t);
            let (x, y) = (&feat[x * nj..][..nj], &feat[y * nj..][..nj]);
            cost += x.iter().zip(y).map(|(p, q)| (*p - *q).length_squared()).sum::<f64>();
        }
        if cost < best.0 {
            best = (cost, t);
        }
    }
    // A cycle: the poses come back within 10% of the height (root mean
    // square over the joints); a kick or a dance has none.
    let rms = (best.0 / (anchors * nj) as f64).sqrt();
    if rms.is_nan() || rms > 0.1 * setup.height {
        return None;
    }
    let t = best.1;
    let mut w = vec![DAffine3::IDENTITY; nj];
    let mut at = |f: usize| {
        setup.fk.world(m.frame(first + f), &mut w);
        horizontal(w[setup.carrier].translation, up)
    };
    let mut d = DVec3::ZERO;
    for k in 0..anchors {
        let (x, y) = pair(k, t);
        // From the earlier frame to the later one.
        d += if end { at(x) - at(y) } else { at(y) - at(x) };
    }
    let d = d / anchors as f64;
    // The frame at the middle of the displacements.
    let centre = first as f64
        + if end {
            (span - 1) as f64 - (anchors - 1) as f64 / 2.0 - t as f64 / 2.0
        } else {
            (anchors - 1) as f64 / 2.0 + t as f64 / 2.0
        };
    (d.is_finite() && d.length() >= 0.25 * setup.height).then_some((d, centre))
}

/// Clip `b` moved on the ground so that its frame `fb` starts where `a`'s
/// frame `fa` is (carrier position on the ground, and facing), moving the
/// carrier of `a` ([`root::carrier`]). `b` must be [`prepare`]d (same
/// skeleton and layout). Only the carrier's channels change.
///
/// # Errors
/// When the carrier's channels cannot hold the move (for example a
/// carrier without rotation channels when a turn is needed).
pub fn align(a: &Bvh, fa: usize, b: &Bvh, fb: usize, up: SignedAxis) -> Result<(Bvh, GroundMove)> {
    let carrier = root::carrier(a).ok_or_else(|| Error::invalid("the skeleton has no joints"))?;
    let sa = Setup::with_carrier(a, carrier)?;
    let sb = Setup::with_carrier(b, carrier)?;
    let n = a.skeleton().len();
    let mut wa = vec![DAffine3::IDENTITY; n];
    let mut wb = vec![DAffine3::IDENTITY; n];
    sa.fk.world(a.motion().frame(fa), &mut wa);
    sb.fk.world(b.motion().frame(fb), &mut wb);
    let g = ground_move(&sa, &wa, &sb, &wb, up);
    // `b`'s first frame continues `a`'s frame `fa` in its angles too.
    let before = (fb == 0).then(|| a.motion().frame(fa));
    let moved = move_carrier_after(b, &sb, before, |_, _| g.transform).map_err(|e| {
        Error::invalid(format!("{} (keep the clip where it is instead)", e.message()))
    })?;
    Ok((moved, g))
}

/// A subtree root by name.
///
/// # Errors
/// When no joint (End Sites excluded) has that name.
pub fn find_joint(skeleton: &Skeleton, name: &str) -> Result<JointId> {
    skeleton.find(name).filter(|&id| !skeleton.joint(id).is_end_site()).ok_or_else(|| {
        let names: Vec<&str> = skeleton
            .joints()
            .iter()
            .filter(|j| !j.is_end_site())
            .take(12)
            .map(|j| j.name())
            .collect();
        let more = if skeleton.len() > names.len() { ", ..." } else { "" };
        Error::invalid(format!("no joint named {name:?} (joints: {}{more})", names.join(", ")))
    })
}

/// Frame `k` of `m`, or its last frame when `k` is past the end (the
/// shorter clip holds its last frame).
#[inline]
pub(crate) fn held(m: &Motion, k: usize) -> &[f64] {
    m.frame(k.min(m.n_frames() - 1))
}

/// An error when `bvh` has no frames.
pub(crate) fn need_frames(bvh: &Bvh, name: &str) -> Result<()> {
    if bvh.motion().n_frames() == 0 {
        return Err(Error::invalid(format!("{name} has no frames")));
    }
    Ok(())
}

/// The per-frame loop of [`blend::blend`] and [`layer::layer`]: `n` output
/// frames of `nc` channels, frame `k` made by `step(k, near, out)` with
/// `near` the previous output frame (for the first frame, `first`), which
/// returns whether its rotations were written exactly. Returns the values
/// and the number of inexact frames.
pub(crate) fn mix_frames(
    n: usize,
    nc: usize,
    first: &[f64],
    mut step: impl FnMut(usize, &[f64], &mut [f64]) -> bool,
) -> (Vec<f64>, usize) {
    let mut values = vec![0.0; n * nc];
    let mut inexact = 0;
    if nc > 0 {
        for k in 0..n {
            let (done, rest) = values.split_at_mut(k * nc);
            let near = if k > 0 { &done[(k - 1) * nc..] } else { first };
            if !step(k, near, &mut rest[..nc]) {
                inexact += 1;
            }
        }
    }
    (values, inexact)
}
