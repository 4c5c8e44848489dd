//! Feet through a crossfade: which feet stay planted across a seam, and a
//! foot lock of those feet over the crossfade's frames.
//!
//! A foot is in contact on both sides at crossfade frame `k` when
//! [`crate::quality::lint`] finds it in contact (low and slow) in the two
//! frames that frame mixes: frame `k` of the overlap of the clip before
//! (the frames the crossfade replaces) and frame `k` of the clip after
//! ([`contact_legs`]); it is planted across the seam when it is so in
//! every frame ([`planted_legs`]). Its contact point is the lint's (the
//! toe joint when there is one, else the foot joint). Contacts are
//! measured on windows of the clips around the overlaps (the overlap and
//! half a second beyond it where the clip has it), so the cost does not
//! grow with the clips' lengths.
//!
//! The lock ([`lock_crossfade`]) moves the contact point onto a target in
//! each crossfade frame, `pA` and `pB` its world positions in the two
//! clips' frames that the crossfade mixes (the clip after already moved on
//! the ground), `w` the crossfade's weight:
//! - a planted foot: the target is `(1 - w) pA + w pB`. Both are planted,
//!   and the alignment ([`super::fit_ground_move`]) lays the planted feet
//!   onto each other, so the target stands still; the mixed pose, whose
//!   hips move linearly and whose leg rotations are SLERPed, would drift
//!   off it. At the crossfade's ends the target is the clip's own foot, so
//!   the lock needs no ramp;
//! - a foot in contact on both sides in some frames only: each span of
//!   such frames (gaps of up to a ramp bridged: the contact flickers) is
//!   pinned on one place, where the foot stands: at the crossfade's start
//!   (the span starts there, or too near it for a ramp) the foot of the
//!   frame before the first the lock may move (a loop's own frame `L`), at
//!   its end (the same) the mix at the last frame (flowing on into the clip
//!   after's own frames), else the mean of the mix `(1 - w) pA + w pB` over
//!   the span. Around the span the lock ramps in and out over
//!   [`RAMP_SECONDS`] (the quintic `10x³ - 15x⁴ + 6x⁵` of the weight, the
//!   target that far from the mix's own contact point towards the pin), in
//!   the frames where one side's foot is in the air; a span too near both
//!   ends is locked as a planted foot is. The feet are not laid onto each
//!   other there, so the pin may be farther from the hip than the leg
//!   reaches: the ankle's target is drawn in ([`soft_reach`]) so that the
//!   leg never straightens (the knee spiked, 400 to 1000 m/s², where it
//!   did and bent again);
//! - a foot never in contact on both sides, but in contact on one side at
//!   that side's end of the crossfade (the clip before's foot from its
//!   first frame, the clip after's through its last), for at least a ramp
//!   (gaps of up to a ramp bridged): that side's foot is held on one place
//!   with that side's weight, so it stays where it stands while its side
//!   dominates and is handed over continuously to the other side's foot:
//!   the clip before's on its place at the frame before the first the
//!   lock may move, weight `1 - w` (the target `w·mix + (1 - w)·pin`), the
//!   clip after's on its place at the last crossfade frame, weight `w`;
//!   each ramped out (in) over a ramp where its run ends (starts) inside
//!   the crossfade, and where both hold a frame, one pin, their mean
//!   weighted by their weights, at the sum of the weights (so the target
//!   is `pos + Σ λ (pin - pos)`). A loop of Rokoko's dance, whose left foot
//!   is planted through the tail and swings through the start: that foot
//!   slid 0.264 m/s in contact in the crossfade, 0.153 now. The leg's
//!   reach is eased as for a span.
//!
//! Where a held foot would have to move more than [`STEP_MIN_M`] (5 cm)
//! on the ground, it takes a step instead of sliding there ([`steps`]): the
//! target moves from one place to the other with the quintic, and the
//! contact point is lifted towards [`CLEARANCE_M`] (10 cm) above the higher
//! of the places it leaves and lands on, by `64x³(1 - x)³` of the step's
//! way `x` (no speed at either end; no lift where the mix is that high
//! already), over the frames a step takes at [`STEP_SPEED`] (1.5 m/s on
//! average), at least a ramp's, at most the room there is:
//! - a planted foot whose places at the first frame the lock may move and
//!   at the last lie far apart (two planted feet whose stances differ)
//!   stands on the first, steps around the crossfade's middle (weight
//!   0.5), and stands on the last;
//! - between two spans whose places lie far apart, the foot steps from one
//!   to the other over the frames between them (and the spans' ends where
//!   those are too few, a frame of each kept);
//! - where the lock lets a span's foot go to the mix (its ramp out of the
//!   last span, into the first) and the mix is far from the place where
//!   the ramp would end, the ramp becomes a step to (from) the mix over the
//!   frames a step takes, starting inside the span where the frames after
//!   it are too few. Rokoko's right foot, in contact on both sides in
//!   crossfade frames 0-11 but 39 cm apart on the two, crossed that near
//!   the floor in the 0.1 s ramp after its span (8 m/s); it now leaves the
//!   tail's place from the first frame the lock moves and joins the
//!   start's swing at the crossfade's end, lifted (the loop's foot slide
//!   in the crossfade 1.332 to 0.842 m/s).
//!
//! A stepping leg's bend is eased ([`ease_bend`]): near a straight leg the
//! knee bends at once as the foot lifts (CMU 131_01's knee: 168 m/s²), so
//! the knee's offset from the hip-ankle line is raised to the least curve
//! above it that accelerates by at most [`BEND_ACCEL`], the ankle drawn
//! up: the knee bends before the foot lifts and is still bent as it lands.
//!
//! The leg is solved analytically, hip (the thigh joint), knee, ankle,
//! keeping the knee's bend plane and the foot's world orientation, by the
//! same two-bone IK as `bvh clean --lock-feet` (`crate::ik`). Frames
//! outside the crossfade, and those of weight 0, are not touched. Only the
//! thigh, knee and ankle rotation channels change. They are written nearest
//! the previous output frame's angles (locked already) where the joint
//! turns less than `CONTINUOUS_DEG` (30 degrees) from it, else nearest the
//! frame's own mixed angles: picked near the mixed angles alone, Rokoko's
//! left ankle, at gimbal lock through the whole clip, flipped its channels
//! ~179 degrees while turning 0.5 degree (two `euler_jump` findings at
//! `--crossfade 0.5s`); near the previous frame's through a pop, a flip
//! there would be carried to the crossfade's end (ShaderMotion). Concat locks the
//! planted feet only (its crossfade, and so its output, is unchanged by the
//! partial and one-sided locks of a loop).
//!
//! The same for a loop ([`super::looping`]): its tail (the clip's last
//! frames, moved back by the cycle) is the clip before the seam, its first
//! frames the clip after. A loop's move is one clip's end laid onto its
//! start, which a figure standing on two planted feet may have turned
//! (a kick that ends in a turned stance), so the line between two planted
//! feet gives its turn ([`stance_yaw`]).

use glam::{DAffine3, DQuat, DVec3};

