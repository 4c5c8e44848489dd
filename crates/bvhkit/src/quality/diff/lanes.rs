//! The kernels of [`super::Plan::measure`] on SIMD lanes: over a block of
//! [`FRAME_LANES`] frames (lane `l` frame `l`, laid out so as the run's
//! positions are read, [`Points4`]), each pair's position errors with
//! each frame's sum of them ([`errors`]), each frame's Procrustes input
//! sums ([`fit_sums`]) and its sum of residuals ([`residuals`]); the
//! Procrustes fits' 4×4 eigenproblems of many frames (those the fast path,
//! `horn.rs`, leaves: [`jacobi4`], a lane per frame, refilled as each
//! frame's sweeps end), and the rotation
//! error over a chunk of frames (lane `k` a frame): each side's channel
//! rotation as a matrix from the sines and cosines FK took, then the
//! geodesic angle between them ([`pair_angles`]).
//!
//! Each kernel is the scalar code it replaces written over slices (glam's
//! `DVec3::length` and `DMat3 * DVec3`, `FitInput::of`'s sums, FK's
//! `apply_axis_rotation`, term for term and in their order; a frame's sums
//! over its pairs run along its lane in pair order), compiled by [`simd_kernel!`] without FMA:
//! every lane rounds as the scalar code did, so the bits are the same.
//! The angle's `atan2` is [`crate::rotation::atan2`] (fdlibm's, within
//! 2 ulp, the same bits on every SIMD level), not the system library's.

use glam::DVec3;

use crate::rotation::{Axis, atan2};
use crate::simd::{Simd, simd_kernel};

/// Frames a block of the position errors and the Procrustes sums and
/// residuals holds: lane `l` of every array is the block's frame `l`.
pub(super) const FRAME_LANES: usize = 4;

/// A value per frame of a block.
pub(super) type F4 = [f64; FRAME_LANES];

/// A block's points: per point, its three coordinates, each a lane per
/// frame (`x[p][l]` the x of point `p` in frame `l`).
#[derive(Default)]
pub(super) struct Points4 {
    pub(super) x: Vec<F4>,
    pub(super) y: Vec<F4>,
    pub(super) z: Vec<F4>,
}

impl Points4 {
    /// `n` points (old values left, new ones 0).
    pub(super) fn resize(&mut self, n: usize) {
        for c in [&mut self.x, &mut self.y, &mut self.z] {
            c.resize(n, [0.0; FRAME_LANES]);
        }
    }

    /// Lane `l` of the points, from the first, by the points of `v` (as
    /// many as there are, up to [`Points4::len`]).
    #[inline(always)]
    pub(super) fn fill(&mut self, l: usize, v: impl Iterator<Item = DVec3>) {
        let Points4 { x, y, z } = self;
        for (((x, y), z), v) in x.iter_mut().zip(y.iter_mut()).zip(z.iter_mut()).zip(v) {
            (x[l], y[l], z[l]) = (v.x, v.y, v.z);
        }
    }

    pub(super) fn len(&self) -> usize {
        self.x.len()
    }

    fn slices(&self) -> [&[F4]; 3] {
        [&self.x, &self.y, &self.z]
    }
}

/// `sqrt(x² + y² + z²)` as `DVec3::length` adds it.
#[inline(always)]
fn norm(x: f64, y: f64, z: f64) -> f64 {
    (x * x + y * y + z * z).sqrt()
}

/// What [`errors`] gives of a block: each frame's sum of its pairs'
/// errors (in pair order, from 0), and whether its points of A and of B
/// differ anywhere (a coordinate `!=`, as `Vec`'s `!=` compares: a NaN
/// differs).
pub(super) struct Errors {
    pub(super) sum: F4,
    pub(super) differ: [bool; FRAME_LANES],
}

simd_kernel! {
    /// `e[p] = |ya[p] - xb[p]|` and `er[p] = |(ya[p] - ra) - (xb[p] - rb)|`
    /// in each lane (`roots` = `ra` then `rb`, three lanes each).
    fn errors_kernel(
        simd: Simd,
        ya: [&[F4]; 3],
        xb: [&[F4]; 3],
        roots: [F4; 6],
        e: &mut [F4],
        er: &mut [F4],
    ) -> Errors {
        const L: usize = FRAME_LANES;
        let n = e.len();
        let (yx, yy, yz) = (&ya[0][..n], &ya[1][..n], &ya[2][..n]);
        let (xx, xy, xz) = (&xb[0][..n], &xb[1][..n], &xb[2][..n]);
        let er = &mut er[..n];
        let [rax, ray, raz, rbx, rby, rbz] = roots;
        let mut sum = [0.0; L];
        let mut differ = [false; L];
        for p in 0..n {
            for l in 0..L {
                let (ax, ay, az) = (yx[p][l], yy[p][l], yz[p][l]);
                let (bx, by, bz) = (xx[p][l], xy[p][l], xz[p][l]);
                e[p][l] = norm(ax - bx, ay - by, az - bz);
                er[p][l] = norm(
                    (ax - rax[l]) - (bx - rbx[l]),
                    (ay - ray[l]) - (by - rby[l]),
                    (az - raz[l]) - (bz - rbz[l]),
                );
                sum[l] += e[p][l];
                differ[l] |= (ax != bx) | (ay != by) | (az != bz);
            }
        }
        Errors { sum, differ }
    }
}

