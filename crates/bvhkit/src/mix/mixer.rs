//! The per-frame engine of every mix: two frames of one channel layout in,
//! one frame out, in caller-owned buffers, with nothing allocated per frame.
//!
//! # Implementation notes
//!
//! `Mixer`, the per-frame kernel (per-joint SLERP or additive delta on
//! caller-owned frames, weight 0/1 and unchanged joints copied bit for bit, a
//! subtree mask; for a weight strictly inside (0, 1) (a layer's (0, 1]) the
//! kept channels, the mixed position channels and the mixed joints of each kind
//! are lists made once by `Mixer::new`, so a frame is a few tight loops around
//! the lane pass instead of a decision per joint). Its lanes are
//! `MixLanes::fast_with_capacity`'s: kernels of the mixes' own (minimax
//! polynomials in pairs instead of fdlibm's), within 1e-10 degrees of the
//! formulas rather than the resampler's bits, 1.11x to 1.15x faster on
//! AVX2 (`rotation::batch`'s notes), a rotation mixed with itself kept
//! bit for bit (`keep_same`); copied channels never reach them, nor (in a
//! blend) joints whose angles are the same bits in both frames and the
//! previous output frame and far from gimbal lock (`MixLanes::gather`:
//! the lanes would give those bits back; a clip's constant joints).
//! Every value a mix computes is written rounded to nine decimals
//! (`rotation::snap_angle`): the lanes' angles in their pass, the other
//! joints' after `JointChannels::write_rotation` (and an arc kept coherent),
//! positions by `edit::lerp_snapped` (a position that is the same bits in
//! both frames keeps them) and a layer's moved positions; what a mix copies
//! keeps its bits. A blend's position loop branches on that sameness
//! (`edit::lerp_snapped_moved`, `lerp_snapped`'s bits, its rounding and
//! division skipped where the position does not move: a clip's joints other
//! than the root mostly have constant positions, Bandai Namco's 6-channel
//! joints 63 of 66; 8% fewer instructions for its blend). `Mixer::new` sizes its lists up front (no
//! reallocation as they fill; a short clip's mix pays its construction
//! once per clip). The extraction's last digits are rounding noise (an
//! angle printed `-25.592700000002765` for the clip's `154.4073` turned half
//! a turn), so the rounding (at most 5e-10 degrees, or 5e-10 of the file's
//! length unit) only shortens the text: a blend of different frames' files
//! came out 20% to 32% shorter (four corpus clips blended with themselves
//! reversed).

use glam::DQuat;

use crate::edit::{JointChannels, lerp_snapped, lerp_snapped_moved};
use crate::rotation::{
    LayerFrames, MixLanes, RotationOrder, adjacent, lane_quat, parity_of, slerp_slice, snap_angle,
    write3,
};
use crate::skeleton::{JointId, Skeleton};

/// Mixes frames of one skeleton, joint by joint (see [`Mixer::blend`] and
/// [`Mixer::layer`]), each joint's weight scaled by a mask (1 everywhere,
/// or 1 on a subtree and 0 elsewhere).
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::mix::Mixer;
/// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 4 Xposition Zrotation Xrotation Yrotation }
///     MOTION Frames: 2 Frame Time: 0.1
///     0 0 0 0
///     2 90 0 0")?;
/// let mut mixer = Mixer::new(bvh.skeleton(), None);
/// let (a, b) = (bvh.motion().frame(0), bvh.motion().frame(1));
/// let mut out = [0.0; 4];
/// mixer.blend(a, b, 0.5, a, &mut out);
/// assert_eq!(out[0], 1.0);
/// assert!((out[1] - 45.0).abs() < 1e-12);
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Mixer {
    /// The joints with channels, with their mask factor (0 or 1) and
    /// rotation order (three rotation channels).
    joints: Vec<MixJoint>,
    n_channels: usize,
    /// Per frame, the mixed joints with three rotation channels of one
    /// order, on SIMD lanes ([`MixLanes`]: sines and cosines, quaternions,
    /// SLERP and Euler extraction in one pass), and each lane's joint
    /// (index into `joints`).
    lanes: MixLanes,
    lane_rot: Vec<[usize; 3]>,
    /// Whether every joint's three rotation channels are adjacent (then
    /// they are read and written as one slice: `rotation::adjacent`).
    adjacent: bool,
    /// The joint lists of a weight strictly between 0 and 1, made once:
    /// every channel of the joints outside the mask (kept), the position
    /// channels of the mixed joints, the mixed joints with three rotation
    /// channels (their channels, order parities and joints, as
    /// [`MixLanes::gather`] and [`MixLanes::gather_layer`] take them) and
    /// the other mixed joints with rotation channels.
    kept: Vec<usize>,
    mixed_pos: Vec<usize>,
    mixed_rot: Vec<[usize; 3]>,
    mixed_parity: Vec<f64>,
    mixed_joint: Vec<usize>,
    mixed_other: Vec<usize>,
    /// Per frame, the other mixed joints (one or two rotation channels, or
    /// a repeated axis; every joint for a weight outside `[0, 1]`): the
    /// joint, the two SLERP ends, the SLERP (one batch, [`slerp_slice`])
    /// and, for a layer, the base rotation.
    slots: Vec<usize>,
    q0: Vec<DQuat>,
    q1: Vec<DQuat>,
    q: Vec<DQuat>,
    base: Vec<DQuat>,
}

