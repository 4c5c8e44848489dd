//! Scale a clip: offsets and position channels times a factor.
//!
//! Lengths are the only thing a unit change touches: every `OFFSET`
//! component and every position channel value is multiplied by the factor
//! (one correctly rounded product each, so a power-of-two factor is exact
//! and scaling by 1 is the identity bit for bit). Rotations, names and the
//! channel layout are kept bit for bit. Both readings of position channels
//! ([`crate::PositionChannels`]) scale the same way, so world positions
//! are scaled by the factor about the origin.
//!
//! [`height`] measures a skeleton along its up axis, for scaling to a
//! given height.

use super::axes::{SignedAxis, detect_up};
use super::{FrameMap, rebuild_skeleton, rest_positions};
use crate::bvh::Bvh;
use crate::error::{Error, Result, num};
use crate::skeleton::Skeleton;

/// A [`FrameMap`] that multiplies offsets and position channels by a factor.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::{map_frames, scale::ScaleMap};
/// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 90 0 CHANNELS 4 Xposition Yposition Zposition Zrotation }
///     MOTION Frames: 1 Frame Time: 0.1 10 90 -5 33")?;
/// let m = map_frames(&bvh, &mut ScaleMap::new(bvh.skeleton(), 0.01)?)?;
/// assert_eq!(m.skeleton().joints()[0].offset().y, 0.9);
/// assert_eq!(m.motion().frame(0), [0.1, 0.9, -0.05, 33.0]);
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ScaleMap {
    skeleton: Skeleton,
    factor: f64,
    /// Frame indices of the position channels.
    positions: Vec<usize>,
}

/// The factors and heights users may give: a millionth to a million
/// (`bvh edit --scale` and `--height`, `bvh export --scale`, Python's
/// `Bvh.scale` and `Bvh.to_height`). A factor of 1e300 wrote 300-digit
/// `OFFSET`s; no unit change comes near the limits (metres to millimetres
/// is 1000). [`ScaleMap::new`] itself takes any finite positive factor: a
/// height within these limits may need a factor outside them.
pub const FACTORS: std::ops::RangeInclusive<f64> = 1e-6..=1e6;

/// `value` (a factor or a height, named by `what`) if it is within
/// [`FACTORS`], else an error naming the value and the limits.
///
/// # Errors
/// When `value` is outside [`FACTORS`] (NaN and infinities included).
pub fn check_given(what: &str, value: f64) -> Result<f64> {
    if FACTORS.contains(&value) {
        return Ok(value);
    }
    Err(Error::invalid(format!(
        "{what} {} is out of range: expected a number from {} to {}",
        num(value),
        num(*FACTORS.start()),
        num(*FACTORS.end())
    )))
}

impl ScaleMap {
    /// Scales by `factor`.
    ///
    /// # Errors
    /// When `factor` is not finite and positive.
    pub fn new(skeleton: &Skeleton, factor: f64) -> Result<ScaleMap> {
        if !(factor.is_finite() && factor > 0.0) {
            return Err(Error::invalid(format!(
                "the scale factor must be positive, found {}",
                num(factor)
            )));
        }
        let out =
            rebuild_skeleton(skeleton, |_, j| Ok((j.offset() * factor, j.channels().to_vec())))?;
        let positions = skeleton
            .joints()
            .iter()
            .flat_map(|j| {
                j.channels()
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.is_position())
                    .map(move |(k, _)| j.first_channel() + k)
            })
            .collect();
        Ok(ScaleMap { skeleton: out, factor, positions })
    }

    /// The factor.
    pub fn factor(&self) -> f64 {
        self.factor
    }
}

impl FrameMap for ScaleMap {
    fn output_skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    fn map(&mut self, input: &[f64], output: &mut [f64]) {
        output.copy_from_slice(input);
        for &i in &self.positions {
            output[i] = input[i] * self.factor;
        }
    }
}

/// Frames per piece of [`ScaleMap`]'s `map_many` on rayon's pool.
const PIECE_FRAMES: usize = 256;

