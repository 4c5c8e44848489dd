//! Change the rotation channel order of one joint or of every joint.
//!
//! A joint with three rotation channels gets them in the new order, in the
//! same places of its channel list (so `Xposition Yposition Zposition
//! Zrotation Xrotation Yrotation` to XYZ becomes `... Xrotation Yrotation
//! Zrotation`). Each frame's local rotation is rebuilt from the old
//! channels and written back in the new order, closest to the previous
//! output frame (the first frame: the principal solution), so the world motion is
//! unchanged (within rounding) and angle curves stay continuous. Joints
//! already in the order are copied bit for bit. Joints with fewer than
//! three rotation channels have no order: changing every joint leaves them
//! as they are, naming one is an error ([`super::layout`] gives them three).
//! Position channels, offsets and names are kept bit for bit.

use super::pose::JointChannels;
use super::{FrameMap, rebuild_skeleton};
use crate::channel::Channel;
use crate::error::{Error, Result};
use crate::rotation::{EulerBatch, RotationOrder, euler_to_quat_sin_cos, sin_cos_deg_slice};
use crate::skeleton::{JointId, Skeleton};

/// A [`FrameMap`] that changes rotation orders (see the module docs).
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::{map_frames, order::OrderMap};
/// use bvhkit::rotation::RotationOrder;
/// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation }
///     MOTION Frames: 1 Frame Time: 0.1 0 0 30")?;
/// let mut map = OrderMap::all(bvh.skeleton(), RotationOrder::YXZ);
/// let out = map_frames(&bvh, &mut map)?;
/// assert_eq!(out.skeleton().joints()[0].rotation_order(), Some(RotationOrder::YXZ));
/// assert!((out.motion().frame(0)[0] - 30.0).abs() < 1e-9); // the Y angle moved to the front
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OrderMap {
    skeleton: Skeleton,
    /// (input layout, output layout) of the joints that change.
    changed: Vec<(JointChannels, JointChannels, RotationOrder)>,
    previous: Vec<f64>,
    first: bool,
    /// Per frame: the half angles of the changed joints' channels, their
    /// sines and cosines (one batch, [`sin_cos_deg_slice`]) and the Euler
    /// extraction in the new orders (one batch, [`EulerBatch`]).
    half: Vec<f64>,
    sin: Vec<f64>,
    cos: Vec<f64>,
    euler: EulerBatch,
}

impl OrderMap {
    /// Every joint with three rotation channels to `order`.
    pub fn all(skeleton: &Skeleton, order: RotationOrder) -> OrderMap {
        let ids: Vec<JointId> = skeleton
            .ids()
            .filter(|&id| skeleton.joint(id).rotation_order().is_some_and(|o| o != order))
            .collect();
        OrderMap::build(skeleton, &ids, order)
            .expect("joints with three rotation channels can take any order")
    }

    /// Joint `joint` to `order`.
    ///
    /// # Errors
    /// When the joint does not have three rotation channels.
    pub fn joint(skeleton: &Skeleton, joint: JointId, order: RotationOrder) -> Result<OrderMap> {
        let j = skeleton
            .get(joint)
            .ok_or_else(|| Error::invalid(format!("no joint {joint} in this skeleton")))?;
        match j.rotation_order() {
            None => Err(Error::invalid(format!(
                "joint {:?} has {} rotation channels, not three: give it three first (channel layout)",
                j.name(),
                j.rotation_axes().count()
            ))),
            Some(o) if o == order => OrderMap::build(skeleton, &[], order),
            Some(_) => OrderMap::build(skeleton, &[joint], order),
        }
    }

    fn build(skeleton: &Skeleton, ids: &[JointId], order: RotationOrder) -> Result<OrderMap> {
        let out = rebuild_skeleton(skeleton, |id, j| {
            if !ids.contains(&id) {
                return Ok((j.offset(), j.channels().to_vec()));
            }
            let mut axes = order.axes().into_iter();
            let channels = j
                .channels()
                .iter()
                .map(|&c| {
                    if c.is_rotation() {
                        rotation_channel(axes.next().unwrap_or(c.axis()))
                    } else {
                        c
                    }
                })
                .collect();
            Ok((j.offset(), channels))
        })?;
        let changed: Vec<_> = ids
            .iter()
            .map(|&id| {
                (JointChannels::of(skeleton.joint(id)), JointChannels::of(out.joint(id)), order)
            })
            .collect();
        let n = 3 * changed.len();
        Ok(OrderMap {
            previous: vec![0.0; out.n_channels()],
            skeleton: out,
            changed,
            first: true,
            half: vec![0.0; n],
            sin: vec![0.0; n],
            cos: vec![0.0; n],
            euler: EulerBatch::new(),
        })
    }
}

/// The rotation channel about `axis`.
pub(crate) fn rotation_channel(axis: crate::rotation::Axis) -> Channel {
    match axis {
        crate::rotation::Axis::X => Channel::Xrotation,
        crate::rotation::Axis::Y => Channel::Yrotation,
        crate::rotation::Axis::Z => Channel::Zrotation,
    }
}

impl FrameMap for OrderMap {
    fn output_skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// Each changed joint's rotation is the product of its channels
    /// ([`JointChannels::rotation`], the same bits from the batched sines
    /// and cosines), written in the new order as
    /// [`JointChannels::write_rotation`] writes three channels (within
    /// 1e-9 degrees), the extractions of the frame in one batch.
    fn map(&mut self, input: &[f64], output: &mut [f64]) {
        output.copy_from_slice(input);
        let mut m = 0;
        for (from, _, _) in &self.changed {
            for &c in &from.rot_index {
                self.half[m] = 0.5 * input[c];
                m += 1;
            }
        }
        sin_cos_deg_slice(&self.half, &mut self.sin, &mut self.cos);
        self.euler.clear();
        for (n, (from, to, order)) in self.changed.iter().enumerate() {
            let p = 3 * n;
            let q = euler_to_quat_sin_cos(&from.rot_axes, &self.sin[p..p + 3], &self.cos[p..p + 3]);
            let near = (!self.first).then(|| to.angles(&self.previous));
            self.euler.push_quat(q, *order, near);
        }
        self.euler.solve();
        for (n, (_, to, _)) in self.changed.iter().enumerate() {
            for (&c, v) in to.rot_index.iter().zip(self.euler.angles(n)) {
                output[c] = v;
            }
        }
        self.previous.copy_from_slice(output);
        self.first = false;
    }
}