use crate::PositionChannels;
use crate::bvh::Bvh;
use crate::edit::JointChannels;
use crate::edit::axes::SignedAxis;
use crate::edit::root::{Setup, horizontal, yaw_between};
use crate::ik::two_bone;
use crate::kinematics::Kinematics;
use crate::motion::Motion;
use crate::quality::{self, Options};

/// A leg to lock: its contact point and the joints the IK turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Leg {
    /// The contact point (toe joint, else foot joint).
    pub(crate) point: usize,
    /// The foot (ankle) joint, the knee and the hip (thigh) joint.
    pub(crate) ankle: usize,
    pub(crate) knee: usize,
    pub(crate) hip: usize,
}

/// Seconds of context around an overlap when its contacts are measured.
const MARGIN_SECONDS: f64 = 0.5;

/// Per foot of `bvh` (the lint's feet, in its order), whether it is in
/// contact in each frame of `frames`, measured on a window around them.
fn contacts(
    bvh: &Bvh,
    frames: std::ops::Range<usize>,
    up: SignedAxis,
    metres_per_unit: Option<f64>,
) -> Option<(Vec<Vec<bool>>, Vec<quality::Foot>, f64)> {
    let n = bvh.motion().n_frames();
    let margin = (MARGIN_SECONDS / bvh.motion().frame_time()).round() as usize;
    let (lo, hi) = (frames.start.saturating_sub(margin), (frames.end + margin).min(n));
    let window = crate::edit::frames::range(bvh, lo..hi).ok()?;
    let opts = Options { up: Some(up), metres_per_unit, ..Options::default() };
    let r = quality::lint(&window, &opts);
    let contact = r
        .series
        .contact
        .iter()
        .map(|c| frames.clone().map(|f| c.get(f - lo).copied().unwrap_or(false)).collect())
        .collect();
    Some((contact, r.feet, r.metres_per_unit))
}

/// A leg and the crossfade frames where its foot is in contact on both
/// sides (in the frame of the clip before and in the frame of the clip
/// after that the crossfade frame mixes).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LegLock {
    pub(crate) leg: Leg,
    /// Per crossfade frame: in contact on both sides.
    pub(crate) both: Vec<bool>,
    /// Per crossfade frame: in contact in the frame of the clip before
    /// (`a`) and in that of the clip after (`b`).
    pub(crate) a: Vec<bool>,
    pub(crate) b: Vec<bool>,
    /// Metres per unit of the clips (the lint's guess).
    pub(crate) unit: f64,
}

impl LegLock {
    /// In contact on both sides through the whole crossfade.
    pub(crate) fn planted(&self) -> bool {
        self.both.iter().all(|&b| b)
    }
}

/// The legs whose foot is in contact on either side in at least one frame
/// of the overlaps: frames `fa .. fa + len` of `a` and `fb .. fb + len` of
/// `b` (the same skeleton), frame `fa + k` against frame `fb + k`, with a
/// knee and a hip above the foot, each with three rotation channels, the
/// hip not a root.
pub(crate) fn contact_legs(
    a: &Bvh,
    fa: usize,
    b: &Bvh,
    fb: usize,
    len: usize,
    up: SignedAxis,
) -> Vec<LegLock> {
    let Some((in_a, feet, mpu)) = contacts(a, fa..fa + len, up, None) else { return Vec::new() };
    let Some((in_b, feet_b, _)) = contacts(b, fb..fb + len, up, Some(mpu)) else {
        return Vec::new();
    };
    let skel = a.skeleton();
    let parent = |j: usize| skel.joints()[j].parent().map(|p| p.index());
    let three = |j: usize| JointChannels::of(&skel.joints()[j]).n_rot == 3;
    let mut legs = Vec::new();
    for (i, foot) in feet.iter().enumerate() {
        let Some(cb) = in_b.get(i) else { continue };
        let both: Vec<bool> = in_a[i].iter().zip(cb).map(|(&x, &y)| x && y).collect();
        let any = |v: &[bool]| v.iter().any(|&b| b);
        if !(any(&in_a[i]) || any(cb)) || feet_b.get(i) != Some(foot) {
            continue;
        }
        let Some(&ankle) = foot.points.first() else { continue };
        let (Some(knee), Some(hip)) = (parent(ankle), parent(ankle).and_then(parent)) else {
            continue;
        };
        // The thigh hangs from the body (a skeleton whose foot's
        // grandparent is the root would turn the whole figure).
        if three(knee) && three(hip) && parent(hip).is_some() {
            let leg = Leg { point: foot.skate_point, ankle, knee, hip };
            let (a, b) = (in_a[i].clone(), cb.clone());
            legs.push(LegLock { leg, both, a, b, unit: mpu });
        }
    }
    legs
}

/// The legs planted through both overlaps ([`contact_legs`] in contact on
/// both sides in every frame).
pub(crate) fn planted_legs(
    a: &Bvh,
    fa: usize,
    b: &Bvh,
    fb: usize,
    len: usize,
    up: SignedAxis,
) -> Vec<LegLock> {
    let mut legs = contact_legs(a, fa, b, fb, len, up);
    legs.retain(LegLock::planted);
    legs
}

/// Fraction of the skeleton's height the two planted feet must stand
/// apart, in both overlaps, for the line between them to give a heading.
const STANCE_MIN: f64 = 0.1;

/// The turn about `up` (radians) that lays the line between two planted
/// feet over frames `fb .. fb + len` of `bm` onto the same line over frames
/// `fa .. fa + len` of `am` (one skeleton, [`Setup`]; the lines summed over
/// the frames): `None` unless `points` holds exactly two feet that stand at
/// least [`STANCE_MIN`] of the height apart in both. Two feet planted
/// through both overlaps are where the figure stands: turned by any other
/// heading, they would land apart and slide through the crossfade.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stance_yaw(
    setup: &Setup,
    am: &Motion,
    fa: usize,
    bm: &Motion,
    fb: usize,
    len: usize,
    points: &[usize],
    up: SignedAxis,
) -> Option<f64> {
    let &[p, q] = points else { return None };
    let mut w = vec![DAffine3::IDENTITY; setup.fk.len()];
    let mut line = |m: &Motion, f: usize| {
        let mut sum = DVec3::ZERO;
        for k in 0..len {
            setup.fk.world(m.frame(f + k), &mut w);
            sum += horizontal(w[q].translation - w[p].translation, up);
        }
        sum / len.max(1) as f64
    };
    let (la, lb) = (line(am, fa), line(bm, fb));
    let min = STANCE_MIN * setup.height;
    (la.length() >= min && lb.length() >= min).then(|| yaw_between(lb, la, up.vector()))
}

/// Seconds over which a lock that starts or ends inside a crossfade is
/// ramped in or out (at most the frames the crossfade has there).
const RAMP_SECONDS: f64 = 0.1;

/// The quintic `10x³ - 15x⁴ + 6x⁵` (no speed at either end).
fn smooth(x: f64) -> f64 {
    x * x * x * (10.0 + x * (6.0 * x - 15.0))
}

