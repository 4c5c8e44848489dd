//! Foot locking: each foot in contact pinned to one point per contact span
//! by analytic two-bone IK of its leg.
//!
//! The feet and their contacts are [`crate::quality::lint`]'s (the foot
//! joint and its toes by the name families, in contact when low and slow).
//! For each contact span of a foot (two frames or more), the pinned point
//! is the mean world position over the span of the foot's contact point
//! (the toe joint when there is one, else the foot joint: the point GMD's
//! skating ratio measures). Around the span the pin fades in and out over
//! [`RAMP_SECONDS`] with a smoothstep weight `w`, so the leg never pops; a
//! frame's correction is `P - p` inside a span (`p` the contact point as
//! captured) and `Σ wᵢ (Pᵢ - p) / max(1, Σ wᵢ)` over the spans near it
//! outside; a frame far from every span is copied bit for bit.
//!
//! The leg is solved analytically, hip (the thigh joint), knee, ankle: the
//! knee bends about the normal of its own bend plane to the angle that the
//! law of cosines gives for the hip-to-target distance, the thigh swings
//! by the shortest arc onto the target, then twists about the hip-target
//! axis so that the knee points where it pointed in the capture (the bend
//! plane is kept). The foot keeps its world orientation, so the toes keep
//! their roll. A target out of reach is clamped to the leg's length (the
//! frames are reported; the hips are not lowered). Only the thigh, knee
//! and ankle rotation channels change: every other joint, the hips
//! included, stays bit for bit.

use glam::{DAffine3, DQuat, DVec3};

use crate::Bvh;
use crate::edit::{JointChannels, PoseLayout};
use crate::quality::{self, runs};

/// Length of the blend ramps before and after a span (seconds).
pub const RAMP_SECONDS: f64 = 0.15;

/// What [`lock`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Locked {
    pub(crate) spans: usize,
    pub(crate) unreachable: usize,
    pub(crate) notes: Vec<String>,
}

fn smoothstep(x: f64) -> f64 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// Locks the feet of `bvh` in place (see the module documentation).
pub(crate) fn lock(bvh: &mut Bvh, layouts: &[JointChannels], q: &quality::Options) -> Locked {
    let mut done = Locked::default();
    let n = bvh.motion().n_frames();
    let width = bvh.motion().n_channels();
    if n < 2 || width == 0 {
        return done;
    }
    let report = quality::lint(bvh, q);
    if report.feet.is_empty() {
        done.notes.push("no feet found: nothing locked".into());
        return done;
    }
    let skel = bvh.skeleton().clone();
    let nj = skel.len();
    let names = skel.display_names();
    let layout = PoseLayout::new(&skel, q.position_channels);
    let mut world = vec![DAffine3::IDENTITY; n * nj];
    for (f, w) in world.chunks_exact_mut(nj).enumerate() {
        layout.world(bvh.motion().frame(f), w);
    }
    let input = bvh.motion().values().to_vec();
    let fps = bvh.motion().fps();
    let ramp = ((RAMP_SECONDS * fps).round() as usize).max(2);
    let rot = |f: usize, j: usize| DQuat::from_mat3(&world[f * nj + j].matrix3);
    let pos = |f: usize, j: usize| world[f * nj + j].translation;
    let values = bvh.motion_mut().values_mut();

    for (fi, foot) in report.feet.iter().enumerate() {
        let Some(&a) = foot.points.first() else { continue };
        let parent = |j: usize| skel.joints()[j].parent().map(|p| p.index());
        let (Some(k), Some(h)) = (parent(a), parent(a).and_then(parent)) else {
            done.notes.push(format!("{}: no knee and hip above the foot: not locked", names[a]));
            continue;
        };
        if layouts[h].n_rot != 3 || layouts[k].n_rot != 3 {
            done.notes.push(format!(
                "{}: the hip ({}) and knee ({}) need three rotation channels: not locked",
                names[a], names[h], names[k]
            ));
            continue;
        }
        let hp = parent(h);
        let pin = foot.skate_point;
        let Some(contact) = report.series.contact.get(fi) else { continue };
        let spans: Vec<(usize, usize)> =
            runs(contact.iter().copied()).into_iter().filter(|(s, e)| e > s).collect();
        // Per frame: Σ w (P - p) and Σ w.
        let mut sum_w = vec![0.0f64; n];
        let mut acc = vec![DVec3::ZERO; n];
        // Inside a span its own pin alone (a neighbour's ramp does not pull).
        let mut inside: Vec<Option<DVec3>> = vec![None; n];
        for &(s, e) in &spans {
            let target = (s..=e).map(|f| pos(f, pin)).sum::<DVec3>() / (e - s + 1) as f64;
            if !target.is_finite() {
                continue;
            }
            done.spans += 1;
            for slot in &mut inside[s..=e] {
                *slot = Some(target);
            }
            for f in s.saturating_sub(ramp)..(e + ramp + 1).min(n) {
                let w = if f < s {
                    smoothstep(1.0 - (s - f) as f64 / (ramp + 1) as f64)
                } else if f > e {
                    smoothstep(1.0 - (f - e) as f64 / (ramp + 1) as f64)
                } else {
                    1.0
                };
                sum_w[f] += w;
                acc[f] += w * (target - pos(f, pin));
            }
        }
        for f in 0..n {
            if sum_w[f] <= 0.0 {
                continue;
            }
            let delta = match inside[f] {
                Some(target) => target - pos(f, pin),
                None => acc[f] / sum_w[f].max(1.0),
            };
            let t = pos(f, a) + delta;
            let Some((d, r1, reached)) = two_bone(pos(f, h), pos(f, k), pos(f, a), t) else {
                continue;
            };
            done.unreachable += usize::from(!reached);
            let wp = hp.map_or(DQuat::IDENTITY, |p| rot(f, p));
            let (wh, wk, wa) = (rot(f, h), rot(f, k), rot(f, a));
            let wh2 = d * wh;
            let wk2 = d * r1 * wk;
            let lh = (wp.inverse() * wh2).normalize();
            let lk = (wh2.inverse() * wk2).normalize();
            let la = (wk2.inverse() * wa).normalize();
            let src = &input[f * width..(f + 1) * width];
            let row = &mut values[f * width..(f + 1) * width];
            layouts[h].write_rotation(lh, Some(layouts[h].angles(src)), row);
            layouts[k].write_rotation(lk, Some(layouts[k].angles(src)), row);
            if layouts[a].n_rot > 0 {
                layouts[a].write_rotation(la, Some(layouts[a].angles(src)), row);
            }
        }
    }
    if done.unreachable > 0 {
        done.notes.push(format!(
            "{} foot-frame(s) out of the leg's reach: clamped (the hips were not lowered)",
            done.unreachable
        ));
    }
    done
}

