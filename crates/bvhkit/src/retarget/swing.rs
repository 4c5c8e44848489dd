//! The swing clearance of a retarget's feet ([`super::Options::lock_feet`],
//! after the lock): outside the source's contacts, a target foot whose
//! skate point (its toe joint, else its foot joint: the point `skate_ratio`
//! measures) or sole passes nearer the ground than the source's, scaled by
//! the ratio of hip heights, is lifted to it by two-bone IK of its leg.
//!
//! **Why.** Bone directions are copied, so a target whose toe joint sits
//! farther below and ahead of its ankle than the source's (Bandai Namco's
//! against CMU's) passes its toe a few centimetres lower through every
//! swing: the toe skims the floor at swing speed and reads as skating
//! (`skate_ratio` counts a point below 5 cm moving faster than 0.5 m/s), and
//! a foot may sink below the floor outside a contact where leg proportions
//! differ.
//!
//! **The lift.** Per foot and frame outside the source foot's contacts the
//! deficit `d = max(0, min(k·h_s, 10 cm) − h_t)`, at most 10 cm (near the
//! ground only: a kick keeps its own height, a foot far below the floor is
//! not lifted out of it), the wanted height at least 5.4 cm where `h_s` is
//! above `skate_ratio`'s 5 cm (a foot the source has off the ground, scaled
//! down, would skim it), over the sole's height above the
//! ground (`quality`'s foot height: the lowest point less its planted
//! height) and, when both feet's skate points are the same bone (toe
//! joints, or foot joints), over the skate point's height above the
//! ground, `k` the target's hip height over the source's in metres; then an envelope of the
//! deficits, `L(f) = max_g d(g)·s(1 − |f − g|/(r + 1))` with `s` the
//! smoothstep and `r` [`RAMP_SECONDS`], faded to nothing towards the
//! source's contacts over `r/2` frames (a planted foot is never
//! lifted, and no frame jumps). The ankle is moved up by `L`, the leg solved
//! by [`crate::ik::two_bone`] (the knee kept in its bend plane; a knee bent
//! less than 5° has none, so the lift fades in from 5° to 10°; see below
//! for a folded one), the foot's
//! world orientation kept; only the thigh, knee and ankle rotation channels
//! of frames with a lift change.
//!
//! **No knee pops.** The bend a lift adds to the knee changes by at most
//! half the knee's own 95th-percentile step of bend per frame
//! (`limit_extra`; the lift is lowered to what that bend gives): a leg
//! straightening for a heel strike has no lift, and the lift before it
//! used to be cut in one frame (the knee snapped back 6-7 cm on CMU 12_01's
//! retargets, found by `bvh lint` as pops); it now fades over the frames
//! before.
//!
//! **No jerks.** The lift per frame is then smoothed twice by the binomial
//! kernel `[1, 4, 6, 4, 1]/16`, never lower than before and nothing in the
//! source's contacts (`smooth_lift`), and faded again on a leg nearly
//! straight: the envelope's crossings and the bend's limit left corners,
//! steps of the foot's velocity that `bvh lint` counts as acceleration
//! spikes (issue #27; on CMU 01_01 onto Bandai Namco, with the lock's
//! smoothed reach, 36 spikes without this smoothing, 27 with it).
//! A leg bent past [`crate::clean::footlock::FOLD_DEGREES`] (a crouch) is
//! not lifted either, in full from 20° more (`unfolded`): a folded knee
//! turns by centimetres for the lift's millimetres (the crouching Kinect v1
//! take's swing knee stepped 2.2 cm where the unlocked one steps 1.3).

