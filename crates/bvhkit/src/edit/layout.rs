//! Change the channel layout: every joint three rotation channels in one
//! order, position channels dropped or added.
//!
//! Every joint that is not an End Site gets its position channels (when
//! [`Positions`] gives it any) as `Xposition Yposition Zposition`, then
//! `order`'s three rotation channels: with [`Positions::Root`], the usual
//! "root six, joints three". Each frame's local rotation and translation
//! are rebuilt from the old channels ([`super::PoseLayout`]) and written
//! into the new ones; a channel that exists in both layouts with the same
//! rotation axes is copied bit for bit. Rotations are always kept exactly
//! (three channels hold any rotation). A translation is kept exactly when
//! its joint keeps or gains position channels; when a joint loses position
//! channels, its translation falls back to the `OFFSET` and the world
//! motion changes: [`LayoutMap::max_position_error`] reports the largest
//! world position difference over the frames mapped so far (measured with
//! [`crate::Kinematics`] on the old and new frames). Names and offsets are
//! kept bit for bit.

use glam::DVec3;

use super::pose::PoseLayout;
use super::{FrameMap, rebuild_skeleton};
use crate::channel::Channel;
use crate::error::Result;
use crate::kinematics::{FkScratch, PositionChannels};
use crate::rotation::RotationOrder;
use crate::skeleton::Skeleton;

use super::order::rotation_channel;

/// Which joints get position channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Positions {
    /// Joints keep position channels exactly when they had some.
    Keep,
    /// Roots only (the usual "root six, joints three").
    Root,
    /// Every joint.
    All,
    /// No joint (the clip no longer moves through space).
    None,
}

/// A [`FrameMap`] to a uniform channel layout (see the module docs).
///
/// # Example
/// ```
/// use bvhkit::{Bvh, PositionChannels};
/// use bvhkit::edit::{map_frames, layout::{LayoutMap, Positions}};
/// use bvhkit::rotation::RotationOrder;
/// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 4 Yposition Xrotation Zrotation Yrotation
///     JOINT B { OFFSET 0 1 0 CHANNELS 1 Zrotation End Site { OFFSET 0 1 0 } } }
///     MOTION Frames: 1 Frame Time: 0.1 5 10 0 0 30")?;
/// let mut map = LayoutMap::new(bvh.skeleton(), RotationOrder::ZXY, Positions::Root, PositionChannels::Replace)?;
/// let out = map_frames(&bvh, &mut map)?;
/// assert_eq!(out.skeleton().n_channels(), 9);
/// assert_eq!(out.motion().frame(0)[..3], [0.0, 5.0, 0.0]); // X and Z from the OFFSET
/// assert_eq!(map.max_position_error(), 0.0);
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct LayoutMap {
    skeleton: Skeleton,
    from: PoseLayout,
    to: PoseLayout,
    /// For each joint, for each output channel: the input channel to copy,
    /// if it can be copied bit for bit.
    copy: Vec<Option<usize>>,
    pose: super::Pose,
    previous: Vec<f64>,
    first: bool,
    lossy: bool,
    fk: Option<(FkScratch, FkScratch, Vec<DVec3>, Vec<DVec3>)>,
    max_error: f64,
}

impl LayoutMap {
    /// Every joint to three rotation channels in `order`, position channels
    /// as `positions` says; position channels are read as `mode` says.
    ///
    /// # Errors
    /// Never for a valid skeleton.
    pub fn new(
        skeleton: &Skeleton,
        order: RotationOrder,
        positions: Positions,
        mode: PositionChannels,
    ) -> Result<LayoutMap> {
        let mut lossy = false;
        let out = rebuild_skeleton(skeleton, |_, j| {
            if j.is_end_site() {
                return Ok((j.offset(), Vec::new()));
            }
            let had = j.channels().iter().any(|c| c.is_position());
            let gets = match positions {
                Positions::Keep => had,
                Positions::Root => j.parent().is_none(),
                Positions::All => true,
                Positions::None => false,
            };
            let mut ch = Vec::with_capacity(6);
            if gets {
                ch.extend([Channel::Xposition, Channel::Yposition, Channel::Zposition]);
            }
            ch.extend(order.axes().map(rotation_channel));
            // Losing a channel whose value differs from what the OFFSET gives
            // changes the motion; checked per frame below.
            lossy |= had && !gets;
            Ok((j.offset(), ch))
        })?;
        let mut copy = vec![None; out.n_channels()];
        for (ji, jo) in skeleton.joints().iter().zip(out.joints()) {
            let same_rot = ji.rotation_axes().eq(jo.rotation_axes());
            for (k, c) in jo.channels().iter().enumerate() {
                if c.is_rotation() && !same_rot {
                    continue;
                }
                if let Some(pos) = ji.channels().iter().position(|x| x == c) {
                    copy[jo.first_channel() + k] = Some(ji.first_channel() + pos);
                }
            }
        }
        let from = PoseLayout::new(skeleton, mode);
        let to = PoseLayout::new(&out, mode);
        let fk = lossy.then(|| {
            let n = skeleton.len();
            (
                from.kinematics().scratch(),
                to.kinematics().scratch(),
                vec![DVec3::ZERO; n],
                vec![DVec3::ZERO; n],
            )
        });
        Ok(LayoutMap {
            pose: from.pose(),
            previous: vec![0.0; out.n_channels()],
            skeleton: out,
            from,
            to,
            copy,
            first: true,
            lossy,
            fk,
            max_error: 0.0,
        })
    }

    /// Whether the new layout drops position channels, so that the world
    /// motion may change.
    pub fn is_lossy(&self) -> bool {
        self.lossy
    }

    /// The largest distance between a joint's world position before and
    /// after, over every frame mapped so far (0 when nothing changed).
    pub fn max_position_error(&self) -> f64 {
        self.max_error
    }
}

impl FrameMap for LayoutMap {
    fn output_skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    fn map(&mut self, input: &[f64], output: &mut [f64]) {
        self.from.read(input, &mut self.pose);
        // The layouts have the same joints, so the pose fits both. The
        // first frame's angles are the principal solutions.
        let near = (!self.first).then_some(&self.previous[..]);
        self.to.write(&self.pose, near, output);
        for (o, c) in output.iter_mut().zip(&self.copy) {
            if let Some(c) = c {
                *o = input[*c];
            }
        }
        if let Some((si, so, pi, po)) = &mut self.fk {
            self.from.kinematics().positions_with(input, si, pi);
            self.to.kinematics().positions_with(output, so, po);
            for (a, b) in pi.iter().zip(po.iter()) {
                self.max_error = self.max_error.max(a.distance(*b));
            }
        }
        self.previous.copy_from_slice(output);
        self.first = false;
    }
}

impl super::SplitFrameMap for LayoutMap {
    /// The largest world position error of both copies.
    fn absorb(&mut self, earlier: &Self) {
        self.max_error = self.max_error.max(earlier.max_error);
    }
}