#[derive(Clone, Copy, Debug)]
struct MixJoint {
    channels: JointChannels,
    mask: f64,
    order: Option<RotationOrder>,
}

/// A reference pose for [`Mixer::layer`]: a frame and its inverse local
/// rotations, made once by [`Mixer::reference`].
#[derive(Clone, Debug)]
pub struct Reference {
    frame: Vec<f64>,
    inverse: Vec<DQuat>,
    /// Per joint with three rotation channels, `inverse` in its order's
    /// axes as the lanes take it (`rotation::lane_quat`); the identity for
    /// the other joints.
    lane_inverse: Vec<[f64; 4]>,
    /// The same for the mixer's mixed joints with three rotation channels
    /// (`mixed`, the mixer's list when it made this reference), by lane
    /// and component: a frame where the layer changes every such joint
    /// copies them into the lanes in one go.
    mixed: Vec<usize>,
    lane_inv: [Vec<f64>; 4],
}

impl Mixer {
    /// A mixer for `skeleton`; with `subtree`, only the joints of that
    /// subtree (the joint and everything below it) take the second frame,
    /// every other joint is the first frame's, bit for bit.
    pub fn new(skeleton: &Skeleton, subtree: Option<JointId>) -> Mixer {
        let range = match subtree {
            Some(id) => id.index()..skeleton.subtree_end(id),
            None => 0..skeleton.len(),
        };
        let mut joints: Vec<MixJoint> = Vec::with_capacity(skeleton.len());
        joints.extend(
            skeleton.joints().iter().enumerate().filter(|(_, j)| !j.channels().is_empty()).map(
                |(i, j)| {
                    let channels = JointChannels::of(j);
                    MixJoint {
                        channels,
                        mask: if range.contains(&i) { 1.0 } else { 0.0 },
                        order: channels.rotation_order(),
                    }
                },
            ),
        );
        let n = joints.len();
        let n_lanes = joints.iter().filter(|mj| mj.order.is_some()).count();
        // Room for every joint's channels in each list, so that no push
        // reallocates.
        let n_ch = skeleton.n_channels();
        let (mut kept, mut mixed_pos, mut mixed_lanes, mut mixed_other) = (
            Vec::with_capacity(n_ch),
            Vec::with_capacity(n_ch),
            Vec::with_capacity(n_lanes),
            Vec::with_capacity(n),
        );
        for (idx, mj) in joints.iter().enumerate() {
            let j = &mj.channels;
            let (rot, pos) = (&j.rot_index[..j.n_rot as usize], &j.pos_index[..j.n_pos as usize]);
            if mj.mask == 0.0 {
                kept.extend_from_slice(rot);
                kept.extend_from_slice(pos);
                continue;
            }
            mixed_pos.extend_from_slice(pos);
            match mj.order {
                Some(order) => mixed_lanes.push((idx, j.rot_index, order)),
                None if !rot.is_empty() => mixed_other.push(idx),
                None => {}
            }
        }
        let all_adjacent = joints
            .iter()
            .all(|mj| mj.order.is_none() || adjacent(std::slice::from_ref(&mj.channels.rot_index)));
        Mixer {
            adjacent: all_adjacent,
            joints,
            n_channels: skeleton.n_channels(),
            lanes: MixLanes::fast_with_capacity(n_lanes),
            lane_rot: vec![[0; 3]; n_lanes],
            mixed_rot: mixed_lanes.iter().map(|m| m.1).collect(),
            mixed_parity: mixed_lanes.iter().map(|m| parity_of(m.2)).collect(),
            mixed_joint: mixed_lanes.iter().map(|m| m.0).collect(),
            kept,
            mixed_pos,
            mixed_other,
            slots: Vec::with_capacity(n),
            q0: Vec::with_capacity(n),
            q1: Vec::with_capacity(n),
            q: vec![DQuat::IDENTITY; n],
            base: Vec::with_capacity(n),
        }
    }

