//! The mixer's whole per-joint pipeline on lanes ([`MixLanes`]) and its
//! first half alone ([`QuatLanes`]).

use super::*;

/// The whole rotation mix of one frame for the joints with three rotation
/// channels, as one loop on SIMD lanes (structure of arrays, one lane per
/// joint, no branch on the rotation order): the half-angle sines and
/// cosines of both frames' angles, each frame's quaternion in closed form,
/// the SLERP (with, for a layer, the reference's inverse before it and the
/// base rotation after it), the matrix elements and the continuous Euler
/// extraction next to the previous output frame's angles.
///
/// Every quaternion is kept in the joint's own order axes, `(e·q_i, e·q_j,
/// e·q_k, w)` with `(i, j, k)` the order's axes and `e` its parity: that
/// map is a rotation of the vector part (an even permutation, or an odd
/// one times -1), so products, dot products and SLERP are the same in
/// either form, and the matrix [`EulerBatch`] extracts from comes out
/// directly in the order's axes.
///
/// Use: [`MixLanes::with_capacity`] once, then per frame
/// [`MixLanes::clear`], one [`MixLanes::push`] per joint,
/// [`MixLanes::solve`], and [`MixLanes::angles`] of each lane. Nothing is
/// allocated after construction. The results are those of
/// [`euler_to_quat`](crate::rotation::euler_to_quat), [`slerp_slice`] and
/// [`quat_to_euler_near`](crate::rotation::quat_to_euler_near) one joint at a time
/// within rounding (tested against that scalar path on the corpus),
/// rounded to nine decimals as they are written ([`snap_angle`], in the
/// pass: a multiplication, two additions and a division per angle).
///
/// Where the two frames' quaternions are already known (a resample reuses
/// each input frame's for several output frames), [`QuatLanes`] computes
/// them once and [`MixLanes::push_near`] with [`MixLanes::solve_quats`]
/// mixes them: the same operations from the quaternions on, so the same
/// bits as [`MixLanes::push`] and [`MixLanes::solve`] of the angles.
#[derive(Clone, Debug, Default)]
pub(crate) struct MixLanes {
    /// Lanes in use this frame.
    pub(super) n: usize,
    /// The first frame's three angles then the second's (degrees, listing
    /// order), as pushed (an angle beyond the exact reduction's limit is
    /// reduced in place by [`MixLanes::solve`]).
    pub(super) ang: [Vec<f64>; 6],
    /// The order's parity `e` per lane.
    pub(super) parity: Vec<f64>,
    /// The previous output frame's angles (listing order).
    pub(super) near: [Vec<f64>; 3],
    /// For a layer: the reference's inverse rotation in the order's axes.
    pub(super) inv: [Vec<f64>; 4],
    /// The angles after [`MixLanes::solve`], as written: rounded to nine
    /// decimals ([`snap_angle`], by the pass and by the lanes solved again;
    /// then [`keep_same`] may put a lane's own angles back, bit for bit).
    pub(super) out: [Vec<f64>; 3],
    /// Per lane, 1 where the fast continuity choice could not decide (see
    /// [`near_deg_fast`]) and the lane is solved again with [`near_deg`].
    pub(super) redo: Vec<f64>,
    /// Per lane, after the pass of a blend on the mixes' kernels (`FAST`,
    /// not layered, from the angles): 1 where [`keep_same`] may change the
    /// lane (its two frames' angles are the same bits, or one is huge and
    /// is reduced before [`keep_same`] sees it), else 0; so that
    /// [`MixLanes::keep_same`] skips a frame without such a lane (a
    /// crossfade of different frames, nearly always).
    pub(super) same: Vec<f64>,
    /// Whether the lanes run the mixes' kernels (`FAST`: [`sin_cos_half`],
    /// [`sin_cos_kernel_mix`], [`atan2_mix`]'s short polynomials), whose
    /// angles are within 1e-10 degrees of the formulas' rather than
    /// `sin_cos_deg`'s and fdlibm's bits: set by
    /// [`MixLanes::fast_with_capacity`] (the `Mixer`'s), not by
    /// [`MixLanes::with_capacity`] (the resampler's, which keeps its bits).
    pub(super) fast: bool,
}

/// The parity `e` of `order` (1 for an even permutation of XYZ, else -1),
/// as [`MixLanes::gather`] takes it.
pub(crate) fn parity_of(order: RotationOrder) -> f64 {
    PERMUTATIONS[order as usize].3
}

/// The quaternion `q` in the axes of `order`, as the lanes keep
/// quaternions: `(e·q_i, e·q_j, e·q_k, w)` (a layer's reference inverse,
/// as [`MixLanes::push`] and [`MixLanes::gather_layer`] take it).
pub(crate) fn lane_quat(q: DQuat, order: RotationOrder) -> [f64; 4] {
    let (i, j, k, e) = PERMUTATIONS[order as usize];
    let v = [q.x, q.y, q.z];
    [e * v[i], e * v[j], e * v[k], q.w]
}

/// Whether every entry of `rot` is three adjacent channels `[c, c + 1,
/// c + 2]` (the usual layout: a joint's rotation channels listed
/// together), so that [`read3`] and [`write3`] can take them as one slice.
pub(crate) fn adjacent(rot: &[[usize; 3]]) -> bool {
    rot.iter().all(|&[r0, r1, r2]| r1 == r0.wrapping_add(1) && r2 == r0.wrapping_add(2))
}

/// The values of `frame` at a joint's three rotation channels `r`; with
/// `ADJACENT` (`r` is `[c, c + 1, c + 2]`, see [`adjacent`]) as one slice.
#[inline(always)]
pub(crate) fn read3<const ADJACENT: bool>(frame: &[f64], r: [usize; 3]) -> [f64; 3] {
    if ADJACENT {
        let s = &frame[r[0]..r[0] + 3];
        [s[0], s[1], s[2]]
    } else {
        r.map(|c| frame[c])
    }
}

/// Writes `v` into `frame` at a joint's three rotation channels `r`, as
/// [`read3`] reads them.
#[inline(always)]
pub(crate) fn write3<const ADJACENT: bool>(frame: &mut [f64], r: [usize; 3], v: [f64; 3]) {
    if ADJACENT {
        frame[r[0]..r[0] + 3].copy_from_slice(&v);
    } else {
        for (c, x) in r.into_iter().zip(v) {
            frame[c] = x;
        }
    }
}

/// The frames [`MixLanes::gather_layer`] reads: the base, the layer, the
/// layer's reference frame and the previous output frame.
#[derive(Clone, Copy)]
pub(crate) struct LayerFrames<'a> {
    pub(crate) base: &'a [f64],
    pub(crate) add: &'a [f64],
    pub(crate) reference: &'a [f64],
    pub(crate) near: &'a [f64],
}

/// Lanes per SIMD step (eight with AVX-512): the lane count is padded up
/// to a multiple of this, so that no lane runs in a scalar remainder loop.
pub(super) const STEP: usize = 8;

