//! The kernels of [`super::Plan::measure`] on SIMD lanes: each pair's
//! position errors over a frame's pairs, the Procrustes residuals, the
//! Procrustes fits' 4×4 eigenproblems of many frames ([`jacobi4`], a lane
//! per frame, refilled as each frame's sweeps end), and the rotation
//! error's quaternions over a run's frames (lane `k` a frame).
//!
//! Each kernel is the scalar code it replaces written over slices (glam's
//! `DVec3::length`, `DMat3 * DVec3`, `DQuat * DQuat` and `conjugate`, term
//! for term and in their order), compiled by [`simd_kernel!`] without FMA:
//! every lane rounds as the scalar code did, so the bits are the same.
//! `atan2` stays the library's, one call per frame, outside the lanes.

use glam::DVec3;

use crate::rotation::Axis;
use crate::simd::{Simd, simd_kernel};

/// Points as three coordinate arrays.
#[derive(Default)]
pub(super) struct Points {
    pub(super) x: Vec<f64>,
    pub(super) y: Vec<f64>,
    pub(super) z: Vec<f64>,
}

impl Points {
    /// `n` points (old values left, new ones 0).
    pub(super) fn resize(&mut self, n: usize) {
        self.x.resize(n, 0.0);
        self.y.resize(n, 0.0);
        self.z.resize(n, 0.0);
    }

    pub(super) fn set(&mut self, p: usize, v: DVec3) {
        (self.x[p], self.y[p], self.z[p]) = (v.x, v.y, v.z);
    }

    pub(super) fn get(&self, p: usize) -> DVec3 {
        DVec3::new(self.x[p], self.y[p], self.z[p])
    }

    pub(super) fn len(&self) -> usize {
        self.x.len()
    }

    fn slices(&self) -> [&[f64]; 3] {
        [&self.x, &self.y, &self.z]
    }
}

/// `sqrt(x² + y² + z²)` as `DVec3::length` adds it.
#[inline(always)]
fn norm(x: f64, y: f64, z: f64) -> f64 {
    (x * x + y * y + z * z).sqrt()
}

simd_kernel! {
    /// `e[p] = |ya[p] - xb[p]|` and `er[p] = |(ya[p] - ra) - (xb[p] - rb)|`
    /// (`roots` = `ra` then `rb`).
    fn errors_kernel(
        simd: Simd,
        ya: [&[f64]; 3],
        xb: [&[f64]; 3],
        roots: [f64; 6],
        e: &mut [f64],
        er: &mut [f64],
    ) {
        let n = e.len();
        let (yx, yy, yz) = (&ya[0][..n], &ya[1][..n], &ya[2][..n]);
        let (xx, xy, xz) = (&xb[0][..n], &xb[1][..n], &xb[2][..n]);
        let er = &mut er[..n];
        let [rax, ray, raz, rbx, rby, rbz] = roots;
        for p in 0..n {
            e[p] = norm(yx[p] - xx[p], yy[p] - xy[p], yz[p] - xz[p]);
            er[p] = norm(
                (yx[p] - rax) - (xx[p] - rbx),
                (yy[p] - ray) - (xy[p] - rby),
                (yz[p] - raz) - (xz[p] - rbz),
            );
        }
    }
}

/// Each pair's error and root-aligned error of a frame: A's points `ya`,
/// B's `xb`, the roots `ra` and `rb`, into `e` and `er`.
pub(super) fn errors(
    ya: &Points,
    xb: &Points,
    (ra, rb): (DVec3, DVec3),
    e: &mut Vec<f64>,
    er: &mut Vec<f64>,
) {
    let n = ya.len();
    e.resize(n, 0.0);
    er.resize(n, 0.0);
    let roots = [ra.x, ra.y, ra.z, rb.x, rb.y, rb.z];
    errors_kernel(Simd::best(), ya.slices(), xb.slices(), roots, e, er);
}

simd_kernel! {
    /// `out[p] = |scale * (m * x[p]) + t - y[p]|`, `m` by columns.
    fn residuals_kernel(
        simd: Simd,
        m: [f64; 9],
        scale: f64,
        t: [f64; 3],
        x: [&[f64]; 3],
        y: [&[f64]; 3],
        out: &mut [f64],
    ) {
        let n = out.len();
        let (xx, xy, xz) = (&x[0][..n], &x[1][..n], &x[2][..n]);
        let (yx, yy, yz) = (&y[0][..n], &y[1][..n], &y[2][..n]);
        for p in 0..n {
            let (a, b, c) = (xx[p], xy[p], xz[p]);
            let vx = m[0] * a + m[3] * b + m[6] * c;
            let vy = m[1] * a + m[4] * b + m[7] * c;
            let vz = m[2] * a + m[5] * b + m[8] * c;
            out[p] = norm(
                (scale * vx + t[0]) - yx[p],
                (scale * vy + t[1]) - yy[p],
                (scale * vz + t[2]) - yz[p],
            );
        }
    }
}