/// The ankle's target `t` drawn in towards the hip `h` where it lies
/// beyond the leg's own extension (the hip to the ankle `a`, or 0.95 of
/// the `reach` if more bent): the distance past it approaches the reach
/// but never gets there (`m + (r - m)(1 - e^(-(d - m)/(r - m)))`, of slope
/// 1 where it starts), so a lock that pulls the foot away from the hip
/// does not straighten the leg (the knee's angle, whose rate grows without
/// bound as the leg straightens, spiked where a pin pulled the leg
/// straight and let it bend again).
fn soft_reach(h: DVec3, a: DVec3, t: DVec3, reach: f64) -> DVec3 {
    let m = h.distance(a).max(0.95 * reach);
    let v = t - h;
    let d = v.length();
    if d <= m || !d.is_finite() {
        return t;
    }
    let room = reach - m;
    let soft = if room > 1e-12 * reach { m + room * (1.0 - (-(d - m) / room).exp()) } else { m };
    h + v * (soft / d)
}

/// Where a leg's contact point goes in each crossfade frame: `None` (left
/// as the mix puts it) or the target and the lock's weight (1: on the
/// target; less: that far from the mix's contact point towards it).
type Pins = Vec<Option<(DVec3, f64)>>;

/// The pins of one leg (see the module docs): `pa[k]` and `pb[k]` its
/// contact point in the two frames crossfade frame `k` mixes, `first` the
/// first frame the lock may move (the frames before have weight 0), `ramp`
/// the ramp's frames.
fn pins(
    lock: &LegLock,
    pa: &[DVec3],
    pb: &[DVec3],
    weights: &[f64],
    first: usize,
    ramp: usize,
) -> Pins {
    let n = weights.len();
    let mix = |k: usize| pa[k].lerp(pb[k], weights[k]);
    // Every frame on the mix of the two contact points, as a planted foot.
    let on_mix = || (0..n).map(|k| Some((mix(k), 1.0))).collect();
    if lock.planted() {
        return on_mix();
    }
    if !lock.both.contains(&true) {
        return one_sided(lock, pa, pb, weights, first, ramp);
    }
    let mut out: Pins = vec![None; n];
    let mut s = 0;
    while s < n {
        if !lock.both[s] {
            s += 1;
            continue;
        }
        // A gap no longer than a ramp (the contact flickers) is bridged:
        // the foot stays on one place rather than leave it and come back.
        let e = run_end(&lock.both, s, ramp);
        // A span with no room for a ramp before it (or after it) runs on
        // to the crossfade's start (or end): a ramp cut short would pop.
        let lo = if s < first + ramp { 0 } else { s };
        let hi = if n - e < ramp { n } else { e };
        if lo == 0 && hi == n {
            return on_mix();
        }
        // One place per span: where the foot stands at the crossfade's
        // end it touches (so that it flows on from the clip's own frames),
        // else the mean of the mixed stance over the span.
        let pin = if lo == 0 {
            mix(first.saturating_sub(1))
        } else if hi == n {
            mix(n - 1)
        } else {
            (s..e).map(mix).sum::<DVec3>() / (e - s) as f64
        };
        let mut put = |k: usize, w: f64| {
            if out[k].is_none_or(|(_, v)| v < w) {
                out[k] = Some((pin, w));
            }
        };
        (lo..hi).for_each(|k| put(k, 1.0));
        let r_in = ramp.min(lo.saturating_sub(first));
        for d in 1..=r_in {
            put(lo - d, smooth(1.0 - d as f64 / (r_in + 1) as f64));
        }
        let r_out = ramp.min(n - hi);
        for d in 1..=r_out {
            put(hi - 1 + d, smooth(1.0 - d as f64 / (r_out + 1) as f64));
        }
        s = hi;
    }
    out
}

/// The end of the run of `true` from frame `from` of `flags`, gaps of up
/// to `ramp` frames bridged (the contact flickers).
fn run_end(flags: &[bool], from: usize, ramp: usize) -> usize {
    let n = flags.len();
    let end = |from: usize| (from..n).find(|&k| !flags[k]).unwrap_or(n);
    let mut e = end(from);
    while let Some(next) = (e..n).find(|&k| flags[k]).filter(|&k| k - e <= ramp) {
        e = end(next);
    }
    e
}

/// The pins of a leg never in contact on both sides (see the module
/// docs): the foot of the side in contact at its end of the crossfade, on
/// one place, with that side's weight.
fn one_sided(
    lock: &LegLock,
    pa: &[DVec3],
    pb: &[DVec3],
    weights: &[f64],
    first: usize,
    ramp: usize,
) -> Pins {
    let n = weights.len();
    let mut out: Pins = vec![None; n];
    // Two pins on one frame (the tail's ramping out, the start's in): the
    // target `pos + Σ λ (pin - pos)`, which is the pins' mean weighted by
    // their weights, at their summed weight (on it from 1).
    let mut put = |k: usize, pin: DVec3, w: f64| {
        if k < first || w <= 0.0 {
            return;
        }
        out[k] = Some(match out[k] {
            None => (pin, w),
            Some((p, v)) => ((p * v + pin * w) / (v + w), (v + w).min(1.0)),
        });
    };
    // The clip before's foot, in contact from the crossfade's start (its
    // own frames before, standing) through at least a ramp.
    let e = if lock.a.first() == Some(&true) { run_end(&lock.a, 0, ramp) } else { 0 };
    if e >= first + ramp {
        let pin = pa[first.saturating_sub(1)];
        (first..e).for_each(|k| put(k, pin, 1.0 - weights[k]));
        let r_out = ramp.min(n - e);
        for d in 1..=r_out {
            let k = e - 1 + d;
            put(k, pin, (1.0 - weights[k]) * smooth(1.0 - d as f64 / (r_out + 1) as f64));
        }
    }
    // The clip after's foot, in contact through the crossfade's end (its
    // own frames after) for at least a ramp: the mirror.
    let rev: Vec<bool> = lock.b.iter().rev().copied().collect();
    let s = if rev.first() == Some(&true) { n - run_end(&rev, 0, ramp) } else { n };
    if n - s >= ramp {
        let pin = pb[n - 1];
        (s.max(first)..n).for_each(|k| put(k, pin, weights[k]));
        let r_in = ramp.min(s.saturating_sub(first));
        for d in 1..=r_in {
            let k = s - d;
            put(k, pin, weights[k] * smooth(1.0 - d as f64 / (r_in + 1) as f64));
        }
    }
    out
}

/// Metres a pin must move (horizontally) within a crossfade for the foot
/// to take a step rather than slide there.
const STEP_MIN_M: f64 = 0.05;

/// Metres a stepping foot is lifted at the middle of its step.
const CLEARANCE_M: f64 = 0.10;

/// The most a step's lift may accelerate the contact point (m/s²): a
/// step too short for [`CLEARANCE_M`] is lifted less ([`bump`] of height
/// `h` over `T` seconds accelerates by `24 h / T²` at most; a 10 cm lift
/// over 0.1 s made 200 to 600 m/s² spikes in the knees).
const LIFT_ACCEL: f64 = 50.0;