/// `2 ·` [`REDUCE_LIMIT`](crate::rotation::REDUCE_LIMIT): an angle whose half is
/// beyond the exact reduction's limit (or NaN) has at least these bits
/// once its sign is cleared.
pub(super) const HUGE_BITS: u64 = (2.0 * crate::rotation::REDUCE_LIMIT).to_bits();

/// Whether the half of angle `x` is beyond the exact reduction's limit,
/// or `x` is NaN.
#[inline(always)]
pub(super) fn is_huge(x: f64) -> bool {
    (x.to_bits() & !(1 << 63)) >= HUGE_BITS
}

/// Whether any of `angles` [`is_huge`].
#[inline(always)]
pub(super) fn any_huge(angles: &[f64]) -> bool {
    angles.iter().fold(false, |any, &x| any | is_huge(x))
}

/// Reduces in place every angle of `angles` whose half is beyond the exact
/// reduction's limit, so that the lanes' `sin_cos_deg_reduced(0.5 · x)`
/// gives [`sin_cos_deg`](crate::rotation::sin_cos_deg)'s bits of the half angle:
/// `x` becomes `2 · ((0.5 · x) % 360)` (an exact remainder, then an exact
/// doubling that the lanes' halving undoes; NaN stays NaN).
#[cold]
pub(super) fn reduce_huge(angles: &mut [f64]) {
    for x in angles {
        if (x.to_bits() & !(1 << 63)) >= HUGE_BITS {
            *x = 2.0 * ((0.5 * *x) % 360.0);
        }
    }
}

/// The quaternions of many joints' three rotation channels, one lane per
/// joint, in the order's own axes (`(e·q_i, e·q_j, e·q_k, w)`, as
/// [`MixLanes`] keeps them): the half-angle sines and cosines
/// (`sin_cos_deg`'s bits) and the closed-form product, in one pass on SIMD
/// lanes. The input of [`MixLanes::solve_quats`], lane `l` here going with
/// lane `l` there.
///
/// Use: [`QuatLanes::with_capacity`] once, then per frame
/// [`QuatLanes::clear`], one [`QuatLanes::push`] per joint (in the order
/// of the mixer's lanes) and [`QuatLanes::solve`]. A frame's lanes can be
/// kept and mixed with several others.
#[derive(Clone, Debug, Default)]
pub(crate) struct QuatLanes {
    /// Lanes in use.
    pub(super) n: usize,
    /// The three angles (degrees, listing order), as pushed.
    pub(super) ang: [Vec<f64>; 3],
    /// The order's parity per lane.
    pub(super) parity: Vec<f64>,
    /// The quaternions after [`QuatLanes::solve`], in the order's axes.
    pub(super) q: [Vec<f64>; 4],
}

impl QuatLanes {
    /// Buffers for up to `n` lanes.
    pub(crate) fn with_capacity(n: usize) -> QuatLanes {
        let cap = n.div_ceil(STEP) * STEP;
        let v = || vec![0.0; cap];
        QuatLanes {
            n: 0,
            ang: std::array::from_fn(|_| v()),
            parity: vec![1.0; cap],
            q: [v(), v(), v(), vec![1.0; cap]],
        }
    }

    /// Empties the lanes.
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.n = 0;
    }

    /// Lanes in use.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// Adds a lane: a joint of `order` whose angles (degrees, listing
    /// order) are `angles`. Returns the lane.
    ///
    /// # Panics
    /// When every lane of the capacity is taken.
    #[inline(always)]
    pub(crate) fn push(&mut self, order: RotationOrder, angles: [f64; 3]) -> usize {
        let l = self.n;
        for (v, x) in self.ang.iter_mut().zip(angles) {
            v[l] = x;
        }
        self.parity[l] = PERMUTATIONS[order as usize].3;
        self.n = l + 1;
        l
    }

    /// Computes the quaternion of every lane.
    pub(crate) fn solve(&mut self) {
        let n = self.n.div_ceil(STEP) * STEP;
        if self.ang.iter().any(|a| any_huge(&a[..n])) {
            for a in &mut self.ang {
                reduce_huge(&mut a[..n]);
            }
        }
        quat_lanes_on(Simd::best(), self);
    }

    /// The quaternion of lane `l` after [`QuatLanes::solve`], in its
    /// order's axes: `(e·q_i, e·q_j, e·q_k, w)`.
    #[cfg(test)]
    pub(crate) fn quat(&self, l: usize) -> [f64; 4] {
        assert!(l < self.n, "lane {l} of {}", self.n);
        [self.q[0][l], self.q[1][l], self.q[2][l], self.q[3][l]]
    }
}

/// [`QuatLanes::solve`]'s loop over the lanes in use, padded to a multiple
/// of [`STEP`].
#[inline(always)]
pub(super) fn quat_lanes(m: &mut QuatLanes) {
    let n = m.n.div_ceil(STEP) * STEP;
    let [a0, a1, a2] = &m.ang;
    let (a0, a1, a2) = (&a0[..n], &a1[..n], &a2[..n]);
    let e = &m.parity[..n];
    let [q0, q1, q2, q3] = &mut m.q;
    let (q0, q1, q2, q3) = (&mut q0[..n], &mut q1[..n], &mut q2[..n], &mut q3[..n]);
    for l in 0..n {
        let q = quat_of::<false>([a0[l], a1[l], a2[l]], e[l]);
        q0[l] = q[0];
        q1[l] = q[1];
        q2[l] = q[2];
        q3[l] = q[3];
    }
}

simd_kernel! {
    /// [`quat_lanes`] on the given SIMD build.
    fn quat_lanes_on(simd: Simd, m: &mut QuatLanes) {
        quat_lanes(m)
    }
}

/// Where [`MixLanes::solve`] and [`MixLanes::solve_quats`] take each
/// lane's two quaternions from.
#[derive(Clone, Copy)]
pub(super) enum Source<'a> {
    /// From the lanes' own angles.
    Angles,
    /// From two [`QuatLanes`].
    Quats(&'a QuatLanes, &'a QuatLanes),
}

impl MixLanes {
    /// Buffers for up to `n` lanes per frame.
    pub(crate) fn with_capacity(n: usize) -> MixLanes {
        let cap = n.div_ceil(STEP) * STEP;
        let v = || vec![0.0; cap];
        MixLanes {
            n: 0,
            ang: std::array::from_fn(|_| v()),
            parity: vec![1.0; cap],
            near: std::array::from_fn(|_| v()),
            inv: [v(), v(), v(), vec![1.0; cap]],
            out: std::array::from_fn(|_| v()),
            redo: v(),
            same: v(),
            fast: false,
        }
    }

