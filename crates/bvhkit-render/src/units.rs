//! Guessing a file's length unit from the size of its skeleton.
//!
//! BVH files do not say which unit their offsets and positions are in. A
//! human skeleton is about 1.7 m tall (or wide with its arms out), so the
//! size of the rest pose tells metres, inches, centimetres, millimetres and
//! the CMU scale apart; anything too far from all of them is reported as
//! unknown. This is the one guess: `bvh render`, the desktop player and the
//! browser page (which gets it from the server in `clips.json`) all use it.

use std::fmt;

use glam::DVec3;

/// A length unit a skeleton seems to be measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Units {
    /// Metres.
    Metres,
    /// Inches.
    Inches,
    /// Centimetres.
    Centimetres,
    /// Millimetres.
    Millimetres,
    /// The CMU scale: 1/0.45 inch (about 5.64 cm), the length unit of the
    /// CMU motion-capture database's ASF skeletons, which the widely used
    /// BVH conversions of it (cgspeed and others) keep, so that a person
    /// is about 30 units tall.
    CmuScale,
    /// No unit fits a human-sized skeleton.
    Unknown,
}

/// The human size (metres) the guess assumes.
pub const HUMAN_SIZE_M: f64 = 1.7;

/// Metres per unit of the CMU scale: 1/0.45 inch.
pub const CMU_UNIT_M: f64 = 0.0254 / 0.45;

/// How far (as a factor) a skeleton may be from human size in the guessed
/// unit and still get that unit.
pub const TOLERANCE: f64 = 1.8;

impl Units {
    /// Metres per unit, `None` for [`Units::Unknown`].
    #[must_use]
    pub fn metres(self) -> Option<f64> {
        match self {
            Units::Metres => Some(1.0),
            Units::Inches => Some(0.0254),
            Units::Centimetres => Some(0.01),
            Units::Millimetres => Some(0.001),
            Units::CmuScale => Some(CMU_UNIT_M),
            Units::Unknown => None,
        }
    }

    /// Short symbol: `m`, `in`, `cm`, `mm`, `cmu`, or `?`.
    #[must_use]
    pub fn symbol(self) -> &'static str {
        match self {
            Units::Metres => "m",
            Units::Inches => "in",
            Units::Centimetres => "cm",
            Units::Millimetres => "mm",
            Units::CmuScale => "cmu",
            Units::Unknown => "?",
        }
    }

    /// The unit in which a human skeleton of size `size` (in file units)
    /// is closest to [`HUMAN_SIZE_M`], or [`Units::Unknown`] when even
    /// the closest is more than [`TOLERANCE`] times off (or `size` is not
    /// a positive number).
    #[must_use]
    pub fn guess(size: f64) -> Units {
        if !(size.is_finite() && size > 0.0) {
            return Units::Unknown;
        }
        let mut best = (f64::INFINITY, Units::Unknown);
        for u in
            [Units::Metres, Units::Inches, Units::Centimetres, Units::Millimetres, Units::CmuScale]
        {
            let metres = size * u.metres().unwrap_or(1.0);
            let off = (metres / HUMAN_SIZE_M).ln().abs();
            if off < best.0 {
                best = (off, u);
            }
        }
        if best.0 <= TOLERANCE.ln() { best.1 } else { Units::Unknown }
    }
}

impl fmt::Display for Units {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Units::Metres => "metres",
            Units::Inches => "inches",
            Units::Centimetres => "centimetres",
            Units::Millimetres => "millimetres",
            Units::CmuScale => "CMU units (1/0.45 in)",
            Units::Unknown => "unknown units",
        })
    }
}

/// The size of a pose: the largest extent of its bounding box along any
/// axis (height when standing, arm span in a T-pose), ignoring non-finite
/// points; 0 for no points.
#[must_use]
pub fn pose_size(points: &[DVec3]) -> f64 {
    crate::clip::bounds_of(points).map_or(0.0, |(lo, hi)| (hi - lo).max_element())
}