    /// Channels per frame.
    pub fn n_channels(&self) -> usize {
        self.n_channels
    }

    /// Empties the lanes and the slots of a new frame.
    fn start(&mut self) {
        self.lanes.clear();
        self.slots.clear();
        self.q0.clear();
        self.q1.clear();
        self.base.clear();
    }

    /// Mixes the collected joints at `t` and writes every mixed rotation
    /// into `out`, closest to `near`: the lanes in one pass
    /// ([`MixLanes::solve`]), the other joints by [`slerp_slice`] (with
    /// `base ·` in front for a layer) and one by one
    /// ([`JointChannels::write_rotation`]). Returns whether every rotation
    /// was written exactly.
    /// With `all_mixed`, the lanes are the mixed joints with three
    /// rotation channels in their order ([`MixLanes::gather`]), else those
    /// of `lane_rot`.
    fn write_rotations(
        &mut self,
        t: f64,
        layered: bool,
        near: &[f64],
        out: &mut [f64],
        all_mixed: bool,
    ) -> bool {
        let n = self.lanes.len();
        if n > 0 {
            self.lanes.solve(t, layered);
            let rot = if all_mixed { &self.mixed_rot[..n] } else { &self.lane_rot[..n] };
            if self.adjacent {
                write_lanes::<true>(&self.lanes, rot, out);
            } else {
                write_lanes::<false>(&self.lanes, rot, out);
            }
        }
        let n = self.slots.len();
        if n == 0 {
            return true;
        }
        slerp_slice(&self.q0, &self.q1, t, &mut self.q[..n]);
        let mut exact = true;
        for (s, &idx) in self.slots.iter().enumerate() {
            let j = &self.joints[idx].channels;
            let q = if layered { self.base[s] * self.q[s] } else { self.q[s] };
            exact &= j.write_rotation(q, Some(j.angles(near)), out);
            j.snap_rotation(out);
        }
        exact
    }

    /// Blends frame `a` towards frame `b` by `w` (0: `a`, 1: `b`) into
    /// `out`. For each joint, with its weight `w · mask`:
    /// - weight exactly 0: `a`'s channels, bit for bit; exactly 1: `b`'s;
    /// - three rotation channels that are the same bits in `a` and `b`:
    ///   those, bit for bit, unless the continuity choice writes that
    ///   rotation with other angles next to `near` (the lanes' rule);
    /// - otherwise its local rotation is the SLERP of the two
    ///   ([`slerp`], shortest arc), written in the joint's own channel order
    ///   closest to `near` (the previous output frame; for a first frame,
    ///   `a`), and its position channels `a + w (b - a)`.
    ///
    /// The angles and positions it computes are rounded to nine decimals
    /// (at most 5e-10 off; a position channel that is the same bits in `a`
    /// and `b` is `a + w·0`, its bits but -0 as 0).
    ///
    /// Returns whether every rotation was written exactly (a joint with two
    /// rotation channels keeps only the part of the SLERP it can hold).
    /// The joints with three rotation channels are mixed together on SIMD
    /// lanes (sines, quaternions, SLERP and Euler extraction in one pass),
    /// the others through [`slerp_slice`]; nothing is allocated.
    ///
    /// # Panics
    /// When a frame does not hold one value per channel.
    ///
    /// [`slerp`]: crate::edit::resample::slerp
    #[inline]
    pub fn blend(&mut self, a: &[f64], b: &[f64], w: f64, near: &[f64], out: &mut [f64]) -> bool {
        self.check(a, b, near, out);
        self.start();
        if w > 0.0 && w < 1.0 {
            return self.blend_between(a, b, w, near, out);
        }
        // The lanes take weights in [0, 1]; any other weight (an
        // extrapolation) goes through the scalar SLERP.
        let on_lanes = (0.0..=1.0).contains(&w);
        for (idx, mj) in self.joints.iter().enumerate() {
            let j = &mj.channels;
            // The mask is 0 or 1, so a joint that is mixed has weight `w`.
            let wj = w * mj.mask;
            if wj == 0.0 {
                copy_joint(j, a, out);
            } else if wj == 1.0 {
                copy_joint(j, b, out);
            } else {
                for k in 0..j.n_pos as usize {
                    let c = j.pos_index[k];
                    out[c] = lerp_snapped(a[c], b[c], wj);
                }
                match mj.order {
                    Some(order) if on_lanes => {
                        push_lane(
                            &mut self.lanes,
                            &mut self.lane_rot,
                            order,
                            j,
                            [a, b, near],
                            None,
                        );
                    }
                    _ if j.n_rot > 0 => {
                        self.q0.push(j.rotation(a));
                        self.q1.push(j.rotation(b));
                        self.slots.push(idx);
                    }
                    _ => {}
                }
            }
        }
        self.write_rotations(w, false, near, out, false)
    }