    /// [`MixLanes::with_capacity`] with the mixes' kernels (`FAST`, see
    /// [`MixLanes::fast`]): the `Mixer`'s lanes. Every SIMD build, the plain
    /// loop and the lanes solved again one by one still give the same bits.
    pub(crate) fn fast_with_capacity(n: usize) -> MixLanes {
        MixLanes { fast: true, ..MixLanes::with_capacity(n) }
    }

    /// Empties the lanes.
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.n = 0;
    }

    /// Lanes in use.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// Adds a lane: a joint of `order` whose angles (degrees, listing
    /// order) are `a` in the first frame and `b` in the second, `near` in
    /// the previous output frame, and (for a layer) whose reference
    /// rotation has the inverse `inv`. Returns the lane.
    ///
    /// # Panics
    /// When every lane of the capacity is taken.
    #[inline(always)]
    pub(crate) fn push(
        &mut self,
        order: RotationOrder,
        a: [f64; 3],
        b: [f64; 3],
        near: [f64; 3],
        inv: Option<DQuat>,
    ) -> usize {
        let l = self.push_near(order, near, inv);
        for (v, x) in self.ang.iter_mut().zip(a.into_iter().chain(b)) {
            v[l] = x;
        }
        l
    }

    /// Sets the lanes to one per entry of `rot` (a joint's three rotation
    /// channels, listing order) with its order's parity `parity` (see
    /// [`parity_of`]): the angles of frames `a` and `b` and of the previous
    /// output frame `near` at those channels, no layer; except the entries
    /// whose three angles are the same bits in `a`, `b` and `near` and
    /// [`settled`]: their channels of `a` are copied into `out` (what the
    /// lanes and [`keep_same`] give them, bit for bit) and they take no
    /// lane, their neighbours' channels go to `lane_rot`. The same lanes
    /// as [`MixLanes::clear`] and one [`MixLanes::push`] per other entry,
    /// in one loop. Returns whether every entry is a lane (lane `s` is
    /// entry `s`; `lane_rot` is then left as it was).
    ///
    /// With `ADJACENT`, every entry of `rot` must be `[c, c + 1, c + 2]`
    /// (see [`adjacent`]): each frame's three values are then read as one
    /// slice (one bounds check instead of three).
    ///
    /// For the mixes' lanes ([`MixLanes::fast_with_capacity`]) of a blend
    /// (solved with `layered` false).
    ///
    /// # Panics
    /// When `rot` and `parity` differ in length, hold more joints than the
    /// capacity or `lane_rot`, or name a channel outside a frame, or when
    /// `b`, `near` or `out` is shorter than `a`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn gather<const ADJACENT: bool>(
        &mut self,
        rot: &[[usize; 3]],
        parity: &[f64],
        a: &[f64],
        b: &[f64],
        near: &[f64],
        out: &mut [f64],
        lane_rot: &mut [[usize; 3]],
    ) -> bool {
        // Leaving a settled joint out is the mixes' rule (`keep_same`).
        debug_assert!(self.fast, "MixLanes::gather takes the mixes' lanes");
        let n = rot.len();
        assert!(parity.len() == n && n <= self.parity.len() && n <= lane_rot.len(), "{n} lanes");
        // One length for the frames: a channel's bounds check on `a`
        // covers the others.
        let len = a.len();
        let (a, b, near, out) = (&a[..len], &b[..len], &near[..len], &mut out[..len]);
        let [a0, a1, a2, b0, b1, b2] = &mut self.ang;
        let (a0, a1, a2) = (&mut a0[..n], &mut a1[..n], &mut a2[..n]);
        let (b0, b1, b2) = (&mut b0[..n], &mut b1[..n], &mut b2[..n]);
        let [p0, p1, p2] = &mut self.near;
        let (p0, p1, p2) = (&mut p0[..n], &mut p1[..n], &mut p2[..n]);
        let e = &mut self.parity[..n];
        let lane_rot = &mut lane_rot[..n];
        // Lane s is entry s up to the first settled entry, `first`.
        let mut first = n;
        for (s, &r) in rot.iter().enumerate() {
            let (x, y, p) =
                (read3::<ADJACENT>(a, r), read3::<ADJACENT>(b, r), read3::<ADJACENT>(near, r));
            if same_bits(x, y) && same_bits(x, p) && settled(x) {
                first = s;
                break;
            }
            [a0[s], a1[s], a2[s]] = x;
            [b0[s], b1[s], b2[s]] = y;
            [p0[s], p1[s], p2[s]] = p;
        }
        e[..first].copy_from_slice(&parity[..first]);
        if first == n {
            self.n = n;
            return true;
        }
        lane_rot[..first].copy_from_slice(&rot[..first]);
        // From there, the other entries only.
        let mut l = first;
        for s in first..n {
            let r = rot[s];
            let (x, y, p) =
                (read3::<ADJACENT>(a, r), read3::<ADJACENT>(b, r), read3::<ADJACENT>(near, r));
            if same_bits(x, y) && same_bits(x, p) && settled(x) {
                write3::<ADJACENT>(out, r, x);
                continue;
            }
            // l <= s < n: tells the compiler the lane writes are in bounds.
            let l_ = l.min(s);
            [a0[l_], a1[l_], a2[l_]] = x;
            [b0[l_], b1[l_], b2[l_]] = y;
            [p0[l_], p1[l_], p2[l_]] = p;
            e[l_] = parity[s];
            lane_rot[l_] = r;
            l = l_ + 1;
        }
        self.n = l;
        false
    }

    /// Adds a lane whose two quaternions come from the [`QuatLanes`] given
    /// to [`MixLanes::solve_quats`] (their lane of the same index): a joint
    /// of `order`, `near` and `inv` as for [`MixLanes::push`]. Returns the
    /// lane.
    ///
    /// # Panics
    /// When every lane of the capacity is taken.
    #[inline(always)]
    pub(crate) fn push_near(
        &mut self,
        order: RotationOrder,
        near: [f64; 3],
        inv: Option<DQuat>,
    ) -> usize {
        let l = self.n;
        self.parity[l] = parity_of(order);
        for (v, x) in self.near.iter_mut().zip(near) {
            v[l] = x;
        }
        if let Some(q) = inv {
            for (dst, x) in self.inv.iter_mut().zip(lane_quat(q, order)) {
                dst[l] = x;
            }
        }
        self.n = l + 1;
        l
    }

    /// The lanes of a layer's frame: for each entry `s` of `rot` (a
    /// joint's three rotation channels, listing order, with its order's
    /// parity `parity[s]` and its reference rotation's inverse
    /// `inv[joint[s]]` in lane form, [`lane_quat`]), the channels of
    /// `base` copied into `out` where `add` holds `reference`'s bits at all
    /// three (the layer changes nothing there), else a lane of `base`'s,
    /// `add`'s and `near`'s angles, its channels in `lane_rot`. The same
    /// lanes as [`MixLanes::clear`] and one [`MixLanes::push`] per changed
    /// joint. Returns whether every entry is a lane (lane `s` is entry
    /// `s`; `lane_rot` is then left as it was).
    ///
    /// Up to the first entry the layer leaves unchanged, lane `s` is entry
    /// `s`: those lanes' parities, and their inverses from `by_lane` (the
    /// inverses of the entries by component, when given), are copied as
    /// slices.
    ///
    /// # Panics
    /// When `rot`, `parity` and `joint` differ in length, hold more joints
    /// than the capacity or `lane_rot`, or name a channel outside a frame
    /// or a joint outside `inv`, or when a frame is shorter than `add` or a
    /// slice of `by_lane` shorter than `rot`.
    ///
    /// `ADJACENT` as for [`MixLanes::gather`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn gather_layer<const ADJACENT: bool>(
        &mut self,
        rot: &[[usize; 3]],
        parity: &[f64],
        joint: &[usize],
        inv: &[[f64; 4]],
        by_lane: Option<[&[f64]; 4]>,
        frames: LayerFrames<'_>,
        out: &mut [f64],
        lane_rot: &mut [[usize; 3]],
    ) -> bool {
        let LayerFrames { base, add, reference, near } = frames;
        // One length for the frames (as in `gather`).
        let len = add.len();
        let (base, reference, near, out) =
            (&base[..len], &reference[..len], &near[..len], &mut out[..len]);
        let n = rot.len();
        assert!(
            parity.len() == n && joint.len() == n && n <= self.parity.len() && n <= lane_rot.len(),
            "{n} lanes"
        );
        let [a0, a1, a2, b0, b1, b2] = &mut self.ang;
        let (a0, a1, a2) = (&mut a0[..n], &mut a1[..n], &mut a2[..n]);
        let (b0, b1, b2) = (&mut b0[..n], &mut b1[..n], &mut b2[..n]);
        let [p0, p1, p2] = &mut self.near;
        let (p0, p1, p2) = (&mut p0[..n], &mut p1[..n], &mut p2[..n]);
        let [i0, i1, i2, i3] = &mut self.inv;
        let (i0, i1, i2, i3) = (&mut i0[..n], &mut i1[..n], &mut i2[..n], &mut i3[..n]);
        let e = &mut self.parity[..n];
        let lane_rot = &mut lane_rot[..n];
        // Lane s is entry s up to the first unchanged entry, `first`.
        let mut first = n;
        for (s, &r) in rot.iter().enumerate() {
            let x = read3::<ADJACENT>(add, r);
            if same_bits(x, read3::<ADJACENT>(reference, r)) {
                first = s;
                break;
            }
            [a0[s], a1[s], a2[s]] = read3::<ADJACENT>(base, r);
            [b0[s], b1[s], b2[s]] = x;
            [p0[s], p1[s], p2[s]] = read3::<ADJACENT>(near, r);
        }
        e[..first].copy_from_slice(&parity[..first]);
        match by_lane {
            Some([v0, v1, v2, v3]) => {
                i0[..first].copy_from_slice(&v0[..first]);
                i1[..first].copy_from_slice(&v1[..first]);
                i2[..first].copy_from_slice(&v2[..first]);
                i3[..first].copy_from_slice(&v3[..first]);
            }
            None => {
                for s in 0..first {
                    [i0[s], i1[s], i2[s], i3[s]] = inv[joint[s]];
                }
            }
        }
        if first == n {
            self.n = n;
            return true;
        }
        lane_rot[..first].copy_from_slice(&rot[..first]);
        // From there, the changed entries only.
        let mut l = first;
        for s in first..n {
            let r = rot[s];
            let x = read3::<ADJACENT>(add, r);
            let from_base = read3::<ADJACENT>(base, r);
            if same_bits(x, read3::<ADJACENT>(reference, r)) {
                write3::<ADJACENT>(out, r, from_base);
                continue;
            }
            // l <= s < n: tells the compiler the lane writes are in bounds.
            let l_ = l.min(s);
            [a0[l_], a1[l_], a2[l_]] = from_base;
            [b0[l_], b1[l_], b2[l_]] = x;
            [p0[l_], p1[l_], p2[l_]] = read3::<ADJACENT>(near, r);
            [i0[l_], i1[l_], i2[l_], i3[l_]] = inv[joint[s]];
            e[l_] = parity[s];
            lane_rot[l_] = r;
            l = l_ + 1;
        }
        self.n = l;
        false
    }

    /// Mixes every lane at weight `t` (in `[0, 1]`): the SLERP of the two
    /// frames' rotations or, with `layered`, `q_a · slerp(1, inv · q_b, t)`.
    ///
    /// A lane with an angle beyond the exact reduction's limit (or NaN) is
    /// flagged by the pass and solved again one by one after its angles
    /// are reduced as `sin_cos_deg` reduces them (`% 360`, exact), so that
    /// it gets that function's bits.
    pub(crate) fn solve(&mut self, t: f64, layered: bool) {
        self.run(Source::Angles, t, layered);
    }

    /// [`MixLanes::solve`] with each lane's two quaternions taken from `a`
    /// and `b` (lane `l` of each, computed by [`QuatLanes::solve`]) instead
    /// of its angles: the same bits as [`MixLanes::solve`] of the angles
    /// the quaternions were made from.
    ///
    /// # Panics
    /// When `a` or `b` has fewer lanes than this.
    pub(crate) fn solve_quats(&mut self, a: &QuatLanes, b: &QuatLanes, t: f64, layered: bool) {
        assert!(
            a.len() >= self.n && b.len() >= self.n,
            "quaternion lanes {} and {} for {} lanes",
            a.len(),
            b.len(),
            self.n
        );
        self.run(Source::Quats(a, b), t, layered);
    }

    pub(super) fn run(&mut self, src: Source<'_>, t: f64, layered: bool) {
        debug_assert!((0.0..=1.0).contains(&t), "MixLanes::solve takes t in [0, 1]");
        if layered {
            self.pass::<true>(src, t);
        } else {
            self.pass::<false>(src, t);
        }
        self.redo_undecided(src, t, layered);
        if let (true, false, Source::Angles) = (self.fast, layered, src) {
            self.keep_same();
        }
    }

    /// [`keep_same`] on every lane in use, after the pass (a loop of its
    /// own: inside the pass, the six angles kept alive to its end cost
    /// the pass 7%), when the pass flagged a lane it may change
    /// ([`MixLanes::same`]; the flag is only a filter: the loop tests
    /// every lane itself).
    pub(super) fn keep_same(&mut self) {
        let n = self.n;
        if self.same[..n].iter().fold(0, |acc, r| acc | r.to_bits()) == 0 {
            return;
        }
        let [h0, h1, h2, h3, h4, h5] = &self.ang;
        let (h0, h1, h2) = (&h0[..n], &h1[..n], &h2[..n]);
        let (h3, h4, h5) = (&h3[..n], &h4[..n], &h5[..n]);
        let [o0, o1, o2] = &mut self.out;
        let (o0, o1, o2) = (&mut o0[..n], &mut o1[..n], &mut o2[..n]);
        for l in 0..n {
            [o0[l], o1[l], o2[l]] =
                keep_same([o0[l], o1[l], o2[l]], [h0[l], h1[l], h2[l]], [h3[l], h4[l], h5[l]]);
        }
    }

    /// The lane pass on the widest SIMD the CPU has (the same bits on each).
    pub(super) fn pass<const LAYERED: bool>(&mut self, src: Source<'_>, t: f64) {
        if self.fast {
            mix_pass::<LAYERED, true>(Simd::best(), self, src, t);
        } else {
            mix_pass::<LAYERED, false>(Simd::best(), self, src, t);
        }
    }

    /// Solves again, one at a time with [`near_deg`], the lanes whose fast
    /// continuity choice could not decide (rare: an angle half a turn from
    /// the previous one, within rounding, in the solution taken or in a
    /// close call between the two), and those with a huge angle, reduced
    /// first.
    pub(super) fn redo_undecided(&mut self, src: Source<'_>, t: f64, layered: bool) {
        let n = self.n;
        if self.redo[..n].iter().fold(0, |acc, r| acc | r.to_bits()) == 0 {
            return;
        }
        for l in 0..n {
            if self.redo[l] != 0.0 {
                if let Source::Angles = src {
                    for a in &mut self.ang {
                        reduce_huge(&mut a[l..l + 1]);
                    }
                }
                let (qa, qb) = self.quats(src, l);
                let one = if self.fast {
                    mix_one::<true, true, false>
                } else {
                    mix_one::<true, false, false>
                };
                let (angles, _) = one(
                    qa,
                    qb,
                    self.parity[l],
                    [self.inv[0][l], self.inv[1][l], self.inv[2][l], self.inv[3][l]],
                    [self.near[0][l], self.near[1][l], self.near[2][l]],
                    t,
                    layered,
                );
                for (o, v) in self.out.iter_mut().zip(angles) {
                    o[l] = snap_angle(v);
                }
            }
        }
    }

    /// Lane `l`'s two quaternions, as the lane pass computes them.
    #[inline(always)]
    pub(super) fn quats(&self, src: Source<'_>, l: usize) -> ([f64; 4], [f64; 4]) {
        match src {
            Source::Angles => {
                let a = &self.ang;
                let e = self.parity[l];
                let quat = if self.fast { quat_of::<true> } else { quat_of::<false> };
                (quat([a[0][l], a[1][l], a[2][l]], e), quat([a[3][l], a[4][l], a[5][l]], e))
            }
            Source::Quats(qa, qb) => (qa.quat_any(l), qb.quat_any(l)),
        }
    }

    /// The mixed angles (degrees, listing order) of lane `l`, as written
    /// (nine decimals, [`snap_angle`]).
    #[inline]
    pub(crate) fn angles(&self, l: usize) -> [f64; 3] {
        [self.out[0][l], self.out[1][l], self.out[2][l]]
    }

    /// The mixed angles of every lane in use: the first, second and third
    /// angles, one slice each ([`MixLanes::angles`] of every lane at once).
    #[inline]
    pub(crate) fn all_angles(&self) -> [&[f64]; 3] {
        let n = self.n;
        [&self.out[0][..n], &self.out[1][..n], &self.out[2][..n]]
    }
}

