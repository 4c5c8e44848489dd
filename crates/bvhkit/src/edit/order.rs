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
//!
//! # Implementation notes
//!
//! (`OrderMap`, and `Rewrite` with its lane kernel `Lanes`: one SIMD lane per
//! joint, no branch on the orders, AVX-512F or AVX2 dispatch with the plain
//! loop's bits: the half-angle sines (`sin_cos_deg`'s), the closed-form
//! quaternion of the input angles in the input order's axes, a signed
//! permutation into the output order's axes, an optional exact half turn after
//! it (the mirror's, in a build of the pass of its own), then `EulerBatch`'s
//! matrix and extraction (its `atan2`s without the operand scaling and `(0, 0)`
//! guards, which the unit pairs of a normalised quaternion's matrix never need:
//! `rotation::extract_unit`, the same bits) and, after the first frame, the
//! mixes' fast continuity choice `near_deg_fast` without the extraction's
//! gimbal-lock selects (`rotation::extract_unit_fast`): the lanes it flags (a
//! choice it cannot be sure rounds as `near_deg`, gimbal lock) and those with a
//! half angle beyond the exact reduction or NaN are solved again one by one
//! with `near_deg` (the huge angle reduced `% 360` first), so the lanes keep
//! `EulerBatch`'s bits; each angle is written rounded to nine decimal places
//! (`snap_angle`, in the pass, so the writer's fast path prints it; continuity
//! is chosen from the unrounded angles); a frame's half angles are gathered
//! with one multiplication by half the sign each; its lane steps (the
//! closed-form quaternion, its matrix, the extraction) are `rotation::batch`'s
//! own, shared crate-wide, and a test checks the lanes give `EulerBatch`'s
//! bits; unit tests compare order, axes and layout with the plain per-joint
//! path on the whole corpus).

use super::pose::JointChannels;
use super::{FrameMap, SplitFrameMap, rebuild_skeleton};
use crate::channel::Channel;
use crate::error::{Error, Result};
use crate::rotation::{
    Axis, REDUCE_LIMIT, RotationOrder, euler3_quat_lane, extract_unit, extract_unit_fast,
    parity_of, quat_matrix, select, sin_cos_deg_reduced, snap_angle,
};
use crate::simd::{Simd, simd_kernel};
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

/// The joints whose rotation channels are written again each frame,
/// closest to their previous output angles: [`OrderMap`]'s,
/// [`super::axes::AxesMap`]'s conjugated joints and
/// [`super::layout::LayoutMap`]'s joints whose rotation axes change. Each
/// joint's angles depend only on its own previous angles, so a run of
/// frames can be mapped in groups of joints, each group through every
/// frame in order.
///
/// Every frame of a group is one pass of [`Lanes`] (one SIMD lane per
/// joint, no branch on the orders): the half-angle sines and cosines, the
/// input rotation's quaternion in closed form, its components moved to the
/// output order's axes (a signed permutation, exact), and
/// [`EulerBatch`](crate::rotation::EulerBatch)'s extraction and continuity
/// choice, with its bits (tested).
#[derive(Clone, Debug)]
pub(crate) struct Rewrite {
    changed: Vec<Changed>,
    /// Per group of joints mapped together: its lanes (the first for one
    /// frame at a time) and, for a run of frames, the angles written. The
    /// lanes keep each joint's previous output angles.
    groups: Vec<Group>,
    /// Joints per group (the last may have fewer).
    per: usize,
    first: bool,
}

/// One joint of a [`Rewrite`]: its input rotation as a product of three
/// rotations about distinct axes, and where its output angles go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Changed {
    /// The axes of the input rotation's factors, in product order (an
    /// input with fewer than three rotation channels is completed with
    /// factors of angle 0, which are exactly the identity).
    pub(crate) from: RotationOrder,
    /// Per factor: the frame index of its angle (`None`: 0) and the sign
    /// the angle is taken with (`-1` where a conjugation turns an axis
    /// over).
    pub(crate) src: [Option<usize>; 3],
    pub(crate) sign: [f64; 3],
    /// The output order, and the frame index of each output angle
    /// (listing order).
    pub(crate) to: RotationOrder,
    pub(crate) out: [usize; 3],
    /// A half turn about this axis after the input rotation (`q·(0, e_c)`,
    /// a signed permutation of the quaternion's components: exact), for
    /// the mirror's `S(l)·R·S(r) = (S(l)·R·S(l))·S(l)·S(r)`.
    pub(crate) post: Option<Axis>,
}

impl Changed {
    /// The rotation of `from`'s channels (any number, distinct axes, as a
    /// skeleton has them) written into `to`'s three rotation channels.
    ///
    /// # Panics
    /// When `to` does not have three rotation channels.
    pub(crate) fn new(from: &JointChannels, to: &JointChannels) -> Changed {
        let n = from.n_rot as usize;
        let mut axes = [Axis::X; 3];
        axes[..n].copy_from_slice(from.rotation_axes());
        let mut src = [None; 3];
        for (s, &i) in src.iter_mut().zip(&from.rot_index[..n]) {
            *s = Some(i);
        }
        // Complete with the axes not listed, as factors of angle 0.
        let mut missing = Axis::ALL.into_iter().filter(|a| !from.rotation_axes().contains(a));
        for a in axes.iter_mut().skip(n) {
            *a = missing.next().unwrap_or(Axis::X);
        }
        Changed {
            from: RotationOrder::from_axes(&axes).expect("distinct rotation axes"),
            src,
            sign: [1.0; 3],
            to: to.rotation_order().expect("three rotation channels"),
            out: to.rot_index,
            post: None,
        }
    }