impl super::SplitFrameMap for ScaleMap {
    /// Every frame on its own (the map keeps nothing from frame to frame),
    /// in pieces of frames on rayon's pool: the bits of [`FrameMap::map`].
    fn map_many(&mut self, frames: usize, input: &[f64], output: &mut [f64]) -> bool {
        let n = self.skeleton.n_channels();
        if n == 0 || input.len() != frames * n || output.len() != frames * n {
            return false;
        }
        let scale = |input: &[f64], output: &mut [f64]| {
            output.copy_from_slice(input);
            for (i, o) in input.chunks_exact(n).zip(output.chunks_exact_mut(n)) {
                for &k in &self.positions {
                    o[k] = i[k] * self.factor;
                }
            }
        };
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            let piece = PIECE_FRAMES * n;
            input
                .par_chunks(piece)
                .zip(output.par_chunks_mut(piece))
                .for_each(|(i, o)| scale(i, o));
        }
        #[cfg(not(feature = "parallel"))]
        {
            let _ = PIECE_FRAMES;
            scale(input, output);
        }
        true
    }
}

/// The height of a skeleton in file units: the extent of its joints along
/// its up axis, in the rest pose (offsets only) when the up axis was found
/// there, else in the first frame of `bvh`. The up axis is the detected one
/// ([`detect_up`]), or Y when none is found.
pub fn height(bvh: &Bvh) -> f64 {
    let up = detect_up(bvh);
    let axis = up.axis.unwrap_or(SignedAxis::PosY).axis().index();
    let pos = match (up.source, bvh.motion().n_frames()) {
        (super::axes::Evidence::Frames { .. }, n) if n > 0 => {
            let fk = crate::Kinematics::new(bvh.skeleton(), crate::PositionChannels::Replace);
            let mut out = vec![glam::DVec3::ZERO; bvh.skeleton().len()];
            fk.positions(bvh.motion().frame(0), &mut out);
            out
        }
        _ => rest_positions(bvh.skeleton()),
    };
    let lo = pos.iter().map(|p| p[axis]).fold(f64::INFINITY, f64::min);
    let hi = pos.iter().map(|p| p[axis]).fold(f64::NEG_INFINITY, f64::max);
    if pos.is_empty() { 0.0 } else { hi - lo }
}

/// The factor that scales `bvh` to `target` height ([`height`]).
///
/// # Errors
/// When the skeleton has no height or `target` is not finite and positive.
pub fn factor_to_height(bvh: &Bvh, target: f64) -> Result<f64> {
    let h = height(bvh);
    if !(target.is_finite() && target > 0.0) {
        return Err(Error::invalid(format!("the height must be positive, found {target}")));
    }
    if !(h.is_finite() && h > 0.0) {
        return Err(Error::invalid("the skeleton has no height to scale"));
    }
    Ok(target / h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::SplitFrameMap;

    /// `map_many` over many pieces gives the bits of `map` frame by frame.
    #[test]
    fn many_frames_at_once_are_frames_one_by_one() {
        let text = "HIERARCHY ROOT A { OFFSET 0 90 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
            JOINT B { OFFSET 0 10 0 CHANNELS 4 Zrotation Xposition Xrotation Yrotation End Site { OFFSET 0 5 0 } } }
            MOTION Frames: 1 Frame Time: 0.1 0 0 0 0 0 0 0 0 0 0";
        let bvh = Bvh::parse(text).unwrap();
        let n = bvh.skeleton().n_channels();
        let frames = 3 * PIECE_FRAMES + 17;
        let input: Vec<f64> = (0..frames * n).map(|k| (k as f64 * 0.731).sin() * 123.456).collect();
        let mut map = ScaleMap::new(bvh.skeleton(), 0.0254).unwrap();
        let mut one = vec![0.0; frames * n];
        for (i, o) in input.chunks_exact(n).zip(one.chunks_exact_mut(n)) {
            map.map(i, o);
        }
        let mut many = vec![f64::NAN; frames * n];
        assert!(map.map_many(frames, &input, &mut many));
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&many), bits(&one));
        // The rotations are kept, the positions scaled.
        assert_eq!(many[3], input[3]);
        assert_eq!(many[7], input[7] * 0.0254);
        assert!(!map.map_many(2, &input[..n], &mut many[..n]), "a frame count that does not fit");
    }
}
