//! Make a clip loop: its end crossfaded into its start.
//!
//! With a search span ([`LoopOptions::search`], default none), up to that
//! many frames are first dropped from the clip's start and from its end,
//! chosen so that the `N` frames at each end that the crossfade lays onto
//! each other are most alike (the search of a concat's seam,
//! [`super::concat`]: every joint's position from the carrier, facing one
//! way, summed over the overlap, and their frame-to-frame steps times `N`);
//! what follows is about the clip so cut.
//!
//! With `n` frames and a crossfade of `N` frames (`1 <= N <= n / 2`), the
//! loop is one cycle of `L = n - N` frames: frame `L + k` of the clip is
//! taken to be frame `k` of the next cycle. The cycle's ground move `D`
//! (a turn about the up axis and a horizontal shift, [`super::GroundMove`])
//! is measured, and the tail (frames `L ..`) is moved back by `D⁻¹` so that
//! it stands where the start stands:
//! - the turn: from the travel when the clip walks (its direction over a
//!   whole gait cycle at the start and at the end, where the sway of the
//!   gait cancels, the turn between them scaled to one cycle), else from
//!   the hip and shoulder lines summed over frames `0 .. N` and `L .. n`;
//!   so a loop of a straight walk does not turn (single frames' pelvis
//!   lines made it turn -10 or +15 degrees per cycle);
//! - the shift: the carrier's mean over those frames laid onto each other;
//! - but when feet are planted through both overlaps (in contact in every
//!   frame of `L .. n` and of `0 .. N`, `mix::feet::planted_legs`),
//!   their mean is laid onto each other instead of the carrier's, and when
//!   two are, the line between them gives the turn
//!   (`mix::feet::stance_yaw`): so they land on each other (the hip and
//!   shoulder lines turned Bandai Namco's kick 8.8 degrees where its feet
//!   turn 29, and its feet landed 15 to 27 cm apart);
//! - and a carrier that never moves on the ground (the same horizontal
//!   position in every frame, within 1e-9 of the height: Azure Kinect's
//!   root, whose position channels are 0) has no travel: the feet are not
//!   laid onto each other (nor locked: where the clip's ends have them 47
//!   cm apart, the lock straightened the knee, a 480 m/s² spike), the shift
//!   is 0 and the turn is about the carrier, so the root stays in place
//!   (the feet pulled Azure Kinect's root 47.5 units per cycle at
//!   `--crossfade 5`).
//!
//! Output frame `k`:
//! - `k < N`: [`Mixer::blend`] of the moved-back tail frame `L + k` and
//!   frame `k` at the weight `seam_weight(k, N)` (per-joint SLERP,
//!   position channels linear): 0 at `k = 0`, so output frame 0 is the
//!   moved-back frame `L` itself, rising as `10x³ - 15x⁴ + 6x⁵` (no speed
//!   and no acceleration at either end);
//! - `N <= k < L`: frame `k`, bit for bit.
//!
//! The feet are then locked through the crossfade frames by IK
//! (`mix::feet::lock_crossfade`, the thigh, knee and ankle rotation
//! channels turned): a planted foot as concat's crossfade does (the
//! contact point on the mix of its positions in the two frames mixed), a
//! foot in contact on both sides in some crossfade frames only
//! (`mix::feet::contact_legs`: tail frame `L + k` and frame `k`) pinned on
//! one place per span of them, ramped in and out over 0.1 s, and a foot
//! never in contact on both sides but in contact on one side at that
//! side's end of the crossfade (planted through the tail, or from some
//! frame of the start on) held where it stands with that side's weight
//! (`1 - w` for the tail's, `w` for the start's), handed over continuously
//! to the other side's foot; where a held foot would move more than 5 cm
//! on the ground, it takes a step (lifted along an eased arc) instead;
//! all before the travel is removed (with `Travel::Remove` the lock moves
//! with the frame).
//!
//! So the last frame (`L - 1`) flows into the first exactly as it flowed
//! into frame `L` in the clip, and on at the tail's velocity: the seam
//! keeps the velocity as well as the pose (the smoothstep crossfade that
//! started at `smoothstep(1 / (N + 1))` changed the velocity at the seam 3
//! to 11 times the clip's typical change).
//!
//! Travel:
//! - [`Travel::Keep`] (default): a walk keeps walking. The cycle's
//!   displacement and turn stay in the motion (played again with the
//!   cycle's move `D` applied, as an engine does with root motion, the
//!   seam is continuous).
//! - [`Travel::Remove`]: in place. Frame `k` is moved on the ground by
//!   `E(k / L) = T(p₀) · R(-s·θ) · T(-(p₀ + s·(p_L - p₀)))` (`p` the
//!   carrier's ground positions at frames 0 and `L`, `θ` the cycle's turn):
//!   the identity at the start and `D⁻¹` at `L`, so the travel and the turn
//!   are removed at a constant rate while the sway within the cycle is
//!   kept, and the clip played again as it is loops seamlessly.
//!
//! Only the carrier's channels are moved; every frame outside the
//! crossfade keeps every other channel bit for bit.
//!
//! A clip of 1 frame cannot loop (the crossfade needs a frame at each
//! end); the error says so rather than asking for a longer crossfade.