/// Each pair's error and root-aligned error in each frame of a block: A's
/// points `ya`, B's `xb`, the roots `ra` and `rb` (per lane), into `e` and
/// `er`; each frame's sum of errors, and whether its points differ.
pub(super) fn errors(
    ya: &Points4,
    xb: &Points4,
    (ra, rb): ([F4; 3], [F4; 3]),
    e: &mut Vec<F4>,
    er: &mut Vec<F4>,
) -> Errors {
    let n = ya.len();
    e.resize(n, [0.0; FRAME_LANES]);
    er.resize(n, [0.0; FRAME_LANES]);
    let roots = [ra[0], ra[1], ra[2], rb[0], rb[1], rb[2]];
    errors_kernel(Simd::best(), ya.slices(), xb.slices(), roots, e, er)
}

/// The sums of a Procrustes fit's input in each frame of a block
/// (`FitInput::of`'s, term for term): the centroids, the spreads about
/// them, the cross-covariance by rows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct FitSums {
    pub(super) mx: [F4; 3],
    pub(super) my: [F4; 3],
    pub(super) spread: F4,
    pub(super) spread_y: F4,
    pub(super) s: [[F4; 3]; 3],
}

simd_kernel! {
    /// [`fit_sums`] on the given SIMD build.
    fn fit_sums_kernel(simd: Simd, x: [&[F4]; 3], y: [&[F4]; 3]) -> FitSums {
        const L: usize = FRAME_LANES;
        let n = x[0].len();
        let (x, y) = ([&x[0][..n], &x[1][..n], &x[2][..n]], [&y[0][..n], &y[1][..n], &y[2][..n]]);
        let count = n.max(1) as f64;
        // The centroids: from 0, point by point, over the count.
        let mut mx = [[0.0; L]; 3];
        let mut my = [[0.0; L]; 3];
        for p in 0..n {
            for c in 0..3 {
                for l in 0..L {
                    mx[c][l] += x[c][p][l];
                    my[c][l] += y[c][p][l];
                }
            }
        }
        for c in 0..3 {
            for l in 0..L {
                mx[c][l] /= count;
                my[c][l] /= count;
            }
        }
        let mut spread = [0.0; L];
        let mut spread_y = [0.0; L];
        let mut s = [[[0.0; L]; 3]; 3];
        for p in 0..n {
            let mut a = [[0.0; L]; 3];
            let mut b = [[0.0; L]; 3];
            for c in 0..3 {
                for l in 0..L {
                    a[c][l] = x[c][p][l] - mx[c][l];
                    b[c][l] = y[c][p][l] - my[c][l];
                }
            }
            for l in 0..L {
                spread[l] += a[0][l] * a[0][l] + a[1][l] * a[1][l] + a[2][l] * a[2][l];
                spread_y[l] += b[0][l] * b[0][l] + b[1][l] * b[1][l] + b[2][l] * b[2][l];
            }
            for r in 0..3 {
                for c in 0..3 {
                    for l in 0..L {
                        s[r][c][l] += a[r][l] * b[c][l];
                    }
                }
            }
        }
        FitSums { mx, my, spread, spread_y, s }
    }
}

/// The sums of the Procrustes fit of `x` onto `y` in each frame of a block.
pub(super) fn fit_sums(x: &Points4, y: &Points4) -> FitSums {
    fit_sums_kernel(Simd::best(), x.slices(), y.slices())
}

/// A similarity transform per lane: the rotation by columns (`m[3 * c +
/// r]`), the scale, the translation.
#[derive(Clone, Copy, Default)]
pub(super) struct Fits {
    pub(super) m: [F4; 9],
    pub(super) scale: F4,
    pub(super) t: [F4; 3],
}