/// A unit guess with the size it was made from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitGuess {
    /// The guessed unit.
    pub units: Units,
    /// The skeleton's size in file units ([`pose_size`] of its rest pose,
    /// or of its first frame when the rest pose is a point).
    pub size: f64,
}

impl UnitGuess {
    /// Guesses from the rest pose, falling back to the first frame.
    #[must_use]
    pub fn new(rest_pose: &[DVec3], first_frame: &[DVec3]) -> UnitGuess {
        let mut size = pose_size(rest_pose);
        if size <= 1e-9 {
            size = pose_size(first_frame);
        }
        UnitGuess { units: Units::guess(size), size }
    }

    /// Guesses from a clip's positions: its first frame that is not a
    /// recording glitch ([`Clip::glitch_frames`](crate::Clip::glitch_frames)),
    /// or the bounds of all such frames when that frame is a point. This is
    /// what `bvh serve` sends the browser page; when the file itself is at
    /// hand, its rest pose ([`UnitGuess::of_bvh`]) is the better input.
    #[must_use]
    pub fn of_clip(clip: &crate::Clip) -> UnitGuess {
        let n = clip.n_joints();
        if n == 0 {
            return UnitGuess { units: Units::Unknown, size: 0.0 };
        }
        let glitches = clip.glitch_frames();
        let good = || {
            clip.positions
                .chunks_exact(n)
                .take(clip.n_frames)
                .enumerate()
                .filter(|(f, _)| glitches.binary_search(f).is_err())
                .map(|(_, frame)| frame)
        };
        let first = good().next().unwrap_or(&[]);
        let all: Vec<DVec3> =
            if pose_size(first) > 1e-9 { Vec::new() } else { good().flatten().copied().collect() };
        UnitGuess::new(first, &all)
    }

    /// Guesses the unit of `bvh` from its rest pose (every channel 0),
    /// falling back to its first frame.
    #[cfg(feature = "bvh")]
    #[must_use]
    pub fn of_bvh(bvh: &bvhkit::Bvh, mode: bvhkit::PositionChannels) -> UnitGuess {
        let s = bvh.skeleton();
        let fk = bvhkit::Kinematics::new(s, mode);
        let mut rest = vec![DVec3::ZERO; s.len()];
        fk.positions(&vec![0.0; s.n_channels()], &mut rest);
        let mut first = Vec::new();
        if bvh.motion().n_frames() > 0 {
            first = vec![DVec3::ZERO; s.len()];
            fk.positions(bvh.motion().frame(0), &mut first);
        }
        UnitGuess::new(&rest, &first)
    }

    /// Metres per file unit for display: the guessed unit's size when it
    /// is known, else the factor that makes the skeleton [`HUMAN_SIZE_M`]
    /// in size (1 when it has no size), so that files in different units
    /// stand side by side at one scale.
    #[must_use]
    pub fn metres_per_unit(&self) -> f64 {
        match self.units.metres() {
            Some(m) => m,
            None if self.size.is_finite() && self.size > 1e-9 => HUMAN_SIZE_M / self.size,
            None => 1.0,
        }
    }