/// `|fit.apply(x[p]) - y[p]|` of every point into `out`.
pub(super) fn residuals(fit: &super::Similarity, x: &Points, y: &Points, out: &mut Vec<f64>) {
    out.resize(x.len(), 0.0);
    let t = fit.translation.to_array();
    let m = fit.rotation.to_cols_array();
    residuals_kernel(Simd::best(), m, fit.scale, t, x.slices(), y.slices(), out);
}

/// Quaternions of a chunk of frames as four coordinate arrays.
#[derive(Default)]
pub(super) struct Quats {
    pub(super) x: Vec<f64>,
    pub(super) y: Vec<f64>,
    pub(super) z: Vec<f64>,
    pub(super) w: Vec<f64>,
}

impl Quats {
    /// `n` identities.
    pub(super) fn identity(&mut self, n: usize) {
        for (v, one) in
            [(&mut self.x, 0.0), (&mut self.y, 0.0), (&mut self.z, 0.0), (&mut self.w, 1.0)]
        {
            v.clear();
            v.resize(n, one);
        }
    }

    /// Whether quaternion `k` equals `other`'s (`DQuat`'s `==`).
    pub(super) fn same(&self, other: &Quats, k: usize) -> bool {
        self.x[k] == other.x[k]
            && self.y[k] == other.y[k]
            && self.z[k] == other.z[k]
            && self.w[k] == other.w[k]
    }

    /// Each quaternion times the elementary one about `axis` with half-angle
    /// sines `s` and cosines `c` (`euler_to_quat_sin_cos`'s `q *=`).
    pub(super) fn mul_axis(&mut self, axis: Axis, s: &[f64], c: &[f64]) {
        let q = [&mut self.x[..], &mut self.y[..], &mut self.z[..], &mut self.w[..]];
        match axis {
            Axis::X => mul_axis_kernel::<0>(Simd::best(), q, s, c),
            Axis::Y => mul_axis_kernel::<1>(Simd::best(), q, s, c),
            Axis::Z => mul_axis_kernel::<2>(Simd::best(), q, s, c),
        }
    }
}

simd_kernel! {
    /// `q[k] = q[k] * h[k]`, `h[k]` the elementary quaternion about axis
    /// `A` (0, 1, 2: x, y, z) of sine `s[k]` and cosine `c[k]`: glam's
    /// `mul_quat`, its zero terms included (they keep its NaNs and zeros).
    fn mul_axis_kernel<const A: usize>(simd: Simd, q: [&mut [f64]; 4], s: &[f64], c: &[f64]) {
        let [qx, qy, qz, qw] = q;
        let n = qx.len();
        let (qy, qz, qw, s, c) = (&mut qy[..n], &mut qz[..n], &mut qw[..n], &s[..n], &c[..n]);
        for k in 0..n {
            let (x0, y0, z0, w0) = (qx[k], qy[k], qz[k], qw[k]);
            let (x1, y1, z1, w1) = match A {
                0 => (s[k], 0.0, 0.0, c[k]),
                1 => (0.0, s[k], 0.0, c[k]),
                _ => (0.0, 0.0, s[k], c[k]),
            };
            qx[k] = w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1;
            qy[k] = w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1;
            qz[k] = w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1;
            qw[k] = w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1;
        }
    }
}

simd_kernel! {
    /// Of `d = conj(a[k]) * b[k]`: `v[k] = |(d.x, d.y, d.z)|`, `w[k] = |d.w|`.
    fn between_kernel(
        simd: Simd,
        a: [&[f64]; 4],
        b: [&[f64]; 4],
        v: &mut [f64],
        w: &mut [f64],
    ) {
        let n = v.len();
        let w = &mut w[..n];
        let (ax, ay, az, aw) = (&a[0][..n], &a[1][..n], &a[2][..n], &a[3][..n]);
        let (bx, by, bz, bw) = (&b[0][..n], &b[1][..n], &b[2][..n], &b[3][..n]);
        for k in 0..n {
            let (x0, y0, z0, w0) = (-ax[k], -ay[k], -az[k], aw[k]);
            let (x1, y1, z1, w1) = (bx[k], by[k], bz[k], bw[k]);
            let dx = w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1;
            let dy = w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1;
            let dz = w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1;
            let dw = w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1;
            v[k] = norm(dx, dy, dz);
            w[k] = dw.abs();
        }
    }
}