impl QuatLanes {
    /// Lane `l`'s quaternion, padding lanes included.
    #[inline(always)]
    pub(super) fn quat_any(&self, l: usize) -> [f64; 4] {
        [self.q[0][l], self.q[1][l], self.q[2][l], self.q[3][l]]
    }
}

simd_kernel! {
    /// [`mix_lanes`] on the given SIMD build, padded to its width (four
    /// lanes per step with AVX2, eight otherwise; no FMA, so the same bits
    /// on every build: every operation rounds as in the scalar code).
    pub(super) fn mix_pass<const LAYERED: bool, const FAST: bool>(simd: Simd, m: &mut MixLanes, src: Source<'_>, t: f64) {
        mix_lanes::<LAYERED, FAST, PAD, ROUND>(m, src, t)
    }
}

/// The Hamilton product `a · b` of quaternions `[x, y, z, w]`.
#[inline(always)]
pub(super) fn quat_mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// [`euler3_to_quat_sin_cos`](crate::rotation::euler3_to_quat_sin_cos) in the
/// order's axes: `(e·q_i, e·q_j, e·q_k, w)`, the same products.
#[inline(always)]
pub(crate) fn euler3_quat_lane(s: [f64; 3], c: [f64; 3], e: f64) -> [f64; 4] {
    let [sa, sb, sc] = s;
    let [ca, cb, cc] = c;
    let (cacb, sasb, sacb, casb) = (ca * cb, sa * sb, sa * cb, ca * sb);
    [
        e * (sacb * cc + e * casb * sc),
        e * (casb * cc - e * sacb * sc),
        e * (cacb * sc + e * sasb * cc),
        cacb * cc - e * sasb * sc,
    ]
}