impl Fits {
    /// Lane `l`'s transform.
    pub(super) fn set(&mut self, l: usize, fit: &super::Similarity) {
        for (k, v) in fit.rotation.to_cols_array().into_iter().enumerate() {
            self.m[k][l] = v;
        }
        self.scale[l] = fit.scale;
        for (k, v) in fit.translation.to_array().into_iter().enumerate() {
            self.t[k][l] = v;
        }
    }
}

simd_kernel! {
    /// [`residuals`] on the given SIMD build.
    fn residuals_kernel(simd: Simd, fit: &Fits, x: [&[F4]; 3], y: [&[F4]; 3]) -> F4 {
        const L: usize = FRAME_LANES;
        let n = x[0].len();
        let (xx, xy, xz) = (&x[0][..n], &x[1][..n], &x[2][..n]);
        let (yx, yy, yz) = (&y[0][..n], &y[1][..n], &y[2][..n]);
        let Fits { m, scale, t } = *fit;
        // As `Sum` of f64 starts (the same sum: every term is at least +0
        // or NaN).
        let mut sum = [-0.0; L];
        for p in 0..n {
            for l in 0..L {
                let (a, b, c) = (xx[p][l], xy[p][l], xz[p][l]);
                let vx = m[0][l] * a + m[3][l] * b + m[6][l] * c;
                let vy = m[1][l] * a + m[4][l] * b + m[7][l] * c;
                let vz = m[2][l] * a + m[5][l] * b + m[8][l] * c;
                sum[l] += norm(
                    (scale[l] * vx + t[0][l]) - yx[p][l],
                    (scale[l] * vy + t[1][l]) - yy[p][l],
                    (scale[l] * vz + t[2][l]) - yz[p][l],
                );
            }
        }
        sum
    }
}

/// In each frame of a block, the sum over its points (in their order) of
/// `|fit.apply(x[p]) - y[p]|` with the frame's fit.
pub(super) fn residuals(fit: &Fits, x: &Points4, y: &Points4) -> F4 {
    residuals_kernel(Simd::best(), fit, x.slices(), y.slices())
}

/// Frames of a chunk of [`pair_angles`]: its lanes, as many as FK's
/// ([`crate::FkLanes::LANES`]), so that a chunk's sines and cosines are
/// one group of FK's as it left them.
pub(super) const ROT_LANES: usize = crate::FkLanes::LANES;

/// A lane per frame.
type Lanes = [f64; ROT_LANES];

/// A rotation matrix per lane, column-major (`m[3 * c + r][k]` the entry
/// of row `r`, column `c` in lane `k`).
type MatLanes = [Lanes; 9];

/// One side of [`pair_angles`]: the axes of the pair's channels with each
/// one's slot, and the sines and cosines of a chunk of frames
/// ([`ROT_LANES`] per slot, slot after slot).
pub(super) type Side<'a> = (&'a [(Axis, usize)], &'a [f64], &'a [f64]);

/// The geodesic angle (degrees) of one pair in each frame of a chunk:
/// each side's channel rotation turned by its channels in their order,
/// then the geodesic angle of A's against B's (`geodesic_deg`: `atan2(|s|,
/// tr m - 1)` of `m = aᵀ b` and its skew part `s`), into `out` (its first
/// `out.len()` lanes; the others are computed and dropped).
pub(super) fn pair_angles(a: Side<'_>, b: Side<'_>, out: &mut [f64]) {
    pair_angles_kernel(Simd::best(), a, b, out);
}

simd_kernel! {
    /// [`pair_angles`] on the given SIMD build.
    fn pair_angles_kernel(simd: Simd, a: Side<'_>, b: Side<'_>, out: &mut [f64]) {
        const L: usize = ROT_LANES;
        let (a, b) = (channel_matrices(a), channel_matrices(b));
        // The columns' dot products, lane by lane, as geodesic_deg adds them.
        let dot = |i: usize, j: usize| -> Lanes {
            let mut d = [0.0; L];
            for k in 0..L {
                d[k] = a[3 * i][k] * b[3 * j][k]
                    + a[3 * i + 1][k] * b[3 * j + 1][k]
                    + a[3 * i + 2][k] * b[3 * j + 2][k];
            }
            d
        };
        let (d00, d11, d22) = (dot(0, 0), dot(1, 1), dot(2, 2));
        let (d21, d12, d02, d20, d10, d01) =
            (dot(2, 1), dot(1, 2), dot(0, 2), dot(2, 0), dot(1, 0), dot(0, 1));
        let mut deg = [0.0; L];
        for k in 0..L {
            let tr = d00[k] + d11[k] + d22[k];
            let s = norm(d21[k] - d12[k], d02[k] - d20[k], d10[k] - d01[k]);
            deg[k] = atan2(s, tr - 1.0).to_degrees();
        }
        let n = out.len();
        out.copy_from_slice(&deg[..n]);
    }
}