    /// A label such as `centimetres (size 172.4 ≈ 1.72 m)`.
    #[must_use]
    pub fn label(&self) -> String {
        match self.units.metres() {
            Some(m) => format!("{} (size {:.4} ≈ {:.2} m)", self.units, self.size, self.size * m),
            None => format!("{} (size {:.4})", self.units, self.size),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes_in_each_unit() {
        assert_eq!(Units::guess(1.75), Units::Metres);
        assert_eq!(Units::guess(1.2), Units::Metres);
        assert_eq!(Units::guess(68.0), Units::Inches);
        assert_eq!(Units::guess(172.0), Units::Centimetres);
        assert_eq!(Units::guess(150.0), Units::Centimetres);
        assert_eq!(Units::guess(1800.0), Units::Millimetres);
        // CMU's converted files: a walker's rest pose is 24 to 26 units.
        assert_eq!(Units::guess(30.0), Units::CmuScale);
        assert_eq!(Units::guess(25.0), Units::CmuScale);
        assert_eq!(Units::CmuScale.symbol(), "cmu");
        // Between the CMU scale and inches, the nearer wins.
        assert_eq!(Units::guess(45.0), Units::Inches);
        assert_eq!(Units::guess(38.0), Units::CmuScale);
    }

    #[test]
    fn far_from_human_is_unknown() {
        assert_eq!(Units::guess(0.0), Units::Unknown);
        assert_eq!(Units::guess(-3.0), Units::Unknown);
        assert_eq!(Units::guess(f64::NAN), Units::Unknown);
        assert_eq!(Units::guess(1e6), Units::Unknown);
        assert_eq!(Units::guess(0.05), Units::Unknown);
        assert_eq!(Units::guess(8.0), Units::Unknown);
        assert_eq!(Units::Unknown.metres(), None);
        assert_eq!(Units::Centimetres.symbol(), "cm");
    }

    #[test]
    fn size_and_fallback() {
        let pts = [DVec3::ZERO, DVec3::new(0.2, 1.6, 0.1), DVec3::new(-0.8, 1.4, 0.0), DVec3::NAN];
        assert!((pose_size(&pts) - 1.6).abs() < 1e-12);
        assert_eq!(pose_size(&[]), 0.0);
        let g = UnitGuess::new(&[DVec3::ZERO; 3], &[DVec3::ZERO, DVec3::Y * 170.0]);
        assert_eq!(g.units, Units::Centimetres);
        assert_eq!(g.size, 170.0);
        assert!(g.label().starts_with("centimetres (size 170"), "{}", g.label());
        assert_eq!(Units::Unknown.to_string(), "unknown units");
    }

    #[test]
    fn a_clip_is_guessed_from_its_first_good_frame() {
        // A stick figure in centimetres: standing 1.7 m, then lying down
        // 1.8 m long, then a glitch frame far away.
        let mut frames = [
            [DVec3::ZERO, DVec3::Y * 170.0],
            [DVec3::ZERO, DVec3::X * 180.0],
            [DVec3::splat(1e9), DVec3::splat(1e9) + DVec3::Y],
        ];
        let clip_of = |frames: &[[DVec3; 2]], order: &[usize]| {
            crate::clip::two_joints(order.iter().map(|&k| frames[k]))
        };
        let g = UnitGuess::of_clip(&clip_of(&frames, &[0, 1, 1, 1, 1, 1, 1, 1, 1, 1]));
        assert_eq!((g.units, g.size), (Units::Centimetres, 170.0));
        // A glitch first is passed over.
        let mut order = vec![2];
        order.extend([1; 30]);
        order[5] = 0;
        let clip = clip_of(&frames, &order);
        assert_eq!(clip.glitch_frames(), [0]);
        assert_eq!(UnitGuess::of_clip(&clip).size, 180.0);
        // A first frame that is a point falls back to all frames.
        frames[0] = [DVec3::ZERO; 2];
        let g = UnitGuess::of_clip(&clip_of(&frames, &[0, 1]));
        assert_eq!((g.units, g.size), (Units::Centimetres, 180.0));
    }

    #[test]
    fn unknown_units_are_shown_human_sized() {
        let g = UnitGuess { units: Units::Unknown, size: 30.0 };
        assert!((g.metres_per_unit() * 30.0 - HUMAN_SIZE_M).abs() < 1e-12);
        assert_eq!(UnitGuess { units: Units::Unknown, size: 0.0 }.metres_per_unit(), 1.0);
        assert_eq!(UnitGuess { units: Units::Inches, size: 60.0 }.metres_per_unit(), 0.0254);
    }
}
