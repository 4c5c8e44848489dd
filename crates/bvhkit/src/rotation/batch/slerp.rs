//! SLERP of unit quaternions over slices: [`slerp_slice`].

use super::*;

/// `sin x` for `x` in `[0, π/2]` (radians), through the fdlibm kernel of
/// [`sin_cos_deg`](crate::rotation::sin_cos_deg): `x` itself up to π/4, `cos(π/2 - x)`
/// beyond (`π/2 - x` is exact there, plus the low part of π/2).
#[inline(always)]
pub(super) fn sin_quarter(x: f64) -> f64 {
    let far = x > std::f64::consts::FRAC_PI_4;
    let r = select(far, (PIO2_HI - x) + PIO2_LO, x);
    let (s, c) = sin_cos_kernel(r);
    select(far, c, s)
}

/// The shortest arc from `q0` to `q1`: `q1` or `-q1`, whichever is nearer
/// `q0`, with `|q0 - q1|²` and `|q0 + q1|²` for the angle between them
/// (shared by [`slerp_one`] and [`slerp_lane`]).
#[inline(always)]
pub(super) fn shortest_arc(q0: [f64; 4], q1: [f64; 4]) -> ([f64; 4], f64, f64) {
    let d = q0[0] * q1[0] + q0[1] * q1[1] + q0[2] * q1[2] + q0[3] * q1[3];
    let sign = select(d < 0.0, -1.0, 1.0);
    let q1 = [q1[0] * sign, q1[1] * sign, q1[2] * sign, q1[3] * sign];
    let (mut aa, mut bb) = (0.0, 0.0);
    for i in 0..4 {
        aa += (q0[i] - q1[i]) * (q0[i] - q1[i]);
        bb += (q0[i] + q1[i]) * (q0[i] + q1[i]);
    }
    (q1, aa, bb)
}

/// One SLERP of [`slerp_slice`], for `t` in `[0, 1]`.
#[inline(always)]
pub(super) fn slerp_one(q0: [f64; 4], q1: [f64; 4], t: f64) -> [f64; 4] {
    let (q1, aa, bb) = shortest_arc(q0, q1);
    // a = |q0 - q1| = 2 sin(θ/2), b = |q0 + q1| = 2 cos(θ/2), sin θ = a·b/2.
    let (a, b) = (aa.sqrt(), bb.sqrt());
    let theta = 2.0 * atan2(a, b);
    let s = 0.5 * a * b;
    let small = s < 1e-12;
    // (Nearly) the same rotation: the normalised linear blend.
    let mut n = 0.0;
    for i in 0..4 {
        let v = q0[i] * (1.0 - t) + q1[i] * t;
        n += v * v;
    }
    let n = n.sqrt();
    let s = select(small, n, s);
    let w0 = select(small, 1.0 - t, sin_quarter((1.0 - t) * theta)) / s;
    let w1 = select(small, t, sin_quarter(t * theta)) / s;
    [
        q0[0] * w0 + q1[0] * w1,
        q0[1] * w0 + q1[1] * w1,
        q0[2] * w0 + q1[2] * w1,
        q0[3] * w0 + q1[3] * w1,
    ]
}

simd_kernel! {
    /// [`slerp_slice`]'s loop.
    fn slerp_loop(simd: Simd, q0: &[DQuat], q1: &[DQuat], t: f64, out: &mut [DQuat]) {
        for ((o, a), b) in out.iter_mut().zip(q0).zip(q1) {
            *o = DQuat::from_array(slerp_one(a.to_array(), b.to_array(), t));
        }
    }
}

/// Spherical linear interpolation of unit quaternions, element by element:
/// `out[i]` goes from `q0[i]` (at `t = 0`) to `q1[i]` (at `t = 1`) along
/// the shortest arc (`q1[i]` is negated when `q0[i] · q1[i] < 0`),
/// `sin((1-t)θ)/sin θ · q0 + sin(tθ)/sin θ · q1`, and the normalised
/// linear blend where the two are (nearly) the same rotation
/// (`sin θ < 1e-12`), as [`crate::edit::resample::slerp`] does. Runs on
/// SIMD lanes for `t` in `[0, 1]`; any other `t` (extrapolation) goes
/// through that scalar function.
///
/// # Panics
/// When the three slices differ in length.
///
/// # Example
/// ```
/// use bvhkit::rotation::{euler_to_quat, slerp_slice, Axis};
/// let a = [euler_to_quat(&[Axis::Y], &[10.0]), euler_to_quat(&[Axis::Z], &[0.0])];
/// let b = [euler_to_quat(&[Axis::Y], &[50.0]), euler_to_quat(&[Axis::Z], &[-80.0])];
/// let mut out = [glam::DQuat::IDENTITY; 2];
/// slerp_slice(&a, &b, 0.25, &mut out);
/// assert!(out[0].abs_diff_eq(euler_to_quat(&[Axis::Y], &[20.0]), 1e-15));
/// assert!(out[1].abs_diff_eq(euler_to_quat(&[Axis::Z], &[-20.0]), 1e-15));
/// ```
pub fn slerp_slice(q0: &[DQuat], q1: &[DQuat], t: f64, out: &mut [DQuat]) {
    assert!(
        q0.len() == q1.len() && q0.len() == out.len(),
        "q0, q1 and out must have the same length"
    );
    if !(0.0..=1.0).contains(&t) {
        for ((o, &a), &b) in out.iter_mut().zip(q0).zip(q1) {
            *o = crate::edit::resample::slerp(a, b, t);
        }
        return;
    }
    slerp_loop(Simd::best(), q0, q1, t, out);
}
