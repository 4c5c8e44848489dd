//! Continuous Euler extraction in a batch: [`EulerBatch`], and the
//! matrix and extraction steps the lane passes share.

use super::*;

/// Continuous Euler extraction for many rotations at once: the angles of
/// [`mat3_to_euler_near`](crate::rotation::mat3_to_euler_near) (or, without a
/// previous frame, [`mat3_to_euler`](crate::rotation::mat3_to_euler)) within 1e-9
/// degrees, with the `atan2`s of all of them run as one slice
/// ([`atan2_slice`]).
///
/// Use: [`clear`](EulerBatch::clear), one [`push_mat3`](EulerBatch::push_mat3)
/// or [`push_quat`](EulerBatch::push_quat) per rotation (e.g. every joint
/// of a frame with three rotation channels), [`solve`](EulerBatch::solve),
/// then [`angles`](EulerBatch::angles) of each entry, by the index its push
/// returned. The buffers are kept, so a batch reused from frame to frame
/// allocates nothing once it has held its largest frame.
///
/// # Example
/// ```
/// use bvhkit::rotation::{euler_to_quat, mat3_to_euler_near, EulerBatch, RotationOrder};
/// let order = RotationOrder::ZXY;
/// let mut batch = EulerBatch::new();
/// let q = euler_to_quat(&order.axes(), &[185.0, 10.0, -30.0]);
/// let i = batch.push_quat(q, order, Some([183.0, 9.0, -31.0]));
/// let k = batch.push_quat(q, order, None);
/// batch.solve();
/// let [z, x, y] = batch.angles(i);
/// assert!((z - 185.0).abs() < 1e-9 && (x - 10.0).abs() < 1e-9 && (y + 30.0).abs() < 1e-9);
/// assert!((batch.angles(k)[0] + 175.0).abs() < 1e-9); // the principal solution
/// let m = glam::DMat3::from_quat(q);
/// let scalar = mat3_to_euler_near(m, order, [183.0, 9.0, -31.0]);
/// assert!(batch.angles(i).iter().zip(scalar).all(|(a, b)| (a - b).abs() < 1e-9));
/// ```
#[derive(Clone, Debug, Default)]
pub struct EulerBatch {
    /// Per entry, in structure-of-arrays form: the rotation matrix seen in
    /// the order's own axes (`r[3·row + col]`, rows and columns `i, j, k`
    /// of the order), for entries pushed as matrices ...
    pub(super) m: [Vec<f64>; 9],
    /// ... or the quaternion in those axes (`(e·q_i, e·q_j, e·q_k, w)`,
    /// `e` the order's parity), for entries pushed as quaternions.
    pub(super) q: [Vec<f64>; 4],
    /// 1 for entries pushed as quaternions, else 0 (`f64`, like every
    /// other lane, so that the loop runs on SIMD lanes).
    pub(super) is_quat: Vec<f64>,
    pub(super) parity: Vec<f64>,
    pub(super) near: [Vec<f64>; 3],
    /// 1 for entries with a previous frame, else 0.
    pub(super) has_near: Vec<f64>,
    /// The angles in degrees, after [`EulerBatch::solve`].
    pub(super) out: [Vec<f64>; 3],
    /// The number of entries pushed as quaternions: with none (or only
    /// those), `solve` runs the loop that reads the matrices (or the
    /// quaternions) alone.
    pub(super) quats: usize,
    pub(super) solved: bool,
}

/// `(i, j, k, parity)` of each order, in [`RotationOrder::ALL`]'s order.
pub(super) const PERMUTATIONS: [(usize, usize, usize, f64); 6] = [
    (0, 1, 2, 1.0),
    (0, 2, 1, -1.0),
    (1, 0, 2, -1.0),
    (1, 2, 0, 1.0),
    (2, 0, 1, 1.0),
    (2, 1, 0, -1.0),
];

impl EulerBatch {
    /// An empty batch.
    pub fn new() -> EulerBatch {
        EulerBatch::default()
    }

