//! The stance of a retarget's feet ([`super::Options::lock_feet`]): where
//! the target's feet stand while the source's are in contact, the guide
//! [`crate::clean::footlock`] pins them by.
//!
//! **On the ground.** Inside each of the source's contact spans the
//! target's sole (the lowest of its foot's points, each less its planted
//! height: [`crate::quality`]'s foot height) stands on the target's
//! ground, the source's ground scaled (`Grounding::floor`), for the whole
//! span: a source foot still landing or already lifting at a span's edges
//! (contact is by height below 5 cm, so such a foot counts) does not hold
//! the target's up; the lock's ramps lie outside the span's frames.
//!
//! **Sliding with the source.** The source's contact is by height and a
//! speed below 0.5 m/s, so a contact of a sliding foot (CMU 12_01's, PyMO's
//! walk) may carry it 20 cm or more: pinned to one point, the target's leg
//! would be out of reach for the span's second half (and the hips lowered
//! by as much). Each pin follows the source foot's slide instead, scaled:
//! per step the horizontal displacement of the source foot's slowest point
//! (the point it rolls over, whose speed is the foot's speed in
//! [`crate::quality`]), summed into a path, turned into the target's axes
//! and scaled by the ratio of hip heights. A still source foot holds its
//! pin; one that slides slides the target's by as much, never more.

use glam::{DMat3, DVec3};

use crate::Bvh;
use crate::kinematics::Kinematics;
use crate::quality;

/// Which point of a source foot a target's pin follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Follow {
    /// A joint of the source (the target's contact point's own: its foot
    /// joint, or its toe joint when both have one).
    Joint(usize),
    /// The foot's slowest point in each step (a target's toe over a source
    /// foot without one: where the source's foot rests on the ground).
    Slowest,
}

/// Per source foot (in `qs.feet`'s order, each followed as `follow`
/// says): per frame, where the foot has slid to (source file units turned
/// by `c` and scaled by `k`, across the source's up axis; frame 0 at the
/// origin): the sum of the horizontal steps of the point followed.
pub(crate) fn slides(
    source: &Bvh,
    qs: &quality::Report,
    follow: &[Follow],
    mode: crate::PositionChannels,
    c: DMat3,
    k: f64,
) -> Vec<Vec<DVec3>> {
    let skel = source.skeleton();
    let n = source.motion().n_frames();
    let mut need = vec![false; skel.len()];
    for foot in &qs.feet {
        for &p in &foot.points {
            if p >= skel.len() {
                continue;
            }
            let mut at = Some(p);
            while let Some(i) = at.filter(|&i| !need[i]) {
                need[i] = true;
                at = skel.joints()[i].parent().map(|p| p.index());
            }
        }
    }
    let keep: Vec<usize> = (0..skel.len()).filter(|&j| need[j]).collect();
    let idx = |j: usize| keep.binary_search(&j).unwrap_or(0);
    let (fk, gather) = Kinematics::new(skel, mode).subset(&keep);
    let (mut compact, mut now) = (vec![0.0; gather.len()], vec![DVec3::ZERO; keep.len()]);
    let mut before = now.clone();
    let u = qs.up.vector();
    let horiz = |v: DVec3| v - u * v.dot(u);
    let mut paths: Vec<Vec<DVec3>> = qs.feet.iter().map(|_| Vec::with_capacity(n)).collect();
    for (f, frame) in source.motion().frames().enumerate() {
        for (v, &ch) in compact.iter_mut().zip(&gather) {
            *v = frame[ch];
        }
        fk.positions(&compact, &mut now);
        for ((foot, path), how) in qs.feet.iter().zip(&mut paths).zip(follow) {
            if f == 0 {
                path.push(DVec3::ZERO);
                continue;
            }
            let step = |p: usize| horiz(now[idx(p)] - before[idx(p)]);
            let step = match *how {
                Follow::Joint(j) => Some(step(j)).filter(|d| d.is_finite()),
                Follow::Slowest => foot
                    .points
                    .iter()
                    .map(|&p| step(p))
                    .filter(|d| d.is_finite())
                    .min_by(|a, b| a.length_squared().total_cmp(&b.length_squared())),
            }
            .unwrap_or(DVec3::ZERO);
            let last = path[f - 1];
            path.push(last + c * (step * k));
        }
        std::mem::swap(&mut now, &mut before);
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_sums_the_followed_point_s_steps_turned_and_scaled() {
        // The hips slide 2 units along X per frame; the left foot turns a
        // quarter about up at its ankle in frame 2 (its toe swings, the
        // ankle keeps sliding with the hips): the ankle's path is the
        // hips', the slowest point's the slower of ankle and toe in each
        // step.
        let text = "HIERARCHY\nROOT Hips\n{ OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
            JOINT LeftUpLeg\n{ OFFSET 5 0 0 CHANNELS 3 Zrotation Xrotation Yrotation\n\
            JOINT LeftLeg\n{ OFFSET 0 -20 0 CHANNELS 3 Zrotation Xrotation Yrotation\n\
            JOINT LeftFoot\n{ OFFSET 0 -20 0 CHANNELS 3 Zrotation Xrotation Yrotation\n\
            JOINT LeftToeBase\n{ OFFSET 0 -2 8 CHANNELS 3 Zrotation Xrotation Yrotation\n\
            End Site\n{ OFFSET 0 0 3 }\n}\n}\n}\n}\n}\n\
            MOTION\nFrames: 4\nFrame Time: 0.1\n\
            0 42 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
            2 42 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
            4 42 0 0 0 0 0 0 0 0 0 0 0 0 -90 0 0 0\n\
            6 42 0 0 0 0 0 0 0 0 0 0 0 0 -90 0 0 0\n";
        let bvh = Bvh::parse(text).unwrap();
        let qs = quality::contacts(&bvh, &quality::Options::default());
        let foot = &qs.feet[0];
        assert_eq!(foot.name, "left");
        let (ankle, toe) = (foot.points[0], foot.skate_point);
        assert_ne!(ankle, toe);
        // Turned a quarter about up and scaled by 1.5.
        let c = DMat3::from_rotation_y(std::f64::consts::FRAC_PI_2);
        let k = 1.5;
        let follow = [Follow::Joint(ankle), Follow::Joint(toe), Follow::Slowest];
        let mode = crate::PositionChannels::Replace;
        let paths: Vec<Vec<DVec3>> =
            follow.iter().map(|&f| slides(&bvh, &qs, &[f], mode, c, k).remove(0)).collect();
        let near = |a: DVec3, b: DVec3| (a - b).length() < 1e-9;
        let step = c * DVec3::new(2.0 * k, 0.0, 0.0);
        for f in 0..4 {
            assert!(near(paths[0][f], step * f as f64), "{f}: {:?}", paths[0]);
        }
        // The toe: with the hips until the foot's quarter turn about up
        // swings it from 8 ahead of the ankle (+Z) to 8 beside it (-X),
        // then with the hips again.
        let turn = c * DVec3::new(-8.0 * k, 0.0, -8.0 * k);
        assert!(near(paths[1][2], step * 2.0 + turn), "{:?}", paths[1]);
        assert!(near(paths[1][3], step * 3.0 + turn), "{:?}", paths[1]);
        // The slowest point: the ankle in the turn's step (its 2 units are
        // less than the toe's), so the same as the ankle's path.
        for f in 0..4 {
            assert!(near(paths[2][f], paths[0][f]), "{f}: {:?}", paths[2]);
        }
    }
}