//!
//! **Against the ground the output reads.** Heights are measured from
//! `quality`'s ground of the output itself, which the lift can raise: where
//! no foot stands still it is the 10th percentile of the soles over the
//! clip (the 14-frame Second Life in-place walk, whose feet slide at
//! 1.98 m/s), and lifting the lowest swing frames moves it up. So after
//! the first pass the output's ground is measured again and, where it
//! rose, the feet the source has off the ground (above GMD's 5 cm) are
//! lifted again by at most that rise, at most twice: onto Kinect v1 the
//! right foot, wanted 5.4 cm up where the source's is 5.06 cm (frame 6),
//! was lifted 5.5 cm and read 4.9 cm against a ground 0.5 cm higher, so
//! GMD's rule counted 13 of 13 steps skating against the source's 11; now
//! 5.4 cm and 11 steps.
//!
//! **Between two pins.** Two contact spans of a foot a short gap apart (at
//! most the lock's 0.1 s ramp: Bandai Namco's kick slides its left foot
//! 20 cm at 1.6 m/s in the three frames between spans ending at 42 and
//! starting at 46) each hold their pin still, so the lock's correction of
//! the contact point changes from the first pin's to the second's across
//! the gap; blended by the ramps' smoothstep weights, that change came
//! in full where the source's own slide peaked, and onto CMU 12_01 the
//! toe's End Site stepped 4.1 cm in frame 44 against 2.9 unlocked
//! (`bvh lint`'s pop). With a [`crate::clean::footlock::Guide`] the lock
//! now spreads that change in proportion to the contact point's own steps
//! over the gap and two frames of each span's end at 30 fps (`bridge`):
//! the foot moves between the pins as the source's moves, scaled (4.1 cm
//! became 2.8 there).

use glam::{DAffine3, DQuat, DVec3};

use crate::clean::footlock::smoothstep;

use crate::Bvh;
use crate::edit::JointChannels;
use crate::ik::two_bone;
use crate::kinematics::Kinematics;
use crate::quality;

/// The ramp of a lift, in and out (seconds).
const RAMP_SECONDS: f64 = 0.1;

/// The clearance held (metres): a source point higher than this, scaled,
/// asks the target's for this much only (twice `skate_ratio`'s 5 cm: the
/// near-ground swing, not the height of a kick); and the largest lift (a
/// foot far below the floor is not a clearance to fix).
const CLEARANCE: f64 = 0.1;

/// A source point above GMD's contact height (`skate_ratio`'s 5 cm) asks
/// the target's for at least this much above it (metres): scaled down, a
/// foot the source lifts off the ground would skim it in the target.
const CLEAR_ABOVE: f64 = 0.004;

/// A knee bent less than this (degrees) is not lifted; up to twice this,
/// the lift fades in.
const STRAIGHT: f64 = 5.0;

/// Lifts smaller than this (metres) are left alone.
const LEAST: f64 = 1e-4;

/// What [`lift`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Lifted {
    /// Foot-frames lifted.
    pub frames: usize,
    /// The largest lift (metres).
    pub most: f64,
}

/// The weight of a lift on a leg bent `deg` degrees at the knee: none
/// below [`STRAIGHT`] (no bend plane), in full from twice that, and fading
/// to none again on a folded leg, from [`crate::clean::footlock::FOLD_DEGREES`]
/// to 20° more (a folded knee turns by centimetres for a millimetre's lift:
/// the Kinect v1 take's crouch, 173°).
fn unfolded(deg: f64) -> f64 {
    let fold = crate::clean::footlock::FOLD_DEGREES;
    smoothstep((deg - STRAIGHT) / STRAIGHT) * (1.0 - smoothstep((deg - fold) / 20.0))
}

/// Heights above the ground (metres) of joint `j` over the clip.
fn heights(bvh: &Bvh, q: &quality::Report, mode: crate::PositionChannels, j: usize) -> Vec<f64> {
    let u = q.up.vector();
    let mut out = Vec::with_capacity(bvh.motion().n_frames());
    Kinematics::new(bvh.skeleton(), mode).positions_over(bvh.motion(), &[j], |_, p| {
        out.push(p[0].dot(u) * q.metres_per_unit - q.ground);
    });
    out
}

/// The envelope of the deficits `d` (see the module documentation), faded
/// towards the frames where `planted`.
fn envelope(d: &[f64], planted: &[bool], r: usize) -> Vec<f64> {
    let n = d.len();
    let mut l = vec![0.0f64; n];
    for (g, &x) in d.iter().enumerate() {
        if x <= 0.0 {
            continue;
        }
        for (f, y) in l.iter_mut().enumerate().take((g + r + 1).min(n)).skip(g.saturating_sub(r)) {
            *y = y.max(x * smoothstep(1.0 - f.abs_diff(g) as f64 / (r + 1) as f64));
        }
    }
    // Distance to the nearest planted frame, both ways.
    let dist = crate::clean::footlock::distance_to_nearest(planted);
    let fade = (r / 2).max(1);
    for (y, &k) in l.iter_mut().zip(&dist) {
        if k != usize::MAX {
            *y *= smoothstep(k as f64 / (fade + 1) as f64);
        }
    }
    l
}