    /// Empties the batch, keeping its buffers.
    pub fn clear(&mut self) {
        for v in self.m.iter_mut().chain(&mut self.q).chain(&mut self.near).chain(&mut self.out) {
            v.clear();
        }
        self.is_quat.clear();
        self.parity.clear();
        self.has_near.clear();
        self.quats = 0;
        self.solved = false;
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.parity.len()
    }

    /// Whether the batch has no entry.
    pub fn is_empty(&self) -> bool {
        self.parity.is_empty()
    }

    pub(super) fn push_common(&mut self, e: f64, near: Option<[f64; 3]>, is_quat: bool) -> usize {
        let p = near.unwrap_or([0.0; 3]);
        for (v, x) in self.near.iter_mut().zip(p) {
            v.push(x);
        }
        self.has_near.push(if near.is_some() { 1.0 } else { 0.0 });
        self.parity.push(e);
        self.is_quat.push(if is_quat { 1.0 } else { 0.0 });
        self.solved = false;
        self.parity.len() - 1
    }

    /// Adds the rotation matrix `m` (orthonormal, determinant +1) to
    /// extract in `order`, closest to `near` (degrees, listing order; the
    /// previous frame's angles) or, with `None`, the principal solution.
    /// Returns the entry's index for [`EulerBatch::angles`].
    pub fn push_mat3(&mut self, m: &DMat3, order: RotationOrder, near: Option<[f64; 3]>) -> usize {
        let (i, j, k, e) = PERMUTATIONS[order as usize];
        let c = m.to_cols_array();
        let idx = [i, j, k];
        let at = self.len();
        // Entries pushed as quaternions have no matrix: zeros (the columns
        // all have one length, so one comparison tells; a batch of
        // matrices alone resizes nothing).
        if self.m[0].len() != at {
            for v in &mut self.m {
                v.resize(at, 0.0);
            }
        }
        for (n, v) in self.m.iter_mut().enumerate() {
            v.push(c[idx[n % 3] * 3 + idx[n / 3]]);
        }
        // The quaternion columns are filled up (with zeros) only when a
        // quaternion is pushed after this, or by `solve`.
        self.push_common(e, near, false)
    }

    /// [`EulerBatch::push_mat3`] of the rotation of the quaternion `q`,
    /// normalised first (a zero or non-finite `q` is the identity), as
    /// [`quat_to_euler_near`](crate::rotation::quat_to_euler_near) does.
    pub fn push_quat(&mut self, q: DQuat, order: RotationOrder, near: Option<[f64; 3]>) -> usize {
        let (i, j, k, e) = PERMUTATIONS[order as usize];
        let v = [q.x, q.y, q.z];
        let at = self.len();
        if self.q[0].len() != at {
            for dst in &mut self.q {
                dst.resize(at, 0.0);
            }
        }
        for (dst, x) in self.q.iter_mut().zip([e * v[i], e * v[j], e * v[k], q.w]) {
            dst.push(x);
        }
        // The matrix columns are filled up (with zeros) only when a matrix
        // is pushed after this, or by `solve`.
        self.quats += 1;
        self.push_common(e, near, true)
    }

    /// Extracts the angles of every entry, on SIMD lanes (AVX2 where the
    /// CPU has it).
    ///
    /// The entries are padded with identities to a multiple of the lane
    /// count of the build that runs (`Simd::pad`: 4 with AVX2, 8 with
    /// AVX-512F) for the loop and the padding dropped after it: a small
    /// batch (a frame's joints) would otherwise run its last few entries
    /// one at a time, outside the lanes, at nearly a whole vector's cost
    /// each. Every entry's lane is computed on its own, so the padding
    /// changes no bit of the others. A batch of matrices alone (or of
    /// quaternions alone) runs a loop that neither reads nor pads the
    /// other kind's columns: the same bits, the mixed loop's select
    /// taking the one kind there is.
    pub fn solve(&mut self) {
        self.solve_with(Simd::best());
    }