    /// [`Mixer::blend`] at a weight strictly between 0 and 1, where the
    /// joints taken from `a`, the ones mixed and how are known beforehand:
    /// the same operations as the joint-by-joint loop, from the lists made
    /// once ([`Mixer::new`]).
    fn blend_between(
        &mut self,
        a: &[f64],
        b: &[f64],
        w: f64,
        near: &[f64],
        out: &mut [f64],
    ) -> bool {
        // The lanes first: they read most of both frames in channel order,
        // which brings them into the cache in the order the hardware
        // prefetcher follows; the scattered position channels then hit.
        let (rot, parity) = (&self.mixed_rot, &self.mixed_parity);
        let lane_rot = &mut self.lane_rot;
        let all_mixed = if self.adjacent {
            self.lanes.gather::<true>(rot, parity, a, b, near, out, lane_rot)
        } else {
            self.lanes.gather::<false>(rot, parity, a, b, near, out, lane_rot)
        };
        // One length for the frames (`check`): a channel's bounds check on
        // `out` covers `a` and `b`.
        let len = out.len();
        let (a, b) = (&a[..len], &b[..len]);
        for &c in &self.kept {
            out[c] = a[c];
        }
        for &c in &self.mixed_pos {
            out[c] = lerp_snapped_moved(a[c], b[c], w);
        }
        for &idx in &self.mixed_other {
            let j = &self.joints[idx].channels;
            self.q0.push(j.rotation(a));
            self.q1.push(j.rotation(b));
            self.slots.push(idx);
        }
        self.write_rotations(w, false, near, out, all_mixed)
    }

    /// Where two rotations are nearly opposite (about 180 degrees apart),
    /// the shortest arc between them changes side from one frame to the
    /// next as their angle passes 180 degrees, and the mix turns by up to
    /// 180 degrees in one frame (Bandai Namco's kick blended with itself
    /// 10 frames later: the hips turn 165 degrees in a frame). So a mixed
    /// joint (three rotation channels) whose angles moved more than 60
    /// degrees in all from `near` (the previous output frame) and whose two
    /// rotations are more than 120 degrees apart is solved again: of the
    /// SLERP along the shortest arc and along the other arc, the one closer
    /// to `near`'s rotation is kept (the other only when it is strictly
    /// closer; everywhere else the bits are the lanes'). Past 120 degrees
    /// apart, the shortest arc is taken again.
    /// [`blend`](super::blend::blend) applies it after [`Mixer::blend`] (a
    /// crossfade's and a loop's weights go from 0 to 1, so one side wins
    /// before the two rotations are far apart for long).
    #[inline]
    pub(crate) fn keep_arcs_coherent(
        &self,
        a: &[f64],
        b: &[f64],
        w: f64,
        near: &[f64],
        out: &mut [f64],
    ) {
        if !(w > 0.0 && w < 1.0) {
            return;
        }
        for (l, r) in self.mixed_rot.iter().enumerate() {
            let moved = (out[r[0]] - near[r[0]]).abs()
                + (out[r[1]] - near[r[1]]).abs()
                + (out[r[2]] - near[r[2]]).abs();
            // (NaN: not moved.)
            if moved.is_nan() || moved <= 60.0 {
                continue;
            }
            let j = &self.joints[self.mixed_joint[l]].channels;
            let (qa, qb, qn) = (j.rotation(a), j.rotation(b), j.rotation(near));
            let qb = if qa.dot(qb) < 0.0 { -qb } else { qb };
            // Only near opposite (more than 120 degrees apart), where the
            // shortest arc is about to change side or just has.
            if qa.dot(qb) >= 0.5 {
                continue;
            }
            let (short, long) = (slerp_raw(qa, qb, w), slerp_raw(qa, -qb, w));
            if long.dot(qn).abs() > short.dot(qn).abs() + 1e-12 {
                j.write_rotation(long, Some(j.angles(near)), out);
                j.snap_rotation(out);
            }
        }
    }