/// `extra` held to change by at most `step` per frame: each frame at most
/// the least of `extra[g] + step·|f − g|` over every frame `g` (a frame
/// that may not bend lowers its neighbours' instead of being jumped to).
fn limit_extra(extra: &[f64], step: f64) -> Vec<f64> {
    let mut out = extra.to_vec();
    for f in 1..out.len() {
        out[f] = out[f].min(out[f - 1] + step);
    }
    for f in (0..out.len().saturating_sub(1)).rev() {
        out[f] = out[f].min(out[f + 1] + step);
    }
    out
}

/// `lift` smoothed twice by the binomial kernel `[1, 4, 6, 4, 1]/16` (a
/// frame's lift spread over the four frames either side), never lower than
/// `lift` (a foot keeps its clearance), nothing where `planted`: a corner
/// of the curve where two bumps of the envelope cross becomes a bend over
/// those frames.
fn smooth_lift(lift: &[f64], planted: &[bool]) -> Vec<f64> {
    let once = crate::clean::footlock::binomial_pass(lift, false);
    let mut a = crate::clean::footlock::binomial_pass(&once, false);
    for ((x, &p), &l) in a.iter_mut().zip(planted).zip(lift) {
        *x = if p { 0.0 } else { x.max(l) };
    }
    a
}

/// Lifts the swing feet of `out` (the retarget of `source`, its feet
/// locked) to the source's clearance (see the module documentation). `qs`
/// is the source's feet ([`quality::contacts`]), `qo_options` how the
/// output's are measured (its up axis), `k` the target's hip height over the source's in
/// file units.
pub(crate) fn lift(
    source: &Bvh,
    qs: &quality::Report,
    out: &mut Bvh,
    qo_options: &quality::Options,
    k: f64,
) -> Lifted {
    let (mut done, mut ground) = lift_pass(source, qs, out, qo_options, k, CLEARANCE);
    // The ground the lifted output reads (`quality`'s: where no foot stands
    // still, the 10th percentile of the soles, which a lift raises): lifted
    // again by what it rose, at most twice (see the module documentation).
    for _ in 0..2 {
        if done.frames == 0 {
            break;
        }
        let now = quality::contacts(out, qo_options).ground;
        let rise = now - ground;
        if rise.is_nan() || rise <= LEAST {
            break;
        }
        let (more, g) = lift_pass(source, qs, out, qo_options, k, rise);
        if more.frames == 0 {
            break;
        }
        done.frames = done.frames.max(more.frames);
        done.most += more.most;
        ground = g;
    }
    done
}