/// The quaternion (in the order's axes) of a joint's three angles `x`
/// (degrees, listing order, each below twice the exact reduction's limit)
/// in an order of parity `e`: the half angles' sines and cosines, then
/// the closed-form product.
#[inline(always)]
pub(super) fn quat_of<const FAST: bool>(x: [f64; 3], e: f64) -> [f64; 4] {
    let (s0, c0) = sin_cos_half::<FAST>(x[0]);
    let (s1, c1) = sin_cos_half::<FAST>(x[1]);
    let (s2, c2) = sin_cos_half::<FAST>(x[2]);
    euler3_quat_lane([s0, s1, s2], [c0, c1, c2], e)
}

/// The sine and cosine of half the angle `x` (degrees, its half below the
/// exact reduction's limit): with `FAST`, [`sin_cos_kernel_mix`] after
/// `sin_cos_deg`'s reduction, else `sin_cos_deg`'s bits.
#[inline(always)]
pub(super) fn sin_cos_half<const FAST: bool>(x: f64) -> (f64, f64) {
    if FAST {
        let (r, q) = reduce_half_quarter_turns(x);
        let (s, c) = sin_cos_kernel_mix(r);
        place_quadrant(s, c, q)
    } else {
        sin_cos_deg_reduced(0.5 * x)
    }
}

/// [`reduce_quarter_turns`](crate::rotation::reduce_quarter_turns) of `0.5 · x`, the same bits, with the count
/// of quarter turns from `x · (1/180)` rather than `(0.5 · x) · (1/90)`
/// (one product fewer before the count, so a shorter chain: the halving
/// is done beside it). `1/180` is `1/90` halved exactly, so where `0.5 · x`
/// is exact the two products are one rounding of the same number (the
/// same bits, whatever their size); where it is not (`|x| < 2^-1021`),
/// both products are far below an ulp of [`ROUNDING`] and the sums are
/// [`ROUNDING`].
/// NaN stays `x`'s NaN either way.
#[inline(always)]
pub(super) fn reduce_half_quarter_turns(x: f64) -> (f64, u64) {
    let half = 0.5 * x;
    let shifted = x * (1.0 / 180.0) + ROUNDING;
    let quarter_turns = shifted - ROUNDING;
    let reduced = half - 90.0 * quarter_turns;
    (reduced * (std::f64::consts::PI / 180.0), shifted.to_bits())
}

