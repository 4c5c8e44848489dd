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
use crate::error::{Error, Result};
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

impl ScaleMap {
    /// Scales by `factor`.
    ///
    /// # Errors
    /// When `factor` is not finite and positive.
    pub fn new(skeleton: &Skeleton, factor: f64) -> Result<ScaleMap> {
        if !(factor.is_finite() && factor > 0.0) {
            return Err(Error::invalid(format!(
                "the scale factor must be positive, found {factor}"
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
