//! Analytic two-bone inverse kinematics of a leg (hip, knee, ankle): the
//! one solver of `bvh clean --lock-feet` (`clean::footlock`) and of the
//! foot lock through a concat's crossfade (`mix::feet`).

use glam::{DQuat, DVec3};

/// The component of `v` perpendicular to the unit vector `axis`.
pub(crate) fn perp(v: DVec3, axis: DVec3) -> DVec3 {
    v - axis * v.dot(axis)
}

/// Two-bone IK: the world rotations that bring the ankle `a` of the leg
/// hip `h`, knee `k` to `t` (clamped to the leg's reach): `(D, R1,
/// reached)`, `R1` the knee's bend about its bend plane's normal (applied
/// first, about the knee), `D` the thigh's swing and twist about the hip
/// (the knee kept in its plane), `reached` whether `t` was within reach;
/// `None` for a straight or degenerate leg (no bend plane).
pub(crate) fn two_bone(h: DVec3, k: DVec3, a: DVec3, t: DVec3) -> Option<(DQuat, DQuat, bool)> {
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
    fn two_bone_reaches_a_target_keeping_bone_lengths_and_the_bend_plane() {
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
        assert!(perp(k2 - h, (a2 - h).normalize()).z > 0.0);
        // Out of reach: clamped, and said.
        let far = two_bone(h, k, a, DVec3::new(0.0, -2.0, 0.0)).unwrap();
        assert!(!far.2);
        // A straight leg has no bend plane.
        assert!(two_bone(h, DVec3::new(0.0, 0.5, 0.0), a, t).is_none());
    }
}