    /// [`EulerBatch::solve`] on the SIMD build `simd` (the tests run every
    /// build the CPU has).
    pub(super) fn solve_with(&mut self, simd: Simd) {
        let n = self.len();
        let padded = n.next_multiple_of(simd.pad());
        let (mats, quats) = (self.quats < n, self.quats > 0);
        if mats {
            for (k, v) in self.m.iter_mut().enumerate() {
                v.resize(n, 0.0);
                v.resize(padded, if k % 4 == 0 { 1.0 } else { 0.0 });
            }
        }
        if quats {
            for v in &mut self.q {
                v.resize(padded, 0.0);
            }
        }
        for v in self.near.iter_mut().chain(&mut self.out) {
            v.resize(padded, 0.0);
        }
        self.is_quat.resize(padded, 0.0);
        self.parity.resize(padded, 1.0);
        self.has_near.resize(padded, 0.0);
        match (mats, quats) {
            (true, false) => solve_on::<true, false>(simd, self),
            (false, true) => solve_on::<false, true>(simd, self),
            _ => solve_on::<true, true>(simd, self),
        }
        for v in self.m.iter_mut().chain(&mut self.q).chain(&mut self.near).chain(&mut self.out) {
            v.truncate(n);
        }
        self.is_quat.truncate(n);
        self.parity.truncate(n);
        self.has_near.truncate(n);
        self.solved = true;
    }

    /// The angles (degrees, listing order) of entry `index`.
    ///
    /// # Panics
    /// When the batch was changed since [`EulerBatch::solve`] or `index` is
    /// not an entry.
    #[inline]
    pub fn angles(&self, index: usize) -> [f64; 3] {
        assert!(self.solved, "EulerBatch::solve must run after the last push");
        [self.out[0][index], self.out[1][index], self.out[2][index]]
    }
}

simd_kernel! {
    /// [`solve_loop`] on the given SIMD build.
    pub(super) fn solve_on<const MATS: bool, const QUATS: bool>(simd: Simd, b: &mut EulerBatch) {
        solve_loop::<MATS, QUATS>(b)
    }
}

/// [`EulerBatch::solve`]'s loop: one entry per iteration, no branch. With
/// `MATS` and `QUATS`, each entry's matrix is the one pushed or its
/// quaternion's ([`matrix_of`]); with one of them alone, every entry is of
/// that kind and the other kind's columns are not read (they need not
/// hold the batch's length).
#[inline(always)]
pub(super) fn solve_loop<const MATS: bool, const QUATS: bool>(b: &mut EulerBatch) {
    let n = b.parity.len();
    // The columns of a kind the batch does not hold: none read.
    let (nm, nq) = (if MATS { n } else { 0 }, if QUATS { n } else { 0 });
    let [m0, m1, m2, m3, m4, m5, m6, m7, m8] = &b.m;
    let (m0, m1, m2, m3, m4) = (&m0[..nm], &m1[..nm], &m2[..nm], &m3[..nm], &m4[..nm]);
    let (m5, m6, m7, m8) = (&m5[..nm], &m6[..nm], &m7[..nm], &m8[..nm]);
    let [q0, q1, q2, q3] = &b.q;
    let (q0, q1, q2, q3) = (&q0[..nq], &q1[..nq], &q2[..nq], &q3[..nq]);
    let [p0, p1, p2] = &b.near;
    let (p0, p1, p2) = (&p0[..n], &p1[..n], &p2[..n]);
    let (is_quat, parity, has_near) = (&b.is_quat[..n], &b.parity[..n], &b.has_near[..n]);
    let [o0, o1, o2] = &mut b.out;
    let (o0, o1, o2) = (&mut o0[..n], &mut o1[..n], &mut o2[..n]);
    for t in 0..n {
        let r = if !QUATS {
            [m0[t], m1[t], m2[t], m3[t], m4[t], m5[t], m6[t], m7[t], m8[t]]
        } else if !MATS {
            quat_matrix([q0[t], q1[t], q2[t], q3[t]])
        } else {
            matrix_of(
                [m0[t], m1[t], m2[t], m3[t], m4[t], m5[t], m6[t], m7[t], m8[t]],
                [q0[t], q1[t], q2[t], q3[t]],
                is_quat[t] != 0.0,
            )
        };
        let [a, b, c] = extract(r, parity[t], [p0[t], p1[t], p2[t]], has_near[t] != 0.0);
        o0[t] = a;
        o1[t] = b;
        o2[t] = c;
    }
}