/// `(sin x, cos x)` for `|x| <= π/4`, the mixes' kernel (FAST): an odd
/// polynomial of degree 13 for the sine (six coefficients, within 1e-17
/// of it before rounding) and an even one of degree 12 for the cosine
/// (five, within 7.6e-16; 1e-15 after rounding), fitted for this range
/// (minimax) and evaluated
/// in pairs (Estrin) rather than as one long chain: fewer operations than
/// fdlibm's kernels, and a shorter chain of dependent ones. The error
/// reaches the lanes' quaternions, which gimbal lock amplifies in the
/// first and third angles (by `1 / cos b`), so it stays near an ulp.
#[inline(always)]
#[allow(clippy::excessive_precision)]
pub(super) fn sin_cos_kernel_mix(x: f64) -> (f64, f64) {
    const S: [f64; 6] = [
        -0.16666666666666666,
        0.00833333333333095,
        -0.00019841269836761008,
        2.7557316103657487e-06,
        -2.505113204972727e-08,
        1.5918142569704652e-10,
    ];
    const C: [f64; 5] = [
        0.04166666666666468,
        -0.0013888888887278667,
        2.480158521206423e-05,
        -2.755636997405028e-07,
        2.070062305452827e-09,
    ];
    let z = x * x;
    let z2 = z * z;
    let z4 = z2 * z2;
    let p = (S[0] + z * S[1]) + z2 * (S[2] + z * S[3]) + z4 * (S[4] + z * S[5]);
    let q = (C[0] + z * C[1]) + z2 * (C[2] + z * C[3]) + z4 * C[4];
    (x + x * (z * p), (1.0 - 0.5 * z) + z2 * q)
}

/// SLERP as [`slerp_one`] does it (shortest arc, the same `θ` within
/// rounding, the linear blend where `sin θ < 1e-12`, left unnormalised:
/// the lanes' matrix step takes any scale), with one sine and cosine
/// instead of two sines: `sin((1-t)θ) = sin θ cos tθ - cos θ sin tθ`, so
/// the weights are `sin tθ / sin θ` and `cos tθ - cos θ · sin tθ / sin θ`
/// (`sin θ = |q0 - q1| |q0 + q1| / 2` by one square root of the product of
/// the squares, `cos θ = (|q0 + q1|² - |q0 - q1|²) / 4`, and `θ` the
/// `atan2` of the two). For `t` in `[0, 1]`.
#[inline(always)]
pub(super) fn slerp_lane<const FAST: bool>(q0: [f64; 4], q1: [f64; 4], t: f64) -> [f64; 4] {
    let (q1, aa, bb) = shortest_arc(q0, q1);
    let (w0, w1) = slerp_weights::<FAST>(aa, bb, t);
    [
        q0[0] * w0 + q1[0] * w1,
        q0[1] * w0 + q1[1] * w1,
        q0[2] * w0 + q1[2] * w1,
        q0[3] * w0 + q1[3] * w1,
    ]
}

/// [`slerp_lane`] from the identity `(0, 0, 0, 1)` to `q` (a layer's
/// change since its reference), the same bits with the identity's
/// products left out: [`shortest_arc`]'s dot product is `q`'s `w` (its
/// zero terms change no sign that matters), each `(0 ∓ q_i)²` is `q_i²`,
/// and `±q_i · w1` is `q_i · (±w1)`; the sign of zero that `0 · w0` gives
/// the sums is kept.
#[inline(always)]
pub(super) fn slerp_from_identity<const FAST: bool>(q: [f64; 4], t: f64) -> [f64; 4] {
    let [x, y, z, w] = q;
    let sign = select(w < 0.0, -1.0, 1.0);
    let w = w * sign;
    let v = (x * x + y * y) + z * z;
    let (aa, bb) = (v + (1.0 - w) * (1.0 - w), v + (1.0 + w) * (1.0 + w));
    let (w0, w1) = slerp_weights::<FAST>(aa, bb, t);
    let (zero, w1s) = (0.0 * w0, w1 * sign);
    [zero + x * w1s, zero + y * w1s, zero + z * w1s, w0 + w * w1]
}

/// [`slerp_lane`]'s weights `(w0, w1)` from `|q0 - q1|²` and `|q0 + q1|²`
/// (after the shortest arc).
#[inline(always)]
pub(super) fn slerp_weights<const FAST: bool>(aa: f64, bb: f64, t: f64) -> (f64, f64) {
    // |q0 - q1| = 2 sin(θ/2), |q0 + q1| = 2 cos(θ/2): θ from its sine and
    // cosine, a unit pair for unit quaternions (one square root).
    let sin_theta = 0.5 * (aa * bb).sqrt();
    let cos_theta = 0.25 * (bb - aa);
    let theta = atan2_mix::<FAST, false>(sin_theta, cos_theta);
    // tθ in [0, π/2]: the kernel on [0, π/4], or of π/2 - tθ beyond.
    let x = t * theta;
    let far = x > std::f64::consts::FRAC_PI_4;
    let r = select(far, (PIO2_HI - x) + PIO2_LO, x);
    let (sr, cr) = if FAST { sin_cos_kernel_mix(r) } else { sin_cos_kernel(r) };
    let (sin_x, cos_x) = (select(far, cr, sr), select(far, sr, cr));
    // (Nearly) the same rotation: the linear blend (normalised later).
    let small = sin_theta < 1e-12;
    let w1 = select(small, t, sin_x / sin_theta);
    let w0 = select(small, 1.0 - t, cos_x - cos_theta * w1);
    (w0, w1)
}

/// `1 / 360`, rounded.
pub(super) const INV_360: f64 = 1.0 / 360.0;

/// Previous angles (degrees) below which [`near_deg_fast`]'s quotients
/// are below `2^24`: `|target - x| <= |target| + 360` for its candidates
/// `x` (in `[-180, 360]`), and `(2^32 + 360) / 360 < 1.2e7`.
pub(super) const FAR_DEG: f64 = 4_294_967_296.0;