/// A side's channel rotation in each lane: the elementary rotation of its
/// first channel, then turned by each further channel in its order as
/// FK's `apply_axis_rotation` turns a matrix (columns `a`, `b` of the
/// pair the axis turns, `a' = a·cos + b·sin`, `b' = b·cos - a·sin`; for Y
/// the pair is (z, x)). Where a side has no channel, the identity.
#[inline(always)]
fn channel_matrices((axes, sin, cos): Side<'_>) -> MatLanes {
    const L: usize = ROT_LANES;
    let lanes = |v: &[f64], slot: usize| -> Lanes {
        v[slot * L..][..L].try_into().expect("a slot's lanes")
    };
    let Some((&(first, slot), rest)) = axes.split_first() else {
        let mut r: MatLanes = [[0.0; L]; 9];
        for d in [0, 4, 8] {
            r[d] = [1.0; L];
        }
        return r;
    };
    // Each axis's pair of columns as constants (a match, not an index
    // computed at run time), so that the matrix's lanes stay in registers.
    let (s, c) = (lanes(sin, slot), lanes(cos, slot));
    let mut r = match first {
        Axis::X => first_turn::<1, 2>(&s, &c),
        Axis::Y => first_turn::<2, 0>(&s, &c),
        Axis::Z => first_turn::<0, 1>(&s, &c),
    };
    for &(axis, slot) in rest {
        let (s, c) = (lanes(sin, slot), lanes(cos, slot));
        match axis {
            Axis::X => turn::<1, 2>(&mut r, &s, &c),
            Axis::Y => turn::<2, 0>(&mut r, &s, &c),
            Axis::Z => turn::<0, 1>(&mut r, &s, &c),
        }
    }
    r
}

/// The elementary rotation that turns columns `A` and `B` (`a' = (cos,
/// sin)` and `b' = (-sin, cos)` in rows `A` and `B`), the third column
/// the identity's.
#[inline(always)]
fn first_turn<const A: usize, const B: usize>(s: &Lanes, c: &Lanes) -> MatLanes {
    const L: usize = ROT_LANES;
    let mut r: MatLanes = [[0.0; L]; 9];
    r[4 * (3 - A - B)] = [1.0; L];
    for k in 0..L {
        r[4 * A][k] = c[k];
        r[3 * A + B][k] = s[k];
        r[3 * B + A][k] = -s[k];
        r[4 * B][k] = c[k];
    }
    r
}

/// Columns `A` and `B` of `r` turned: `a' = a·cos + b·sin`, `b' = b·cos -
/// a·sin` (FK's `apply_axis_rotation`).
#[inline(always)]
fn turn<const A: usize, const B: usize>(r: &mut MatLanes, s: &Lanes, c: &Lanes) {
    for i in 0..3 {
        let (x, y) = (r[3 * A + i], r[3 * B + i]);
        for k in 0..ROT_LANES {
            r[3 * A + i][k] = x[k] * c[k] + y[k] * s[k];
            r[3 * B + i][k] = y[k] * c[k] - x[k] * s[k];
        }
    }
}

/// The geodesic angle (degrees, 0 to 180) between two rotation matrices
/// `a` and `b` (column-major): of `m = aᵀ b`, whose entries are the dot
/// products of `a`'s and `b`'s columns, `atan2(|s|, tr m - 1)` with `s`
/// the skew part `(m₂₁ - m₁₂, m₀₂ - m₂₀, m₁₀ - m₀₁)`: `|s| = 2 sin θ`,
/// `tr m - 1 = 2 cos θ`. Accurate to a few ulp of π at every angle (no
/// `acos` of a trace near 1); exactly 0 where `a == b` (each skew term
/// is then the difference of two equal products, added in one order).
/// The scalar form of [`pair_angles`]' lanes, the same bits.
#[cfg(test)]
pub(super) fn geodesic_deg(a: &[f64; 9], b: &[f64; 9]) -> f64 {
    let dot = |i: usize, j: usize| {
        a[3 * i] * b[3 * j] + a[3 * i + 1] * b[3 * j + 1] + a[3 * i + 2] * b[3 * j + 2]
    };
    let tr = dot(0, 0) + dot(1, 1) + dot(2, 2);
    let s = norm(dot(2, 1) - dot(1, 2), dot(0, 2) - dot(2, 0), dot(1, 0) - dot(0, 1));
    atan2(s, tr - 1.0).to_degrees()
}

