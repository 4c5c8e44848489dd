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
use super::{FrameMap, SplitFrameMap, rebuild_skeleton};
use crate::channel::Channel;
use crate::error::{Error, Result};
use glam::DQuat;

use crate::rotation::{EulerBatch, RotationOrder, euler_to_quat_sin_cos, sin_cos_deg_slice};
use crate::skeleton::{JointId, Skeleton};

/// A [`FrameMap`] that changes rotation orders (see the module docs).
///
/// Each joint's angles depend only on its own previous output angles, so
/// [`SplitFrameMap::map_many`] maps a run of frames on rayon's pool in
/// groups of joints, each group through every frame in order: the same
/// bits as one frame at a time, with no guessing.
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
    rewrite: Rewrite,
}

/// The joints whose three rotation channels are written again each frame,
/// closest to their previous output angles: [`OrderMap`]'s, and
/// [`super::axes::AxesMap`]'s conjugated joints. Each joint's angles depend
/// only on its own previous angles, so a run of frames can be mapped in
/// groups of joints, each group through every frame in order.
#[derive(Clone, Debug)]
pub(crate) struct Rewrite {
    /// The joints: input layout, output layout, output order, and the
    /// quaternion `c` that the rotation is conjugated by (`c·R·c⁻¹`), if any.
    changed: Vec<Changed>,
    /// Each changed joint's angles in the previous output frame (listing
    /// order of its new channels); meaningless while `first`.
    previous: Vec<[f64; 3]>,
    first: bool,
    /// Per group of joints mapped together: its buffers (the first for one
    /// frame at a time).
    scratch: Vec<Scratch>,
}

type Changed = (JointChannels, JointChannels, RotationOrder, Option<DQuat>);

/// The buffers of one group of joints: per frame, the half angles of the
/// joints' channels, their sines and cosines (one batch,
/// [`sin_cos_deg_slice`]) and the Euler extraction in the new orders (one
/// batch, [`EulerBatch`]); for a run of frames, the angles written.
#[derive(Clone, Debug, Default)]
struct Scratch {
    half: Vec<f64>,
    sin: Vec<f64>,
    cos: Vec<f64>,
    euler: EulerBatch,
    angles: Vec<f64>,
}

/// Changed joints per group in [`SplitFrameMap::map_many`], at least (a
/// group's per-frame batches should fill a few SIMD lanes).
const GROUP_JOINTS: usize = 8;

/// Frames of a run below which [`SplitFrameMap::map_many`] is not worth
/// starting tasks for.
const MANY_FRAMES: usize = 64;

/// One frame of the joints `changed`: their new angles, closest to
/// `previous` (unless `first`), into `previous`.
fn solve_frame(
    changed: &[Changed],
    previous: &mut [[f64; 3]],
    first: bool,
    s: &mut Scratch,
    input: &[f64],
) {
    let n = 3 * changed.len();
    s.half.clear();
    for (from, _, _, _) in changed {
        for &c in &from.rot_index {
            s.half.push(0.5 * input[c]);
        }
    }
    s.sin.resize(n, 0.0);
    s.cos.resize(n, 0.0);
    sin_cos_deg_slice(&s.half, &mut s.sin, &mut s.cos);
    s.euler.clear();
    for (k, ((from, _, order, c), near)) in changed.iter().zip(previous.iter()).enumerate() {
        let p = 3 * k;
        let q = euler_to_quat_sin_cos(&from.rot_axes, &s.sin[p..p + 3], &s.cos[p..p + 3]);
        let q = match c {
            Some(c) => *c * q * c.conjugate(),
            None => q,
        };
        s.euler.push_quat(q, *order, (!first).then_some(*near));
    }
    s.euler.solve();
    for (k, near) in previous.iter_mut().enumerate() {
        *near = s.euler.angles(k);
    }
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
                (
                    JointChannels::of(skeleton.joint(id)),
                    JointChannels::of(out.joint(id)),
                    order,
                    None,
                )
            })
            .collect();
        Ok(OrderMap { skeleton: out, rewrite: Rewrite::new(changed) })
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
        self.rewrite.map(input, output);
    }
}

