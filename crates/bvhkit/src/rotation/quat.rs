//! Rotation matrices to quaternions in a batch: [`mat3_to_quat_slice`].
//!
//! # Implementation notes
//!
//! `mat3_to_quat_slice`, `mat3_to_repr`'s quaternions (glam's `from_mat3`,
//! normalised, `w >= 0`) of many matrices by component, its two nested branches
//! as selects with the same operations in the same order, on AVX-512F/AVX2
//! lanes (no FMA), the same bits (`rotation::quat::tests`, every order and the
//! case boundaries); the dataset export's quaternions.

use glam::DMat3;

use super::select;
use crate::simd::{Simd, simd_kernel};

/// The unit quaternions of rotation matrices, by component, bit for bit
/// those of [`mat3_to_repr`](super::mat3_to_repr) with
/// [`RotationRepr::Quat`](super::RotationRepr::Quat) and no previous frame
/// (glam's `DQuat::from_mat3`, normalised, negated when `w < 0`): `x[i]`,
/// `y[i]`, `z[i]`, `w[i]` of `m[i]`.
///
/// The four cases of the conversion (which of `x`, `y`, `z`, `w` is
/// largest) are taken with selects instead of branches, each with the same
/// operations in the same order (`a - b` is `a + (-b)` exactly), so the
/// matrices run on SIMD lanes (AVX-512F or AVX2 where the CPU has them, no
/// FMA) and give the same bits as one at a time.
///
/// # Panics
/// When the five slices differ in length.
///
/// # Example
/// ```
/// use bvhkit::rotation::{
///     Axis, RotationOrder, RotationRepr, euler_to_mat3, mat3_to_quat_slice, mat3_to_repr,
/// };
/// let m = [
///     euler_to_mat3(&[Axis::Z, Axis::X, Axis::Y], &[30.0, -50.0, 170.0]),
///     euler_to_mat3(&[Axis::Y], &[180.0]),
/// ];
/// let mut q = [[0.0; 2]; 4];
/// let [x, y, z, w] = &mut q;
/// mat3_to_quat_slice(&m, [x, y, z, w]);
/// for i in 0..2 {
///     let mut one = [0.0; 4];
///     mat3_to_repr(m[i], RotationRepr::Quat, RotationOrder::ZXY, None, None, &mut one);
///     for c in 0..4 {
///         assert_eq!(q[c][i].to_bits(), one[c].to_bits());
///     }
/// }
/// ```
pub fn mat3_to_quat_slice(m: &[DMat3], out: [&mut [f64]; 4]) {
    assert!(out.iter().all(|o| o.len() == m.len()), "one output per matrix and component");
    quat_loop(Simd::best(), m, out);
}

simd_kernel! {
    /// [`mat3_to_quat_slice`]'s loop, one matrix per lane.
    #[allow(clippy::needless_range_loop)]
    fn quat_loop(simd: Simd, m: &[DMat3], out: [&mut [f64]; 4]) {
        let n = m.len();
        let [x, y, z, w] = out;
        // Sliced to `n` so that the lanes need no bounds checks.
        let (x, y, z, w) = (&mut x[..n], &mut y[..n], &mut z[..n], &mut w[..n]);
        for i in 0..n {
            let q = quat_one(&m[i]);
            x[i] = q[0];
            y[i] = q[1];
            z[i] = q[2];
            w[i] = q[3];
        }
    }
}

/// One matrix of [`mat3_to_quat_slice`]: glam's `DQuat::from_rotation_axes`
/// (after DirectXMath's `XMQuaternionRotationMatrix`) with its two nested
/// branches as selects, then `DVec4::normalize` and the sign.
#[inline(always)]
fn quat_one(m: &DMat3) -> [f64; 4] {
    let (m00, m01, m02) = (m.x_axis.x, m.x_axis.y, m.x_axis.z);
    let (m10, m11, m12) = (m.y_axis.x, m.y_axis.y, m.y_axis.z);
    let (m20, m21, m22) = (m.z_axis.x, m.z_axis.y, m.z_axis.z);
    // glam: `m22 <= 0` (x² + y² >= z² + w²) takes dif10 = m11 - m00 and
    // omm22 = 1 - m22, else sum10 = m11 + m00 and opm22 = 1 + m22.
    let low = m22 <= 0.0;
    let t = m11 + select(low, -m00, m00);
    let u = 1.0 + select(low, -m22, m22);
    // Then `t <= 0` (x² >= y², or z² >= w²) takes u - t, else u + t.
    let first = t <= 0.0;
    let four = u + select(first, -t, t);
    let inv = 0.5 / four.sqrt();
    let (a, b, c) = (m01 + m10, m02 + m20, m12 + m21);
    let (d, e, f) = (m12 - m21, m20 - m02, m01 - m10);
    // The four cases: x (low, first), y (low), z (first), w.
    let x = select(low, select(first, four, a), select(first, b, d));
    let y = select(low, select(first, a, four), select(first, c, e));
    let z = select(low, select(first, b, c), select(first, four, f));
    let w = select(low, select(first, d, e), select(first, f, four));
    let q = [x * inv, y * inv, z * inv, w * inv];
    // `DVec4::normalize`: times 1 / sqrt of the dot product, in its order.
    let r = 1.0 / ((q[0] * q[0]) + (q[1] * q[1]) + (q[2] * q[2]) + (q[3] * q[3])).sqrt();
    let q = [q[0] * r, q[1] * r, q[2] * r, q[3] * r];
    // `-q` is `q * -1.0` in glam; times 1.0 changes no number.
    let s = select(q[3] < 0.0, -1.0, 1.0);
    [q[0] * s, q[1] * s, q[2] * s, q[3] * s]
}