/// Of each `conj(a[k]) * b[k]`: its vector part's length into `v`, its
/// scalar part's magnitude into `w` (`super::geodesic_deg`'s operands of
/// `atan2`).
pub(super) fn between(a: &Quats, b: &Quats, v: &mut Vec<f64>, w: &mut Vec<f64>) {
    let n = a.x.len();
    v.resize(n, 0.0);
    w.resize(n, 0.0);
    let a = [&a.x[..], &a.y[..], &a.z[..], &a.w[..]];
    let b = [&b.x[..], &b.y[..], &b.z[..], &b.w[..]];
    between_kernel(Simd::best(), a, b, v, w);
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
    use crate::rotation::{euler_to_quat_sin_cos, sin_cos_deg};

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

    fn points(n: usize, seed: u64) -> Points {
        Points { x: values(n, seed), y: values(n, seed + 2), z: values(n, seed + 4) }
    }

    fn same_bits(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn the_lanes_give_the_scalar_bits() {
        for simd in Simd::available() {
            for n in [0, 1, 3, 7, 8, 9, 65, 130] {
                let (ya, xb) = (points(n, 1), points(n, 7));
                let (ra, rb) = (DVec3::new(1.5, -2.0, 0.25), DVec3::new(-0.0, 3.0, 1e-3));
                let (mut e, mut er) = (vec![0.0; n], vec![0.0; n]);
                let roots = [ra.x, ra.y, ra.z, rb.x, rb.y, rb.z];
                errors_kernel(simd, ya.slices(), xb.slices(), roots, &mut e, &mut er);
                for p in 0..n {
                    let (y, x) = (ya.get(p), xb.get(p));
                    assert!(same_bits(e[p], (y - x).length()), "{simd:?} {p}");
                    assert!(same_bits(er[p], ((y - ra) - (x - rb)).length()), "{simd:?} {p}");
                }
                let fit = super::super::Similarity {
                    rotation: DMat3::from_quat(DQuat::from_euler(
                        glam::EulerRot::ZXY,
                        0.3,
                        -1.2,
                        2.0,
                    )),
                    scale: 0.83,
                    translation: DVec3::new(0.1, -7.0, 3.5),
                };
                let mut out = vec![0.0; n];
                let (m, t) = (fit.rotation.to_cols_array(), fit.translation.to_array());
                residuals_kernel(simd, m, fit.scale, t, xb.slices(), ya.slices(), &mut out);
                for (p, got) in out.iter().enumerate() {
                    let want = (fit.apply(xb.get(p)) - ya.get(p)).length();
                    assert!(same_bits(*got, want), "{simd:?} {p}");
                }
                // Quaternions of three channels in each order, then the
                // operands of the geodesic angle.
                let angles: Vec<Vec<f64>> = (0..6).map(|c| values(n, 20 + c)).collect();
                let sc: Vec<(Vec<f64>, Vec<f64>)> =
                    angles.iter().map(|a| a.iter().map(|v| sin_cos_deg(0.5 * v)).unzip()).collect();
                let orders = [[Axis::Z, Axis::X, Axis::Y], [Axis::Y, Axis::Y, Axis::X]];
                let mut q = [Quats::default(), Quats::default()];
                for (side, axes) in orders.iter().enumerate() {
                    q[side].identity(n);
                    for (i, &axis) in axes.iter().enumerate() {
                        let (s, c) = &sc[side * 3 + i];
                        let qs = &mut q[side];
                        let lanes = [&mut qs.x[..], &mut qs.y[..], &mut qs.z[..], &mut qs.w[..]];
                        match axis {
                            Axis::X => mul_axis_kernel::<0>(simd, lanes, s, c),
                            Axis::Y => mul_axis_kernel::<1>(simd, lanes, s, c),
                            Axis::Z => mul_axis_kernel::<2>(simd, lanes, s, c),
                        }
                    }
                }
                let (mut v, mut w) = (vec![0.0; n], vec![0.0; n]);
                let lanes = |q: &Quats| [q.x.clone(), q.y.clone(), q.z.clone(), q.w.clone()];
                let (la, lb) = (lanes(&q[0]), lanes(&q[1]));
                let a = [&la[0][..], &la[1][..], &la[2][..], &la[3][..]];
                let b = [&lb[0][..], &lb[1][..], &lb[2][..], &lb[3][..]];
                between_kernel(simd, a, b, &mut v, &mut w);
                for k in 0..n {
                    let want: Vec<DQuat> = orders
                        .iter()
                        .enumerate()
                        .map(|(side, axes)| {
                            let s: Vec<f64> = (0..3).map(|i| sc[side * 3 + i].0[k]).collect();
                            let c: Vec<f64> = (0..3).map(|i| sc[side * 3 + i].1[k]).collect();
                            euler_to_quat_sin_cos(axes, &s, &c)
                        })
                        .collect();
                    for (side, qw) in want.iter().enumerate() {
                        let got = [q[side].x[k], q[side].y[k], q[side].z[k], q[side].w[k]];
                        assert!(
                            got.iter().zip(qw.to_array()).all(|(g, w)| same_bits(*g, w)),
                            "{simd:?} {k}: {got:?} {qw:?}"
                        );
                    }
                    let d = want[0].conjugate() * want[1];
                    assert!(same_bits(v[k], DVec3::new(d.x, d.y, d.z).length()), "{simd:?} {k}");
                    assert!(same_bits(w[k], d.w.abs()), "{simd:?} {k}");
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