use std::fmt;

use glam::{DAffine3, DQuat};

use super::concat::search_seam;
use super::feet;
use super::weights::Curve;
use super::{GroundMove, Mixer, Span, TravelHeading, fit_ground_move, need_frames, up_axis};
use crate::bvh::Bvh;
use crate::edit::axes::SignedAxis;
use crate::edit::root::{Setup, horizontal, move_carrier};
use crate::error::{Error, Result};
use crate::motion::Motion;

/// What happens to the travel of a looped clip.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Travel {
    /// The displacement and turn per cycle stay in the motion.
    #[default]
    Keep,
    /// Removed at a constant rate: the loop stays in place.
    Remove,
}

/// Options of [`make_loop`].
#[derive(Clone, Debug, PartialEq)]
pub struct LoopOptions {
    /// The crossfade (at least one frame, at most half the clip).
    pub crossfade: Span,
    /// The crossfade's weight curve (smoothstep by default).
    pub curve: Curve,
    /// How far the loop's ends may move to make its seam look right: up to
    /// this many frames are dropped from the clip's start and from its end,
    /// chosen so that the frames crossfaded at each end are most alike
    /// (poses and velocities, as [`concat`](super::concat::ConcatOptions::search)
    /// searches its seams). Default 0: the loop keeps every frame.
    pub search: Span,
    /// Keep or remove the travel.
    pub travel: Travel,
    /// The up axis; `None`: detected ([`super::up_axis`]), Y when none.
    pub up: Option<SignedAxis>,
}

impl Default for LoopOptions {
    fn default() -> LoopOptions {
        LoopOptions {
            crossfade: Span::Seconds(0.25),
            curve: Curve::Smoothstep,
            search: Span::Frames(0),
            travel: Travel::Keep,
            up: None,
        }
    }
}

/// What [`make_loop`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopReport {
    /// Crossfade frames.
    pub crossfade: usize,
    /// Frames of the loop (the cycle).
    pub frames: usize,
    /// Frames dropped by the search ([`LoopOptions::search`]) from the
    /// clip's start and from its end: output frame `k` outside the
    /// crossfade is the clip's frame `dropped.0 + k`.
    pub dropped: (usize, usize),
    /// The ground move over one cycle (frame 0 to frame `L`).
    pub cycle: GroundMove,
    /// What happened to it.
    pub travel: Travel,
    /// The up axis used.
    pub up: SignedAxis,
    /// Whether it was given or detected (`false`: Y by default).
    pub up_found: bool,
}

impl fmt::Display for LoopReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "loop of {} frames ({} crossfaded); travel per cycle {:.4} units and {:.2} degrees about {}{}, {}",
            self.frames,
            self.crossfade,
            self.cycle.shift.length(),
            self.cycle.turn_deg,
            self.up,
            if self.up_found { "" } else { " (no up axis detected: Y assumed)" },
            match self.travel {
                Travel::Keep => "kept",
                Travel::Remove => "removed (in place)",
            }
        )?;
        if self.dropped != (0, 0) {
            write!(
                f,
                "; seam moved to match the ends: {} frames dropped from the start, {} from the end",
                self.dropped.0, self.dropped.1
            )?;
        }
        Ok(())
    }
}