#[cfg(test)]
mod tests {
    use glam::{DMat3, DVec3};

    use super::*;
    use crate::rotation::{Axis, RotationOrder, RotationRepr, euler_to_mat3, mat3_to_repr};

    fn reference(m: &DMat3) -> [f64; 4] {
        let mut q = [0.0; 4];
        mat3_to_repr(*m, RotationRepr::Quat, RotationOrder::ZXY, None, None, &mut q);
        q
    }

    fn check(ms: &[DMat3]) {
        let n = ms.len();
        let mut q = vec![vec![0.0; n]; 4];
        let [x, y, z, w] = &mut q[..] else { unreachable!() };
        mat3_to_quat_slice(ms, [x, y, z, w]);
        // And every build the CPU can run, the plain loop first.
        let mut builds = vec![vec![vec![0.0; n]; 4]; Simd::available().len()];
        for (p, simd) in builds.iter_mut().zip(Simd::available()) {
            let [x, y, z, w] = &mut p[..] else { unreachable!() };
            quat_loop(simd, ms, [x, y, z, w]);
        }
        for (i, m) in ms.iter().enumerate() {
            let want = reference(m);
            for c in 0..4 {
                let same =
                    |v: f64| v.to_bits() == want[c].to_bits() || v.is_nan() && want[c].is_nan();
                assert!(same(q[c][i]), "{m:?}: component {c}: {} against {}", q[c][i], want[c]);
                for (p, simd) in builds.iter().zip(Simd::available()) {
                    assert!(same(p[c][i]), "{m:?}: {simd:?} loop, component {c}");
                }
            }
        }
    }

    /// Every order's products of random angles, and the angles that put the
    /// conversion on its case boundaries (half and quarter turns, where
    /// `m22`, `m11 ± m00` are exactly 0 or ±1 and zeros carry signs).
    #[test]
    fn quaternions_are_mat3_to_repr_bit_for_bit() {
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let axes = [Axis::X, Axis::Y, Axis::Z];
        let special = [0.0, -0.0, 90.0, -90.0, 180.0, -180.0, 45.0, 270.0, 360.0, 1e-300];
        let mut ms = Vec::new();
        for _ in 0..20_000 {
            let order = [
                axes[(next() % 3) as usize],
                axes[(next() % 3) as usize],
                axes[(next() % 3) as usize],
            ];
            let mut angle = || {
                let r = next();
                if r % 4 == 0 {
                    special[(r >> 8) as usize % special.len()]
                } else {
                    (r >> 11) as f64 / (1u64 << 53) as f64 * 720.0 - 360.0
                }
            };
            let angles = [angle(), angle(), angle()];
            let k = 1 + (next() % 3) as usize;
            ms.push(euler_to_mat3(&order[..k], &angles[..k]));
        }
        ms.push(DMat3::IDENTITY);
        ms.push(DMat3::from_diagonal(DVec3::new(-1.0, -1.0, 1.0)));
        ms.push(DMat3::from_diagonal(DVec3::new(1.0, -1.0, -1.0)));
        ms.push(DMat3::from_diagonal(DVec3::new(-1.0, 1.0, -1.0)));
        ms.push(DMat3::from_cols_array(&[f64::NAN; 9]));
        ms.push(DMat3::from_cols_array(&[0.0; 9]));
        // Every length through the lanes and a remainder.
        for n in 0..20 {
            check(&ms[..n]);
        }
        check(&ms);
    }
}