/// [`unwrap_deg`](crate::rotation::unwrap_deg) by a multiplication by `1 / 360`
/// instead of a division, with whether the result may differ from it:
/// `x + 360·r` with `r` the integer nearest `(target - x) · (1/360)`, which
/// is `unwrap_deg`'s `round_half_away((target - x) / 360)` (and so the
/// same bits) unless the product is within `1e-7` of a half-integer
/// (`tie`, NaN included), for a product below `2^24` (the caller's check,
/// [`FAR_DEG`]): there it is within `3·2^-53·2^24 < 6e-9` of the quotient,
/// so the two round alike when `tie` is not set. With `SIGNED_ZERO`, `r`
/// takes the sign of the quotient (that of round_half_away's zero), which
/// only matters where `x` may be `-0`.
#[inline(always)]
// `!(a < b)` on purpose: NaN must set the flag.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub(super) fn unwrap_deg_fast<const SIGNED_ZERO: bool, const ROUND: bool>(
    x: f64,
    target: f64,
) -> (f64, bool) {
    let q = (target - x) * INV_360;
    if ROUND {
        let r = q.round_ties_even();
        let tie = !((q - r).abs() < 0.5 - 1e-7);
        return (x + 360.0 * r, tie);
    }
    let r = (q + ROUNDING) - ROUNDING;
    let tie = !((q - r).abs() < 0.5 - 1e-7);
    let r = if SIGNED_ZERO { r.copysign(q) } else { r };
    (x + 360.0 * r, tie)
}

/// [`near_deg`] with [`unwrap_deg_fast`] instead of its seven divisions,
/// for principal angles `rad` (`|rad[k]| <= π`), and whether the lane must
/// be solved again with [`near_deg`] itself: in gimbal lock (`locked`),
/// for a previous angle beyond [`FAR_DEG`] (NaN included), when an
/// unwrapping of the solution taken is a tie, or
/// when one of the other's is and the two distances are too close to be
/// sure which is smaller (a tie puts its candidate half a turn, within
/// `360 · 1e-7` and rounding, from its target either way, so either
/// rounding moves the distance by less than `720 · 4e-5 < 0.03`; the
/// margin is that of three, plus the sums' rounding). Otherwise the same
/// bits as [`near_deg`]: the same candidates, distances and choice (the
/// second solution's candidates `a + 180`, `180 - b`, `c + 180` are never
/// `-0`, so their unwrapping needs no signed zero).
#[inline(always)]
// `!(a > b)` on purpose: NaN distances are a close call.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub(crate) fn near_deg_fast<const ROUND: bool>(
    rad: [f64; 3],
    locked: bool,
    previous_deg: [f64; 3],
) -> ([f64; 3], bool) {
    let (a, b, c) = (rad[0].to_degrees(), rad[1].to_degrees(), rad[2].to_degrees());
    let [pa, pb, pc] = previous_deg;
    let (f0, t_f0) = unwrap_deg_fast::<true, ROUND>(a, pa);
    let (f1, t_f1) = unwrap_deg_fast::<true, ROUND>(b, pb);
    let (f2, t_f2) = unwrap_deg_fast::<true, ROUND>(c, pc);
    let (s0, t_s0) = unwrap_deg_fast::<false, ROUND>(a + 180.0, pa);
    let (s1, t_s1) = unwrap_deg_fast::<false, ROUND>(180.0 - b, pb);
    let (s2, t_s2) = unwrap_deg_fast::<false, ROUND>(c + 180.0, pc);
    let (first, second) = ([f0, f1, f2], [s0, s1, s2]);
    let (d1, d2) = (distance_sq(first, previous_deg), distance_sq(second, previous_deg));
    let take_second = d2 < d1;
    // Each |p| is at most the sum (NaN and infinities carried).
    let far = !((pa.abs() + pb.abs()) + pc.abs() < FAR_DEG);
    let (t_first, t_second) = (t_f0 | t_f1 | t_f2, t_s0 | t_s1 | t_s2);
    let close = !((d2 - d1).abs() > 0.25 + 1e-14 * (d1 + d2));
    // Gimbal lock (rare: a middle angle within about 6e-11 degrees of a
    // quarter turn) is left to `near_deg` too.
    let undecided = far
        | locked
        | (take_second & t_second)
        | (!take_second & t_first)
        | ((t_first | t_second) & close);
    let angles = [
        select(take_second, second[0], first[0]),
        select(take_second, second[1], first[1]),
        select(take_second, second[2], first[2]),
    ];
    (angles, undecided)
}

/// How far (degrees) the mixes' lanes' angles of a rotation mixed with
/// itself may be from its own angles for [`keep_same`] to put those back:
/// far above the lanes' error (about 1e-11), far below any other writing
/// of the same rotation (which the continuity choice takes where the
/// previous output frame was written so: at least a few degrees away).
pub(super) const SAME_DEG: f64 = 1e-6;

/// The mixes' rule for a rotation mixed with itself (`FAST`, not layered):
/// where a lane's two frames' angles `a` and `b` are the same bits and its
/// mixed angles `out` are within [`SAME_DEG`] of them, `a` bit for bit,
/// else `out`. The SLERP of a rotation with itself is that rotation, which
/// the shorter polynomials give only within about 1e-11 degrees: without
/// the rule a clip blended with itself came out with `17.000000000002277`
/// for `17`. Branch-free (selects), so it stays on the lanes.
#[inline(always)]
pub(super) fn keep_same(out: [f64; 3], a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    let same = same_bits(a, b);
    let close = ((out[0] - a[0]).abs() <= SAME_DEG)
        & ((out[1] - a[1]).abs() <= SAME_DEG)
        & ((out[2] - a[2]).abs() <= SAME_DEG);
    let keep = same & close;
    [select(keep, a[0], out[0]), select(keep, a[1], out[1]), select(keep, a[2], out[2])]
}

/// Whether `x` and `y` are the same bits.
#[inline(always)]
pub(super) fn same_bits(x: [f64; 3], y: [f64; 3]) -> bool {
    (x[0].to_bits() == y[0].to_bits())
        & (x[1].to_bits() == y[1].to_bits())
        & (x[2].to_bits() == y[2].to_bits())
}

/// The largest angle (degrees) [`settled`] takes: its ulp (`1.5e-11`)
/// is far below [`SAME_DEG`].
pub(super) const SETTLED_DEG: f64 = 1e5;

/// Whether a joint's angles `x` (listing order), mixed with themselves
/// next to themselves (`a`, `b` and `near` all `x`), certainly come out
/// of the mixes' lanes (FAST, not layered) within [`SAME_DEG`] of `x`, so
/// that [`keep_same`] gives `x` back bit for bit, and the lane can be
/// left out ([`MixLanes::gather`]): every angle finite and at most
/// [`SETTLED_DEG`] (no huge reduction, no previous angle beyond
/// [`FAR_DEG`], and the unwrapping back next to `x` rounds within
/// `1.5e-11`), and the middle angle at least a degree from a quarter turn
/// (`|cos b| >= sin 1°`: no gimbal lock, and the lanes' error, about an
/// ulp in the quaternion, is amplified at most 57 times in the first and
/// third angles). Then the SLERP of the rotation with itself is that
/// rotation within a few ulps, its first solution unwrapped next to `x`
/// is `x` within about `1e-11` degrees (each quotient an integer within
/// rounding: no tie), and the second solution is at least half a turn
/// away in the first and third angles (no close call): the lanes take
/// the first, [`keep_same`] puts `x` back.
#[inline(always)]
pub(super) fn settled(x: [f64; 3]) -> bool {
    let small =
        (x[0].abs() <= SETTLED_DEG) & (x[1].abs() <= SETTLED_DEG) & (x[2].abs() <= SETTLED_DEG);
    // (NaN fails every comparison.) The middle angle less its nearest
    // multiple of a half turn: within 89 degrees of it (any rounding here
    // is far inside the margin).
    let half_turns = (x[1] * (1.0 / 180.0) + ROUNDING) - ROUNDING;
    small & ((x[1] - 180.0 * half_turns).abs() <= 89.0)
}

