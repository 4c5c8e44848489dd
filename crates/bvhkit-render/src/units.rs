//! Length units: the core's one guess ([`bvhkit::units`], re-exported
//! here) and [`of_clip`], the same guess from a [`Clip`].
//!
//! `bvh render`, `bvh serve` (which sends it to the browser page in
//! `clips.json`) and the desktop player all guess with [`of_clip`] or
//! [`UnitGuess::of_bvh`], which agree: both measure the median frame of the
//! world positions drawn (a file without motion is drawn, and measured, in
//! its rest pose: [`Clip::from_bvh`]).

pub use bvhkit::units::*;

use crate::Clip;

/// The unit guess for `clip`: [`UnitGuess::of_positions`] of all its
/// positions (the median frame size, so glitch frames do not count),
/// checked against the limbs its joint names tell, measured on its first
/// frame ([`Limbs::of_pose`], [`UnitGuess::named`]).
///
/// For a clip made by [`Clip::from_bvh`] this is [`UnitGuess::of_bvh`] of
/// the same file: the same unit and size, and a limb length within
/// rounding.
#[must_use]
pub fn of_clip(clip: &Clip) -> UnitGuess {
    let n = clip.n_joints();
    let frames = clip.positions.get(..n * clip.n_frames).unwrap_or(&clip.positions);
    let limbs = frames
        .get(..n)
        .map(|pose| Limbs::of_pose(&clip.joint_names, &clip.parents, &clip.is_end_site, pose))
        .unwrap_or_default();
    UnitGuess::of_positions(n, frames).named(&limbs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    #[test]
    fn a_clip_is_guessed_from_its_median_frame() {
        // A stick figure in centimetres: standing 1.7 m, lying down 1.8 m
        // long, and glitch frames thrown far away (still 1.8 m long).
        let frames = [
            [DVec3::ZERO, DVec3::Y * 170.0],
            [DVec3::ZERO, DVec3::X * 180.0],
            [DVec3::splat(1e9), DVec3::splat(1e9) + DVec3::X * 180.0],
            [DVec3::ZERO; 2],
        ];
        let clip_of = |order: &[usize]| crate::clip::two_joints(order.iter().map(|&k| frames[k]));
        let g = of_clip(&clip_of(&[0, 0, 0, 1, 1, 2, 3, 3, 3, 3]));
        assert_eq!((g.units, g.size), (Units::Centimetres, 170.0), "points left out");
        let mut order = vec![2, 2];
        order.extend([0; 30]);
        let clip = clip_of(&order);
        assert_eq!(clip.glitch_frames(), [0, 1]);
        assert_eq!(of_clip(&clip).size, 170.0);
        assert_eq!(of_clip(&clip_of(&[3, 3])).units, Units::Unknown);
        // A clip with no frames (or fewer positions than it says).
        let mut short = clip_of(&[0]);
        short.n_frames = 3;
        assert_eq!(of_clip(&short).size, 170.0);
    }
}