    /// A joint with three rotation channels conjugated by a signed
    /// permutation `C` of the axes (`image(a)` is the axis `C` sends `a`
    /// to, and the sign): `C·Ra(θ)·Cᵀ = Rb(±θ)`, so the conjugated
    /// rotation is the product of the same angles, signed, about the image
    /// axes, exactly; it is written back in the joint's own order.
    pub(crate) fn conjugated(j: &JointChannels, image: impl Fn(Axis) -> (Axis, f64)) -> Changed {
        let axes = j.rotation_axes();
        let (a, b, c) = (image(axes[0]), image(axes[1]), image(axes[2]));
        Changed {
            from: RotationOrder::from_axes(&[a.0, b.0, c.0]).expect("a permutation of the axes"),
            src: [Some(j.rot_index[0]), Some(j.rot_index[1]), Some(j.rot_index[2])],
            sign: [a.1, b.1, c.1],
            to: j.rotation_order().expect("three rotation channels"),
            out: j.rot_index,
            post: None,
        }
    }
}

/// A group of joints of a [`Rewrite`]: its lanes, and the angles of a run
/// of frames (`3 · joints` per frame, listing order per joint).
#[derive(Clone, Debug, Default)]
struct Group {
    lanes: Lanes,
    /// The first output channel of the group's block of columns (0 for
    /// the first group, else the lowest rotation channel of its first
    /// joint): group `g`'s block ends where group `g + 1`'s begins.
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    lo: usize,
    /// Where the angles go in an output frame, from `lo`: `3 · joints`
    /// channel indices minus `lo`, per lane.
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    outs: Vec<[usize; 3]>,
}

/// Changed joints per group in [`SplitFrameMap::map_many`], at least (a
/// group's lanes should fill a few SIMD steps).
#[cfg_attr(not(feature = "parallel"), allow(dead_code))]
const GROUP_JOINTS: usize = 8;

/// Frames of a run below which [`SplitFrameMap::map_many`] is not worth
/// starting tasks for.
#[cfg_attr(not(feature = "parallel"), allow(dead_code))]
const MANY_FRAMES: usize = 64;

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
                Changed::new(
                    &JointChannels::of(skeleton.joint(id)),
                    &JointChannels::of(out.joint(id)),
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
    /// The changed joints in groups on rayon's pool, each group through
    /// every frame in order (no guesses), copying its block of columns of
    /// each frame and putting its angles in place.
    fn map_many(&mut self, frames: usize, input: &[f64], output: &mut [f64]) -> bool {
        if !self.rewrite.many_pays(frames) {
            return false;
        }
        let width = self.skeleton.n_channels();
        self.rewrite.map_many(frames, input, output, width, |c, i, o| {
            o.copy_from_slice(&i[c]);
        });
        true
    }
}

impl Rewrite {
    /// Rewrites `changed`, from the first frame on.
    pub(crate) fn new(changed: Vec<Changed>) -> Rewrite {
        let mut r = Rewrite { changed, groups: Vec::new(), per: 0, first: true };
        r.regroup(1);
        r
    }

    /// Cuts the joints into `groups` groups (at least one), each with its
    /// lanes, carrying every joint's previous angles over.
    fn regroup(&mut self, groups: usize) {
        let n = self.changed.len();
        // Whole SIMD steps per group, so that padding is only at the end.
        let per = n.div_ceil(groups.max(1)).div_ceil(STEP).max(1) * STEP;
        if per == self.per {
            return;
        }
        let previous: Vec<[f64; 3]> = if self.first {
            Vec::new()
        } else {
            (0..n).map(|k| self.groups[k / self.per].lanes.near(k % self.per)).collect()
        };
        self.per = per;
        self.groups = self
            .changed
            .chunks(per)
            .enumerate()
            .map(|(g, joints)| {
                let mut lanes = Lanes::new(joints);
                if !previous.is_empty() {
                    for k in 0..joints.len() {
                        lanes.set_near(k, previous[g * per + k]);
                    }
                }
                let lo = if g == 0 { 0 } else { joints[0].out.into_iter().min().unwrap_or(0) };
                let outs = joints.iter().map(|c| c.out.map(|o| o.wrapping_sub(lo))).collect();
                Group { lanes, lo, outs }
            })
            .collect();
        if self.groups.is_empty() {
            self.groups.push(Group::default());
        }
    }

    /// Whether every group's output channels lie in its block of columns
    /// (joints in file order, as every map makes them): then a run's
    /// groups can write their blocks of each frame side by side.
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    fn blocks_hold_their_joints(&self) -> bool {
        let his = self.groups.iter().skip(1).map(|g| g.lo).chain([usize::MAX]);
        self.groups.iter().zip(his).all(|(g, hi)| {
            hi.checked_sub(g.lo).is_some_and(|w| g.outs.iter().flatten().all(|&o| o < w))
        })
    }