/// The matrix of an entry in the order's axes: `m` as pushed, or that of
/// the quaternion `q` ([`quat_matrix`]).
#[inline(always)]
pub(super) fn matrix_of(m: [f64; 9], q: [f64; 4], is_quat: bool) -> [f64; 9] {
    let from_q = quat_matrix(q);
    std::array::from_fn(|k| select(is_quat, from_q[k], m[k]))
}

/// The matrix of the quaternion `q` (normalised, by one division and four
/// products; zero or non-finite: the identity) with glam's
/// `DMat3::from_quat` formula, row-major, in the quaternion's axes (a lane
/// step shared with `edit::order`'s lanes).
#[inline(always)]
pub(crate) fn quat_matrix(q: [f64; 4]) -> [f64; 9] {
    let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    let ok = len > 0.0 && len.is_finite();
    let inv = 1.0 / select(ok, len, 1.0);
    let (x, y, z) =
        (select(ok, q[0], 0.0) * inv, select(ok, q[1], 0.0) * inv, select(ok, q[2], 0.0) * inv);
    let w = select(ok, q[3] * inv, 1.0);
    let (x2, y2, z2) = (x + x, y + y, z + z);
    let (xx, xy, xz) = (x * x2, x * y2, x * z2);
    let (yy, yz, zz) = (y * y2, y * z2, z * z2);
    let (wx, wy, wz) = (w * x2, w * y2, w * z2);
    [
        1.0 - (yy + zz),
        xy - wz,
        xz + wy,
        xy + wz,
        1.0 - (xx + zz),
        yz - wx,
        xz - wy,
        yz + wx,
        1.0 - (xx + yy),
    ]
}

/// [`extract_rad`](crate::rotation::extract_rad) of the matrix `r` in its order's
/// axes (`r[0]` = `R[i][i]`, `r[1]` = `R[i][j]`, ...) with the same
/// operations (but one reciprocal for the first angle's sine and cosine)
/// and selects for its branches, then the continuity choice
/// ([`near_deg`], or [`principal_deg`] without a previous frame).
#[inline(always)]
pub(crate) fn extract(r: [f64; 9], e: f64, previous: [f64; 3], has_near: bool) -> [f64; 3] {
    extract_of::<false>(r, e, previous, has_near)
}

/// [`extract`] of a matrix [`quat_matrix`] made (a rotation matrix within
/// rounding, so every `atan2` pair is a unit vector within rounding, or
/// at gimbal lock the fixed `(0, 1)`): its `atan2`s are [`atan2_unit`],
/// the same bits.
#[inline(always)]
pub(crate) fn extract_unit(r: [f64; 9], e: f64, previous: [f64; 3], has_near: bool) -> [f64; 3] {
    extract_of::<true>(r, e, previous, has_near)
}

#[inline(always)]
pub(super) fn extract_of<const UNIT: bool>(
    r: [f64; 9],
    e: f64,
    previous: [f64; 3],
    has_near: bool,
) -> [f64; 3] {
    let (rad, locked) = extract_rad_lane::<UNIT, true>(r, e);
    let near = near_deg(rad, locked, e, previous);
    let principal = principal_deg(rad);
    std::array::from_fn(|k| select(has_near, near[k], principal[k]))
}