/// Mean horizontal speed of a step (m/s): the frames it takes, at least a
/// ramp's, at most the room there is.
const STEP_SPEED: f64 = 1.5;

/// The lift of a step at `x` of its way (0 to 1): `64x³(1 - x)³`, 1 at the
/// middle, no speed and no acceleration at either end (its acceleration
/// is at most 24 at the middle).
fn bump(x: f64) -> f64 {
    let y = x * (1.0 - x);
    64.0 * y * y * y
}

/// How a leg's steps are measured, in the clip's units and frames.
#[derive(Clone, Copy, Debug)]
struct Stepping {
    up: SignedAxis,
    /// A pin farther than this from where the foot must go takes a step.
    far: f64,
    /// A mix less than this above a place is on the ground there (the
    /// lint's contact height): a ramp between them slides.
    low: f64,
    /// The lift at the middle of a step.
    clearance: f64,
    /// The lift's most per frame² of a step's frames ([`LIFT_ACCEL`]).
    lift_accel: f64,
    /// Distance a step covers per frame on average.
    per_frame: f64,
    /// The frames of a ramp (the shortest step).
    ramp: usize,
}

impl Stepping {
    fn apart(&self, p: DVec3, q: DVec3) -> f64 {
        horizontal(q - p, self.up).length()
    }

    /// The frames a step of `d` takes, at least a ramp's, at most `room`.
    fn frames(&self, d: f64, room: usize) -> usize {
        let want = (d / self.per_frame.max(1e-12)).ceil();
        let want = if want.is_finite() { want.min(room as f64) as usize } else { room };
        want.max(self.ramp).min(room)
    }
}

/// Steps where a held foot would slide far (see the module docs): `pins`
/// ([`pins`] of `lock`) rewritten where the foot must move more than
/// `s.far` on the ground, and the lift (along up) of the contact point in
/// each crossfade frame.
fn steps(
    lock: &LegLock,
    pins: &mut Pins,
    pa: &[DVec3],
    pb: &[DVec3],
    weights: &[f64],
    first: usize,
    s: &Stepping,
) -> Vec<f64> {
    let n = weights.len();
    let mut lift = vec![0.0; n];
    if first >= n {
        return lift;
    }
    let mix = |k: usize| pa[k].lerp(pb[k], weights[k]);
    // Where the pins put the contact point (the mix standing in for the
    // mixed frame's own).
    let planned = |pins: &Pins, k: usize| pins[k].map_or(mix(k), |(p, l)| mix(k).lerp(p, l));
    let height = |p: DVec3| p.dot(s.up.vector());
    // The frames `w0 .. w0 + m` of a step: their pins from `place` (`x`
    // the way, 0 to 1, the frames either side at 0 and 1), then the lift
    // that raises the contact point towards `clearance` above `floor` (the
    // higher of the places it leaves and lands on), eased in and out
    // (`bump`); none where it is that high already (the mix in the air).
    let step = |pins: &mut Pins,
                lift: &mut [f64],
                w0: usize,
                m: usize,
                floor: f64,
                place: &dyn Fn(f64) -> Option<(DVec3, f64)>| {
        let at = |k: usize| (k + 1 - w0) as f64 / (m + 1) as f64;
        for (k, q) in pins.iter_mut().enumerate().take(w0 + m).skip(w0) {
            *q = place(at(k));
        }
        let span = (m + 1) as f64;
        let clearance = s.clearance.min(s.lift_accel * span * span);
        for (k, l) in lift.iter_mut().enumerate().take(w0 + m).skip(w0) {
            let below = floor + clearance - height(planned(pins, k));
            *l = bump(at(k)) * below.max(0.0);
        }
    };
    if lock.planted() {
        // On its place in the first frame the lock may move, then on its
        // place in the last, a step between them around the crossfade's
        // middle.
        let (p0, p1) = (mix(first.saturating_sub(1)), mix(n - 1));
        let d = s.apart(p0, p1);
        if d <= s.far {
            return lift;
        }
        let m = s.frames(d, n - first);
        let mid = weights.iter().position(|&w| w >= 0.5).unwrap_or(n);
        let w0 = mid.saturating_sub(m / 2).clamp(first, n - m);
        for (k, q) in pins.iter_mut().enumerate().skip(first) {
            *q = Some((if k < w0 { p0 } else { p1 }, 1.0));
        }
        let floor = height(p0).max(height(p1));
        step(pins, &mut lift, w0, m, floor, &|x| Some((p0.lerp(p1, smooth(x)), 1.0)));
        return lift;
    }
    // The runs held on one place at full weight: (start, end, place).
    let mut runs: Vec<(usize, usize, DVec3)> = Vec::new();
    for (k, &q) in pins.iter().enumerate().skip(first) {
        match (q, runs.last_mut()) {
            (Some((p, l)), Some(r)) if l >= 1.0 && r.1 == k && r.2 == p => r.1 = k + 1,
            (Some((p, l)), _) if l >= 1.0 => runs.push((k, k + 1, p)),
            _ => {}
        }
    }
    let Some(&(r0, _, p)) = runs.first() else { return lift };
    // Where a step after the last run starts (the ramp in of the first
    // ends there at the latest).
    let mut out_start = n;
    for (i, &(r0, e, p)) in runs.iter().enumerate() {
        if let Some(&(s1, e1, q)) = runs.get(i + 1) {
            // Two places far apart: a step from one to the other over the
            // frames between them and, where those are too few, the ends
            // of the two runs (a frame of each kept).
            let d = s.apart(p, q);
            if d <= s.far {
                continue;
            }
            let (gap, spare) = (s1 - e, (e - r0 - 1) + (e1 - s1 - 1));
            let ext = s.frames(d, gap + spare).saturating_sub(gap);
            let take = ext.div_ceil(2).min(e - r0 - 1);
            let (w0, w1) = (e - take, s1 + (ext - take).min(e1 - s1 - 1));
            let floor = height(p).max(height(q));
            step(pins, &mut lift, w0, w1 - w0, floor, &|x| Some((p.lerp(q, smooth(x)), 1.0)));
        } else {
            // Let go to the mix: where the ramp would end far from the
            // place, a step to the mix instead, starting inside the run
            // where the frames after it are too few.
            let q = mix((e + s.ramp).min(n - 1));
            let d = s.apart(p, q);
            if d <= s.far || e >= n || height(q) - height(p) >= s.low {
                continue;
            }
            let m = s.frames(d, n - r0);
            let w0 = e.min(n - m).max(r0);
            let m = m.min(n - w0);
            pins[w0 + m..].fill(None);
            step(pins, &mut lift, w0, m, height(p), &|x| Some((p, smooth(1.0 - x))));
            out_start = w0;
        }
    }
    // The mirror: the first run taken up from the mix with a step.
    let q = mix(r0.saturating_sub(s.ramp + 1).max(first));
    let d = s.apart(p, q);
    if r0 > first && d > s.far && height(q) - height(p) < s.low {
        let end = runs[0].1.min(out_start);
        let m = s.frames(d, end - first);
        let w1 = r0.max(first + m).min(end);
        let w0 = w1 - m;
        pins[first..w0].fill(None);
        step(pins, &mut lift, w0, m, height(p), &|x| Some((p, smooth(x))));
    }
    lift
}