    /// Writes the rotation channels of the changed joints of one frame
    /// into `output` (the other channels are the caller's).
    pub(crate) fn map(&mut self, input: &[f64], output: &mut [f64]) {
        let first = self.first;
        for (g, joints) in self.groups.iter_mut().zip(self.changed.chunks(self.per)) {
            g.lanes.load(input);
            g.lanes.solve(first);
            for (k, c) in joints.iter().enumerate() {
                for (&o, v) in c.out.iter().zip(g.lanes.snapped(k)) {
                    output[o] = v;
                }
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

    /// [`Rewrite::map`] of `frames` frames (`input` holds them one after
    /// the other) into `output`'s frames of `width` values, the same bits:
    /// groups of joints on rayon's pool (with the `parallel` feature), each
    /// through every frame of the run in order, each writing its own block
    /// of columns of every output frame: `fill(columns, input frame,
    /// block)` first makes the block's channels (all but the rewritten
    /// ones, which it may leave as they are), then the group's angles go
    /// in place.
    pub(crate) fn map_many<F>(
        &mut self,
        frames: usize,
        input: &[f64],
        output: &mut [f64],
        width: usize,
        fill: F,
    ) where
        F: Fn(std::ops::Range<usize>, &[f64], &mut [f64]) + Sync,
    {
        assert!(
            output.len() == frames * width && input.len().is_multiple_of(frames.max(1)),
            "frames must hold one value per channel"
        );
        if frames == 0 {
            return;
        }
        let n_in = input.len() / frames;
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            let threads = rayon::current_num_threads();
            self.regroup(threads.min(self.changed.len() / GROUP_JOINTS).max(1));
            if !self.blocks_hold_their_joints() {
                self.regroup(1);
            }
            let first = self.first;
            // Every output frame cut into the groups' blocks.
            let n = self.groups.len();
            let mut blocks: Vec<Vec<&mut [f64]>> =
                (0..n).map(|_| Vec::with_capacity(frames)).collect();
            let bounds: Vec<usize> =
                self.groups.iter().skip(1).map(|g| g.lo.min(width)).chain([width]).collect();
            for frame in output.chunks_exact_mut(width.max(1)) {
                let (mut rest, mut at) = (frame, 0);
                for (b, &hi) in blocks.iter_mut().zip(&bounds) {
                    let (head, tail) = rest.split_at_mut(hi.max(at) - at);
                    b.push(head);
                    (rest, at) = (tail, hi.max(at));
                }
            }
            let fill = &fill;
            self.groups.par_iter_mut().zip(blocks).zip(bounds).for_each(|((g, blocks), hi)| {
                let lo = g.lo.min(hi);
                for (f, block) in blocks.into_iter().enumerate() {
                    let frame = &input[f * n_in..(f + 1) * n_in];
                    fill(lo..hi, frame, block);
                    g.lanes.load(frame);
                    g.lanes.solve(first && f == 0);
                    g.lanes.place(&g.outs, block);
                }
            });
            self.first = false;
        }
        #[cfg(not(feature = "parallel"))]
        for (f, out) in output.chunks_exact_mut(width.max(1)).enumerate() {
            let frame = &input[f * n_in..(f + 1) * n_in];
            fill(0..width, frame, out);
            self.map(frame, out);
        }
    }
}

/// Lanes per SIMD step (eight with AVX-512): a group's lane count is
/// padded up to a multiple of this, so that no lane runs in a scalar
/// remainder loop.
const STEP: usize = 8;

/// The per-frame kernel of a [`Rewrite`]: one lane per joint, structure of
/// arrays, one loop without branches (the orders are data, not code), run
/// on AVX-512F or AVX2 lanes where the CPU has them (no FMA, so every
/// operation rounds as in the plain loop: the same bits everywhere).
///
/// Per lane: the half-angle sines and cosines of the three input angles
/// ([`sin_cos_deg`](crate::rotation::sin_cos_deg)'s reduction and kernel,
/// its bits), the quaternion of their product in closed form, kept in the
/// input order's axes `(e·q_i, e·q_j, e·q_k, w)` (`e` the order's parity),
/// its vector part moved to the output order's axes (each component is
/// one of the three, times `±1`: exact), then
/// [`EulerBatch`](crate::rotation::EulerBatch)'s matrix, extraction and
/// continuity choice next to the lane's previous angles, which the results
/// replace, and the angles as they are written ([`snap_angle`]). After the
/// first frame the continuity choice is `near_deg_fast` (a multiplication
/// by 1/360 instead of `near_deg`'s divisions, and no gimbal-lock selects
/// in the extraction), which flags the lanes it cannot be sure to decide
/// as `near_deg` does (and those in gimbal lock): they are solved again
/// one by one with `near_deg` itself, so the lanes keep `EulerBatch`'s
/// bits.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lanes {
    /// Lanes in use.
    n: usize,
    /// Per lane in use: the frame index of each factor's angle (for a
    /// factor without a channel, any index of the frame) ...
    src: Vec<[usize; 3]>,
    /// ... and half the sign it is taken with (0 for a factor without a
    /// channel: its angle is 0).
    half_sign: Vec<[f64; 3]>,
    /// Whether a factor of some lane has no channel.
    any_absent: bool,
    /// Per lane: the input order's parity, the output order's parity, the
    /// product of both, and for each output axis the input factor it is
    /// (0, 1 or 2, as `f64` so that the selects run on the lanes).
    e_in: Vec<f64>,
    e_out: Vec<f64>,
    g: Vec<f64>,
    pick: [Vec<f64>; 3],
    /// 1 where a half turn follows, about the output order's axis number
    /// `turn` (0, 1 or 2).
    post: Vec<f64>,
    turn: Vec<f64>,
    /// Whether any lane has a half turn.
    any_post: bool,
    /// This frame's half angles (degrees), factor order.
    half: [Vec<f64>; 3],
    /// The previous output angles, then (after [`Lanes::solve`]) this
    /// frame's.
    near: [Vec<f64>; 3],
    /// [`Lanes::solve`]'s angles before they become `near`.
    out: [Vec<f64>; 3],
    /// This frame's angles as written ([`snap_angle`]).
    snapped: [Vec<f64>; 3],
    /// 1 for a lane the pass could not decide, or with a half angle beyond
    /// the exact reduction (solved again).
    redo: Vec<f64>,
}

impl Lanes {
    /// Lanes for `joints`, every previous angle 0.
    pub(crate) fn new(joints: &[Changed]) -> Lanes {
        let n = joints.len();
        let cap = n.div_ceil(STEP).max(1) * STEP;
        let lanes = || vec![0.0; cap];
        let mut l = Lanes {
            n,
            src: Vec::with_capacity(n),
            half_sign: Vec::with_capacity(n),
            any_absent: false,
            e_in: vec![1.0; cap],
            e_out: vec![1.0; cap],
            g: vec![1.0; cap],
            pick: [lanes(), vec![1.0; cap], vec![2.0; cap]],
            post: lanes(),
            turn: lanes(),
            any_post: false,
            half: std::array::from_fn(|_| lanes()),
            near: std::array::from_fn(|_| lanes()),
            out: std::array::from_fn(|_| lanes()),
            snapped: std::array::from_fn(|_| lanes()),
            redo: lanes(),
        };
        for (k, c) in joints.iter().enumerate() {
            let (from, to) = (c.from.axes(), c.to.axes());
            let (e_in, e_out) = (parity_of(c.from), parity_of(c.to));
            l.e_in[k] = e_in;
            l.e_out[k] = e_out;
            l.g[k] = e_in * e_out;
            for (m, a) in to.iter().enumerate() {
                l.pick[m][k] = from.iter().position(|b| b == a).unwrap_or(m) as f64;
            }
            if let Some(c) = c.post {
                l.post[k] = 1.0;
                l.turn[k] = to.iter().position(|&b| b == c).unwrap_or(0) as f64;
                l.any_post = true;
            }
            let any = c.src.iter().flatten().next().copied().unwrap_or(0);
            l.src.push(c.src.map(|i| i.unwrap_or(any)));
            // 0.5 · (s · x) and (0.5 · s) · x round alike (s = ±1): the
            // same half angle.
            l.half_sign.push(std::array::from_fn(|m| {
                if c.src[m].is_some() { 0.5 * c.sign[m] } else { 0.0 }
            }));
            l.any_absent |= c.src.contains(&None);
        }
        l
    }