/// [`extract_unit`] next to `previous` with [`near_deg_fast`]'s
/// continuity choice, and without the extraction's gimbal-lock selects:
/// its angles, and whether they may differ from [`extract_unit`]'s (then
/// the lane must be solved again by [`extract_unit`]: a matrix in gimbal
/// lock, or a choice [`near_deg_fast`] could not be sure of). Unflagged,
/// the same bits.
#[inline(always)]
pub(crate) fn extract_unit_fast(r: [f64; 9], e: f64, previous: [f64; 3]) -> ([f64; 3], bool) {
    let (rad, locked) = extract_rad_lane::<true, false>(r, e);
    near_deg_fast::<false>(rad, locked, previous)
}

/// [`extract`]'s principal angles in radians and whether the matrix is in
/// gimbal lock, before the continuity choice. With `UNIT` (a rotation
/// matrix the lanes made from a normalised quaternion, whose pairs are
/// unit vectors within rounding) its `atan2`s are [`atan2_unit`]: the same
/// bits. Without `LOCKED`, the angles of a matrix in gimbal lock are left
/// as they come (a caller that flags `locked` lanes and solves them again
/// with `LOCKED`): the same angles elsewhere, without seven of its selects.
#[inline(always)]
pub(super) fn extract_rad_lane<const UNIT: bool, const LOCKED: bool>(
    r: [f64; 9],
    e: f64,
) -> ([f64; 3], bool) {
    let [r_ii, r_ij, r_ik, r_ji, r_jj, r_jk, r_ki, r_kj, r_kk] = r;
    let cos_b = (r_ii * r_ii + r_ij * r_ij).sqrt();
    let (yb, xb) = (e * r_ik, cos_b);
    let locked = cos_b < GIMBAL_LOCK_EPSILON;
    let (ya, xa) = (-e * r_jk, r_kk);
    let ra = (ya * ya + xa * xa).sqrt();
    // ra = 0 only in gimbal lock (where, without LOCKED, nothing is used).
    let (sa, ca) = if LOCKED {
        let some = ra > 0.0;
        let inv = 1.0 / select(some, ra, 1.0);
        (select(some, ya * inv, 0.0), select(some, xa * inv, 1.0))
    } else {
        let inv = 1.0 / ra;
        (ya * inv, xa * inv)
    };
    let yc = e * (ca * r_ji + e * sa * r_ki);
    let xc = ca * r_jj + e * sa * r_kj;
    let [ya, xa, yc, xc] = locked_pairs::<LOCKED>(locked, [ya, xa, yc, xc], e, r_kj, r_jj);
    ([atan2_if::<UNIT>(ya, xa), atan2_if::<UNIT>(yb, xb), atan2_if::<UNIT>(yc, xc)], locked)
}

/// The first and third angles' `atan2` pairs `[y_a, x_a, y_c, x_c]`, with
/// `LOCKED` those of gimbal lock where `locked` (the whole turn about the
/// first axis, `(e·r_kj, r_jj)`, none about the third).
#[inline(always)]
pub(super) fn locked_pairs<const LOCKED: bool>(
    locked: bool,
    pairs: [f64; 4],
    e: f64,
    r_kj: f64,
    r_jj: f64,
) -> [f64; 4] {
    if !LOCKED {
        return pairs;
    }
    let [ya, xa, yc, xc] = pairs;
    [
        select(locked, e * r_kj, ya),
        select(locked, r_jj, xa),
        select(locked, 0.0, yc),
        select(locked, 1.0, xc),
    ]
}