    /// The reference pose of a layer: `frame` (of this mixer's layout).
    ///
    /// # Panics
    /// When `frame` does not hold one value per channel.
    pub fn reference(&self, frame: &[f64]) -> Reference {
        assert_eq!(frame.len(), self.n_channels, "frame must hold one value per channel");
        let inverse: Vec<DQuat> =
            self.joints.iter().map(|mj| mj.channels.rotation(frame).inverse()).collect();
        let lane_inverse: Vec<[f64; 4]> = self
            .joints
            .iter()
            .zip(&inverse)
            .map(|(mj, &q)| mj.order.map_or([0.0, 0.0, 0.0, 1.0], |order| lane_quat(q, order)))
            .collect();
        let mixed = self.mixed_joint.clone();
        let lane_inv = std::array::from_fn(|k| mixed.iter().map(|&j| lane_inverse[j][k]).collect());
        Reference { frame: frame.to_vec(), inverse, lane_inverse, mixed, lane_inv }
    }

    /// Adds frame `add`'s change since `reference` on top of frame `base`,
    /// with weight `w` (times the mask), into `out`. For each joint:
    /// - rotation `q_base · slerp(identity, q_ref⁻¹ · q_add, w)`: the
    ///   layer's rotation relative to its reference, in the joint's own
    ///   (local) frame, applied after the base's;
    /// - position channels `base + w (add - ref)`.
    ///
    /// Where the weight is 0, or the layer's channels equal the
    /// reference's bit for bit, the base's channels are copied bit for bit;
    /// the other angles and positions are rounded to nine decimals (at
    /// most 5e-10 off).
    /// Rotations are written in each joint's own order closest to `near`
    /// (the previous output frame; for a first frame, `base`). Returns
    /// whether every rotation was written exactly.
    ///
    /// # Panics
    /// When a frame does not hold one value per channel, or `reference`
    /// was made by a mixer of another layout.
    #[inline]
    pub fn layer(
        &mut self,
        base: &[f64],
        add: &[f64],
        reference: &Reference,
        w: f64,
        near: &[f64],
        out: &mut [f64],
    ) -> bool {
        self.check(base, add, near, out);
        assert_eq!(reference.inverse.len(), self.joints.len(), "reference of another layout");
        self.start();
        if w > 0.0 && w <= 1.0 {
            return self.layer_between(base, add, reference, w, near, out);
        }
        let r = &reference.frame;
        let on_lanes = (0.0..=1.0).contains(&w);
        for (idx, (mj, inv)) in self.joints.iter().zip(&reference.inverse).enumerate() {
            let j = &mj.channels;
            let wj = w * mj.mask;
            for k in 0..j.n_pos as usize {
                let c = j.pos_index[k];
                out[c] = if wj == 0.0 || add[c].to_bits() == r[c].to_bits() {
                    base[c]
                } else {
                    snap_angle(base[c] + wj * (add[c] - r[c]))
                };
            }
            let n = j.n_rot as usize;
            if n == 0 {
                continue;
            }
            let changed = j.rot_index[..n].iter().any(|&c| add[c].to_bits() != r[c].to_bits());
            if wj == 0.0 || !changed {
                for &c in &j.rot_index[..n] {
                    out[c] = base[c];
                }
                continue;
            }
            match mj.order {
                Some(order) if on_lanes => {
                    let frames = [base, add, near];
                    push_lane(&mut self.lanes, &mut self.lane_rot, order, j, frames, Some(*inv));
                }
                _ => {
                    self.q0.push(DQuat::IDENTITY);
                    self.q1.push(*inv * j.rotation(add));
                    self.base.push(j.rotation(base));
                    self.slots.push(idx);
                }
            }
        }
        self.write_rotations(w, true, near, out, false)
    }