    /// The previous output angles of lane `k` (after [`Lanes::solve`]:
    /// this frame's).
    pub(crate) fn near(&self, k: usize) -> [f64; 3] {
        [self.near[0][k], self.near[1][k], self.near[2][k]]
    }

    /// This frame's angles of lane `k` as written ([`snap_angle`] of
    /// [`Lanes::near`]), after [`Lanes::solve`].
    fn snapped(&self, k: usize) -> [f64; 3] {
        [self.snapped[0][k], self.snapped[1][k], self.snapped[2][k]]
    }

    /// Sets the previous output angles of lane `k`.
    pub(crate) fn set_near(&mut self, k: usize, a: [f64; 3]) {
        for (v, x) in self.near.iter_mut().zip(a) {
            v[k] = x;
        }
    }

    /// The half angles of the lanes' joints in `frame` (a frame of the
    /// skeleton the joints given to [`Lanes::new`] index).
    #[inline]
    pub(crate) fn load(&mut self, frame: &[f64]) {
        if self.any_absent {
            self.load_of::<true>(frame);
        } else {
            self.load_of::<false>(frame);
        }
    }

    /// [`Lanes::load`]; `ABSENT` when a factor may have no channel (its
    /// half angle is then 0).
    #[inline(always)]
    fn load_of<const ABSENT: bool>(&mut self, frame: &[f64]) {
        let n = self.n;
        let (src, half_sign) = (&self.src[..n], &self.half_sign[..n]);
        let [h0, h1, h2] = &mut self.half;
        let (h0, h1, h2) = (&mut h0[..n], &mut h1[..n], &mut h2[..n]);
        let half = |i: usize, s: f64| {
            let x = s * frame[i];
            if ABSENT { select(s != 0.0, x, 0.0) } else { x }
        };
        for k in 0..n {
            let (i, s) = (src[k], half_sign[k]);
            h0[k] = half(i[0], s[0]);
            h1[k] = half(i[1], s[1]);
            h2[k] = half(i[2], s[2]);
        }
    }

    /// The lanes' angles as written ([`snap_angle`]) into `block`, lane
    /// `k`'s at `outs[k]`.
    #[inline]
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    fn place(&self, outs: &[[usize; 3]], block: &mut [f64]) {
        let [s0, s1, s2] = &self.snapped;
        for (k, o) in outs.iter().enumerate() {
            block[o[0]] = s0[k];
            block[o[1]] = s1[k];
            block[o[2]] = s2[k];
        }
    }

    /// This frame's angles of every lane, closest to the previous ones
    /// (the principal solutions when `first`), on the widest SIMD lanes
    /// the CPU has.
    pub(crate) fn solve(&mut self, first: bool) {
        self.run(first, true);
    }

    /// [`Lanes::solve`], on SIMD lanes when `simd`, else in the plain loop
    /// (the same bits).
    fn run(&mut self, first: bool, simd: bool) {
        let simd = if simd { Simd::best() } else { Simd::PORTABLE };
        match (first, self.any_post) {
            (true, true) => pass::<true, true>(simd, self),
            (true, false) => pass::<true, false>(simd, self),
            (false, true) => pass::<false, true>(simd, self),
            (false, false) => pass::<false, false>(simd, self),
        }
        self.redo_flagged(first);
        std::mem::swap(&mut self.near, &mut self.out);
    }