/// Lanes of [`jacobi4`]'s sweeps.
pub(super) const FIT_LANES: usize = 8;

/// A symmetric 4×4 matrix's eigenvalues and eigenvectors (columns).
pub(super) type Eigen = ([f64; 4], [[f64; 4]; 4]);

/// [`super::jacobi4`] of every matrix of `mats` into `out`, [`FIT_LANES`]
/// at a time on SIMD lanes: each lane runs one matrix's scalar sweeps and
/// rotations, masked (a rotation whose pivot is 0 leaves the lane as it
/// is), and takes the next matrix as soon as its own sweeps end, so that a
/// matrix that needs many sweeps holds one lane, not all. Each lane's
/// operations are the scalar function's, in its order: the bits are the
/// same.
pub(super) fn jacobi4(mats: &[[[f64; 4]; 4]], out: &mut Vec<Eigen>) {
    out.clear();
    out.resize(mats.len(), ([0.0; 4], [[0.0; 4]; 4]));
    jacobi4_kernel(Simd::best(), mats, out);
}

simd_kernel! {
    /// [`jacobi4`] into `out` (as long as `mats`).
    fn jacobi4_kernel(simd: Simd, mats: &[[[f64; 4]; 4]], out: &mut [Eigen]) {
        jacobi4_lanes(mats, out)
    }
}

/// A lane's values of a 4×4 matrix, `m[i][j][lane]`.
type Mat4Lanes = [[[f64; FIT_LANES]; 4]; 4];

/// Columns `p` and `q` of every row of `m` turned by each lane's Jacobi
/// rotation (`c`, `s`), in lanes where `on` (the others kept): the scalar
/// `jacobi4`'s column update of both the matrix and its eigenvectors.
#[inline(always)]
fn rotate_columns(
    m: &mut Mat4Lanes,
    p: usize,
    q: usize,
    c: &[f64; FIT_LANES],
    s: &[f64; FIT_LANES],
    on: &[bool; FIT_LANES],
) {
    for row in m.iter_mut() {
        for k in 0..FIT_LANES {
            let (mp, mq) = (row[p][k], row[q][k]);
            let np = c[k] * mp - s[k] * mq;
            let nq = s[k] * mp + c[k] * mq;
            row[p][k] = if on[k] { np } else { mp };
            row[q][k] = if on[k] { nq } else { mq };
        }
    }
}