    /// [`Mixer::layer`] at a weight in `(0, 1]`, from the joint lists made
    /// once ([`Mixer::new`]): the same operations as the joint-by-joint
    /// loop.
    fn layer_between(
        &mut self,
        base: &[f64],
        add: &[f64],
        reference: &Reference,
        w: f64,
        near: &[f64],
        out: &mut [f64],
    ) -> bool {
        let r = &reference.frame;
        let same = |c: usize| add[c].to_bits() == r[c].to_bits();
        let frames = LayerFrames { base, add, reference: r, near };
        let (rot, parity, joint) = (&self.mixed_rot, &self.mixed_parity, &self.mixed_joint);
        let inv = &reference.lane_inverse;
        // The reference's inverses by lane, when it was made for these
        // mixed joints.
        let [v0, v1, v2, v3] = &reference.lane_inv;
        let by_lane = (reference.mixed == *joint).then_some([&v0[..], &v1[..], &v2[..], &v3[..]]);
        let all_mixed = if self.adjacent {
            self.lanes.gather_layer::<true>(
                rot,
                parity,
                joint,
                inv,
                by_lane,
                frames,
                out,
                &mut self.lane_rot,
            )
        } else {
            self.lanes.gather_layer::<false>(
                rot,
                parity,
                joint,
                inv,
                by_lane,
                frames,
                out,
                &mut self.lane_rot,
            )
        };
        // After the lanes, as in `blend_between`.
        for &c in &self.kept {
            out[c] = base[c];
        }
        for &c in &self.mixed_pos {
            out[c] = if same(c) { base[c] } else { snap_angle(base[c] + w * (add[c] - r[c])) };
        }
        for &idx in &self.mixed_other {
            let j = &self.joints[idx].channels;
            let rot = &j.rot_index[..j.n_rot as usize];
            if rot.iter().all(|&c| same(c)) {
                for &c in rot {
                    out[c] = base[c];
                }
                continue;
            }
            self.q0.push(DQuat::IDENTITY);
            self.q1.push(reference.inverse[idx] * j.rotation(add));
            self.base.push(j.rotation(base));
            self.slots.push(idx);
        }
        self.write_rotations(w, true, near, out, all_mixed)
    }

    fn check(&self, a: &[f64], b: &[f64], near: &[f64], out: &[f64]) {
        let n = self.n_channels;
        assert!(
            a.len() == n && b.len() == n && near.len() == n && out.len() == n,
            "frames must hold one value per channel"
        );
    }
}

/// SLERP from `q0` to `q1` along the arc their signs give (no change of
/// side: `-q1` takes the other way round), normalised.
fn slerp_raw(q0: DQuat, q1: DQuat, t: f64) -> DQuat {
    let c = q0.dot(q1).clamp(-1.0, 1.0);
    let theta = c.acos();
    let s = theta.sin();
    if s < 1e-9 {
        return (q0 * (1.0 - t) + q1 * t).normalize();
    }
    (q0 * (((1.0 - t) * theta).sin() / s) + q1 * ((t * theta).sin() / s)).normalize()
}

/// Copies one joint's channels from `src` to `out`.
#[inline]
fn copy_joint(j: &JointChannels, src: &[f64], out: &mut [f64]) {
    for &c in &j.rot_index[..j.n_rot as usize] {
        out[c] = src[c];
    }
    for &c in &j.pos_index[..j.n_pos as usize] {
        out[c] = src[c];
    }
}

/// Writes the angles of every lane `l` of `lanes` into `out` at the
/// channels `rot[l]` (`ADJACENT` as for `rotation::write3`).
#[inline]
fn write_lanes<const ADJACENT: bool>(lanes: &MixLanes, rot: &[[usize; 3]], out: &mut [f64]) {
    let [x, y, z] = lanes.all_angles();
    for (((&r, &x), &y), &z) in rot.iter().zip(x).zip(y).zip(z) {
        write3::<ADJACENT>(out, r, [x, y, z]);
    }
}

