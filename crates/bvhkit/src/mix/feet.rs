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
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LegLock {
    pub(crate) leg: Leg,
    /// Per crossfade frame: in contact on both sides.
    pub(crate) both: Vec<bool>,
    /// Per crossfade frame: in contact in the frame of the clip before
    /// (`a`) and in that of the clip after (`b`).
    pub(crate) a: Vec<bool>,
    pub(crate) b: Vec<bool>,
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
            legs.push(LegLock { leg, both, a: in_a[i].clone(), b: cb.clone() });
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
    let ramp = ((RAMP_SECONDS / a.motion().frame_time()).round() as usize).max(1);
    let pins: Vec<Pins> = legs
        .iter()
        .enumerate()
        .map(|(i, l)| pins(l, &pa[i], &pb[i], weights, first, ramp))
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
        for (lock, pins) in legs.iter().zip(&pins) {
            let Some((pin, lambda)) = pins[k] else { continue };
            let leg = &lock.leg;
            fk.world(row, &mut wo);
            let pos = |x: &[DAffine3], j: usize| x[j].translation;
            let target = if lambda == 1.0 { pin } else { pos(&wo, leg.point).lerp(pin, lambda) };
            let delta = target - pos(&wo, leg.point);
            let (h, a) = (pos(&wo, leg.hip), pos(&wo, leg.ankle));
            let mut t = a + delta;
            if !lock.planted() {
                let reach = h.distance(pos(&wo, leg.knee)) + pos(&wo, leg.knee).distance(a);
                t = soft_reach(h, a, t, reach);
            }
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
        LegLock { leg, a: both.clone(), b: both.clone(), both }
    }

    /// A leg in contact on one side at a time: `a` and `b` the two sides.
    fn sides(a: &str, b: &str) -> LegLock {
        let leg = Leg { point: 0, ankle: 0, knee: 0, hip: 0 };
        let f = |s: &str| s.chars().map(|c| c == '#').collect::<Vec<bool>>();
        let both = f(a).iter().zip(f(b)).map(|(&x, y)| x && y).collect();
        LegLock { leg, both, a: f(a), b: f(b) }
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