/// Where the ankle goes in a crossfade frame whose world transforms are
/// `wo` (the mixed frame's): the contact point on its pin (`lambda` of the
/// way from where it is), lifted by `lift`, the ankle moved with it; the
/// reach eased for a leg not planted ([`soft_reach`]).
fn ankle_target(
    lock: &LegLock,
    pin: Option<(DVec3, f64)>,
    lift: f64,
    wo: &[DAffine3],
    up: SignedAxis,
) -> Option<DVec3> {
    let (pin, lambda) = pin?;
    let leg = &lock.leg;
    let pos = |j: usize| wo[j].translation;
    let target = if lambda == 1.0 { pin } else { pos(leg.point).lerp(pin, lambda) };
    let delta = target + up.vector() * lift - pos(leg.point);
    let (h, a) = (pos(leg.hip), pos(leg.ankle));
    let t = a + delta;
    if lock.planted() {
        return Some(t);
    }
    let reach = h.distance(pos(leg.knee)) + pos(leg.knee).distance(a);
    Some(soft_reach(h, a, t, reach))
}

/// The most the knee's offset from the hip-ankle line may accelerate
/// through a step (m/s²), where the planned targets would bend it faster
/// ([`ease_bend`]).
const BEND_ACCEL: f64 = 50.0;

/// Eases a leg's bend through the runs of frames with a target: `hips`
/// the hip (thigh joint) per frame, `targets` the ankle's (`None`: not
/// locked), `bones` the thigh's and the shin's lengths, `accel` the most
/// the knee's offset from the hip-ankle line may accelerate per frame².
///
/// Near a straight leg the knee's offset from that line grows as the
/// square root of the ankle's approach to the hip, so a foot that lifts
/// off (or lands) with a straight leg, however smoothly, bends the knee
/// at once (CMU 131_01's loop: 168 m/s² on the knee). The offset is
/// raised to the least curve above it whose acceleration is at most
/// `accel` (the upper hull of `offset - accel k² / 2`, plus `accel k² /
/// 2`): the knee starts bending before the foot lifts and is still bent
/// as it lands, the ankle drawn towards the hip along the same line (up,
/// off the floor, for a leg that stands), never farther from it; a run's
/// first and last frames are kept, so it joins the frames around it.
fn ease_bend(
    hips: &[DVec3],
    targets: &mut [Option<DVec3>],
    bones: (f64, f64),
    accel: f64,
    up: DVec3,
) {
    let (l1, l2) = bones;
    let short = l1.min(l2);
    if !(short > 0.0 && accel > 0.0) {
        return;
    }
    // The knee's offset from the hip-ankle line at hip-ankle distance `d`.
    let offset = |d: f64| {
        let d = d.clamp((l1 - l2).abs(), l1 + l2).max(1e-12);
        let along = (d * d + l1 * l1 - l2 * l2) / (2.0 * d);
        (l1 * l1 - along * along).max(0.0).sqrt()
    };
    // The distance at which the knee, bent obtusely, has offset `e`.
    let distance = |e: f64| (l1 * l1 - e * e).max(0.0).sqrt() + (l2 * l2 - e * e).max(0.0).sqrt();
    let n = targets.len();
    let mut s = 0;
    while s < n {
        if targets[s].is_none() {
            s += 1;
            continue;
        }
        let e = (s..n).find(|&k| targets[k].is_none()).unwrap_or(n);
        let pts: Vec<(f64, f64)> = (s..e)
            .map(|k| {
                let d = targets[k].map_or(0.0, |t| t.distance(hips[k]));
                let x = (k - s) as f64;
                (x, offset(d) - 0.5 * accel * x * x)
            })
            .collect();
        // The upper hull (monotone chain).
        let mut hull: Vec<(f64, f64)> = Vec::new();
        for &p in &pts {
            while hull.len() >= 2 {
                let (a, b) = (hull[hull.len() - 2], hull[hull.len() - 1]);
                if (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0) >= 0.0 {
                    hull.pop();
                } else {
                    break;
                }
            }
            hull.push(p);
        }
        let mut j = 0;
        for (k, &(x, y)) in (s..e).zip(&pts) {
            while j + 1 < hull.len() && hull[j + 1].0 < x {
                j += 1;
            }
            let top = if j + 1 < hull.len() {
                let (a, b) = (hull[j], hull[j + 1]);
                a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0)
            } else {
                hull[j].1
            };
            if top - y <= 1e-9 * short {
                continue;
            }
            let want = (top + 0.5 * accel * x * x).min(0.999 * short);
            let Some(t) = targets[k] else { continue };
            let v = t - hips[k];
            let d = v.length();
            let d2 = distance(want);
            if d2 >= d || !d2.is_finite() {
                continue;
            }
            // Straight up where that reaches it (no slide on the floor),
            // else along the line to the hip.
            let along = v.dot(up);
            let disc = along * along - (d * d - d2 * d2);
            targets[k] = Some(if along < 0.0 && disc >= 0.0 {
                t + up * (-along - disc.sqrt())
            } else {
                hips[k] + v * (d2 / d)
            });
        }
        s = e;
    }
}

/// Degrees a locked joint may turn from the previous output frame for its
/// channels to be written nearest that frame's angles (see
/// [`lock_crossfade`]).
const CONTINUOUS_DEG: f64 = 30.0;

/// The angle between two rotations, in degrees.
fn turn_deg(a: DQuat, b: DQuat) -> f64 {
    2.0 * a.dot(b).abs().min(1.0).acos().to_degrees()
}