impl SplitFrameMap for OrderMap {
    /// The frames copied, then the changed joints in groups on rayon's
    /// pool, each group through every frame in order (no guesses).
    fn map_many(&mut self, frames: usize, input: &[f64], output: &mut [f64]) -> bool {
        if !self.rewrite.many_pays(frames) {
            return false;
        }
        output.copy_from_slice(input);
        self.rewrite.map_many(frames, input, output, self.skeleton.n_channels());
        true
    }
}

impl Rewrite {
    /// Rewrites `changed`, from the first frame on.
    pub(crate) fn new(changed: Vec<Changed>) -> Rewrite {
        Rewrite {
            previous: vec![[0.0; 3]; changed.len()],
            changed,
            first: true,
            scratch: vec![Scratch::default()],
        }
    }

    /// Writes the rotation channels of the changed joints of one frame
    /// into `output` (the other channels are the caller's).
    pub(crate) fn map(&mut self, input: &[f64], output: &mut [f64]) {
        solve_frame(&self.changed, &mut self.previous, self.first, &mut self.scratch[0], input);
        for ((_, to, _, _), angles) in self.changed.iter().zip(&self.previous) {
            for (&c, &v) in to.rot_index.iter().zip(angles) {
                output[c] = v;
            }
        }
        self.first = false;
    }

    /// Whether [`Rewrite::map_many`] runs in parallel for a run of
    /// `frames` frames (enough frames, joints and threads).
    pub(crate) fn many_pays(&self, frames: usize) -> bool {
        #[cfg(feature = "parallel")]
        {
            frames >= MANY_FRAMES
                && rayon::current_num_threads() >= 2
                && self.changed.len() >= 2 * GROUP_JOINTS
        }
        #[cfg(not(feature = "parallel"))]
        {
            let _ = frames;
            false
        }
    }

    /// [`Rewrite::map`] of `frames` frames of `width` values, the same
    /// bits: groups of joints on rayon's pool (with the `parallel`
    /// feature), each through every frame of the run in order; the angles
    /// of each group are then put in place.
    pub(crate) fn map_many(
        &mut self,
        frames: usize,
        input: &[f64],
        output: &mut [f64],
        width: usize,
    ) {
        assert!(
            input.len() >= frames * width && output.len() == frames * width,
            "frames must hold one value per channel"
        );
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            let groups = (2 * rayon::current_num_threads()).min(self.changed.len() / GROUP_JOINTS);
            let per = self.changed.len().div_ceil(groups.max(1)).max(1);
            let groups = self.changed.len().div_ceil(per);
            self.scratch.resize_with(groups.max(1), Scratch::default);
            let first = self.first;
            let n_in = input.len() / frames.max(1);
            self.changed
                .par_chunks(per)
                .zip(self.previous.par_chunks_mut(per))
                .zip(self.scratch.par_iter_mut())
                .for_each(|((changed, previous), s)| {
                    let mut angles = std::mem::take(&mut s.angles);
                    angles.clear();
                    angles.reserve(frames * 3 * changed.len());
                    for f in 0..frames {
                        let frame = &input[f * n_in..(f + 1) * n_in];
                        solve_frame(changed, previous, first && f == 0, s, frame);
                        angles.extend(previous.iter().flatten());
                    }
                    s.angles = angles;
                });
            // Every frame: the groups' angles in their places.
            let changed = &self.changed;
            let scratch = &self.scratch[..groups];
            const PIECE: usize = 256;
            output.par_chunks_mut(PIECE * width.max(1)).enumerate().for_each(|(p, out)| {
                for (g, s) in scratch.iter().enumerate() {
                    let joints = &changed[g * per..((g + 1) * per).min(changed.len())];
                    let stride = 3 * joints.len();
                    for (k, frame) in out.chunks_exact_mut(width).enumerate() {
                        let f = p * PIECE + k;
                        let a = &s.angles[f * stride..(f + 1) * stride];
                        for ((_, to, _, _), v) in joints.iter().zip(a.chunks_exact(3)) {
                            for (&c, &x) in to.rot_index.iter().zip(v) {
                                frame[c] = x;
                            }
                        }
                    }
                }
            });
            self.first = false;
        }
        #[cfg(not(feature = "parallel"))]
        {
            let n_in = input.len() / frames.max(1);
            for f in 0..frames {
                self.map(&input[f * n_in..(f + 1) * n_in], &mut output[f * width..(f + 1) * width]);
            }
        }
    }
}