    /// Solves again, one by one, the lanes the pass flagged: with
    /// `near_deg` (or without a previous frame when `first`), after
    /// reducing a huge half angle as `sin_cos_deg` does (`% 360`, exact;
    /// NaN stays NaN), so that the lane gets its bits.
    #[cold]
    fn redo_flagged_lanes(&mut self, first: bool) {
        let n = self.n;
        for t in 0..n {
            if self.redo[t] == 0.0 {
                continue;
            }
            for h in &mut self.half {
                if is_huge_half(h[t]) {
                    h[t] %= 360.0;
                }
            }
            let d = self.data(n);
            let q = if self.any_post {
                lane_quat_of::<true>(&d, t)
            } else {
                lane_quat_of::<false>(&d, t)
            };
            let previous = [self.near[0][t], self.near[1][t], self.near[2][t]];
            let a = extract_unit(quat_matrix(q), self.e_out[t], previous, !first);
            for ((o, s), x) in self.out.iter_mut().zip(&mut self.snapped).zip(a) {
                o[t] = x;
                s[t] = snap_angle(x);
            }
        }
    }

    /// [`Lanes::redo_flagged_lanes`] when a lane is flagged.
    #[inline]
    fn redo_flagged(&mut self, first: bool) {
        if self.redo[..self.n].iter().fold(0, |acc, r| acc | r.to_bits()) != 0 {
            self.redo_flagged_lanes(first);
        }
    }
}

/// Whether a half angle is beyond the exact reduction's limit, or NaN (its
/// magnitude's bits at least the limit's).
#[inline(always)]
fn is_huge_half(x: f64) -> bool {
    const LIMIT: u64 = REDUCE_LIMIT.to_bits();
    x.to_bits() & !(1 << 63) >= LIMIT
}

simd_kernel! {
    /// [`lanes_loop`] on the given SIMD build.
    fn pass<const FIRST: bool, const POST: bool>(simd: Simd, l: &mut Lanes) {
        lanes_loop::<FIRST, POST>(l)
    }
}

/// Lane `t`'s quaternion in its output order's axes: the half-angle sines
/// and cosines, the closed-form product in the input order's axes, the
/// signed permutation to the output order's, and (with `POST`) the half
/// turn.
#[inline(always)]
fn lane_quat_of<const POST: bool>(l: &LaneData<'_>, t: usize) -> [f64; 4] {
    let (sa, ca) = sin_cos_deg_reduced(l.h0[t]);
    let (sb, cb) = sin_cos_deg_reduced(l.h1[t]);
    let (sc, cc) = sin_cos_deg_reduced(l.h2[t]);
    let v = euler3_quat_lane([sa, sb, sc], [ca, cb, cc], l.e_in[t]);
    let pick = |k: f64| select(k == 0.0, v[0], select(k == 1.0, v[1], v[2]));
    let g = l.g[t];
    let q = [g * pick(l.k0[t]), g * pick(l.k1[t]), g * pick(l.k2[t]), v[3]];
    if POST { half_turn(q, l.post[t] != 0.0, l.turn[t], l.e_out[t]) } else { q }
}

/// The inputs of [`lane_quat_of`] of `n` lanes, as slices of one length
/// (so that the loops over them have no bounds checks).
struct LaneData<'a> {
    h0: &'a [f64],
    h1: &'a [f64],
    h2: &'a [f64],
    e_in: &'a [f64],
    e_out: &'a [f64],
    g: &'a [f64],
    k0: &'a [f64],
    k1: &'a [f64],
    k2: &'a [f64],
    post: &'a [f64],
    turn: &'a [f64],
}

impl Lanes {
    /// The first `n` lanes' inputs.
    #[inline(always)]
    fn data(&self, n: usize) -> LaneData<'_> {
        let [h0, h1, h2] = &self.half;
        let [k0, k1, k2] = &self.pick;
        LaneData {
            h0: &h0[..n],
            h1: &h1[..n],
            h2: &h2[..n],
            e_in: &self.e_in[..n],
            e_out: &self.e_out[..n],
            g: &self.g[..n],
            k0: &k0[..n],
            k1: &k1[..n],
            k2: &k2[..n],
            post: &self.post[..n],
            turn: &self.turn[..n],
        }
    }
}

/// [`Lanes::solve`]'s loop over the lanes in use padded to a multiple of
/// [`STEP`] (the padding lanes hold finite values; their results are not
/// read): the first frame's principal angles (`FIRST`), else
/// [`extract_unit_fast`]'s with its flag in `redo`; `POST` when a lane
/// has a half turn.
#[inline(always)]
fn lanes_loop<const FIRST: bool, const POST: bool>(l: &mut Lanes) {
    let n = l.n.div_ceil(STEP) * STEP;
    let mut out = std::mem::take(&mut l.out);
    let mut snapped = std::mem::take(&mut l.snapped);
    let mut redo = std::mem::take(&mut l.redo);
    {
        let [o0, o1, o2] = &mut out;
        let (o0, o1, o2) = (&mut o0[..n], &mut o1[..n], &mut o2[..n]);
        let [s0, s1, s2] = &mut snapped;
        let (s0, s1, s2) = (&mut s0[..n], &mut s1[..n], &mut s2[..n]);
        let redo = &mut redo[..n];
        let d = l.data(n);
        let [p0, p1, p2] = &l.near;
        let (p0, p1, p2) = (&p0[..n], &p1[..n], &p2[..n]);
        for t in 0..n {
            let r = quat_matrix(lane_quat_of::<POST>(&d, t));
            let previous = [p0[t], p1[t], p2[t]];
            let ([a, b, c], undecided) = if FIRST {
                (extract_unit(r, d.e_out[t], previous, false), false)
            } else {
                extract_unit_fast(r, d.e_out[t], previous)
            };
            let huge = is_huge_half(d.h0[t]) | is_huge_half(d.h1[t]) | is_huge_half(d.h2[t]);
            o0[t] = a;
            o1[t] = b;
            o2[t] = c;
            s0[t] = snap_angle(a);
            s1[t] = snap_angle(b);
            s2[t] = snap_angle(c);
            redo[t] = select(undecided | huge, 1.0, 0.0);
        }
    }
    l.out = out;
    l.snapped = snapped;
    l.redo = redo;
}