/// Locks `legs` over a crossfade: `out` holds its frames (`nc` channels
/// each), frame `k` mixing frame `fa + k` of `a` with frame `k` of `b` (moved
/// already) at weight `weights[k]` (see the module docs).
pub(crate) fn lock_crossfade(
    a: &Bvh,
    fa: usize,
    b: &Bvh,
    weights: &[f64],
    legs: &[LegLock],
    up: SignedAxis,
    out: &mut [f64],
) {
    if legs.is_empty() {
        return;
    }
    let skel = a.skeleton();
    let nc = skel.n_channels();
    let fk = Kinematics::new(skel, PositionChannels::Replace);
    let layouts: Vec<JointChannels> = skel.joints().iter().map(JointChannels::of).collect();
    let nj = skel.len();
    let n = weights.len();
    let (mut wa, mut wb, mut wo) =
        (vec![DAffine3::IDENTITY; nj], vec![DAffine3::IDENTITY; nj], vec![DAffine3::IDENTITY; nj]);
    // The contact points in the two clips' frames, per leg.
    let (mut pa, mut pb) =
        (vec![Vec::with_capacity(n); legs.len()], vec![Vec::with_capacity(n); legs.len()]);
    for k in 0..n {
        fk.world(a.motion().frame(fa + k), &mut wa);
        fk.world(b.motion().frame(k), &mut wb);
        for (i, l) in legs.iter().enumerate() {
            pa[i].push(wa[l.leg.point].translation);
            pb[i].push(wb[l.leg.point].translation);
        }
    }
    let first = weights.iter().position(|&w| w != 0.0).unwrap_or(n);
    let ft = a.motion().frame_time();
    let ramp = ((RAMP_SECONDS / ft).round() as usize).max(1);
    // Metres per unit: the clips' (`contact_legs` gives every leg the same).
    let unit = Some(legs[0].unit).filter(|u| *u > 0.0 && u.is_finite()).unwrap_or(1.0);
    let stepping = Stepping {
        up,
        far: STEP_MIN_M / unit,
        low: Options::default().contact_height / unit,
        clearance: CLEARANCE_M / unit,
        lift_accel: LIFT_ACCEL * ft * ft / 24.0 / unit,
        per_frame: STEP_SPEED * ft / unit,
        ramp,
    };
    let (pins, lifts): (Vec<Pins>, Vec<Vec<f64>>) = legs
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut p = pins(l, &pa[i], &pb[i], weights, first, ramp);
            let lift = steps(l, &mut p, &pa[i], &pb[i], weights, first, &stepping);
            (p, lift)
        })
        .unzip();
    // A stepping leg's ankle targets, planned on the mixed frames (the
    // lock of a frame moves no hip), the knee's bend eased in and out.
    let bend_accel = BEND_ACCEL * ft * ft / unit;
    let eased: Vec<Option<Vec<Option<DVec3>>>> = legs
        .iter()
        .enumerate()
        .map(|(i, lock)| {
            if lifts[i].iter().all(|&l| l == 0.0) {
                return None;
            }
            let leg = &lock.leg;
            let mut hips = Vec::with_capacity(n);
            let mut targets = Vec::with_capacity(n);
            let mut bones = (0.0, 0.0);
            for (k, &w) in weights.iter().enumerate() {
                fk.world(&out[k * nc..(k + 1) * nc], &mut wo);
                let pos = |j: usize| wo[j].translation;
                bones =
                    (pos(leg.hip).distance(pos(leg.knee)), pos(leg.knee).distance(pos(leg.ankle)));
                hips.push(pos(leg.hip));
                let t = if w == 0.0 {
                    None
                } else {
                    ankle_target(lock, pins[i][k], lifts[i][k], &wo, up)
                };
                targets.push(t);
            }
            ease_bend(&hips, &mut targets, bones, bend_accel, up.vector());
            Some(targets)
        })
        .collect();
    for (k, &w) in weights.iter().enumerate() {
        // At weight 0 (a loop's first crossfade frame) the frame is the
        // clip before's own, its feet on their targets: left bit for bit
        // (the IK's reach clamp would bend a straight leg by 4e-5 rad).
        if w == 0.0 {
            continue;
        }
        let (done, rest) = out.split_at_mut(k * nc);
        let row = &mut rest[..nc];
        // The previous output frame, locked already: where the joint turns
        // less than `CONTINUOUS_DEG` from it, the channels are written
        // nearest its angles, so that they flow on from it (near the
        // frame's own mixed angles, Rokoko's gimbal-locked ankle flipped
        // ~179 degrees between frames); where it turns more (a pop), near
        // the frame's own, so that no flip is carried on to the
        // crossfade's end.
        let prev = (k > 0).then(|| &done[(k - 1) * nc..]);
        for (i, lock) in legs.iter().enumerate() {
            let leg = &lock.leg;
            fk.world(row, &mut wo);
            let Some(t) = eased[i]
                .as_ref()
                .map_or_else(|| ankle_target(lock, pins[i][k], lifts[i][k], &wo, up), |e| e[k])
            else {
                continue;
            };
            let pos = |x: &[DAffine3], j: usize| x[j].translation;
            let (h, a) = (pos(&wo, leg.hip), pos(&wo, leg.ankle));
            let Some((d, r1)) = two_bone(h, pos(&wo, leg.knee), a, t).map(|(d, r1, _)| (d, r1))
            else {
                continue;
            };
            let rot = |j: usize| DQuat::from_mat3(&wo[j].matrix3);
            let wp = skel.joints()[leg.hip].parent().map_or(DQuat::IDENTITY, |p| rot(p.index()));
            let (wh, wk, wf) = (rot(leg.hip), rot(leg.knee), rot(leg.ankle));
            let wh2 = d * wh;
            let wk2 = d * r1 * wk;
            let lh = (wp.inverse() * wh2).normalize();
            let lk = (wh2.inverse() * wk2).normalize();
            let lf = (wk2.inverse() * wf).normalize();
            for (j, q) in [(leg.hip, lh), (leg.knee, lk), (leg.ankle, lf)] {
                let l = &layouts[j];
                if l.n_rot > 0 {
                    let near = match prev {
                        Some(p) if turn_deg(l.rotation(p), q) < CONTINUOUS_DEG => l.angles(p),
                        _ => l.angles(row),
                    };
                    l.write_rotation(q, Some(near), row);
                    l.snap_rotation(row);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(both: &str) -> LegLock {
        let leg = Leg { point: 0, ankle: 0, knee: 0, hip: 0 };
        let both: Vec<bool> = both.chars().map(|c| c == '#').collect();
        LegLock { leg, a: both.clone(), b: both.clone(), both, unit: 0.01 }
    }

    /// A leg in contact on one side at a time: `a` and `b` the two sides.
    fn sides(a: &str, b: &str) -> LegLock {
        let leg = Leg { point: 0, ankle: 0, knee: 0, hip: 0 };
        let f = |s: &str| s.chars().map(|c| c == '#').collect::<Vec<bool>>();
        let both = f(a).iter().zip(f(b)).map(|(&x, y)| x && y).collect();
        LegLock { leg, both, a: f(a), b: f(b), unit: 0.01 }
    }

    /// A figure (cm, Y up, 100 fps) standing on its right leg with the knee
    /// bent, the toe on the floor under the hips, the hips at `z` in every
    /// frame; the other leg lifted.
    fn standing(zs: &[f64]) -> Bvh {
        standing_bent(zs, 30.0)
    }

    /// [`standing`] with the thigh at `-bend`, the knee at `2 bend` and the
    /// ankle at `-bend` degrees (the knee's angle `180 - 2 bend`).
    fn standing_bent(zs: &[f64], bend: f64) -> Bvh {
        let leg = |side: &str, x: f64| {
            format!(
                "JOINT {side}UpLeg {{ OFFSET {x} 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
                 JOINT {side}Leg {{ OFFSET 0 -45 0 CHANNELS 3 Zrotation Xrotation Yrotation
                 JOINT {side}Foot {{ OFFSET 0 -42 0 CHANNELS 3 Zrotation Xrotation Yrotation
                 JOINT {side}ToeBase {{ OFFSET 0 -6 12 CHANNELS 3 Zrotation Xrotation Yrotation
                 End Site {{ OFFSET 0 0 5 }} }} }} }} }}"
            )
        };
        let c = bend.to_radians().cos();
        let (a, b) = (-bend, 2.0 * bend);
        // Thigh -30, knee 60, ankle -30 degrees (for a bend of 30): the
        // ankle 45c + 42c below the hip, the toe 6 lower, the foot flat.
        let y = 45.0 * c + 42.0 * c + 6.0;
        let rows: Vec<String> = zs
            .iter()
            .map(|z| {
                format!(
                    "0 {y} {z} 0 0 0 0 -60 0 0 100 0 0 -40 0 0 0 0 0 {a} 0 0 {b} 0 0 {a} 0 0 0 0"
                )
            })
            .collect();
        let text = format!(
            "HIERARCHY\nROOT Hips {{ OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
             {} {} }}\nMOTION\nFrames: {}\nFrame Time: 0.01\n{}\n",
            leg("Left", 10.0),
            leg("Right", -10.0),
            zs.len(),
            rows.join("\n")
        );
        Bvh::parse(text).unwrap()
    }

    /// The right toe's and knee's world positions through a crossfade of
    /// `n` frames from `a` into `b` (their right feet planted), the leg
    /// locked.
    fn step_through(a: &Bvh, b: &Bvh, n: usize) -> (Vec<DVec3>, Vec<DVec3>) {
        let skel = a.skeleton();
        let toe = skel.find("RightToeBase").unwrap().index();
        let leg = Leg { point: toe, ankle: toe - 1, knee: toe - 2, hip: toe - 3 };
        let all = vec![true; n];
        let lock = LegLock { leg, both: all.clone(), a: all.clone(), b: all, unit: 0.01 };
        let weights: Vec<f64> = (0..n).map(|k| smooth(k as f64 / n as f64)).collect();
        let nc = skel.n_channels();
        let mut out = Vec::with_capacity(n * nc);
        for (k, &w) in weights.iter().enumerate() {
            let (fa, fb) = (a.motion().frame(k), b.motion().frame(k));
            out.extend(fa.iter().zip(fb).map(|(x, y)| x + w * (y - x)));
        }
        lock_crossfade(a, 0, b, &weights, &[lock], SignedAxis::PosY, &mut out);
        let fk = Kinematics::new(skel, PositionChannels::Replace);
        let mut p = vec![DVec3::ZERO; fk.len()];
        (0..n)
            .map(|k| {
                fk.positions(&out[k * nc..(k + 1) * nc], &mut p);
                (p[toe], p[leg.knee])
            })
            .unzip()
    }

    /// How far (cm) the toe moves on the floor: the horizontal length of
    /// its steps between two frames both within 1 cm of it.
    fn slid_on_floor(toes: &[DVec3]) -> f64 {
        toes.windows(2)
            .filter(|s| s[0].y < 1.0 && s[1].y < 1.0)
            .map(|s| DVec3::new(s[1].x - s[0].x, 0.0, s[1].z - s[0].z).length())
            .sum()
    }

    /// A near-straight leg (the knee at 170 degrees) whose planted foot
    /// takes a 30 cm step in 0.3 s: the knee bends before the toe lifts
    /// and is still bent as it lands, so the knee accelerates less than
    /// 100 m/s² (79 now). Before, the knee's bend, whose rate grows
    /// without bound as the leg straightens, began at once as the toe
    /// lifted: 132 m/s². The toe still lands on its place, and does not
    /// slide on the floor.
    #[test]
    fn a_near_straight_leg_bends_into_its_step() {
        let n = 30;
        let (a, b) = (standing_bent(&[0.0; 30], 5.0), standing_bent(&[30.0; 30], 5.0));
        let (toes, knees) = step_through(&a, &b, n);
        // cm per frame² at 100 fps, in m/s².
        let acc = |p: &[DVec3]| {
            p.windows(3).map(|w| (w[2] - 2.0 * w[1] + w[0]).length() * 100.0).fold(0.0, f64::max)
        };
        let knee = acc(&knees);
        println!("knee {knee} m/s², toe {} m/s²", acc(&toes));
        assert!(knee < 100.0, "the knee accelerates {knee} m/s²: {knees:?}");
        let to = DVec3::new(-10.0, 0.0, toes[0].z + 30.0);
        assert!(toes[n - 1].distance(to) < 0.05, "{} against {to}", toes[n - 1]);
        assert!(toes.iter().all(|t| t.y > -0.01), "{toes:?}");
        let slid = slid_on_floor(&toes);
        assert!(slid < 2.0, "the toe slid {slid} cm on the floor: {toes:?}");
    }

    /// A planted foot whose two placements lie 30 cm apart (the clip after
    /// stands 30 cm ahead): the lock no longer slides it along the floor
    /// on the mix of the two. It stands on the first place, is lifted
    /// above the contact height (5 cm) while it moves, never below the
    /// floor, and lands on the second, where it stays; it does not slide
    /// while it is low. Before, its toe stayed on the floor through the
    /// whole crossfade and slid the 30 cm.
    #[test]
    fn a_foot_far_from_its_place_takes_a_step() {
        let n = 30;
        // The mix: the figure moves forward with the weight, the legs as
        // they are (both clips' rotations are the same).
        let (toes, _) = step_through(&standing(&[0.0; 30]), &standing(&[30.0; 30]), n);
        let (from, to) = (toes[0], DVec3::new(-10.0, 0.0, toes[0].z + 30.0));
        assert!(from.y.abs() < 1e-6, "{from}");
        // Lands where the clip after stands, and stays.
        assert!(toes[n - 1].distance(to) < 0.05, "{} against {to}", toes[n - 1]);
        // Lifted above the contact height while it moves, never below the floor.
        let top = toes.iter().map(|t| t.y).fold(f64::MIN, f64::max);
        assert!(top > 5.0, "the toe rises {top} cm at most");
        assert!(toes.iter().all(|t| t.y > -0.01), "{toes:?}");
        // No slide: where it is within 1 cm of the floor, it moves less
        // than 2 cm on it in all.
        let slid = slid_on_floor(&toes);
        assert!(slid < 2.0, "the toe slid {slid} cm on the floor: {toes:?}");
        // It moves in one direction, forward, without crossing over sideways.
        assert!(toes.windows(2).all(|s| s[1].z >= s[0].z - 0.05), "{toes:?}");
        assert!(toes.iter().all(|t| (t.x + 10.0).abs() < 1.0), "{toes:?}");
    }

    /// A foot in contact on one side only: the clip before's foot from the
    /// crossfade's start is pinned where it stands at the frame before the
    /// first moved, with that side's weight `1 - w`, ramped out after its
    /// run; the clip after's foot through the crossfade's end on its last
    /// crossfade frame's place with the weight `w`, ramped in; the weights
    /// never jump; a run shorter than a ramp, or not touching its side's
    /// end, is left alone; two pins on a frame are one, weighted.
    #[test]
    fn one_sided_pins_carry_the_side_that_weighs() {
        let n = 12;
        let pa: Vec<DVec3> = (0..n).map(|k| DVec3::new(k as f64, 0.0, 0.0)).collect();
        let pb: Vec<DVec3> = (0..n).map(|k| DVec3::new(k as f64, 0.0, 10.0)).collect();
        let weights: Vec<f64> = (0..n).map(|k| smooth(k as f64 / n as f64)).collect();
        // The tail planted through the whole crossfade, the start swinging.
        let p = pins(&sides("############", "............"), &pa, &pb, &weights, 1, 2);
        assert_eq!(p[0], None);
        for k in 1..n {
            assert_eq!(p[k], Some((pa[0], 1.0 - weights[k])), "frame {k}");
        }
        // The tail's foot lifts at frame 7 (a flicker of one bridged): ramped out.
        let p = pins(&sides("####.##.....", "............"), &pa, &pb, &weights, 1, 2);
        assert!((1..7).all(|k| p[k] == Some((pa[0], 1.0 - weights[k]))));
        let (w7, w8) = (p[7].unwrap().1, p[8].unwrap().1);
        assert!(1.0 - weights[7] > w7 && w7 > w8 && w8 > 0.0, "{w7} {w8}");
        assert!(p[9..].iter().all(Option::is_none));
        // The start's foot planted from frame 7: its place at the last
        // crossfade frame, with the weight w, ramped in.
        let p = pins(&sides("............", ".......#####"), &pa, &pb, &weights, 1, 2);
        assert!(p[..5].iter().all(Option::is_none));
        let (w5, w6) = (p[5].unwrap().1, p[6].unwrap().1);
        assert!(0.0 < w5 && w5 < w6 && w6 < weights[6], "{w5} {w6}");
        assert!((5..n).all(|k| p[k].unwrap().0 == pb[n - 1]));
        assert!((7..n).all(|k| p[k].unwrap().1 == weights[k]));
        // Both: where the two overlap, one pin, their weighted mean.
        let p = pins(&sides("######......", "......######"), &pa, &pb, &weights, 1, 3);
        let (wa, wb) = ((1.0 - weights[6]) * smooth(0.75), weights[6]);
        let (pin, w) = p[6].unwrap();
        assert!((w - (wa + wb)).abs() < 1e-12);
        assert!(pin.distance((pa[0] * wa + pb[n - 1] * wb) / (wa + wb)) < 1e-12);
        // Too short, or away from its side's end: nothing.
        let p = pins(&sides("#...........", "..........##"), &pa, &pb, &weights, 1, 3);
        assert!(p.iter().all(Option::is_none));
        let p = pins(&sides("....####....", "........###."), &pa, &pb, &weights, 1, 2);
        assert!(p.iter().all(Option::is_none));
    }

    /// The ankle's target is left alone within the leg's own extension
    /// (or 0.95 of its reach), drawn in beyond it, continuously, never
    /// out to the full reach, the farther the target the farther out.
    #[test]
    fn soft_reach_never_straightens_the_leg() {
        let (h, a) = (DVec3::ZERO, DVec3::new(0.0, -0.9, 0.0));
        let at = |d: f64| soft_reach(h, a, DVec3::new(0.0, -d, 0.0), 1.0).length();
        assert_eq!(at(0.5), 0.5);
        assert_eq!(at(0.95), 0.95);
        assert!((at(0.95 + 1e-6) - (0.95 + 1e-6)).abs() < 1e-9);
        let (x, y, z) = (at(0.99), at(1.05), at(1.2));
        assert!(0.95 < x && x < 0.99 && x < y && y < z && z < 1.0, "{x} {y} {z}");
        // A leg more extended than 0.95: its own extension is where the
        // drawing in starts.
        let a = DVec3::new(0.0, -0.98, 0.0);
        assert_eq!(soft_reach(h, a, DVec3::new(0.0, -0.97, 0.0), 1.0).y, -0.97);
        let y = soft_reach(h, a, DVec3::new(0.0, -1.5, 0.0), 1.0).y;
        assert!(-1.0 < y && y < -0.98, "{y}");
        // Fully straight: held at the reach.
        assert_eq!(
            soft_reach(h, DVec3::new(0.0, -1.0, 0.0), DVec3::new(0.0, -2.0, 0.0), 1.0).y,
            -1.0
        );
    }

    /// A foot in contact on both sides in some frames only: each span is
    /// pinned on one place, at full weight inside it, ramped smoothly out
    /// of it; a short gap is bridged; the frames before `first` and those
    /// far from any span are left alone.
    #[test]
    fn pins_of_spans_are_one_place_with_ramps() {
        let n = 12;
        let pa: Vec<DVec3> = (0..n).map(|k| DVec3::new(k as f64, 0.0, 0.0)).collect();
        let pb: Vec<DVec3> = (0..n).map(|k| DVec3::new(k as f64, 0.0, 10.0)).collect();
        let weights: Vec<f64> = (0..n).map(|k| k as f64 / n as f64).collect();
        // Frames 0-2 and 4-5 (a gap of one, bridged), ramp 2.
        let p = pins(&lock("###.##......"), &pa, &pb, &weights, 1, 2);
        let pin = pa[0];
        for (k, q) in p.iter().enumerate().take(6) {
            assert_eq!(*q, Some((pin, 1.0)), "frame {k}");
        }
        let (w6, w7) = (p[6].unwrap().1, p[7].unwrap().1);
        assert!(1.0 > w6 && w6 > w7 && w7 > 0.0, "{w6} {w7}");
        assert_eq!(p[6].unwrap().0, pin);
        assert!(p[8..].iter().all(Option::is_none));
        // An inner span: the mean of the mixed stance over it, ramped in
        // and out.
        let p = pins(&lock("....###....."), &pa, &pb, &weights, 1, 2);
        let mean = (4..7).map(|k| pa[k].lerp(pb[k], weights[k])).sum::<DVec3>() / 3.0;
        assert!(p[..2].iter().all(Option::is_none));
        let (w2, w3) = (p[2].unwrap().1, p[3].unwrap().1);
        assert!(0.0 < w2 && w2 < w3 && w3 < 1.0, "{w2} {w3}");
        assert!((2..9).all(|k| p[k].unwrap().0 == mean));
        assert!((4..7).all(|k| p[k].unwrap().1 == 1.0));
        assert!(p[7..9].iter().all(|q| q.is_some_and(|(_, w)| w < 1.0)));
        assert!(p[9..].iter().all(Option::is_none));
        // Too near the start for a ramp in: pinned from the start, on the
        // foot of the frame before the first moved.
        let p = pins(&lock("..###......."), &pa, &pb, &weights, 1, 3);
        assert!((0..5).all(|k| p[k] == Some((pa[0], 1.0))));
        assert!(p[5..8].iter().all(|q| q.is_some_and(|(_, w)| w < 1.0)));
        assert!(p[8..].iter().all(Option::is_none));
        // Too near both ends: the whole crossfade, as when planted.
        let p = pins(&lock("..###......."), &pa, &pb, &weights, 1, 8);
        assert!((0..n).all(|k| p[k] == Some((pa[k].lerp(pb[k], weights[k]), 1.0))));
        // Planted through the whole crossfade: the mix of the two frames'
        // contact points, as before.
        let p = pins(&lock("############"), &pa, &pb, &weights, 1, 3);
        assert!((0..n).all(|k| p[k] == Some((pa[k].lerp(pb[k], weights[k]), 1.0))));
    }
}