/// [`jacobi4_kernel`]'s body: `super::jacobi4` term for term, per lane
/// (its loops over indices written as the scalar code's).
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn jacobi4_lanes(mats: &[[[f64; 4]; 4]], out: &mut [Eigen]) {
    const L: usize = FIT_LANES;
    let mut a: Mat4Lanes = [[[0.0; L]; 4]; 4];
    let mut v: Mat4Lanes = [[[0.0; L]; 4]; 4];
    // Per lane: its matrix (`None`: no more), its sweeps so far.
    let mut which: [Option<usize>; L] = [None; L];
    let mut sweeps = [0u32; L];
    let mut next = 0;
    // Lane `k` takes the next matrix, or zeros when none is left.
    let mut load =
        |k: usize, a: &mut Mat4Lanes, v: &mut Mat4Lanes, which: &mut [Option<usize>; L]| {
            let m = mats.get(next);
            for i in 0..4 {
                for j in 0..4 {
                    a[i][j][k] = m.map_or(0.0, |m| m[i][j]);
                    v[i][j][k] = if i == j { 1.0 } else { 0.0 };
                }
            }
            which[k] = m.map(|_| next);
            next += usize::from(m.is_some());
        };
    for k in 0..L {
        load(k, &mut a, &mut v, &mut which);
    }
    loop {
        // The off-diagonal and diagonal sums in the scalar order.
        let mut off = [0.0f64; L];
        let mut diag = [0.0f64; L];
        for i in 0..4 {
            for j in 0..4 {
                if j != i {
                    for k in 0..L {
                        off[k] += a[i][j][k] * a[i][j][k];
                    }
                }
            }
        }
        for i in 0..4 {
            for k in 0..L {
                diag[k] += a[i][i][k] * a[i][i][k];
            }
        }
        // Lanes whose sweeps end: 64 sweeps made, or converged
        // (`diag.max(MIN_POSITIVE)`: a NaN `diag` gives MIN_POSITIVE).
        let mut ended = false;
        let mut live = false;
        for k in 0..L {
            let Some(at) = which[k] else { continue };
            let d = if diag[k] > f64::MIN_POSITIVE { diag[k] } else { f64::MIN_POSITIVE };
            if sweeps[k] == 64 || off[k] <= 1e-32 * d || off[k] == 0.0 {
                let vectors = [0, 1, 2, 3].map(|i| [0, 1, 2, 3].map(|j| v[i][j][k]));
                out[at] = ([a[0][0][k], a[1][1][k], a[2][2][k], a[3][3][k]], vectors);
                load(k, &mut a, &mut v, &mut which);
                sweeps[k] = 0;
                ended = true;
            } else {
                live = true;
            }
        }
        if ended {
            // The new matrices' own first test.
            continue;
        }
        if !live {
            return;
        }
        for p in 0..3 {
            for q in p + 1..4 {
                let mut on = [false; L];
                let (mut c, mut s) = ([1.0f64; L], [0.0f64; L]);
                for k in 0..L {
                    let apq = a[p][q][k];
                    on[k] = apq != 0.0;
                    let theta = (a[q][q][k] - a[p][p][k]) / (2.0 * apq);
                    // `theta.signum()`.
                    let sign = if theta.is_nan() { f64::NAN } else { 1.0f64.copysign(theta) };
                    let t = sign / (theta.abs() + (theta * theta + 1.0).sqrt());
                    let t = if theta == 0.0 { 1.0 } else { t };
                    c[k] = 1.0 / (t * t + 1.0).sqrt();
                    s[k] = t * c[k];
                }
                rotate_columns(&mut a, p, q, &c, &s, &on);
                let (rp, rq) = (a[p], a[q]);
                for j in 0..4 {
                    for k in 0..L {
                        let np = c[k] * rp[j][k] - s[k] * rq[j][k];
                        let nq = s[k] * rp[j][k] + c[k] * rq[j][k];
                        a[p][j][k] = if on[k] { np } else { rp[j][k] };
                        a[q][j][k] = if on[k] { nq } else { rq[j][k] };
                    }
                }
                rotate_columns(&mut v, p, q, &c, &s, &on);
            }
        }
        for s in &mut sweeps {
            *s += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::{DMat3, DQuat};

    use super::*;
    use crate::rotation::{apply_axis_rotation, sin_cos_deg};

    /// Values with zeros of both signs, NaN, infinities and ordinary numbers.
    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|i| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let u = (s >> 11) as f64 / (1u64 << 53) as f64;
                match i % 23 {
                    5 => 0.0,
                    7 => -0.0,
                    11 if seed.is_multiple_of(2) => f64::NAN,
                    13 => f64::INFINITY,
                    _ => (u - 0.5) * 400.0,
                }
            })
            .collect()
    }

    /// Points as three coordinate arrays.
    pub(in crate::quality::diff) struct Points {
        pub(in crate::quality::diff) x: Vec<f64>,
        pub(in crate::quality::diff) y: Vec<f64>,
        pub(in crate::quality::diff) z: Vec<f64>,
    }

    impl Points {
        pub(in crate::quality::diff) fn get(&self, p: usize) -> DVec3 {
            DVec3::new(self.x[p], self.y[p], self.z[p])
        }
    }

    fn points(n: usize, seed: u64) -> Points {
        Points { x: values(n, seed), y: values(n, seed + 2), z: values(n, seed + 4) }
    }

    /// Frame `l` of the block: `frames[l]`.
    fn block(frames: &[Points]) -> Points4 {
        let n = frames[0].x.len();
        let mut b = Points4::default();
        b.resize(n);
        for (l, f) in frames.iter().enumerate() {
            b.fill(l, (0..n).map(|p| f.get(p)));
        }
        b
    }

    fn same_bits(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn the_lanes_give_the_scalar_bits() {
        for simd in Simd::available() {
            for n in [0, 1, 3, 7, 8, 9, 65, 130] {
                // Frames of A and of B: NaN, infinities and zeros in some,
                // finite in others, and a frame whose points are A's.
                let mut ya: Vec<Points> = (0..4).map(|l| points(n, 1 + 10 * l)).collect();
                let mut xb: Vec<Points> = (0..4).map(|l| points(n, 7 + 10 * l)).collect();
                let finite = |p: &Points| {
                    let f = |v: &[f64]| {
                        v.iter().map(|a| if a.is_finite() { *a } else { 2.5 }).collect()
                    };
                    Points { x: f(&p.x), y: f(&p.y), z: f(&p.z) }
                };
                ya[1] = finite(&ya[1]);
                xb[1] = finite(&xb[1]);
                ya[2] = finite(&ya[2]);
                xb[2] = finite(&ya[2]);
                let (a4, b4) = (block(&ya), block(&xb));
                let ra: Vec<DVec3> =
                    (0..4).map(|l| DVec3::new(1.5 + l as f64, -2.0, 0.25)).collect();
                let rb: Vec<DVec3> =
                    (0..4).map(|l| DVec3::new(-0.0, 3.0 * l as f64, 1e-3)).collect();
                let lanes = |v: &[DVec3], c: usize| -> F4 { [0, 1, 2, 3].map(|l| v[l][c]) };
                let roots = [0, 1, 2].map(|c| lanes(&ra, c)).into_iter();
                let roots: Vec<F4> = roots.chain([0, 1, 2].map(|c| lanes(&rb, c))).collect();
                let roots: [F4; 6] = roots.try_into().unwrap();
                let (mut e, mut er) = (vec![[0.0; 4]; n], vec![[0.0; 4]; n]);
                let got = errors_kernel(simd, a4.slices(), b4.slices(), roots, &mut e, &mut er);
                for l in 0..4 {
                    let mut sum = 0.0;
                    for p in 0..n {
                        let (y, x) = (ya[l].get(p), xb[l].get(p));
                        let want = (y - x).length();
                        assert!(same_bits(e[p][l], want), "{simd:?} {p}");
                        let root = ((y - ra[l]) - (x - rb[l])).length();
                        assert!(same_bits(er[p][l], root), "{simd:?} {p}");
                        sum += want;
                    }
                    assert!(same_bits(got.sum[l], sum), "{simd:?} {l}");
                    let differ = ya[l].x != xb[l].x || ya[l].y != xb[l].y || ya[l].z != xb[l].z;
                    assert_eq!(got.differ[l], differ, "{simd:?} {n} {l}");
                }
                if n > 0 {
                    assert!(!got.differ[2] && got.differ[1], "{simd:?} {n}");
                }
                // The fit's sums, lane by lane, against `FitInput::of`.
                let sums = fit_sums_kernel(simd, b4.slices(), a4.slices());
                for l in 0..4 {
                    let want = super::super::FitInput::of(n, |p| xb[l].get(p), |p| ya[l].get(p));
                    for c in 0..3 {
                        assert!(same_bits(sums.mx[c][l], want.mx[c]), "{simd:?} {l} {c}");
                        assert!(same_bits(sums.my[c][l], want.my[c]), "{simd:?} {l} {c}");
                        for d in 0..3 {
                            assert!(same_bits(sums.s[c][d][l], want.s[c][d]), "{simd:?} {l}");
                        }
                    }
                    assert!(same_bits(sums.spread[l], want.spread), "{simd:?} {l}");
                    assert!(same_bits(sums.spread_y[l], want.spread_y), "{simd:?} {l}");
                }
                // A fit per lane, each frame's residuals summed as `Sum`.
                let mut fits = Fits::default();
                let each: Vec<super::super::Similarity> = (0..4)
                    .map(|l| super::super::Similarity {
                        rotation: DMat3::from_quat(DQuat::from_euler(
                            glam::EulerRot::ZXY,
                            0.3 * l as f64,
                            -1.2,
                            2.0,
                        )),
                        scale: 0.83 + l as f64,
                        translation: DVec3::new(0.1, -7.0 * l as f64, 3.5),
                    })
                    .collect();
                for (l, fit) in each.iter().enumerate() {
                    fits.set(l, fit);
                }
                let got = residuals_kernel(simd, &fits, b4.slices(), a4.slices());
                for (l, fit) in each.iter().enumerate() {
                    let want: f64 =
                        (0..n).map(|p| (fit.apply(xb[l].get(p)) - ya[l].get(p)).length()).sum();
                    assert!(same_bits(got[l], want), "{simd:?} {n} {l}");
                }
                // The angle between two channel rotations of three
                // channels each (an axis twice in one), chunk by chunk.
                let angles: Vec<Vec<f64>> = (0..6).map(|c| values(n, 20 + c)).collect();
                let sc: Vec<(Vec<f64>, Vec<f64>)> =
                    angles.iter().map(|a| a.iter().map(|v| sin_cos_deg(*v)).unzip()).collect();
                let orders = [[Axis::Z, Axis::X, Axis::Y], [Axis::Y, Axis::Y, Axis::X]];
                let slots: Vec<Vec<(Axis, usize)>> = orders
                    .iter()
                    .map(|axes| axes.iter().enumerate().map(|(i, &x)| (x, i)).collect())
                    .collect();
                let mut deg = vec![0.0; n];
                for c0 in (0..n).step_by(ROT_LANES) {
                    let m = ROT_LANES.min(n - c0);
                    let chunk = |side: usize, which: usize| -> Vec<f64> {
                        let mut v = vec![0.5; 3 * ROT_LANES];
                        for i in 0..3 {
                            let from =
                                if which == 0 { &sc[side * 3 + i].0 } else { &sc[side * 3 + i].1 };
                            v[i * ROT_LANES..][..m].copy_from_slice(&from[c0..c0 + m]);
                        }
                        v
                    };
                    let (sa, ca, sb, cb) = (chunk(0, 0), chunk(0, 1), chunk(1, 0), chunk(1, 1));
                    let (a, b) =
                        ((&slots[0][..], &sa[..], &ca[..]), (&slots[1][..], &sb[..], &cb[..]));
                    pair_angles_kernel(simd, a, b, &mut deg[c0..c0 + m]);
                }
                for (k, &got) in deg.iter().enumerate() {
                    let want: Vec<DMat3> = orders
                        .iter()
                        .enumerate()
                        .map(|(side, axes)| {
                            let mut r = DMat3::IDENTITY;
                            for (i, &axis) in axes.iter().enumerate() {
                                let (s, c) = (sc[side * 3 + i].0[k], sc[side * 3 + i].1[k]);
                                apply_axis_rotation(&mut r, axis, s, c);
                            }
                            r
                        })
                        .collect();
                    let (a, b) = (want[0].to_cols_array(), want[1].to_cols_array());
                    assert!(same_bits(got, geodesic_deg(&a, &b)), "{simd:?} {k}");
                    // The same rotation: exactly 0.
                    if a.iter().all(|v| v.is_finite()) {
                        assert_eq!(geodesic_deg(&a, &a).to_bits(), 0, "{k}");
                    }
                }
            }
        }
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn the_jacobi_lanes_give_the_scalar_bits() {
        // Symmetric matrices: random ones, some entries 0 (pivots that
        // skip), diagonal ones (no sweep), a repeated eigenvalue, huge and
        // tiny scales, NaN and infinity, and Horn's matrices of point sets.
        let mut mats: Vec<[[f64; 4]; 4]> = Vec::new();
        for seed in 0..40u64 {
            let v = values(10, 100 + seed);
            let mut m = [[0.0; 4]; 4];
            let mut it = v.iter();
            for i in 0..4 {
                for j in i..4 {
                    let x = *it.next().unwrap_or(&1.0);
                    let x = match seed % 5 {
                        // Finite values only, some zeros.
                        0 | 1 if !x.is_finite() => 0.0,
                        2 => x * 1e-150,
                        3 => x * 1e150,
                        _ => x,
                    };
                    (m[i][j], m[j][i]) = (x, x);
                }
            }
            if seed % 7 == 0 {
                for (i, row) in m.iter_mut().enumerate() {
                    for (j, x) in row.iter_mut().enumerate() {
                        if i != j {
                            *x = 0.0;
                        }
                    }
                }
            }
            mats.push(m);
        }
        mats.push([[2.0, 1.0, 0.0, 0.0], [1.0, 2.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0], [0.0; 4]]);
        for seed in 0..12 {
            let (x, y) = (points(9, 300 + seed), points(9, 400 + seed));
            let clean = |p: &Points| {
                let f =
                    |v: &[f64]| v.iter().map(|&a| if a.is_finite() { a } else { 1.5 }).collect();
                Points { x: f(&p.x), y: f(&p.y), z: f(&p.z) }
            };
            let (x, y) = if seed % 3 == 0 { (x, y) } else { (clean(&x), clean(&y)) };
            mats.push(super::super::FitInput::of(9, |p| x.get(p), |p| y.get(p)).n);
        }
        let want: Vec<Eigen> = mats
            .iter()
            .map(|m| {
                let mut m = *m;
                super::super::jacobi4(&mut m)
            })
            .collect();
        for simd in Simd::available() {
            for n in [0, 1, FIT_LANES - 1, FIT_LANES + 1, mats.len()] {
                let mut out = vec![([0.0; 4], [[0.0; 4]; 4]); n];
                jacobi4_kernel(simd, &mats[..n], &mut out);
                for (k, ((vals, vecs), (wvals, wvecs))) in out.iter().zip(&want).enumerate() {
                    for i in 0..4 {
                        assert!(same_bits(vals[i], wvals[i]), "{simd:?} {n} {k} {i}");
                        for j in 0..4 {
                            let (got, w) = (vecs[i][j], wvecs[i][j]);
                            assert!(same_bits(got, w), "{simd:?} {n} {k} {i} {j}");
                        }
                    }
                }
            }
        }
    }
}