/// Puts joint `j`'s rotation channels of frames `[a, b, near]` on a lane
/// of `lanes` (mixed in `order`; a layer's reference inverse `inv`), and
/// notes in `lane_rot` where the lane's angles go: the step
/// [`Mixer::blend`] and [`Mixer::layer`] take for each joint they mix on
/// lanes.
#[inline(always)]
fn push_lane(
    lanes: &mut MixLanes,
    lane_rot: &mut [[usize; 3]],
    order: RotationOrder,
    j: &JointChannels,
    [a, b, near]: [&[f64]; 3],
    inv: Option<DQuat>,
) {
    let [r0, r1, r2] = j.rot_index;
    let l = lanes.push(
        order,
        [a[r0], a[r1], a[r2]],
        [b[r0], b[r1], b[r2]],
        [near[r0], near[r1], near[r2]],
        inv,
    );
    lane_rot[l] = j.rot_index;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Bvh;

    /// A two-joint skeleton whose channels are listed as `root` and
    /// `child` say, with `frames` rows of `values` (one per channel).
    fn clip(root: &str, child: &str, frames: &[Vec<f64>]) -> Bvh {
        let mut text = format!(
            "HIERARCHY\nROOT A\n{{\nOFFSET 0 0 0\nCHANNELS 6 {root}\nJOINT B\n{{\nOFFSET 0 1 0\n\
             CHANNELS 6 {child}\nEnd Site\n{{\nOFFSET 0 1 0\n}}\n}}\n}}\nMOTION\nFrames: {}\n\
             Frame Time: 0.1\n",
            frames.len()
        );
        for f in frames {
            let row: Vec<String> = f.iter().map(|v| format!("{v:?}")).collect();
            text += &(row.join(" ") + "\n");
        }
        Bvh::parse(text).unwrap()
    }

    /// Every value a blend or a layer computes is written with at most
    /// nine decimals (`snap_angle`): the lanes' angles, a two-channel
    /// joint's (the SLERP batch), the positions, at weights inside and
    /// outside `[0, 1]`, and an arc kept coherent; a position that is the
    /// same bits in both frames, and every channel a layer leaves
    /// unchanged, keep their bits (17 digits here).
    #[test]
    fn computed_values_are_written_with_nine_decimals() {
        use crate::rotation::decimals;
        let mut x: u64 = 7;
        let mut frames = Vec::new();
        for _ in 0..3 {
            let f: Vec<f64> = (0..8)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((x >> 11) as f64 / (1u64 << 53) as f64) * 340.0 - 170.0
                })
                .collect();
            frames.push(f);
        }
        // The same Yposition in every frame, and the layer's frame 2 holds
        // the reference's (frame 0) two-channel joint.
        let (y, child) = (frames[0][1], [frames[0][6], frames[0][7]]);
        for f in &mut frames {
            f[1] = y;
        }
        frames[2][6..].copy_from_slice(&child);
        let mut text = String::from(
            "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition \
             Zrotation Xrotation Yrotation\nJOINT B\n{\nOFFSET 0 1 0\nCHANNELS 2 Zrotation \
             Xrotation\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\n}\nMOTION\nFrames: 3\nFrame Time: 0.1\n",
        );
        for f in &frames {
            assert!(f.iter().all(|&v| decimals(v) > 9), "{f:?}");
            let row: Vec<String> = f.iter().map(|v| format!("{v:?}")).collect();
            text += &(row.join(" ") + "\n");
        }
        let bvh = Bvh::parse(text).unwrap();
        let m = bvh.motion();
        let mut mixer = Mixer::new(bvh.skeleton(), None);
        let reference = mixer.reference(m.frame(0));
        let mut out = vec![0.0; 8];
        for w in [0.3, 0.5, 0.9, 1.5, -0.25] {
            let (a, b) = (m.frame(0), m.frame(1));
            mixer.blend(a, b, w, a, &mut out);
            for (c, &v) in out.iter().enumerate() {
                if c == 1 {
                    assert_eq!(v.to_bits(), y.to_bits(), "blend at {w}: the same position");
                } else {
                    assert!(decimals(v) <= 9, "blend at {w}, channel {c}: {v}");
                }
            }
            if w > 1.0 {
                continue;
            }
            let (base, add) = (m.frame(1), m.frame(2));
            mixer.layer(base, add, &reference, w, base, &mut out);
            for (c, &v) in out.iter().enumerate() {
                if c == 1 || c >= 6 {
                    // The layer's channels are the reference's: the base's.
                    assert_eq!(v.to_bits(), base[c].to_bits(), "layer at {w}, channel {c}");
                } else {
                    assert!(decimals(v) <= 9, "layer at {w}, channel {c}: {v}");
                }
            }
        }
        // Rotations 170 degrees apart about Z, next to a frame on the far
        // side: the arc kept coherent is the long one, at -95 degrees.
        let a = [0.0, y, 0.0, 1e-11, 0.0, 0.0, 0.0, 0.0];
        let b = [0.0, y, 0.0, 170.000_000_000_01, 0.0, 0.0, 0.0, 0.0];
        let near = [0.0, y, 0.0, -90.0, 0.0, 0.0, 0.0, 0.0];
        mixer.blend(&a, &b, 0.5, &near, &mut out);
        mixer.keep_arcs_coherent(&a, &b, 0.5, &near, &mut out);
        assert_eq!(out[3..6], [-95.0, 0.0, 0.0], "{out:?}");
    }

    /// A blend's position channels (`blend_between`'s loop, which skips
    /// the rounding of a position that is the same bits in both frames)
    /// are `lerp_snapped`'s bits at every weight inside (0, 1): moved ones
    /// rounded, unmoved ones kept (-0 as 0), infinities and NaN included.
    #[test]
    fn blended_positions_are_lerp_snapped_bit_for_bit() {
        let pos = "Xposition Yposition Zposition Zrotation Xrotation Yrotation";
        let a = [0.1, -0.0, f64::INFINITY, 10.0, 20.0, 30.0];
        let b = [0.30000000000000004, -0.0, f64::INFINITY, 11.0, 21.0, 31.0];
        let c = [1e300, f64::NAN, 0.30000000000000004, 1.0, 2.0, 3.0];
        let d = [1e300, f64::NAN, 0.30000000000000004, 1.5, 2.0, 3.0];
        // The skeleton from a clip of zeros; the frames as made here.
        let bvh = clip(pos, pos, &[vec![0.0; 12]]);
        let mut mixer = Mixer::new(bvh.skeleton(), None);
        let (fa, fb) = ([&a[..], &c[..]].concat(), [&b[..], &d[..]].concat());
        let mut out = vec![0.0; 12];
        for w in [1e-9, 0.25, 0.5, 0.7, 1.0 - 1e-9] {
            mixer.blend(&fa, &fb, w, &fa, &mut out);
            for c in [0, 1, 2, 6, 7, 8] {
                let want = lerp_snapped(fa[c], fb[c], w);
                assert_eq!(out[c].to_bits(), want.to_bits(), "w {w}, channel {c}: {}", out[c]);
            }
            assert_eq!(out[1].to_bits(), 0, "-0 in both frames is 0");
            assert_eq!(out[7].to_bits(), f64::NAN.to_bits(), "NaN in both frames");
            assert_eq!(out[8], 0.30000000000000004, "unmoved, not rounded");
        }
    }

    /// Rotation channels that are not listed together (positions between
    /// them) take the general path (`adjacent` false); it mixes and layers
    /// every joint to the same bits as the same joints listed with their
    /// rotation channels together, at any weight, with unchanged layer
    /// joints copied.
    #[test]
    fn interleaved_channels_mix_as_adjacent_ones_do() {
        let together = ["Xposition Yposition Zposition Zrotation Xrotation Yrotation"; 2];
        let apart = [
            "Zrotation Xposition Xrotation Yposition Yrotation Zposition",
            "Xposition Zrotation Yposition Xrotation Zposition Yrotation",
        ];
        // Channel k of `apart`'s joint is channel perm[j][k] of `together`'s.
        let perm = [[3, 0, 4, 1, 5, 2], [0, 3, 1, 4, 2, 5]];
        let mut x: u64 = 99;
        let mut frames = Vec::new();
        for _ in 0..40 {
            let f: Vec<f64> = (0..12)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((x >> 11) as f64 / (1u64 << 53) as f64) * 720.0 - 360.0
                })
                .collect();
            frames.push(f);
        }
        // Frame 1's child equals the reference frame 0 (a layer copies it).
        let (f0, f1) = frames.split_at_mut(1);
        f1[0][6..].copy_from_slice(&f0[0][6..]);
        let to_apart = |f: &[f64]| -> Vec<f64> {
            (0..12).map(|c| f[6 * (c / 6) + perm[c / 6][c % 6]]).collect()
        };
        let a = clip(together[0], together[1], &frames);
        let b = clip(apart[0], apart[1], &frames.iter().map(|f| to_apart(f)).collect::<Vec<_>>());
        let (mut ma, mut mb) = (Mixer::new(a.skeleton(), None), Mixer::new(b.skeleton(), None));
        assert!(ma.adjacent && !mb.adjacent);
        let (ra, rb) = (ma.reference(a.motion().frame(0)), mb.reference(b.motion().frame(0)));
        let (mut oa, mut ob) = (vec![0.0; 12], vec![0.0; 12]);
        for k in 0..39 {
            let (a0, a1) = (a.motion().frame(k), a.motion().frame(k + 1));
            let (b0, b1) = (b.motion().frame(k), b.motion().frame(k + 1));
            for w in [0.0, 0.25, 0.5, 1.0, 1.5] {
                assert_eq!(ma.blend(a0, a1, w, a0, &mut oa), mb.blend(b0, b1, w, b0, &mut ob));
                assert_eq!(to_apart(&oa), ob, "blend frame {k} w {w}");
                assert_eq!(
                    ma.layer(a0, a1, &ra, w, a0, &mut oa),
                    mb.layer(b0, b1, &rb, w, b0, &mut ob)
                );
                assert_eq!(to_apart(&oa), ob, "layer frame {k} w {w}");
                if k == 0 {
                    // The child's channels equal the reference's: the base's.
                    assert_eq!(oa[6..], a0[6..], "unchanged layer joint, w {w}");
                }
            }
        }
    }
}