/// One pass of [`lift`]: deficits against the ground `out` reads now, each
/// at most `cap` (metres); what it did and that ground (metres).
fn lift_pass(
    source: &Bvh,
    qs: &quality::Report,
    out: &mut Bvh,
    qo_options: &quality::Options,
    k: f64,
    cap: f64,
) -> (Lifted, f64) {
    let mut done = Lifted::default();
    let n = out.motion().n_frames();
    if n < 2 || source.motion().n_frames() != n {
        return (done, f64::NAN);
    }
    let qo = quality::contacts(out, qo_options);
    let ground = qo.ground;
    let mode = qo_options.position_channels;
    let km = k * qo.metres_per_unit / qs.metres_per_unit;
    if !(km.is_finite() && km > 0.0) {
        return (done, ground);
    }
    let skel = out.skeleton().clone();
    let layouts: Vec<JointChannels> = skel.joints().iter().map(JointChannels::of).collect();
    let parent = |j: usize| skel.joints()[j].parent().map(|p| p.index());
    let bones = crate::retarget::names::classify(&skel);
    let fps = out.motion().fps();
    let r = ((RAMP_SECONDS * fps).round() as usize).max(2);
    let u = qo.up.vector();
    let mpu = qo.metres_per_unit;
    let width = out.motion().n_channels();

    for (fi, foot) in qo.feet.iter().enumerate() {
        let Some(si) = qs.feet.iter().position(|f| f.name == foot.name) else { continue };
        let (Some(&a), Some(planted)) = (foot.points.first(), qs.series.contact.get(si)) else {
            continue;
        };
        let Some((h, kn)) = crate::clean::footlock::leg_joints(&skel, &bones, a) else { continue };
        let (kp, ap) = (parent(kn).unwrap_or(h), parent(a).unwrap_or(kn));
        if layouts[h].n_rot != 3 || layouts[kn].n_rot != 3 {
            continue;
        }
        // Deficits: the sole's; and the skate point's when both are the
        // same bone (toe and toe, or foot joint and foot joint: a toe is
        // not held to an ankle's swing).
        let (ss, st) = (&qs.series.foot_height[si], &qo.series.foot_height[fi]);
        let toe = |f: &quality::Foot| f.skate_point != f.points[0];
        let same = toe(&qs.feet[si]) == toe(foot);
        let (hs, ht) = if same {
            (
                heights(source, qs, mode, qs.feet[si].skate_point),
                heights(out, &qo, mode, foot.skate_point),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        let d: Vec<f64> = (0..n)
            .map(|f| {
                if planted[f] {
                    return 0.0;
                }
                // Off the ground as the source is: a source point above
                // GMD's contact height keeps the target's above it too.
                let off = qo_options.skate_height + CLEAR_ABOVE;
                let want = |h: f64| {
                    let w = (km * h).min(CLEARANCE);
                    if h >= qo_options.skate_height { w.max(off) } else { w }
                };
                // After the first pass only where the source is off the
                // ground by GMD's height.
                let again = cap < CLEARANCE;
                let mut x = if again && ss[f] < qo_options.skate_height {
                    0.0
                } else {
                    want(ss[f]) - st[f]
                };
                if same && !(again && hs[f] < qo_options.skate_height) {
                    x = x.max(want(hs[f]) - ht[f]);
                }
                if x.is_finite() && x > LEAST { x.min(cap) } else { 0.0 }
            })
            .collect();
        if d.iter().all(|&x| x == 0.0) {
            continue;
        }
        let l = envelope(&d, planted, r);

        // The leg's world motion (the joints above it, the leg alone).
        let mut keep = Vec::new();
        let mut at = Some(a);
        while let Some(i) = at {
            keep.push(i);
            at = parent(i);
        }
        keep.sort_unstable();
        let idx = |j: usize| keep.iter().position(|&x| x == j).unwrap_or(0);
        let (ia, ik, ih, ikp, iap) = (idx(a), idx(kn), idx(h), idx(kp), idx(ap));
        let ip = parent(h).map(idx);
        let (fk, gather) = Kinematics::new(&skel, mode).subset(&keep);
        let mut scratch = fk.scratch();
        let mut compact = vec![0.0; gather.len()];
        let mut world = vec![DAffine3::IDENTITY; keep.len()];
        let values = out.motion_mut().values_mut();
        // Every frame's leg (hip, knee, ankle) and its bend (0 straight).
        let legs: Vec<(DVec3, DVec3, DVec3)> = (0..n)
            .map(|f| {
                for (v, &c) in compact.iter_mut().zip(&gather) {
                    *v = values[f * width + c];
                }
                fk.world_with(&compact, &mut scratch, &mut world);
                (world[ih].translation, world[ik].translation, world[ia].translation)
            })
            .collect();
        let bend = |(ph, pk, pa): (DVec3, DVec3, DVec3)| (pk - ph).angle_between(pa - pk);
        let (l1, l2) = ((legs[0].1 - legs[0].0).length(), (legs[0].2 - legs[0].1).length());
        // Each frame's lift, faded out on a leg nearly straight (it has no
        // bend plane to keep: none below 5° of knee bend, in full from
        // 10°), and the bend it asks of the knee beyond its own.
        let want: Vec<f64> = (0..n).map(|f| l[f] * unfolded(bend(legs[f]).to_degrees())).collect();
        let extra: Vec<f64> = (0..n)
            .map(|f| {
                let (ph, _, pa) = legs[f];
                if want[f] <= LEAST {
                    return 0.0;
                }
                let d = (pa + u * (want[f] / mpu) - ph).length();
                let c = ((d * d - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)).clamp(-1.0, 1.0);
                (c.acos() - bend(legs[f])).max(0.0)
            })
            .collect();
        // That extra bend changes by at most half the knee's 95th-percentile
        // step of bend per frame (`limit_extra`; the largest step is often
        // a glitch of the capture): a lift next to a straight leg (a heel
        // strike) fades over the frames before it instead of snapping the
        // knee back in one.
        let steps: Vec<f64> = (1..n).map(|f| (bend(legs[f]) - bend(legs[f - 1])).abs()).collect();
        let fastest = quality::stats::quantile(&steps, 0.95).unwrap_or(0.0);
        let extra = limit_extra(&extra, 0.5 * fastest);
        // The lift that gives the limited bend: the ankle moved up to the
        // distance from the hip that bend gives (at most `want`).
        let raw: Vec<f64> = (0..n)
            .map(|f| {
                if extra[f] <= 0.0 {
                    return 0.0;
                }
                let (ph, _, pa) = legs[f];
                let th = (bend(legs[f]) + extra[f]).min(std::f64::consts::PI);
                let reach = (l1 * l1 + l2 * l2 + 2.0 * l1 * l2 * th.cos()).max(0.0).sqrt();
                let v = pa - ph;
                let (b, c) = (v.dot(u), v.length_squared() - reach * reach);
                let disc = b * b - c;
                let x = if disc >= 0.0 { -b - disc.sqrt() } else { -b };
                (x * mpu).clamp(0.0, want[f])
            })
            .collect();
        // Smoothed (`smooth_lift`): the envelope's maxima, the bend's limit
        // and the fade on a straight leg each leave a corner, a step of
        // the foot's velocity (`bvh lint`'s acceleration spikes on the
        // feet and knees of CMU 01_01 onto Bandai Namco); never into the
        // source's contacts.
        let lifts = smooth_lift(&raw, planted);
        for f in 0..n {
            // Faded again on a leg nearly straight: the smoothing spreads a
            // lift into frames that had none.
            let lift = lifts[f] * unfolded(bend(legs[f]).to_degrees());
            if lift <= LEAST {
                continue;
            }
            let (ph, pk, pa) = legs[f];
            let row = &values[f * width..(f + 1) * width];
            for (v, &c) in compact.iter_mut().zip(&gather) {
                *v = row[c];
            }
            fk.world_with(&compact, &mut scratch, &mut world);
            let rot = |i: usize| DQuat::from_mat3(&world[i].matrix3).normalize();
            let Some((dq, r1, _)) = two_bone(ph, pk, pa, pa + u * (lift / mpu)) else {
                continue;
            };
            let (qp, qh, qk, qa) = (ip.map_or(DQuat::IDENTITY, rot), rot(ih), rot(ik), rot(ia));
            // The thigh's joints turn by `dq`, the shin's by `dq·r1` (the
            // knee's parent is the hip and the foot's the knee on a plain
            // leg).
            let wh = dq * qh;
            let wk = dq * r1 * qk;
            let lh = (qp.inverse() * wh).normalize();
            let lk = ((dq * rot(ikp)).inverse() * wk).normalize();
            let la = ((dq * r1 * rot(iap)).inverse() * qa).normalize();
            let (before, rest) = values.split_at_mut(f * width);
            let row = &mut rest[..width];
            for (j, q) in [(h, lh), (kn, lk), (a, la)] {
                if layouts[j].n_rot == 0 {
                    continue;
                }
                let near = if f == 0 {
                    layouts[j].angles(row)
                } else {
                    layouts[j].angles(&before[(f - 1) * width..])
                };
                layouts[j].write_rotation(q, Some(near), row);
            }
            done.frames += 1;
            done.most = done.most.max(lift);
        }
    }
    (done, ground)
}

/// The move of a guided lock's contact point between two spans of one
/// leg across a short gap (see the module documentation, **Between two
/// pins**): `corr` per frame the lock's correction of the contact point
/// (`None`: none) and of the ankle's height, `p` the point as the transfer
/// places it, `spans` the leg's spans (first and last frame, sorted) and
/// `ramps` their laid ramps (in, out), `into` the lock's ramp (frames): a
/// gap of at most that many frames, both ramps laid across it, is
/// bridged, over a window widened into both spans' ends (at most a third
/// of each) to `2·into + 2` steps. Across the up axis the correction goes
/// from the window's first frame's to its last frame's, each step the
/// share of the change that the point's own step is of its own travel
/// over the window (plus a tenth of an even share): the point moves when
/// and as the transfer moves it, its steps scaled, never the whole change
/// in the frames where its own motion peaks. Along the up axis the
/// corrections are kept.
pub(crate) fn bridge(
    corr: &mut [Option<(DVec3, f64)>],
    p: &[DVec3],
    spans: &[(usize, usize)],
    ramps: &[(usize, usize)],
    u: DVec3,
    into: usize,
) {
    let n = corr.len().min(p.len());
    let horiz = |v: DVec3| v - u * v.dot(u);
    for i in 1..spans.len().min(ramps.len()) {
        let ((s1, e1), (s2, e2)) = (spans[i - 1], spans[i]);
        if s2 <= e1 + 1 || e2 >= n {
            continue;
        }
        let gap = s2 - e1 - 1;
        if gap > into || ramps[i - 1].1 + ramps[i].0 < gap {
            continue;
        }
        // The window: the gap and frames of both spans' ends.
        let short = (2 * (into + 1)).saturating_sub(gap + 1).div_ceil(2);
        let (a, b) = (e1 - short.min((e1 - s1) / 3), s2 + short.min((e2 - s2) / 3));
        let (Some((ca, _)), Some((cb, _))) = (corr[a], corr[b]) else { continue };
        if (a + 1..b).any(|f| corr[f].is_none()) {
            continue;
        }
        let (from, to) = (horiz(ca), horiz(cb));
        let steps: Vec<f64> = (a..b).map(|f| horiz(p[f + 1] - p[f]).length()).collect();
        let total: f64 = steps.iter().sum();
        let even = 0.1 * total / steps.len() as f64;
        if !(total > 0.0 && total.is_finite()) {
            continue;
        }
        let mut done = 0.0;
        for (k, f) in (a + 1..b).enumerate() {
            done += steps[k] + even;
            let tau = done / (total * 1.1);
            if let Some((c, h)) = corr[f] {
                corr[f] = Some((from + (to - from) * tau + u * c.dot(u), h));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{bridge, envelope, limit_extra, smooth_lift};

    #[test]
    fn a_short_gap_s_move_follows_the_point_s_own_steps() {
        use glam::DVec3;
        // Spans 0..=9 and 13..=22 (a gap of three frames), ramps meeting;
        // the point's own steps along X rise and fall (a slide peaking in
        // the gap); the correction is 0 before, 1 along Z after (the
        // smoothstep blend of the lock, concentrated in the gap), and
        // 0.05 along the up axis (Y) everywhere.
        let n = 23;
        let own = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1, 0.2, 0.4, 0.8, 1.0, 0.8, 0.4, 0.2, 0.1];
        let mut x = 0.0;
        let p: Vec<DVec3> = (0..n)
            .map(|f| {
                x += own.get(f).copied().unwrap_or(0.0);
                DVec3::new(x, 0.0, 0.0)
            })
            .collect();
        let u = DVec3::Y;
        let blend = |f: usize| super::smoothstep(((f as f64 - 9.0) / 4.0).clamp(0.0, 1.0));
        let mut corr: Vec<Option<(DVec3, f64)>> =
            (0..n).map(|f| Some((DVec3::new(0.0, 0.05, blend(f)), 0.0))).collect();
        let before = corr.clone();
        let spans = [(0, 9), (13, 22)];
        bridge(&mut corr, &p, &spans, &[(0, 3), (3, 0)], u, 3);
        // The window: frames 7 to 15 (8 steps); outside it nothing moved,
        // along the up axis nothing anywhere.
        for f in (0..7).chain(15..n) {
            assert_eq!(corr[f], before[f], "{f}");
        }
        for c in &corr {
            assert_eq!(c.unwrap().0.y, 0.05);
        }
        // Each step of the correction is the point's own step's share of
        // the change (plus a tenth of an even share).
        let total: f64 = (7..15).map(|f| own[f + 1]).sum();
        for f in 7..15 {
            let step = corr[f + 1].unwrap().0.z - corr[f].unwrap().0.z;
            let want = (own[f + 1] + 0.1 * total / 8.0) / (1.1 * total);
            assert!((step - want).abs() < 1e-12, "{f}: {step} {want}");
        }
        // The largest step of the correction is smaller than the blend's.
        let most = |c: &[Option<(DVec3, f64)>]| {
            c.windows(2).map(|w| w[1].unwrap().0.z - w[0].unwrap().0.z).fold(0.0, f64::max)
        };
        assert!(most(&corr) < 0.75 * most(&before), "{} {}", most(&corr), most(&before));
        // A gap longer than the ramp is left to the lock's blend.
        let mut long = before.clone();
        bridge(&mut long, &p, &[(0, 8), (13, 22)], &[(0, 4), (4, 0)], u, 3);
        assert_eq!(long, before);
    }

    #[test]
    fn the_extra_bend_changes_by_at_most_the_step_and_never_grows() {
        // A bend wanted up to the frame before a straight leg (0 there).
        let extra = [0.0, 0.1, 0.3, 0.5, 0.6, 0.0, 0.0, 0.4];
        let l = limit_extra(&extra, 0.15);
        for (a, b) in l.iter().zip(&extra) {
            assert!(a <= b, "{l:?}");
        }
        for w in l.windows(2) {
            assert!((w[1] - w[0]).abs() <= 0.15 + 1e-12, "{l:?}");
        }
        // Before the straight frame it falls in steps: 0.15, then 0.3.
        assert!((l[4] - 0.15).abs() < 1e-12 && (l[3] - 0.3).abs() < 1e-12, "{l:?}");
        assert_eq!(l[5], 0.0);
        assert!((l[7] - 0.15).abs() < 1e-12, "{l:?}");
    }

    #[test]
    fn the_smoothed_lift_rounds_corners_never_lowers_and_spares_planted_frames() {
        // Two ramps meeting in a V at frame 10 (the envelope's maximum of
        // two bumps), a plateau, then planted frames from 20.
        let mut lift: Vec<f64> = (0..30)
            .map(|f: i32| if f < 20 { 0.03 + 0.004 * ((f - 10).abs() as f64) } else { 0.0 })
            .collect();
        lift[19] = 0.0;
        let planted: Vec<bool> = (0..30).map(|f| f >= 20).collect();
        let l = smooth_lift(&lift, &planted);
        for (f, (a, b)) in l.iter().zip(&lift).enumerate() {
            assert!(*a >= *b - 1e-15 || planted[f], "{f}: {l:?}");
        }
        assert!(l[20..].iter().all(|&x| x == 0.0), "{l:?}");
        // The V's corner: its second difference (8 mm) spread out.
        let second = |v: &[f64], f: usize| v[f + 1] - 2.0 * v[f] + v[f - 1];
        assert!((second(&lift, 10) - 0.008).abs() < 1e-12);
        assert!(second(&l, 10) < 0.004, "{}", second(&l, 10));
        assert!(l[10] > lift[10]);
    }

    #[test]
    fn the_envelope_covers_each_deficit_ramps_and_spares_planted_frames() {
        let mut d = vec![0.0; 30];
        d[15] = 0.02;
        let mut planted = vec![false; 30];
        planted[..3].fill(true);
        let l = envelope(&d, &planted, 4);
        assert_eq!(l[15], 0.02);
        // Ramped: smaller away from the deficit, nothing beyond the ramp.
        assert!(l[13] < l[14] && l[14] < 0.02 && l[12] > 0.0);
        assert_eq!(l[10], 0.0);
        assert_eq!(l[20], 0.0);
        // A deficit next to a planted frame is faded to nothing there.
        let mut d = vec![0.0; 30];
        d[4] = 0.02;
        let l = envelope(&d, &planted, 4);
        assert!(l[..3].iter().all(|&x| x == 0.0));
        assert!(l[4] > 0.0 && l[4] < 0.02, "{l:?}");
        // No jump larger than the ramp allows.
        for w in l.windows(2) {
            assert!((w[1] - w[0]).abs() <= 0.02 * 0.6, "{l:?}");
        }
    }
}