/// One lane's mix from its two quaternions (order axes): the SLERP (or the
/// layer), the matrix, the extraction and the continuity choice:
/// [`near_deg_fast`] (and whether it decided), or with `EXACT`,
/// [`near_deg`]. With `FAST`, the mixes' kernels ([`MixLanes::fast`]).
#[inline(always)]
pub(super) fn mix_one<const EXACT: bool, const FAST: bool, const ROUND: bool>(
    qa: [f64; 4],
    qb: [f64; 4],
    e: f64,
    inv: [f64; 4],
    near: [f64; 3],
    t: f64,
    layered: bool,
) -> ([f64; 3], bool) {
    let q = if layered {
        let delta = quat_mul(inv, qb);
        quat_mul(qa, slerp_from_identity::<FAST>(delta, t))
    } else {
        slerp_lane::<FAST>(qa, qb, t)
    };
    let (r, n, ok) = quat_matrix_scaled::<EXACT>(q);
    let (rad, locked) = extract_rad_mix::<EXACT, FAST>(r, n, e);
    if EXACT {
        (near_deg(rad, locked, e, near), false)
    } else {
        let (angles, undecided) = near_deg_fast::<ROUND>(rad, locked, near);
        (angles, undecided | !ok)
    }
}

/// [`MixLanes::solve`]'s loop: one lane per iteration, no branch, over the
/// lanes in use padded to a multiple of `PAD` (at most [`STEP`]; the SIMD
/// width the loop is compiled for, so that no lane runs in a scalar
/// remainder loop; the padding lanes hold earlier frames' finite values,
/// their results are not read). Each lane's quaternions come from its
/// angles or from `src`'s [`QuatLanes`].
#[inline(always)]
pub(super) fn mix_lanes<
    const LAYERED: bool,
    const FAST: bool,
    const PAD: usize,
    const ROUND: bool,
>(
    m: &mut MixLanes,
    src: Source<'_>,
    t: f64,
) {
    let n = m.n.div_ceil(PAD) * PAD;
    let MixLanes { ang, parity, near, inv, out, redo, same, .. } = m;
    let [o0, o1, o2] = out;
    let outs = (&mut o0[..n], &mut o1[..n], &mut o2[..n]);
    mix_lanes_into::<LAYERED, FAST, ROUND>(
        n,
        &*ang,
        &*near,
        &*inv,
        &parity[..n],
        src,
        t,
        outs.0,
        outs.1,
        outs.2,
        &mut redo[..n],
        &mut same[..n],
    );
}

/// [`mix_lanes`]'s loop, its five outputs as parameters of their own (a
/// `&mut` parameter tells the compiler that nothing else it reads
/// overlaps it, so the loop runs without the vectoriser's overlap checks:
/// about 300 instructions a frame).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn mix_lanes_into<const LAYERED: bool, const FAST: bool, const ROUND: bool>(
    n: usize,
    ang: &[Vec<f64>; 6],
    near: &[Vec<f64>; 3],
    inv: &[Vec<f64>; 4],
    e: &[f64],
    src: Source<'_>,
    t: f64,
    o0: &mut [f64],
    o1: &mut [f64],
    o2: &mut [f64],
    redo: &mut [f64],
    same: &mut [f64],
) {
    let [p0, p1, p2] = near;
    let (p0, p1, p2) = (&p0[..n], &p1[..n], &p2[..n]);
    let [i0, i1, i2, i3] = inv;
    let (i0, i1, i2, i3) = (&i0[..n], &i1[..n], &i2[..n], &i3[..n]);
    let e = &e[..n];
    let (o0, o1, o2) = (&mut o0[..n], &mut o1[..n], &mut o2[..n]);
    let (redo, same) = (&mut redo[..n], &mut same[..n]);
    // One lane from its two quaternions (a macro, not a closure: a
    // closure is a function of its own, compiled without the caller's
    // target features).
    macro_rules! lane {
        ($l:expr, $qa:expr, $qb:expr, $huge:expr) => {{
            let l = $l;
            let inv = [i0[l], i1[l], i2[l], i3[l]];
            let ([a, b, c], undecided) = mix_one::<false, FAST, ROUND>(
                $qa,
                $qb,
                e[l],
                inv,
                [p0[l], p1[l], p2[l]],
                t,
                LAYERED,
            );
            o0[l] = snap_angle(a);
            o1[l] = snap_angle(b);
            o2[l] = snap_angle(c);
            redo[l] = select(undecided | $huge, 1.0, 0.0);
        }};
    }
    match src {
        Source::Angles => {
            let [h0, h1, h2, h3, h4, h5] = ang;
            let (h0, h1, h2) = (&h0[..n], &h1[..n], &h2[..n]);
            let (h3, h4, h5) = (&h3[..n], &h4[..n], &h5[..n]);
            for l in 0..n {
                let qa = quat_of::<FAST>([h0[l], h1[l], h2[l]], e[l]);
                let qb = quat_of::<FAST>([h3[l], h4[l], h5[l]], e[l]);
                let huge = is_huge(h0[l])
                    | is_huge(h1[l])
                    | is_huge(h2[l])
                    | is_huge(h3[l])
                    | is_huge(h4[l])
                    | is_huge(h5[l]);
                if FAST && !LAYERED {
                    let bits_equal = same_bits([h0[l], h1[l], h2[l]], [h3[l], h4[l], h5[l]]);
                    same[l] = select(bits_equal | huge, 1.0, 0.0);
                }
                lane!(l, qa, qb, huge);
            }
        }
        Source::Quats(a, b) => {
            let [a0, a1, a2, a3] = &a.q;
            let (a0, a1, a2, a3) = (&a0[..n], &a1[..n], &a2[..n], &a3[..n]);
            let [b0, b1, b2, b3] = &b.q;
            let (b0, b1, b2, b3) = (&b0[..n], &b1[..n], &b2[..n], &b3[..n]);
            for l in 0..n {
                lane!(l, [a0[l], a1[l], a2[l], a3[l]], [b0[l], b1[l], b2[l], b3[l]], false);
            }
        }
    }
}