/// The component of `v` perpendicular to the unit vector `axis`.
fn perp(v: DVec3, axis: DVec3) -> DVec3 {
    v - axis * v.dot(axis)
}

/// Two-bone IK: the world rotations that bring the ankle `a` of the leg
/// hip `h`, knee `k` to `t`: `(D, R1, reached)`, `R1` the knee's bend
/// about its bend plane's normal (applied first, about the knee), `D` the
/// thigh's swing and twist about the hip (the knee kept in its plane);
/// `None` for a straight or degenerate leg (no bend plane).
fn two_bone(h: DVec3, k: DVec3, a: DVec3, t: DVec3) -> Option<(DQuat, DQuat, bool)> {
    let (u, v) = (h - k, a - k);
    let (l1, l2) = (u.length(), v.length());
    let m = u.cross(v);
    if !(l1 > 0.0 && l2 > 0.0) || m.length() <= 1e-9 * l1 * l2 || !t.is_finite() {
        return None;
    }
    let want = (t - h).length();
    let (lo, hi) = ((l1 - l2).abs() * (1.0 + 1e-9), (l1 + l2) * (1.0 - 1e-9));
    let d = want.clamp(lo, hi);
    let reached = (d - want).abs() <= 1e-6 * (l1 + l2);
    let theta0 = u.angle_between(v);
    let theta1 = ((l1 * l1 + l2 * l2 - d * d) / (2.0 * l1 * l2)).clamp(-1.0, 1.0).acos();
    let r1 = DQuat::from_axis_angle(m.normalize(), theta1 - theta0);
    let a1 = k + r1 * v;
    let axis = (t - h).try_normalize()?;
    let r2 = DQuat::from_rotation_arc((a1 - h).try_normalize()?, axis);
    // Twist about the hip-target axis so the knee points where it did.
    let pole_was = perp(k - h, (a - h).try_normalize()?);
    let want_pole = perp(pole_was, axis);
    let pole_now = perp(r2 * (k - h), axis);
    let twist = if want_pole.length() > 1e-12 && pole_now.length() > 1e-12 {
        let (x, y) = (pole_now.normalize(), want_pole.normalize());
        x.cross(y).dot(axis).atan2(x.dot(y))
    } else {
        0.0
    };
    let d = DQuat::from_axis_angle(axis, twist) * r2;
    Some((d, r1, reached))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_bone_reaches_a_target_and_keeps_the_bend_plane() {
        let (h, k, a) = (DVec3::new(0.0, 1.0, 0.0), DVec3::new(0.0, 0.5, 0.1), DVec3::ZERO);
        let t = DVec3::new(0.05, 0.1, 0.05);
        let (d, r1, reached) = two_bone(h, k, a, t).unwrap();
        assert!(reached);
        let k2 = h + d * (k - h);
        let a2 = k2 + d * r1 * (a - k);
        assert!((a2 - t).length() < 1e-12, "{a2}");
        // Bone lengths kept.
        assert!(((k2 - h).length() - (k - h).length()).abs() < 1e-12);
        assert!(((a2 - k2).length() - (a - k).length()).abs() < 1e-12);
        // The knee still points forward (+z), as it did.
        let pole = perp(k2 - h, (a2 - h).normalize());
        assert!(pole.z > 0.0);
        // Out of reach: clamped.
        let far = two_bone(h, k, a, DVec3::new(0.0, -2.0, 0.0)).unwrap();
        assert!(!far.2);
    }
}