/// `q·(0, e·u_m)` when `on` (else `q`), `q` in an order's axes and `u_m`
/// its axis number `m`, `e` its parity (the image of a unit axis in those
/// axes): `q·(0, u) = (w·u + v × u, -v·u)`, a signed permutation of the
/// components, so exact.
#[inline(always)]
fn half_turn(q: [f64; 4], on: bool, m: f64, e: f64) -> [f64; 4] {
    let [x, y, z, w] = q;
    let (m0, m1) = (m == 0.0, m == 1.0);
    let u = [
        select(m0, w, select(m1, -z, y)),
        select(m0, z, select(m1, w, -x)),
        select(m0, -y, select(m1, x, w)),
        -select(m0, x, select(m1, y, z)),
    ];
    std::array::from_fn(|k| select(on, e * u[k], q[k]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Bvh;
    use crate::edit::axes::{Axes, AxesMap, SignedAxis};
    use crate::edit::{ChunkedMap, map_frames};
    use crate::rotation::{
        EulerBatch, euler_to_quat, euler3_to_quat_sin_cos, quat_to_euler, quat_to_euler_near,
        sin_cos_deg,
    };
    use glam::{DMat3, DQuat};

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        /// Uniform in [-1, 1).
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        }
        /// An angle: anywhere, on a multiple of 90 (exact gimbal lock in
        /// the middle), near one, wrapped far, or huge.
        fn angle(&mut self) -> f64 {
            match self.next() % 8 {
                0 => 90.0 * ((self.next() % 9) as f64 - 4.0),
                1 => 90.0 * ((self.next() % 5) as f64 - 2.0) + self.unit() * 1e-7,
                2 => self.unit() * 5000.0,
                3 => self.unit() * 1e18,
                _ => self.unit() * 200.0,
            }
        }
    }

    /// The lanes give, joint by joint, the bits of the public path they
    /// copy: the half-angle sines of `sin_cos_deg`, the closed-form
    /// quaternion of `euler3_to_quat_sin_cos`, `EulerBatch::push_quat` in
    /// the output order and its `solve`; and the dispatched loop (AVX-512
    /// or AVX2 here) gives the plain loop's bits. Every pair of orders,
    /// signed angles, first frames and frames with previous angles, exact
    /// gimbal locks and huge angles.
    #[test]
    fn lanes_give_the_euler_batch_bits() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut compared = 0;
        for round in 0..4000 {
            let n = 1 + (rng.next() % 37) as usize;
            let width = 3 * n;
            let frame: Vec<f64> = (0..width).map(|_| rng.angle()).collect();
            let joints: Vec<Changed> = (0..n)
                .map(|k| Changed {
                    from: RotationOrder::ALL[(rng.next() % 6) as usize],
                    src: [Some(3 * k), Some(3 * k + 1), Some(3 * k + 2)],
                    sign: std::array::from_fn(|_| {
                        if rng.next().is_multiple_of(3) { -1.0 } else { 1.0 }
                    }),
                    to: RotationOrder::ALL[(rng.next() % 6) as usize],
                    out: [3 * k, 3 * k + 1, 3 * k + 2],
                    post: (rng.next().is_multiple_of(3))
                        .then(|| Axis::ALL[(rng.next() % 3) as usize]),
                })
                .collect();
            let near: Vec<[f64; 3]> =
                (0..n).map(|_| std::array::from_fn(|_| rng.angle())).collect();
            let first = round % 5 == 0;
            let mut lanes = Lanes::new(&joints);
            let mut plain = Lanes::new(&joints);
            for (k, &p) in near.iter().enumerate() {
                lanes.set_near(k, p);
                plain.set_near(k, p);
            }
            lanes.load(&frame);
            lanes.solve(first);
            plain.load(&frame);
            plain.run(first, false);
            let mut batch = EulerBatch::new();
            for (c, &p) in joints.iter().zip(&near) {
                let mut s = [0.0; 3];
                let mut co = [0.0; 3];
                for m in 0..3 {
                    (s[m], co[m]) = sin_cos_deg(0.5 * (c.sign[m] * frame[c.src[m].unwrap()]));
                }
                let q = euler3_to_quat_sin_cos(c.from, s, co);
                // The half turn: q·(0, e_c) = (w·e_c + v × e_c, -v_c), written out.
                let (v, w) = ([q.x, q.y, q.z], q.w);
                let q = match c.post {
                    None => q,
                    Some(Axis::X) => DQuat::from_xyzw(w, v[2], -v[1], -v[0]),
                    Some(Axis::Y) => DQuat::from_xyzw(-v[2], w, v[0], -v[1]),
                    Some(Axis::Z) => DQuat::from_xyzw(v[1], -v[0], w, -v[2]),
                };
                batch.push_quat(q, c.to, (!first).then_some(p));
            }
            batch.solve();
            for k in 0..n {
                let (got, want) = (lanes.near(k), batch.angles(k));
                assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{got:?} vs {want:?}");
                assert_eq!(got.map(f64::to_bits), plain.near(k).map(f64::to_bits));
                compared += 1;
            }
        }
        assert!(compared > 50_000, "{compared}");
    }

    /// The plain path the lanes replace, kept here as the reference: each
    /// joint's rotation from its channels (`euler_to_quat`), conjugated by
    /// `c` if any, written in the output order by `quat_to_euler_near`
    /// next to the reference's own previous output (`quat_to_euler` for
    /// the first frame).
    fn reference(
        joints: &[(JointChannels, JointChannels)],
        c: Option<DQuat>,
        bvh: &Bvh,
    ) -> Vec<Vec<[f64; 3]>> {
        let mut previous: Vec<Option<[f64; 3]>> = vec![None; joints.len()];
        (0..bvh.motion().n_frames())
            .map(|f| {
                let frame = bvh.motion().frame(f);
                joints
                    .iter()
                    .zip(&mut previous)
                    .map(|((from, to), p)| {
                        let q = from.rotation(frame);
                        let q = c.map_or(q, |c| c * q * c.conjugate());
                        let order = to.rotation_order().unwrap();
                        let a = match p {
                            Some(p) => quat_to_euler_near(q, order, *p),
                            None => quat_to_euler(q, order),
                        };
                        *p = Some(a);
                        a
                    })
                    .collect()
            })
            .collect()
    }

    /// Angles within 1e-9 degrees, or at gimbal lock (where only a sum of
    /// the first and third is defined) the same rotation within 1e-12 and
    /// the same middle angle. Returns whether it was a lock.
    fn close(order: RotationOrder, got: [f64; 3], want: [f64; 3], what: &str) -> bool {
        if (want[1].abs() - 90.0).abs() < 1e-4 {
            let (g, w) = (euler_to_quat(&order.axes(), &got), euler_to_quat(&order.axes(), &want));
            let (mg, mw) = (DMat3::from_quat(g), DMat3::from_quat(w));
            let d = (0..3).map(|i| (mg.col(i) - mw.col(i)).abs().max_element()).fold(0.0, f64::max);
            // Angles rounded to 1e-9 degrees (`snap_angle`) move a matrix
            // entry by at most about 3 * 8.7e-12.
            assert!(d < 5e-11 && (got[1] - want[1]).abs() < 1e-9, "{what}: {got:?} vs {want:?}");
            return true;
        }
        for k in 0..3 {
            assert!((got[k] - want[k]).abs() <= 1e-9, "{what}: {got:?} vs {want:?}");
        }
        false
    }

    /// `map` one frame at a time and `ChunkedMap` (which takes
    /// `map_many` for enough joints and frames) give the same bits.
    fn one_and_many<M: SplitFrameMap>(bvh: &Bvh, map: M, what: &str) -> Bvh {
        let one = map_frames(bvh, &mut map.clone()).unwrap();
        let m = bvh.motion();
        let mut chunked = ChunkedMap::new(map);
        let mut out = vec![0.0; one.motion().values().len()];
        let n_out = one.skeleton().n_channels();
        // Two runs, so that the second continues the first.
        let half = m.n_frames() / 2;
        let (a, b) = out.split_at_mut(half * n_out);
        chunked.map(half, &m.values()[..half * m.n_channels()], a);
        chunked.map(m.n_frames() - half, &m.values()[half * m.n_channels()..], b);
        let same = out.iter().zip(one.motion().values()).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "{what}: map_many and map differ");
        one
    }

    fn compare_all(
        bvh: &Bvh,
        out: &Bvh,
        joints: &[(JointChannels, JointChannels)],
        want: &[Vec<[f64; 3]>],
        what: &str,
    ) -> (usize, usize) {
        let (mut n, mut locked) = (0, 0);
        for (f, w) in want.iter().enumerate() {
            let frame = out.motion().frame(f);
            for ((_, to), w) in joints.iter().zip(w) {
                let what = format!("{what}, frame {f}, channels {:?}", to.rot_index);
                locked +=
                    usize::from(close(to.rotation_order().unwrap(), to.angles(frame), *w, &what));
                n += 1;
            }
        }
        let _ = bvh;
        (n, locked)
    }

    /// On every corpus file: `OrderMap` to every order and `AxesMap`
    /// between Y up and each other up axis give the plain path's angles
    /// (within 1e-9 degrees), and the same bits one frame at a time and
    /// through `map_many`.
    #[test]
    fn rewrites_match_the_plain_path_on_the_corpus() {
        let test = "order::rewrites_match_the_plain_path_on_the_corpus";
        let Some(clips) = crate::test_corpus::clips(test) else {
            return;
        };
        let (mut compared, mut locked) = (0usize, 0usize);
        for (name, bvh) in clips {
            let skel = bvh.skeleton();
            for order in RotationOrder::ALL {
                let map = OrderMap::all(skel, order);
                let joints: Vec<(JointChannels, JointChannels)> = skel
                    .joints()
                    .iter()
                    .zip(map.output_skeleton().joints())
                    .filter(|(j, _)| j.rotation_order().is_some_and(|o| o != order))
                    .map(|(a, b)| (JointChannels::of(a), JointChannels::of(b)))
                    .collect();
                let out = one_and_many(&bvh, map, &format!("{name} to {order}"));
                let want = reference(&joints, None, &bvh);
                let (n, l) = compare_all(&bvh, &out, &joints, &want, &format!("{name} to {order}"));
                compared += n;
                locked += l;
            }
            for up in [SignedAxis::PosZ, SignedAxis::NegX, SignedAxis::NegY] {
                let to = Axes::with_up(up);
                let map = AxesMap::new(skel, Axes::BVH, to);
                let c = DQuat::from_mat3(&map.matrix());
                // The joints with three rotation channels whose axes C moves.
                let cm = map.matrix();
                let joints: Vec<(JointChannels, JointChannels)> = skel
                    .joints()
                    .iter()
                    .map(JointChannels::of)
                    .filter(|j| {
                        j.rotation_order().is_some()
                            && j.rotation_axes()
                                .iter()
                                .any(|a| (cm * a.unit_vector())[a.index()].abs() != 1.0)
                    })
                    .map(|j| (j, j))
                    .collect();
                let what = format!("{name} to {to}");
                let out = one_and_many(&bvh, map, &what);
                let want = reference(&joints, Some(c), &bvh);
                let (n, l) = compare_all(&bvh, &out, &joints, &want, &what);
                compared += n;
                locked += l;
            }
        }
        assert!(compared > 1_000_000, "{compared} rotations compared");
        eprintln!("order and axes lanes: {compared} rotations compared ({locked} at gimbal lock)");
    }

    /// On every corpus file: `LayoutMap` (every position choice, two
    /// orders) against the plain path it replaces, kept here: the frame
    /// read into a pose and written back with `PoseLayout` (angles within
    /// 1e-9 degrees of its `quat_to_euler_near`, every other channel bit
    /// for bit), and the largest world position error within 1e-9 of
    /// height of the one measured by forward kinematics on the old and new
    /// frames; one frame at a time and `map_many` the same bits.
    #[test]
    fn layout_matches_the_plain_path_on_the_corpus() {
        use crate::PositionChannels;
        use crate::edit::PoseLayout;
        use crate::edit::layout::{LayoutMap, Positions};
        use glam::DVec3;
        let test = "order::layout_matches_the_plain_path_on_the_corpus";
        let Some(clips) = crate::test_corpus::clips(test) else {
            return;
        };
        let (mut compared, mut lossy) = (0usize, 0usize);
        for (name, bvh) in clips {
            let skel = bvh.skeleton();
            let height = {
                let p = crate::edit::rest_positions(skel);
                let lo = p.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
                let hi = p.iter().map(|p| p.y).fold(f64::NEG_INFINITY, f64::max);
                (hi - lo).max(1.0)
            };
            let cases = [
                (RotationOrder::ZXY, Positions::Root, PositionChannels::Replace),
                (RotationOrder::XYZ, Positions::None, PositionChannels::Replace),
                (RotationOrder::YXZ, Positions::All, PositionChannels::Add),
                (RotationOrder::ZYX, Positions::Keep, PositionChannels::Replace),
            ];
            for (order, positions, mode) in cases {
                let what = format!("{name} to {order} {positions:?} {mode:?}");
                let map = LayoutMap::new(skel, order, positions, mode).unwrap();
                let out_skel = map.output_skeleton().clone();
                let mut one = map.clone();
                let out = map_frames(&bvh, &mut one).unwrap();
                one_and_many(&bvh, map, &what);
                // The plain path.
                let (from, to) = (PoseLayout::new(skel, mode), PoseLayout::new(&out_skel, mode));
                let mut pose = from.pose();
                let mut want = vec![0.0; out_skel.n_channels()];
                let mut previous: Option<Vec<f64>> = None;
                let (mut pi, mut po) =
                    (vec![DVec3::ZERO; skel.len()], vec![DVec3::ZERO; skel.len()]);
                let mut worst: f64 = 0.0;
                for f in 0..bvh.motion().n_frames() {
                    let input = bvh.motion().frame(f);
                    from.read(input, &mut pose);
                    to.write(&pose, previous.as_deref(), &mut want);
                    let got = out.motion().frame(f);
                    for (ji, jo) in skel.joints().iter().zip(out_skel.joints()) {
                        let (ci, co) = (JointChannels::of(ji), JointChannels::of(jo));
                        for &c in &co.pos_index[..co.n_pos as usize] {
                            // A kept channel is copied; a new one holds what the pose gives.
                            let same = ci.pos_index[..ci.n_pos as usize]
                                .iter()
                                .zip(&ci.pos_axes)
                                .find(|(_, a)| jo.channels()[c - jo.first_channel()].axis() == **a);
                            match same {
                                Some((&i, _)) => assert_eq!(got[c].to_bits(), input[i].to_bits()),
                                None => assert_eq!(got[c], want[c], "{what}"),
                            }
                        }
                        if co.n_rot == 3 && ci.rotation_axes() == co.rotation_axes() {
                            for (&o, &i) in co.rot_index.iter().zip(&ci.rot_index) {
                                assert_eq!(got[o].to_bits(), input[i].to_bits(), "{what}");
                            }
                        } else if co.n_rot == 3 {
                            let w = co.angles(&want);
                            let what = format!("{what}, frame {f}, {}", ji.name());
                            close(co.rotation_order().unwrap(), co.angles(got), w, &what);
                            compared += 1;
                        }
                    }
                    from.kinematics().positions(input, &mut pi);
                    to.kinematics().positions(got, &mut po);
                    worst = pi.iter().zip(&po).map(|(a, b)| a.distance(*b)).fold(worst, f64::max);
                    previous = Some(want.clone());
                }
                if one.is_lossy() {
                    lossy += 1;
                    let e = one.max_position_error();
                    assert!((e - worst).abs() <= 1e-9 * height.max(e), "{what}: {e} vs {worst}");
                } else {
                    assert_eq!(one.max_position_error(), 0.0, "{what}");
                    assert!(worst <= 1e-9 * height, "{what}: {worst}");
                }
            }
        }
        assert!(compared > 500_000 && lossy > 10, "{compared} rotations, {lossy} lossy");
        eprintln!("layout lanes: {compared} rotations compared, {lossy} lossy layouts");
    }
}
