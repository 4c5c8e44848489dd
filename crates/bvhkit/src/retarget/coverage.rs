//! What a joint map leaves out ([`super::Report::notes`]), said where the
//! printed map alone would not show it (a hand-only rig mapped its root
//! alone onto a body, without a word):
//!
//! - the limbs (legs and arms, by the canonical bones their names give,
//!   [`super::names`]) of the target that no mapped joint reaches: kept in
//!   the reference pose;
//! - the limbs of the source with no counterpart in the target at all:
//!   their motion dropped;
//! - a skeleton on all fours onto one that is not (either way round): its
//!   hands, in its first frame (its rest pose without one), no higher
//!   above its lowest foot than a quarter of its hips' height, as a
//!   quadruped's front legs stand; they are mapped as arms. An animal onto
//!   an animal is what it looks like, and is not noted.

use super::names::{Bone, Limb, Side};
use crate::bvh::Bvh;
use crate::edit::axes::SignedAxis;
use crate::kinematics::{Kinematics, PositionChannels};

/// The limbs a map by canonical bones looks for, each by its bones.
const LIMBS: [(&str, Side, [Limb; 3]); 4] = [
    ("left leg", Side::Left, [Limb::UpperLeg, Limb::LowerLeg, Limb::Foot]),
    ("right leg", Side::Right, [Limb::UpperLeg, Limb::LowerLeg, Limb::Foot]),
    ("left arm", Side::Left, [Limb::UpperArm, Limb::LowerArm, Limb::Hand]),
    ("right arm", Side::Right, [Limb::UpperArm, Limb::LowerArm, Limb::Hand]),
];

/// One figure of the retarget: the clip, its joints' canonical bones and the
/// up axis the retarget uses for it.
pub(super) struct Figure<'a> {
    pub(super) clip: &'a Bvh,
    pub(super) bones: &'a [Option<Bone>],
    pub(super) up: SignedAxis,
}

/// The notes (see the module documentation), in this order: the target's
/// limbs kept, the source's dropped, then the source and the target on all
/// fours. `mapped` holds the indices of the target joints the map drives
/// (one per pair of the map).
pub(super) fn notes(
    source: &Figure<'_>,
    target: &Figure<'_>,
    mapped: &[usize],
    mode: PositionChannels,
) -> Vec<String> {
    let (src, tgt) = (source.bones, target.bones);
    let in_limb = |b: &Option<Bone>, side: Side, limbs: &[Limb; 3]| matches!(b, Some(Bone::Limb(s, l)) if *s == side && limbs.contains(l));
    let (mut kept, mut dropped) = (Vec::new(), Vec::new());
    for (name, side, limbs) in LIMBS {
        let on_target = tgt.iter().any(|b| in_limb(b, side, &limbs));
        let reached = mapped.iter().any(|&j| in_limb(&tgt[j], side, &limbs));
        if on_target && !reached {
            kept.push(name);
        } else if !on_target && src.iter().any(|b| in_limb(b, side, &limbs)) {
            dropped.push(name);
        }
    }
    let list = |v: &[&str]| match v {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    };
    let mut notes = Vec::new();
    if !kept.is_empty() {
        let joints = target.clip.skeleton().joints().iter().filter(|j| !j.is_end_site()).count();
        notes.push(format!(
            "no {} found in the source to drive the target's: kept in the reference pose \
             (the map covers {} of the target's {joints} joints; --map FILE names more)",
            list(&kept),
            mapped.len(),
        ));
    }
    if !dropped.is_empty() {
        notes.push(format!(
            "no {} found in the target: the source's motion there is dropped",
            list(&dropped)
        ));
    }
    let fours = [on_all_fours(source, mode), on_all_fours(target, mode)];
    for (what, (mine, other)) in
        ["source", "target"].into_iter().zip([(fours[0], fours[1]), (fours[1], fours[0])])
    {
        if mine && !other {
            notes.push(format!(
                "the {what}'s hands stand as low as its feet in its first frame (a quadruped?): \
                 its front legs are mapped as arms, its hind legs as legs"
            ));
        }
    }
    notes
}

/// Whether the hands stand no higher above the lowest foot than a quarter
/// of the hips, in the first frame (the rest pose without one): front legs
/// (a person's hang at about the hips' height or higher).
fn on_all_fours(figure: &Figure<'_>, mode: PositionChannels) -> bool {
    let skel = figure.clip.skeleton();
    let rest = match figure.clip.motion().n_frames() {
        0 => crate::units::rest_pose(skel, mode),
        _ => {
            let mut out = vec![Default::default(); skel.len()];
            Kinematics::new(skel, mode).positions(figure.clip.motion().frame(0), &mut out);
            out
        }
    };
    let u = figure.up.vector();
    let heights = |want: &dyn Fn(&Bone) -> bool| -> Vec<f64> {
        figure
            .bones
            .iter()
            .zip(&rest)
            .filter(|(b, _)| b.as_ref().is_some_and(want))
            .map(|(_, p)| p.dot(u))
            .collect()
    };
    let hands = heights(&|b| matches!(b, Bone::Limb(_, Limb::Hand)));
    let feet = heights(&|b| matches!(b, Bone::Limb(_, Limb::Foot)));
    let hips = heights(&|b| matches!(b, Bone::Hips));
    let ground = feet.iter().copied().fold(f64::INFINITY, f64::min);
    let hip = hips.first().map_or(f64::NAN, |h| h - ground);
    let hand = hands.iter().copied().fold(f64::NEG_INFINITY, f64::max) - ground;
    !hands.is_empty() && hip > 0.0 && hand < 0.25 * hip
}