/// The matrix of the quaternion `q` scaled by `n = |q|²`, with `n` and
/// whether `n` is positive and finite (otherwise, with `SAFE`, the
/// identity and 1; without, whatever the formula gives: the lane pass
/// sends such a lane to the exact path): glam's `DMat3::from_quat`
/// formula without the normalisation (`n·R`, each element a quadratic form
/// of `q`: no square root, no division), row-major, in the quaternion's
/// axes. The mixes' matrix step: [`extract_rad_mix`] needs no more.
#[inline(always)]
pub(super) fn quat_matrix_scaled<const SAFE: bool>(q: [f64; 4]) -> ([f64; 9], f64, bool) {
    let [x, y, z, w] = q;
    let (xx, yy, zz, ww) = (x * x, y * y, z * z, w * w);
    let n = (xx + yy) + (zz + ww);
    let ok = n > 0.0 && n.is_finite();
    let (x2, y2, z2) = (x + x, y + y, z + z);
    let (xy, xz, yz) = (x * y2, x * z2, y * z2);
    let (wx, wy, wz) = (w * x2, w * y2, w * z2);
    let m = [
        (ww + xx) - (yy + zz),
        xy - wz,
        xz + wy,
        xy + wz,
        (ww + yy) - (xx + zz),
        yz - wx,
        xz - wy,
        yz + wx,
        (ww + zz) - (xx + yy),
    ];
    if !SAFE {
        return (m, n, ok);
    }
    const I: [f64; 9] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    (std::array::from_fn(|k| select(ok, m[k], I[k])), select(ok, n, 1.0), ok)
}

/// [`extract_rad_lane`] of `n·R` ([`quat_matrix_scaled`]: `R` a rotation
/// matrix in its order's axes, `n > 0`): the same angles within rounding,
/// with one square root and one division fewer. Every `atan2` takes a pair
/// whose scale does not matter, so `n` stays in; the gimbal-lock test
/// compares `cos b` with `n ·` [`GIMBAL_LOCK_EPSILON`]; and the third
/// angle's pair, linear in the first angle's sine and cosine, is made from
/// that angle's pair `(y_a, x_a)` unnormalised (both of its parts scale
/// by `|(y_a, x_a)|`, which changes no `atan2`). Its `atan2`s are
/// [`atan2_mix`] (pairs of magnitude at least about `1e-12 n`).
///
/// Without `LOCKED`, the angles of a matrix in gimbal lock are left as
/// they come (the lane pass sends such a lane to the exact path, which
/// takes `LOCKED`): the same angles elsewhere, with six selects fewer.
#[inline(always)]
pub(super) fn extract_rad_mix<const LOCKED: bool, const FAST: bool>(
    r: [f64; 9],
    n: f64,
    e: f64,
) -> ([f64; 3], bool) {
    let [r_ii, r_ij, r_ik, r_ji, r_jj, r_jk, r_ki, r_kj, r_kk] = r;
    let cos_b = (r_ii * r_ii + r_ij * r_ij).sqrt();
    let (yb, xb) = (e * r_ik, cos_b);
    let locked = cos_b < GIMBAL_LOCK_EPSILON * n;
    let (ya, xa) = (-e * r_jk, r_kk);
    // (0, 0) only where locked (cos b = |(y_a, x_a)| / n): then unused.
    let (sa, ca) = if LOCKED {
        let some = (ya != 0.0) | (xa != 0.0);
        (select(some, ya, 0.0), select(some, xa, 1.0))
    } else {
        (ya, xa)
    };
    let yc = e * (ca * r_ji + e * sa * r_ki);
    let xc = ca * r_jj + e * sa * r_kj;
    let [ya, xa, yc, xc] = locked_pairs::<LOCKED>(locked, [ya, xa, yc, xc], e, r_kj, r_jj);
    let atan2 = atan2_mix::<FAST, true>;
    ([atan2(ya, xa), atan2(yb, xb), atan2(yc, xc)], locked)
}

/// [`atan2_unit`] with `UNIT`, else [`atan2`](fn@atan2) (a function rather than a
/// closure, so that it is compiled with its caller's target features).
#[inline(always)]
pub(super) fn atan2_if<const UNIT: bool>(y: f64, x: f64) -> f64 {
    if UNIT { atan2_unit(y, x) } else { atan2(y, x) }
}