/// Makes `bvh` loop (see the module docs).
///
/// # Errors
/// When the crossfade is 0 frames or more than half the clip, or the
/// carrier's channels cannot hold the moves.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::mix::{Span, looping::{make_loop, LoopOptions}};
/// let clip = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
///     End Site { OFFSET 0 10 0 } }
///     MOTION Frames: 6 Frame Time: 0.1
///     0 0 0
///     10 0 0
///     20 0 0
///     30 0 0
///     40 0 0
///     50 0 0")?;
/// let opts = LoopOptions { crossfade: Span::Frames(2), ..LoopOptions::default() };
/// let (looped, report) = make_loop(&clip, &opts)?;
/// assert_eq!(looped.motion().n_frames(), 4);
/// assert_eq!(looped.motion().frame(3), [30.0, 0.0, 0.0]); // outside the crossfade: a copy
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn make_loop(bvh: &Bvh, opts: &LoopOptions) -> Result<(Bvh, LoopReport)> {
    need_frames(bvh, "the clip")?;
    let m = bvh.motion();
    let n = m.n_frames();
    // The crossfade lays frames of the end onto as many of the start, so
    // a loop needs two frames at the least (a crossfade of one).
    if n < 2 {
        return Err(Error::invalid(
            "the clip has 1 frame: a loop needs at least 2 (it crossfades at least one frame \
             of its end into its start)",
        ));
    }
    let fade_n = opts.crossfade.frames(m.frame_time());
    if fade_n == 0 {
        let need = "a loop needs a crossfade of at least one frame";
        return Err(Error::invalid(match opts.crossfade {
            Span::Frames(_) => need.to_string(),
            Span::Seconds(_) => format!(
                "the crossfade ({}) is under one frame (frame time {} s): {need}",
                opts.crossfade.describe(m.frame_time()),
                m.frame_time()
            ),
        }));
    }
    // 2·fade_n > n without the product, which overflows for a huge span.
    if fade_n > n / 2 {
        return Err(Error::invalid(format!(
            "the crossfade ({}) is longer than half the clip ({n} frames): a loop crossfades \
             it at each end, so it can be {} at most here",
            opts.crossfade.describe(m.frame_time()),
            if n / 2 == 1 { "1 frame".to_string() } else { format!("{} frames", n / 2) }
        )));
    }
    let (up, up_found) = up_axis(bvh, opts.up);
    // The seam search: frames dropped from the start and the end so that
    // the two ends that the crossfade lays onto each other are most alike.
    let max_cut = opts.search.frames(m.frame_time()).min((n - 2 * fade_n) / 2);
    let dropped = if max_cut > 0 {
        let setup = Setup::new(bvh)?;
        let (end, start) = search_seam(&setup, m, m, fade_n, max_cut, max_cut, up, fade_n as f64);
        (start, end)
    } else {
        (0, 0)
    };
    let cut;
    let bvh = if dropped == (0, 0) {
        bvh
    } else {
        cut = crate::edit::frames::range(bvh, dropped.0..n - dropped.1)?;
        &cut
    };
    let m = bvh.motion();
    let n = m.n_frames();
    let len = n - fade_n;
    let setup = Setup::new(bvh)?;
    let s = bvh.skeleton();
    // The cycle's move: frames `len ..` laid onto frames `0 ..` over the
    // crossfade (the travel and the hip and shoulder lines, fitted
    // together), inverted: it takes the start to where the cycle ends.
    // The heading of the travel over whole gait cycles at each end, when
    // the clip travels.
    let travel = TravelHeading::Cycle(len);
    // The feet planted through both overlaps (the tail's frames `len ..`
    // and the start's `0 .. fade_n`): the pivot of the move, so that they
    // land on each other, and locked through the crossfade.
    let mut legs =
        if fade_n >= 2 { feet::contact_legs(bvh, len, bvh, 0, fade_n, up) } else { Vec::new() };
    // A carrier that never moves on the ground has no travel: the cycle
    // turns about it, and the feet do not pull it off its place. They are
    // not laid onto each other then, and not locked: the pose mixed.
    if !legs.is_empty() && fixed_on_ground(&setup, m, up) {
        legs.clear();
    }
    let anchor: Vec<usize> = legs.iter().filter(|l| l.planted()).map(|l| l.leg.point).collect();
    let (mut back, tail_mean) =
        fit_ground_move(&setup, m, 0, &setup, m, len, fade_n, up, travel, &anchor);
    // Two feet planted through both overlaps also give the turn: the one
    // that lays the line between them at the end onto the start's.
    if let Some(yaw) = feet::stance_yaw(&setup, m, 0, m, len, fade_n, &anchor, up) {
        let ca = tail_mean + back.shift;
        back.transform = DAffine3::from_translation(ca)
            * DAffine3::from_quat(DQuat::from_axis_angle(up.vector(), yaw))
            * DAffine3::from_translation(-tail_mean);
        back.turn_deg = yaw.to_degrees();
    }
    // The carrier's mean position on the ground over the start's window.
    let p0 = tail_mean + back.shift;
    let cycle = GroundMove {
        transform: back.transform.inverse(),
        shift: -back.shift,
        turn_deg: -back.turn_deg,
    };
    let tail = move_carrier(bvh, &setup, |_, _| back.transform)?;
    let nc = s.n_channels();
    let mut values = m.values()[..len * nc].to_vec();
    if nc > 0 {
        let mut mixer = Mixer::new(s, None);
        let weights: Vec<f64> = (0..fade_n).map(|k| seam_weight(k, fade_n, opts.curve)).collect();
        for (k, &w) in weights.iter().enumerate() {
            let (done, rest) = values.split_at_mut(k * nc);
            let a = tail.motion().frame(len + k);
            let near = if k > 0 { &done[(k - 1) * nc..] } else { a };
            mixer.blend(a, m.frame(k), w, near, &mut rest[..nc]);
        }
        feet::lock_crossfade(&tail, len, bvh, &weights, &legs, up, &mut values[..fade_n * nc]);
    }
    let motion = Motion::with_frames(m.frame_time(), len, nc, values)?;
    let mut out = Bvh::new(s.clone(), motion)?;
    if opts.travel == Travel::Remove {
        let c = setup.carrier;
        // The pivot of the cycle's turn: `E(1)` is the inverse move.
        let pl = p0 + cycle.shift;
        let turn = cycle.turn_deg.to_radians();
        let o = Setup::with_carrier(&out, crate::JointId::new(c))?;
        out = move_carrier(&out, &o, |k, _| {
            let t = k as f64 / len as f64;
            DAffine3::from_translation(p0)
                * DAffine3::from_quat(DQuat::from_axis_angle(up.vector(), -t * turn))
                * DAffine3::from_translation(-(p0 + t * (pl - p0)))
        })?;
    }
    Ok((
        out,
        LoopReport {
            crossfade: fade_n,
            frames: len,
            dropped,
            cycle,
            travel: opts.travel,
            up,
            up_found,
        },
    ))
}

