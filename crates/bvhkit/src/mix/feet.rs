//! Feet through a crossfade: which feet stay planted across a seam, and a
//! foot lock of those feet over the crossfade's frames.
//!
//! A foot is planted across a seam when [`crate::quality::lint`] finds it
//! in contact (low and slow) in every frame of both overlaps: the frames
//! of the clip before that the crossfade replaces, and the first frames
//! of the clip after. Its contact point is the lint's (the toe joint when
//! there is one, else the foot joint). Contacts are measured on windows
//! of the clips around the overlaps (the overlap and half a second
//! beyond it where the clip has it), so the cost does not grow with the
//! clips' lengths.
//!
//! The lock: in crossfade frame `k`, at weight `w`, the contact point's
//! target is `(1 - w) pA + w pB`, `pA` and `pB` its world positions in the
//! two clips' frames that the crossfade mixes (the clip after already
//! moved on the ground). Both are planted, and the alignment
//! ([`super::fit_ground_move`]) lays the planted feet onto each other, so
//! the target stands still; the mixed pose, whose hips move linearly and
//! whose leg rotations are SLERPed, would drift off it. The leg is solved
//! analytically, hip (the thigh joint), knee, ankle, keeping the knee's
//! bend plane and the foot's world orientation, by the same two-bone IK as
//! `bvh clean --lock-feet` (`crate::ik`). At the crossfade's ends the target
//! is the clip's own foot, so the lock needs no ramp, and frames outside
//! the crossfade are not touched. Only the thigh, knee and ankle rotation
//! channels change.
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
/// contact in every frame of `frames`, measured on a window around them.
fn contacts(
    bvh: &Bvh,
    frames: std::ops::Range<usize>,
    up: SignedAxis,
    metres_per_unit: Option<f64>,
) -> Option<(Vec<bool>, Vec<quality::Foot>, f64)> {
    let n = bvh.motion().n_frames();
    let margin = (MARGIN_SECONDS / bvh.motion().frame_time()).round() as usize;
    let (lo, hi) = (frames.start.saturating_sub(margin), (frames.end + margin).min(n));
    let window = crate::edit::frames::range(bvh, lo..hi).ok()?;
    let opts = Options { up: Some(up), metres_per_unit, ..Options::default() };
    let r = quality::lint(&window, &opts);
    let planted = r
        .series
        .contact
        .iter()
        .map(|c| frames.clone().all(|f| c.get(f - lo).copied().unwrap_or(false)))
        .collect();
    Some((planted, r.feet, r.metres_per_unit))
}

/// The legs planted through both overlaps: frames `fa .. fa + len` of `a`
/// and `fb .. fb + len` of `b` (the same skeleton), with a knee and a hip
/// above the foot, each with three rotation channels, the hip not a root.
pub(crate) fn planted_legs(
    a: &Bvh,
    fa: usize,
    b: &Bvh,
    fb: usize,
    len: usize,
    up: SignedAxis,
) -> Vec<Leg> {
    let Some((in_a, feet, mpu)) = contacts(a, fa..fa + len, up, None) else { return Vec::new() };
    let Some((in_b, feet_b, _)) = contacts(b, fb..fb + len, up, Some(mpu)) else {
        return Vec::new();
    };
    let skel = a.skeleton();
    let parent = |j: usize| skel.joints()[j].parent().map(|p| p.index());
    let three = |j: usize| JointChannels::of(&skel.joints()[j]).n_rot == 3;
    let mut legs = Vec::new();
    for (i, foot) in feet.iter().enumerate() {
        if !(in_a[i] && in_b.get(i).copied().unwrap_or(false)) || feet_b.get(i) != Some(foot) {
            continue;
        }
        let Some(&ankle) = foot.points.first() else { continue };
        let (Some(knee), Some(hip)) = (parent(ankle), parent(ankle).and_then(parent)) else {
            continue;
        };
        // The thigh hangs from the body (a skeleton whose foot's
        // grandparent is the root would turn the whole figure).
        if three(knee) && three(hip) && parent(hip).is_some() {
            legs.push(Leg { point: foot.skate_point, ankle, knee, hip });
        }
    }
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

/// Locks `legs` over a crossfade: `out` holds its frames (`nc` channels
/// each), frame `k` mixing frame `fa + k` of `a` with frame `k` of `b` (moved
/// already) at weight `weights[k]` (see the module docs).
pub(crate) fn lock_crossfade(
    a: &Bvh,
    fa: usize,
    b: &Bvh,
    weights: &[f64],
    legs: &[Leg],
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
    let (mut wa, mut wb, mut wo) =
        (vec![DAffine3::IDENTITY; nj], vec![DAffine3::IDENTITY; nj], vec![DAffine3::IDENTITY; nj]);
    for (k, &w) in weights.iter().enumerate() {
        // At weight 0 (a loop's first crossfade frame) the frame is the
        // clip before's own, its feet on their targets: left bit for bit
        // (the IK's reach clamp would bend a straight leg by 4e-5 rad).
        if w == 0.0 {
            continue;
        }
        let row = &mut out[k * nc..(k + 1) * nc];
        fk.world(a.motion().frame(fa + k), &mut wa);
        fk.world(b.motion().frame(k), &mut wb);
        for leg in legs {
            fk.world(row, &mut wo);
            let pos = |x: &[DAffine3], j: usize| x[j].translation;
            let target = pos(&wa, leg.point).lerp(pos(&wb, leg.point), w);
            let delta = target - pos(&wo, leg.point);
            let t = pos(&wo, leg.ankle) + delta;
            let Some((d, r1)) =
                two_bone(pos(&wo, leg.hip), pos(&wo, leg.knee), pos(&wo, leg.ankle), t)
                    .map(|(d, r1, _)| (d, r1))
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
                    let near = l.angles(row);
                    l.write_rotation(q, Some(near), row);
                    l.snap_rotation(row);
                }
            }
        }
    }
}