/// Whether the carrier stands in one place on the ground through every
/// frame of `m` (within 1e-9 of the skeleton's height of frame 0's: a
/// root whose position channels are constant, or that has none).
fn fixed_on_ground(setup: &Setup, m: &Motion, up: SignedAxis) -> bool {
    let tol = 1e-9 * setup.height;
    let (mut first, mut fixed) = (None, true);
    setup.fk.positions_over(m, &[setup.carrier], |_, p| {
        let h = horizontal(p[0], up);
        fixed &= (h - *first.get_or_insert(h)).length() <= tol;
    });
    fixed
}

/// The loop crossfade's weight of the start at frame `k` of `n`: 0 at
/// `k = 0` (output frame 0 is the moved-back tail frame `L`, so the seam
/// from the last frame to the first is the clip's own step from `L - 1` to
/// `L`), rising to 1 at `k = n` (the first frame copied). Smoothstep gives
/// the quintic `10x³ - 15x⁴ + 6x⁵` (no speed and no acceleration at either
/// end: the seam keeps the tail's velocity, the mix adds only
/// `10 (1/n)³` of the two poses' difference to its first step); linear
/// gives `k / n`.
pub(crate) fn seam_weight(k: usize, n: usize, curve: Curve) -> f64 {
    let x = k as f64 / n as f64;
    match curve {
        Curve::Linear => x,
        _ => x * x * x * (10.0 + x * (6.0 * x - 15.0)),
    }
}
