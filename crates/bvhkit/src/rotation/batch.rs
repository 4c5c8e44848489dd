//! Batched rotation maths: `atan2`, SLERP, continuous Euler extraction
//! and the mixer's whole per-joint pipeline ([`MixLanes`]) over slices,
//! written without branches or library calls so that the compiler runs
//! them on SIMD lanes (AVX-512F or AVX2 where the CPU has them, like
//! [`sin_cos_deg_slice`](super::sin_cos_deg_slice)'s AVX2 dispatch, and no
//! FMA, so the results do not depend on the CPU).
//!
//! Accuracy: [`atan2`] (and so [`atan2_slice`], the same bits) is within
//! 2 ulp of the correctly rounded `atan2` (the tests compare it with
//! `f64::atan2` on millions of pairs); [`EulerBatch`] gives the angles of
//! [`mat3_to_euler_near`](super::mat3_to_euler_near) within 1e-9 degrees
//! (in practice a few ulp); [`slerp_slice`] is SLERP within a few ulp.
//!
//! # Implementation notes
//!
//! The batched kernels of the rotation-heavy paths, written with selects
//! instead of branches and run on SIMD lanes behind the same AVX2 dispatch (no
//! FMA): `atan2` / `atan2_slice` (fdlibm's `atan` reduction and polynomial, the
//! same bits either way, within 2 ulp of libm), `slerp_slice` (shortest arc,
//! `resample::slerp`'s small-angle rule; its weights' sines through the fdlibm
//! kernel) and `EulerBatch` (caller-owned, reused structure-of-arrays buffers:
//! push a frame's matrices or quaternions with their orders and previous
//! angles, `solve` once: quaternion to matrix in the order's own axes,
//! `extract_rad`'s operations with selects, three `atan2`s, and the continuity
//! choice `near_deg`, which the scalar `mat3_to_euler_near` shares). `MixLanes`
//! (crate-private) is `Mixer`'s and `Resampler`'s whole rotation pipeline for
//! the joints with three rotation channels in one SIMD pass, one lane per
//! joint, no branch on the order: the six half-angle sines and cosines
//! (`sin_cos_deg`'s reduction and kernel, the same bits), each frame's
//! closed-form quaternion kept in the order's own axes `(e·q_i, e·q_j, e·q_k,
//! w)` (a rotation of the vector part, so products and SLERP are unchanged and
//! the matrix comes out in the order's axes), SLERP with one sine and cosine
//! (`sin((1-t)θ) = sin θ cos tθ - cos θ sin tθ`, `θ` as the `atan2` of its sine
//! and cosine from one square root; for a layer, the reference's inverse before
//! and the base after it), the matrix scaled by `|q|²` (`quat_matrix_scaled`:
//! no normalisation, so no square root or division) and `EulerBatch`'s
//! extraction with the scale left in (`extract_rad_mix`: every `atan2` pair is
//! scale-free, the lock test compares with `|q|²·ε`, the third angle's pair is
//! made from the first angle's unnormalised pair: one square root and division
//! fewer; within rounding of `EulerBatch`'s angles, not its bits; its `atan2`s,
//! and the SLERP's, are `atan2_mix`: an octant reduction instead of `atan2`'s
//! five intervals, within 3 ulp of libm, 2 observed) and `EulerBatch`'s
//! continuity choice, this one by `near_deg_fast`: a multiplication by 1/360
//! instead of each of `near_deg`'s seven divisions, with a flag where it cannot
//! be sure to round as the division does (a candidate within 1e-7 of a half
//! turn in the solution taken, or in a close call, or a previous angle beyond
//! 2^32 degrees, one test on the sum of their magnitudes; and gimbal lock,
//! rare, left to the exact path altogether, so the fast pass skips the
//! extraction's locked branch, and the matrix's selects for a zero or
//! non-finite quaternion, whose lanes are flagged too); flagged lanes are
//! solved again one by one with `near_deg` itself, so the lanes keep the bits
//! of the plain per-lane pass
//! (`mix_lanes_are_the_reference_lane_on_the_corpus`); the lane count is padded
//! to the SIMD width the pass runs on (8 with AVX-512, 4 with AVX2) so no lane
//! runs in a scalar remainder; a layer's SLERP from the identity leaves out the
//! identity's products (`slerp_from_identity`, the same bits), and its frame
//! copies the lanes' parities and reference inverses as slices (`Reference`
//! keeps them by lane) up to the first joint the layer leaves unchanged.
//! `QuatLanes` (crate-private) is the first half alone: one frame's
//! three-channel joints as quaternions in their orders' axes, in one pass;
//! `MixLanes::push_near` + `solve_quats` mix two such frames from there with
//! the same bits as the angle path (a resample computes each input frame's
//! quaternions once). `OrderMap` runs each frame's three-channel extractions
//! through `EulerBatch`; joints with one or two rotation channels (and any
//! joint at a weight outside [0, 1]) still go through `slerp_slice` and
//! `JointChannels::write_rotation` (its exactness report).
//!
//! Why `unsafe`: `rotation::atan2_slice`, `rotation::slerp_slice`,
//! `EulerBatch::solve`, the mixer's lane pass `MixLanes::solve` and
//! `QuatLanes::solve` (`rotation/batch.rs`) the rewrite lanes
//! `edit::order::Lanes::solve`, the dataset export's quaternions
//! `rotation::mat3_to_quat_slice` (`rotation/quat.rs`) and forward kinematics
//! eight frames at a time, `Kinematics::positions_many` (`FkLanes`), call their
//! AVX-512F builds after `is_x86_feature_detected!("avx512f")` (eight lanes),
//! else their AVX2 builds the same way, for the same reason and with the same
//! guarantee (no FMA: the portable, AVX2 and AVX-512 loops give the same bits;
//! `mix_lanes_are_the_same_bits_everywhere_and_the_scalar_path` compares them,
//! the other tests run whichever the CPU takes and compare with the scalar
//! functions).

use glam::{DMat3, DQuat};

use super::{
    GIMBAL_LOCK_EPSILON, RotationOrder, distance_sq, near_deg, principal_deg, select,
    sin_cos_deg_reduced, sin_cos_kernel,
};

// fdlibm `s_atan.c`: atan of the interval centres 0.5, 1, 1.5 and infinity
// (high and low parts), and the odd minimax polynomial on |t| <= 7/16. The
// literals keep the digits they are published with; each rounds to the
// intended f64 (π/4 and π/2 among them).
#[allow(clippy::excessive_precision, clippy::approx_constant)]
const ATAN_HI: [f64; 4] = [
    4.636_476_090_008_060_935_15e-01,
    7.853_981_633_974_482_789_99e-01,
    9.827_937_232_473_290_540_82e-01,
    1.570_796_326_794_896_558_00e+00,
];
#[allow(clippy::excessive_precision)]
const ATAN_LO: [f64; 4] = [
    2.269_877_745_296_168_709_24e-17,
    3.061_616_997_868_383_017_93e-17,
    1.390_331_103_123_099_845_16e-17,
    6.123_233_995_736_766_035_87e-17,
];
#[allow(clippy::excessive_precision)]
const AT: [f64; 11] = [
    3.333_333_333_333_293_180_27e-01,
    -1.999_999_999_987_648_324_76e-01,
    1.428_571_427_250_346_637_11e-01,
    -1.111_111_040_546_235_578_80e-01,
    9.090_887_133_436_506_561_96e-02,
    -7.691_876_205_044_829_994_95e-02,
    6.661_073_137_387_531_206_69e-02,
    -5.833_570_133_790_573_486_45e-02,
    4.976_877_994_615_932_360_17e-02,
    -3.653_157_274_421_691_552_70e-02,
    1.628_582_011_536_578_236_23e-02,
];
#[allow(clippy::excessive_precision, clippy::approx_constant)]
const PI_HI: f64 = 3.141_592_653_589_793_116_00e+00;
#[allow(clippy::excessive_precision)]
const PI_LO: f64 = 1.224_646_799_147_353_177_20e-16;
#[allow(clippy::excessive_precision, clippy::approx_constant)]
const PIO2_HI: f64 = 1.570_796_326_794_896_558_00e+00;
#[allow(clippy::excessive_precision)]
const PIO2_LO: f64 = 6.123_233_995_736_766_035_87e-17;

/// `atan2(y, x)` in radians, in `[-π, π]`, within 2 ulp of the correctly
/// rounded value, for every pair of doubles (signed zeros and infinities
/// as IEEE 754 / C99 say: `atan2(±0, -0) = ±π`, `atan2(±∞, -∞) = ±3π/4`,
/// ...; a NaN gives NaN).
///
/// fdlibm's `atan` (`s_atan.c`: reduction to `|t| <= 7/16` about the
/// centres 0, 0.5, 1, 1.5 and ∞, then its odd minimax polynomial) applied
/// to `|y| / |x|`, with every choice made by selects instead of branches,
/// and the reduced argument computed from `|y|` and `|x|` in one division
/// (`(|y| - |x|) / (|y| + |x|)` rather than `(r - 1) / (r + 1)` of a
/// rounded ratio `r`), after a scaling by a power of two that keeps the
/// sums finite. Bit for bit the same as each element of [`atan2_slice`].
///
/// # Example
/// ```
/// use bvhkit::rotation::atan2;
/// use std::f64::consts::{FRAC_PI_4, PI};
/// assert!((atan2(1.0, 1.0) - FRAC_PI_4).abs() <= f64::EPSILON);
/// assert_eq!(atan2(0.0, -1.0), PI);
/// assert_eq!(atan2(-0.0, 1.0).to_bits(), (-0.0f64).to_bits());
/// ```
#[inline(always)]
pub fn atan2(y: f64, x: f64) -> f64 {
    let (a, b) = atan2_operands(y, x);
    atan2_of::<false>(y, x, a, b)
}

/// [`atan2`] of a pair that the lanes of [`MixLanes`] make: unit vectors
/// within rounding (a rotation matrix's rows and columns, a quaternion's
/// `|q0 - q1|` and `|q0 + q1|`), or NaN. [`atan2_operands`] leaves such a
/// pair as it is (no infinity; the larger magnitude far from both scaling
/// limits, 1e300 and 1e-270), and is never (±0, ±0), the one pair with a
/// zero denominator or a mirror at `x = -0` ([`atan2_finish`]), so this is
/// [`atan2`]'s bits without those steps.
#[inline(always)]
fn atan2_unit(y: f64, x: f64) -> f64 {
    atan2_of::<true>(y, x, y.abs(), x.abs())
}

/// `atan2(y, x)` for the pairs the mix lanes make (finite, not both
/// zero, the larger magnitude between about `1e-250` and `1e250`: a
/// SLERP's sine and cosine, a rotation matrix's entries), within 3 ulp
/// of libm's: an octant reduction instead of [`atan2`]'s five intervals
/// (fewer selects): `p / q` with `p = min(|y|, |x|)`, `q = max(|y|, |x|)`,
/// about 0 up to 7/16, else about 1 (fdlibm's `(r - 1) / (r + 1)`, as
/// `(p - q) / (q + p)`), so `|t| <= 7/16` for fdlibm's polynomial; then
/// `π/2 -` that where `|y| > |x|`, and the quadrant.
#[inline(always)]
fn atan2_mix(y: f64, x: f64) -> f64 {
    let (a, b) = (y.abs(), x.abs());
    let swap = a > b;
    let (p, q) = (select(swap, b, a), select(swap, a, b));
    // p > 7/16 q: the same test as fdlibm's 16 p > 7 q (scaling by 16 is
    // exact at these magnitudes), one product fewer.
    let one = p > 0.4375 * q;
    let num = select(one, p - q, p);
    let den = select(one, q + p, q);
    let (hi, lo) = (select(one, ATAN_HI[1], 0.0), select(one, ATAN_LO[1], 0.0));
    let t = num / den;
    let z = t * t;
    let w = z * z;
    let s1 = z * (AT[0] + w * (AT[2] + w * (AT[4] + w * (AT[6] + w * (AT[8] + w * AT[10])))));
    let s2 = w * (AT[1] + w * (AT[3] + w * (AT[5] + w * (AT[7] + w * AT[9]))));
    let at = hi - ((t * (s1 + s2) - lo) - t);
    let at = select(swap, PIO2_HI - (at - PIO2_LO), at);
    let r = select(x < 0.0, PI_HI - (at - PI_LO), at);
    r.copysign(y)
}

/// [`atan2`] from its operands `a` and `b` ([`atan2_operands`]); `UNIT`
/// as for [`atan2_finish`].
#[inline(always)]
fn atan2_of<const UNIT: bool>(y: f64, x: f64, a: f64, b: f64) -> f64 {
    // The interval of r = a / b, from fdlibm's bounds 7/16, 11/16, 19/16,
    // 39/16 (a misplaced boundary case only picks a neighbouring centre,
    // whose reduction is as accurate there).
    let k = 16.0 * a;
    let (c7, c11, c19, c39) = (k <= 7.0 * b, k <= 11.0 * b, k <= 19.0 * b, k <= 39.0 * b);
    // t = (a - m·b) / (b + m·a) about the centre m = 0, 1/2, 1, 3/2 of
    // r's interval (fdlibm's (2a - b) / (2b + a) for 1/2: the same bits,
    // scaling by 2 being exact), or -b / a beyond 39/16; then
    // atan t + atan m (high and low parts).
    let m = select(c7, 0.0, select(c11, 0.5, select(c19, 1.0, 1.5)));
    let num = select(c39, a - m * b, -b);
    let den = select(c39, b + m * a, a);
    let hi = select(
        c7,
        0.0,
        select(c11, ATAN_HI[0], select(c19, ATAN_HI[1], select(c39, ATAN_HI[2], ATAN_HI[3]))),
    );
    let lo = select(
        c7,
        0.0,
        select(c11, ATAN_LO[0], select(c19, ATAN_LO[1], select(c39, ATAN_LO[2], ATAN_LO[3]))),
    );
    atan2_finish::<UNIT>(y, x, num, den, hi, lo)
}

/// [`atan2`]'s operands: `|y|` and `|x|` with infinities made directions
/// ((∞, finite) → (1, 0), (∞, ∞) → (1, 1)) and both scaled by a power of two
/// so that 39·|x| and the reduction's sums stay finite and tiny inputs
/// normal.
#[inline(always)]
fn atan2_operands(y: f64, x: f64) -> (f64, f64) {
    let (a, b) = (y.abs(), x.abs());
    let inf = a == f64::INFINITY || b == f64::INFINITY;
    let a = select(inf, select(a == f64::INFINITY, 1.0, 0.0), a);
    let b = select(inf, select(b == f64::INFINITY, 1.0, 0.0), b);
    let mx = select(a > b, a, b);
    let scale = select(mx > 1e300, 2f64.powi(-200), select(mx < 1e-270, 2f64.powi(200), 1.0));
    (a * scale, b * scale)
}

/// [`atan2`] after its reduction: `atan t + atan m` for `t = num / den`
/// (fdlibm's polynomial; `hi`, `lo` the two parts of `atan m`), placed in
/// `y` and `x`'s quadrant. With `UNIT`, for a pair other than (±0, ±0)
/// (which [`atan2_unit`]'s never is): no zero denominator to guard, and
/// `x = -0` mirrors nothing (then `y ≠ 0`: ±π/2 as it is).
#[inline(always)]
fn atan2_finish<const UNIT: bool>(y: f64, x: f64, num: f64, den: f64, hi: f64, lo: f64) -> f64 {
    // Only (0, 0) gives a zero denominator (t = 0 then).
    let t = if UNIT { num / den } else { num / select(den == 0.0, 1.0, den) };
    let z = t * t;
    let w = z * z;
    let s1 = z * (AT[0] + w * (AT[2] + w * (AT[4] + w * (AT[6] + w * (AT[8] + w * AT[10])))));
    let s2 = w * (AT[1] + w * (AT[3] + w * (AT[5] + w * (AT[7] + w * AT[9]))));
    let at = hi - ((t * (s1 + s2) - lo) - t);
    // The quadrant: x < 0 mirrors the angle about π/2, and so does x = -0
    // with y = ±0 (±π); x = -0 with any other y is ±π/2 as it is.
    let mirror = x < 0.0 || (!UNIT && x.is_sign_negative() && x == 0.0 && y == 0.0);
    let r = select(mirror, PI_HI - (at - PI_LO), at);
    r.copysign(y)
}

/// [`atan2`] of every pair `(y[i], x[i])` into `out[i]`, the same bits, on
/// SIMD lanes (AVX2 where the CPU has it).
///
/// # Panics
/// When the three slices differ in length.
///
/// # Example
/// ```
/// use bvhkit::rotation::{atan2, atan2_slice};
/// let (y, x) = ([1.0, -2.0, 0.5, 0.0], [1.0, -1.0, 3.0, -0.0]);
/// let mut out = [0.0; 4];
/// atan2_slice(&y, &x, &mut out);
/// for i in 0..4 {
///     assert_eq!(out[i].to_bits(), atan2(y[i], x[i]).to_bits());
///     assert!((out[i] - y[i].atan2(x[i])).abs() <= 2.0 * f64::EPSILON * out[i].abs());
/// }
/// ```
pub fn atan2_slice(y: &[f64], x: &[f64], out: &mut [f64]) {
    assert!(y.len() == x.len() && y.len() == out.len(), "y, x and out must have the same length");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F, as checked just above.
        #[allow(unsafe_code)]
        unsafe {
            atan2_loop_avx512(y, x, out);
        }
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, as checked just above.
        #[allow(unsafe_code)]
        unsafe {
            atan2_loop_avx2(y, x, out);
        }
        return;
    }
    atan2_loop(y, x, out);
}

#[inline(always)]
fn atan2_loop(y: &[f64], x: &[f64], out: &mut [f64]) {
    for ((o, &y), &x) in out.iter_mut().zip(y).zip(x) {
        *o = atan2(y, x);
    }
}

/// [`atan2_loop`] compiled for AVX2 (no FMA: the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn atan2_loop_avx2(y: &[f64], x: &[f64], out: &mut [f64]) {
    atan2_loop(y, x, out);
}

/// [`atan2_loop`] on eight lanes (AVX-512F, no FMA: the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn atan2_loop_avx512(y: &[f64], x: &[f64], out: &mut [f64]) {
    atan2_loop(y, x, out);
}

/// `sin x` for `x` in `[0, π/2]` (radians), through the fdlibm kernel of
/// [`sin_cos_deg`](super::sin_cos_deg): `x` itself up to π/4, `cos(π/2 - x)`
/// beyond (`π/2 - x` is exact there, plus the low part of π/2).
#[inline(always)]
fn sin_quarter(x: f64) -> f64 {
    let far = x > std::f64::consts::FRAC_PI_4;
    let r = select(far, (PIO2_HI - x) + PIO2_LO, x);
    let (s, c) = sin_cos_kernel(r);
    select(far, c, s)
}

/// The shortest arc from `q0` to `q1`: `q1` or `-q1`, whichever is nearer
/// `q0`, with `|q0 - q1|²` and `|q0 + q1|²` for the angle between them
/// (shared by [`slerp_one`] and [`slerp_lane`]).
#[inline(always)]
fn shortest_arc(q0: [f64; 4], q1: [f64; 4]) -> ([f64; 4], f64, f64) {
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
fn slerp_one(q0: [f64; 4], q1: [f64; 4], t: f64) -> [f64; 4] {
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

#[inline(always)]
fn slerp_loop(q0: &[DQuat], q1: &[DQuat], t: f64, out: &mut [DQuat]) {
    for ((o, a), b) in out.iter_mut().zip(q0).zip(q1) {
        *o = DQuat::from_array(slerp_one(a.to_array(), b.to_array(), t));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn slerp_loop_avx2(q0: &[DQuat], q1: &[DQuat], t: f64, out: &mut [DQuat]) {
    slerp_loop(q0, q1, t, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn slerp_loop_avx512(q0: &[DQuat], q1: &[DQuat], t: f64, out: &mut [DQuat]) {
    slerp_loop(q0, q1, t, out);
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
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F, as checked just above.
        #[allow(unsafe_code)]
        unsafe {
            slerp_loop_avx512(q0, q1, t, out);
        }
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, as checked just above.
        #[allow(unsafe_code)]
        unsafe {
            slerp_loop_avx2(q0, q1, t, out);
        }
        return;
    }
    slerp_loop(q0, q1, t, out);
}

/// Continuous Euler extraction for many rotations at once: the angles of
/// [`mat3_to_euler_near`](super::mat3_to_euler_near) (or, without a
/// previous frame, [`mat3_to_euler`](super::mat3_to_euler)) within 1e-9
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
    m: [Vec<f64>; 9],
    /// ... or the quaternion in those axes (`(e·q_i, e·q_j, e·q_k, w)`,
    /// `e` the order's parity), for entries pushed as quaternions.
    q: [Vec<f64>; 4],
    /// 1 for entries pushed as quaternions, else 0 (`f64`, like every
    /// other lane, so that the loop runs on SIMD lanes).
    is_quat: Vec<f64>,
    parity: Vec<f64>,
    near: [Vec<f64>; 3],
    /// 1 for entries with a previous frame, else 0.
    has_near: Vec<f64>,
    /// The angles in degrees, after [`EulerBatch::solve`].
    out: [Vec<f64>; 3],
    solved: bool,
}

/// `(i, j, k, parity)` of each order, in [`RotationOrder::ALL`]'s order.
const PERMUTATIONS: [(usize, usize, usize, f64); 6] = [
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

    fn push_common(&mut self, e: f64, near: Option<[f64; 3]>, is_quat: bool) -> usize {
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
        for (n, v) in self.m.iter_mut().enumerate() {
            // Entries pushed as quaternions have no matrix: zeros.
            v.resize(at, 0.0);
            v.push(c[idx[n % 3] * 3 + idx[n / 3]]);
        }
        for v in &mut self.q {
            v.push(0.0);
        }
        self.push_common(e, near, false)
    }

    /// [`EulerBatch::push_mat3`] of the rotation of the quaternion `q`,
    /// normalised first (a zero or non-finite `q` is the identity), as
    /// [`quat_to_euler_near`](super::quat_to_euler_near) does.
    pub fn push_quat(&mut self, q: DQuat, order: RotationOrder, near: Option<[f64; 3]>) -> usize {
        let (i, j, k, e) = PERMUTATIONS[order as usize];
        let v = [q.x, q.y, q.z];
        for (dst, x) in self.q.iter_mut().zip([e * v[i], e * v[j], e * v[k], q.w]) {
            dst.push(x);
        }
        // The matrix columns are filled up (with zeros) only when a matrix
        // is pushed after this, or by `solve`.
        self.push_common(e, near, true)
    }

    /// Extracts the angles of every entry, on SIMD lanes (AVX2 where the
    /// CPU has it).
    pub fn solve(&mut self) {
        let n = self.len();
        for v in self.m.iter_mut().chain(&mut self.out) {
            v.resize(n, 0.0);
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F, as checked just above.
            #[allow(unsafe_code)]
            unsafe {
                solve_avx512(self);
            }
            self.solved = true;
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, as checked just above.
            #[allow(unsafe_code)]
            unsafe {
                solve_avx2(self);
            }
            self.solved = true;
            return;
        }
        solve_loop(self);
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

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn solve_avx2(b: &mut EulerBatch) {
    solve_loop(b);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn solve_avx512(b: &mut EulerBatch) {
    solve_loop(b);
}

/// [`EulerBatch::solve`]'s loop: one entry per iteration, no branch.
#[inline(always)]
fn solve_loop(b: &mut EulerBatch) {
    let n = b.parity.len();
    let [m0, m1, m2, m3, m4, m5, m6, m7, m8] = &b.m;
    let (m0, m1, m2, m3, m4) = (&m0[..n], &m1[..n], &m2[..n], &m3[..n], &m4[..n]);
    let (m5, m6, m7, m8) = (&m5[..n], &m6[..n], &m7[..n], &m8[..n]);
    let [q0, q1, q2, q3] = &b.q;
    let (q0, q1, q2, q3) = (&q0[..n], &q1[..n], &q2[..n], &q3[..n]);
    let [p0, p1, p2] = &b.near;
    let (p0, p1, p2) = (&p0[..n], &p1[..n], &p2[..n]);
    let (is_quat, parity, has_near) = (&b.is_quat[..n], &b.parity[..n], &b.has_near[..n]);
    let [o0, o1, o2] = &mut b.out;
    let (o0, o1, o2) = (&mut o0[..n], &mut o1[..n], &mut o2[..n]);
    for t in 0..n {
        let r = matrix_of(
            [m0[t], m1[t], m2[t], m3[t], m4[t], m5[t], m6[t], m7[t], m8[t]],
            [q0[t], q1[t], q2[t], q3[t]],
            is_quat[t] != 0.0,
        );
        let [a, b, c] = extract(r, parity[t], [p0[t], p1[t], p2[t]], has_near[t] != 0.0);
        o0[t] = a;
        o1[t] = b;
        o2[t] = c;
    }
}

/// The matrix of an entry in the order's axes: `m` as pushed, or that of
/// the quaternion `q` ([`quat_matrix`]).
#[inline(always)]
fn matrix_of(m: [f64; 9], q: [f64; 4], is_quat: bool) -> [f64; 9] {
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

/// [`extract_rad`](super::extract_rad) of the matrix `r` in its order's
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
fn extract_of<const UNIT: bool>(
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
    near_deg_fast(rad, locked, previous)
}

/// [`extract`]'s principal angles in radians and whether the matrix is in
/// gimbal lock, before the continuity choice. With `UNIT` (a rotation
/// matrix the lanes made from a normalised quaternion, whose pairs are
/// unit vectors within rounding) its `atan2`s are [`atan2_unit`]: the same
/// bits. Without `LOCKED`, the angles of a matrix in gimbal lock are left
/// as they come (a caller that flags `locked` lanes and solves them again
/// with `LOCKED`): the same angles elsewhere, without seven of its selects.
#[inline(always)]
fn extract_rad_lane<const UNIT: bool, const LOCKED: bool>(r: [f64; 9], e: f64) -> ([f64; 3], bool) {
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
fn locked_pairs<const LOCKED: bool>(
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
fn quat_matrix_scaled<const SAFE: bool>(q: [f64; 4]) -> ([f64; 9], f64, bool) {
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
fn extract_rad_mix<const LOCKED: bool>(r: [f64; 9], n: f64, e: f64) -> ([f64; 3], bool) {
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
    ([atan2_mix(ya, xa), atan2_mix(yb, xb), atan2_mix(yc, xc)], locked)
}

/// [`atan2_unit`] with `UNIT`, else [`atan2`] (a function rather than a
/// closure, so that it is compiled with its caller's target features).
#[inline(always)]
fn atan2_if<const UNIT: bool>(y: f64, x: f64) -> f64 {
    if UNIT { atan2_unit(y, x) } else { atan2(y, x) }
}

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
/// [`euler_to_quat`](super::euler_to_quat), [`slerp_slice`] and
/// [`quat_to_euler_near`](super::quat_to_euler_near) one joint at a time
/// within rounding (tested against that scalar path on the corpus).
///
/// Where the two frames' quaternions are already known (a resample reuses
/// each input frame's for several output frames), [`QuatLanes`] computes
/// them once and [`MixLanes::push_near`] with [`MixLanes::solve_quats`]
/// mixes them: the same operations from the quaternions on, so the same
/// bits as [`MixLanes::push`] and [`MixLanes::solve`] of the angles.
#[derive(Clone, Debug, Default)]
pub(crate) struct MixLanes {
    /// Lanes in use this frame.
    n: usize,
    /// The first frame's three angles then the second's (degrees, listing
    /// order), as pushed (an angle beyond the exact reduction's limit is
    /// reduced in place by [`MixLanes::solve`]).
    ang: [Vec<f64>; 6],
    /// The order's parity `e` per lane.
    parity: Vec<f64>,
    /// The previous output frame's angles (listing order).
    near: [Vec<f64>; 3],
    /// For a layer: the reference's inverse rotation in the order's axes.
    inv: [Vec<f64>; 4],
    /// The angles after [`MixLanes::solve`].
    out: [Vec<f64>; 3],
    /// Per lane, 1 where the fast continuity choice could not decide (see
    /// [`near_deg_fast`]) and the lane is solved again with [`near_deg`].
    redo: Vec<f64>,
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
const STEP: usize = 8;

/// `2 ·` [`REDUCE_LIMIT`](super::REDUCE_LIMIT): an angle whose half is
/// beyond the exact reduction's limit (or NaN) has at least these bits
/// once its sign is cleared.
const HUGE_BITS: u64 = (2.0 * super::REDUCE_LIMIT).to_bits();

/// Whether the half of angle `x` is beyond the exact reduction's limit,
/// or `x` is NaN.
#[inline(always)]
fn is_huge(x: f64) -> bool {
    (x.to_bits() & !(1 << 63)) >= HUGE_BITS
}

/// Whether any of `angles` [`is_huge`].
#[inline(always)]
fn any_huge(angles: &[f64]) -> bool {
    angles.iter().fold(false, |any, &x| any | is_huge(x))
}

/// Reduces in place every angle of `angles` whose half is beyond the exact
/// reduction's limit, so that the lanes' `sin_cos_deg_reduced(0.5 · x)`
/// gives [`sin_cos_deg`](super::sin_cos_deg)'s bits of the half angle:
/// `x` becomes `2 · ((0.5 · x) % 360)` (an exact remainder, then an exact
/// doubling that the lanes' halving undoes; NaN stays NaN).
#[cold]
fn reduce_huge(angles: &mut [f64]) {
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
    n: usize,
    /// The three angles (degrees, listing order), as pushed.
    ang: [Vec<f64>; 3],
    /// The order's parity per lane.
    parity: Vec<f64>,
    /// The quaternions after [`QuatLanes::solve`], in the order's axes.
    q: [Vec<f64>; 4],
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
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F, as checked just above.
            #[allow(unsafe_code)]
            unsafe {
                quat_lanes_avx512(self);
            }
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, as checked just above.
            #[allow(unsafe_code)]
            unsafe {
                quat_lanes_avx2(self);
            }
            return;
        }
        quat_lanes(self);
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
fn quat_lanes(m: &mut QuatLanes) {
    let n = m.n.div_ceil(STEP) * STEP;
    let [a0, a1, a2] = &m.ang;
    let (a0, a1, a2) = (&a0[..n], &a1[..n], &a2[..n]);
    let e = &m.parity[..n];
    let [q0, q1, q2, q3] = &mut m.q;
    let (q0, q1, q2, q3) = (&mut q0[..n], &mut q1[..n], &mut q2[..n], &mut q3[..n]);
    for l in 0..n {
        let q = quat_of([a0[l], a1[l], a2[l]], e[l]);
        q0[l] = q[0];
        q1[l] = q[1];
        q2[l] = q[2];
        q3[l] = q[3];
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn quat_lanes_avx2(m: &mut QuatLanes) {
    quat_lanes(m);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn quat_lanes_avx512(m: &mut QuatLanes) {
    quat_lanes(m);
}

/// Where [`MixLanes::solve`] and [`MixLanes::solve_quats`] take each
/// lane's two quaternions from.
#[derive(Clone, Copy)]
enum Source<'a> {
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
    /// output frame `near` at those channels, no layer. The same lanes as
    /// [`MixLanes::clear`] and one [`MixLanes::push`] per joint, in one
    /// loop.
    ///
    /// With `ADJACENT`, every entry of `rot` must be `[c, c + 1, c + 2]`
    /// (see [`adjacent`]): each frame's three values are then read as one
    /// slice (one bounds check instead of three).
    ///
    /// # Panics
    /// When `rot` and `parity` differ in length, hold more joints than the
    /// capacity, or name a channel outside a frame, or when `b` or `near`
    /// is shorter than `a`.
    pub(crate) fn gather<const ADJACENT: bool>(
        &mut self,
        rot: &[[usize; 3]],
        parity: &[f64],
        a: &[f64],
        b: &[f64],
        near: &[f64],
    ) {
        let n = rot.len();
        assert!(parity.len() == n && n <= self.parity.len(), "{n} lanes");
        // One length for the three frames: a channel's bounds check on
        // `a` covers `b` and `near`.
        let len = a.len();
        let (a, b, near) = (&a[..len], &b[..len], &near[..len]);
        let [a0, a1, a2, b0, b1, b2] = &mut self.ang;
        let (a0, a1, a2) = (&mut a0[..n], &mut a1[..n], &mut a2[..n]);
        let (b0, b1, b2) = (&mut b0[..n], &mut b1[..n], &mut b2[..n]);
        let [p0, p1, p2] = &mut self.near;
        let (p0, p1, p2) = (&mut p0[..n], &mut p1[..n], &mut p2[..n]);
        for (l, &r) in rot.iter().enumerate() {
            [a0[l], a1[l], a2[l]] = read3::<ADJACENT>(a, r);
            [b0[l], b1[l], b2[l]] = read3::<ADJACENT>(b, r);
            [p0[l], p1[l], p2[l]] = read3::<ADJACENT>(near, r);
        }
        self.parity[..n].copy_from_slice(parity);
        self.n = n;
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
        let unchanged = |x: [f64; 3], y: [f64; 3]| {
            (x[0].to_bits() == y[0].to_bits())
                & (x[1].to_bits() == y[1].to_bits())
                & (x[2].to_bits() == y[2].to_bits())
        };
        // Lane s is entry s up to the first unchanged entry, `first`.
        let mut first = n;
        for (s, &r) in rot.iter().enumerate() {
            let x = read3::<ADJACENT>(add, r);
            if unchanged(x, read3::<ADJACENT>(reference, r)) {
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
            if unchanged(x, read3::<ADJACENT>(reference, r)) {
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

    fn run(&mut self, src: Source<'_>, t: f64, layered: bool) {
        debug_assert!((0.0..=1.0).contains(&t), "MixLanes::solve takes t in [0, 1]");
        if layered {
            self.pass::<true>(src, t);
        } else {
            self.pass::<false>(src, t);
        }
        self.redo_undecided(src, t, layered);
    }

    /// The lane pass on the widest SIMD the CPU has (the same bits on each).
    fn pass<const LAYERED: bool>(&mut self, src: Source<'_>, t: f64) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F, as checked just above.
            #[allow(unsafe_code)]
            unsafe {
                mix_lanes_avx512::<LAYERED>(self, src, t);
            }
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, as checked just above.
            #[allow(unsafe_code)]
            unsafe {
                mix_lanes_avx2::<LAYERED>(self, src, t);
            }
            return;
        }
        mix_lanes::<LAYERED, STEP>(self, src, t);
    }

    /// Solves again, one at a time with [`near_deg`], the lanes whose fast
    /// continuity choice could not decide (rare: an angle half a turn from
    /// the previous one, within rounding, in the solution taken or in a
    /// close call between the two), and those with a huge angle, reduced
    /// first.
    fn redo_undecided(&mut self, src: Source<'_>, t: f64, layered: bool) {
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
                let (angles, _) = mix_one::<true>(
                    qa,
                    qb,
                    self.parity[l],
                    [self.inv[0][l], self.inv[1][l], self.inv[2][l], self.inv[3][l]],
                    [self.near[0][l], self.near[1][l], self.near[2][l]],
                    t,
                    layered,
                );
                for (o, v) in self.out.iter_mut().zip(angles) {
                    o[l] = v;
                }
            }
        }
    }

    /// Lane `l`'s two quaternions, as the lane pass computes them.
    #[inline(always)]
    fn quats(&self, src: Source<'_>, l: usize) -> ([f64; 4], [f64; 4]) {
        match src {
            Source::Angles => {
                let a = &self.ang;
                let e = self.parity[l];
                (quat_of([a[0][l], a[1][l], a[2][l]], e), quat_of([a[3][l], a[4][l], a[5][l]], e))
            }
            Source::Quats(qa, qb) => (qa.quat_any(l), qb.quat_any(l)),
        }
    }

    /// The mixed angles (degrees, listing order) of lane `l`.
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
    fn quat_any(&self, l: usize) -> [f64; 4] {
        [self.q[0][l], self.q[1][l], self.q[2][l], self.q[3][l]]
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mix_lanes_avx2<const LAYERED: bool>(m: &mut MixLanes, src: Source<'_>, t: f64) {
    // Four lanes per step: padding to four is enough.
    mix_lanes::<LAYERED, 4>(m, src, t);
}

/// [`mix_lanes`] on eight lanes (AVX-512F; no FMA, so the same bits as the
/// AVX2 and SSE2 loops: every operation rounds as in the scalar code).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn mix_lanes_avx512<const LAYERED: bool>(m: &mut MixLanes, src: Source<'_>, t: f64) {
    mix_lanes::<LAYERED, STEP>(m, src, t);
}

/// The Hamilton product `a · b` of quaternions `[x, y, z, w]`.
#[inline(always)]
fn quat_mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// [`euler3_to_quat_sin_cos`](super::euler3_to_quat_sin_cos) in the
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
fn quat_of(x: [f64; 3], e: f64) -> [f64; 4] {
    let (s0, c0) = sin_cos_deg_reduced(0.5 * x[0]);
    let (s1, c1) = sin_cos_deg_reduced(0.5 * x[1]);
    let (s2, c2) = sin_cos_deg_reduced(0.5 * x[2]);
    euler3_quat_lane([s0, s1, s2], [c0, c1, c2], e)
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
fn slerp_lane(q0: [f64; 4], q1: [f64; 4], t: f64) -> [f64; 4] {
    let (q1, aa, bb) = shortest_arc(q0, q1);
    let (w0, w1) = slerp_weights(aa, bb, t);
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
fn slerp_from_identity(q: [f64; 4], t: f64) -> [f64; 4] {
    let [x, y, z, w] = q;
    let sign = select(w < 0.0, -1.0, 1.0);
    let w = w * sign;
    let v = (x * x + y * y) + z * z;
    let (aa, bb) = (v + (1.0 - w) * (1.0 - w), v + (1.0 + w) * (1.0 + w));
    let (w0, w1) = slerp_weights(aa, bb, t);
    let (zero, w1s) = (0.0 * w0, w1 * sign);
    [zero + x * w1s, zero + y * w1s, zero + z * w1s, w0 + w * w1]
}

/// [`slerp_lane`]'s weights `(w0, w1)` from `|q0 - q1|²` and `|q0 + q1|²`
/// (after the shortest arc).
#[inline(always)]
fn slerp_weights(aa: f64, bb: f64, t: f64) -> (f64, f64) {
    // |q0 - q1| = 2 sin(θ/2), |q0 + q1| = 2 cos(θ/2): θ from its sine and
    // cosine, a unit pair for unit quaternions (one square root).
    let sin_theta = 0.5 * (aa * bb).sqrt();
    let cos_theta = 0.25 * (bb - aa);
    let theta = atan2_mix(sin_theta, cos_theta);
    // tθ in [0, π/2]: the kernel on [0, π/4], or of π/2 - tθ beyond.
    let x = t * theta;
    let far = x > std::f64::consts::FRAC_PI_4;
    let (sr, cr) = sin_cos_kernel(select(far, (PIO2_HI - x) + PIO2_LO, x));
    let (sin_x, cos_x) = (select(far, cr, sr), select(far, sr, cr));
    // (Nearly) the same rotation: the linear blend (normalised later).
    let small = sin_theta < 1e-12;
    let w1 = select(small, t, sin_x / sin_theta);
    let w0 = select(small, 1.0 - t, cos_x - cos_theta * w1);
    (w0, w1)
}

/// `1 / 360`, rounded.
const INV_360: f64 = 1.0 / 360.0;

/// Previous angles (degrees) below which [`near_deg_fast`]'s quotients
/// are below `2^24`: `|target - x| <= |target| + 360` for its candidates
/// `x` (in `[-180, 360]`), and `(2^32 + 360) / 360 < 1.2e7`.
const FAR_DEG: f64 = 4_294_967_296.0;

/// [`unwrap_deg`](super::unwrap_deg) by a multiplication by `1 / 360`
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
fn unwrap_deg_fast<const SIGNED_ZERO: bool>(x: f64, target: f64) -> (f64, bool) {
    // Adding 1.5·2^52 rounds to an integer below 2^51.
    const MAGIC: f64 = 6_755_399_441_055_744.0;
    let q = (target - x) * INV_360;
    let r = (q + MAGIC) - MAGIC;
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
pub(crate) fn near_deg_fast(
    rad: [f64; 3],
    locked: bool,
    previous_deg: [f64; 3],
) -> ([f64; 3], bool) {
    let (a, b, c) = (rad[0].to_degrees(), rad[1].to_degrees(), rad[2].to_degrees());
    let [pa, pb, pc] = previous_deg;
    let (f0, t_f0) = unwrap_deg_fast::<true>(a, pa);
    let (f1, t_f1) = unwrap_deg_fast::<true>(b, pb);
    let (f2, t_f2) = unwrap_deg_fast::<true>(c, pc);
    let (s0, t_s0) = unwrap_deg_fast::<false>(a + 180.0, pa);
    let (s1, t_s1) = unwrap_deg_fast::<false>(180.0 - b, pb);
    let (s2, t_s2) = unwrap_deg_fast::<false>(c + 180.0, pc);
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

/// One lane's mix from its two quaternions (order axes): the SLERP (or the
/// layer), the matrix, the extraction and the continuity choice:
/// [`near_deg_fast`] (and whether it decided), or with `EXACT`,
/// [`near_deg`].
#[inline(always)]
fn mix_one<const EXACT: bool>(
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
        quat_mul(qa, slerp_from_identity(delta, t))
    } else {
        slerp_lane(qa, qb, t)
    };
    let (r, n, ok) = quat_matrix_scaled::<EXACT>(q);
    let (rad, locked) = extract_rad_mix::<EXACT>(r, n, e);
    if EXACT {
        (near_deg(rad, locked, e, near), false)
    } else {
        let (angles, undecided) = near_deg_fast(rad, locked, near);
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
fn mix_lanes<const LAYERED: bool, const PAD: usize>(m: &mut MixLanes, src: Source<'_>, t: f64) {
    let n = m.n.div_ceil(PAD) * PAD;
    let e = &m.parity[..n];
    let [p0, p1, p2] = &m.near;
    let (p0, p1, p2) = (&p0[..n], &p1[..n], &p2[..n]);
    let [i0, i1, i2, i3] = &m.inv;
    let (i0, i1, i2, i3) = (&i0[..n], &i1[..n], &i2[..n], &i3[..n]);
    let [o0, o1, o2] = &mut m.out;
    let (o0, o1, o2) = (&mut o0[..n], &mut o1[..n], &mut o2[..n]);
    let redo = &mut m.redo[..n];
    // One lane from its two quaternions (a macro, not a closure: a
    // closure is a function of its own, compiled without the caller's
    // target features).
    macro_rules! lane {
        ($l:expr, $qa:expr, $qb:expr, $huge:expr) => {{
            let l = $l;
            let inv = [i0[l], i1[l], i2[l], i3[l]];
            let ([a, b, c], undecided) =
                mix_one::<false>($qa, $qb, e[l], inv, [p0[l], p1[l], p2[l]], t, LAYERED);
            o0[l] = a;
            o1[l] = b;
            o2[l] = c;
            redo[l] = select(undecided | $huge, 1.0, 0.0);
        }};
    }
    match src {
        Source::Angles => {
            let [h0, h1, h2, h3, h4, h5] = &m.ang;
            let (h0, h1, h2) = (&h0[..n], &h1[..n], &h2[..n]);
            let (h3, h4, h5) = (&h3[..n], &h4[..n], &h5[..n]);
            for l in 0..n {
                let qa = quat_of([h0[l], h1[l], h2[l]], e[l]);
                let qb = quat_of([h3[l], h4[l], h5[l]], e[l]);
                let huge = is_huge(h0[l])
                    | is_huge(h1[l])
                    | is_huge(h2[l])
                    | is_huge(h3[l])
                    | is_huge(h4[l])
                    | is_huge(h5[l]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rotation::{euler_to_mat3, mat3_to_euler, mat3_to_euler_near};

    /// Distance in ulps between two doubles of the same sign (or zeros).
    fn ulps(a: f64, b: f64) -> u64 {
        if a == b {
            return 0;
        }
        let key = |v: f64| {
            let bits = v.to_bits() as i64;
            if bits < 0 { i64::MIN - bits } else { bits }
        };
        key(a).abs_diff(key(b))
    }

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
    }

    /// The mix lanes' `atan2` is within 3 ulp of `f64::atan2` on the
    /// pairs the lanes make (every quadrant, magnitudes from 1e-13 to 4,
    /// ratios across the reduction's boundaries, axes and signed zeros),
    /// and plain, AVX2 and AVX-512 loops give it the same bits.
    #[test]
    fn mix_atan2_is_within_three_ulps_of_libm() {
        let mut rng = Rng(8080);
        let mut worst = 0;
        let mut pairs = Vec::new();
        for n in 0..2_000_000u32 {
            let scale = [1.0, 4.0, 1e-3, 1e-9, 1e-13][(n % 5) as usize];
            let (y, x) = match n % 7 {
                // Near the boundaries 7/16 and 1 of |y| / |x| (and of its
                // inverse), and the axes.
                0 => (7.0 / 16.0 * (1.0 + 1e-12 * rng.unit()), 1.0),
                1 => (1.0 + 1e-15 * rng.unit(), 1.0),
                2 => (1.0, 7.0 / 16.0 * (1.0 + 1e-12 * rng.unit())),
                3 => ([0.0, -0.0, 1.0][(n % 3) as usize], [1.0, -1.0, 0.5][(n / 3 % 3) as usize]),
                _ => (rng.unit(), rng.unit()),
            };
            let signs = rng.next();
            let y = if signs & 1 == 0 { y } else { -y } * scale;
            let x = if signs & 2 == 0 { x } else { -x } * scale;
            if y == 0.0 && x == 0.0 {
                continue;
            }
            let (got, want) = (atan2_mix(y, x), y.atan2(x));
            assert!(got.is_sign_negative() == want.is_sign_negative(), "({y}, {x}): {got}");
            let u = ulps(got, want);
            assert!(u <= 3, "({y:e}, {x:e}): {got} vs {want}, {u} ulp");
            worst = worst.max(u);
            if n < 4096 {
                pairs.push((y, x, got));
            }
        }
        eprintln!("mix atan2: worst {worst} ulp");
        // The loop on SIMD lanes gives the scalar bits.
        #[inline(always)]
        fn lanes(p: &[(f64, f64, f64)], out: &mut [f64]) {
            for (o, &(y, x, _)) in out.iter_mut().zip(p) {
                *o = atan2_mix(y, x);
            }
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        fn lanes_avx512(p: &[(f64, f64, f64)], out: &mut [f64]) {
            lanes(p, out);
        }
        let mut out = vec![0.0; pairs.len()];
        lanes(&pairs, &mut out);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F, as checked just above.
            #[allow(unsafe_code)]
            unsafe {
                lanes_avx512(&pairs, &mut out);
            }
        }
        for (&(y, x, want), got) in pairs.iter().zip(out) {
            assert_eq!(got.to_bits(), want.to_bits(), "({y}, {x})");
        }
    }

    /// Every quadrant, tiny and huge ratios, signed zeros, axes, infinities,
    /// equal magnitudes, subnormals and random bit patterns: within 2 ulp of
    /// `f64::atan2`, the special values exactly, and the slice gives the
    /// scalar's bits.
    #[test]
    fn atan2_is_within_two_ulps_of_libm() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let specials = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            -5e-324,
            5e-324,
            f64::MAX,
            -f64::MAX,
            1e-300,
            1e300,
            0.5,
            7.0 / 16.0,
            11.0 / 16.0,
            19.0 / 16.0,
            39.0 / 16.0,
        ];
        let mut ys = Vec::new();
        let mut xs = Vec::new();
        for &y in &specials {
            for &x in &specials {
                ys.push(y);
                xs.push(x);
            }
        }
        for n in 0..3_000_000u64 {
            let (y, x) = match n % 6 {
                // Uniform on the square: every quadrant.
                0 => (rng.unit(), rng.unit()),
                // Ratios over a huge range of exponents.
                1 => {
                    let e = (rng.next() % 160) as i32 - 80;
                    (rng.unit() * 2f64.powi(e), rng.unit())
                }
                // Near the interval boundaries of the reduction and
                // equal magnitudes.
                2 => {
                    let x = rng.unit();
                    let r = [7.0 / 16.0, 11.0 / 16.0, 1.0, 19.0 / 16.0, 39.0 / 16.0]
                        [(rng.next() % 5) as usize];
                    (x * r * (1.0 + rng.unit() * 1e-12), x)
                }
                // Random bit patterns (any exponent, NaNs included).
                3 => (f64::from_bits(rng.next()), f64::from_bits(rng.next())),
                // Unit vectors: what rotation extraction passes.
                4 => {
                    let (s, c) = (rng.unit() * 4.0).sin_cos();
                    (s, c)
                }
                // Subnormal and tiny against ordinary.
                _ => (rng.unit() * 1e-310, rng.unit() * 10f64.powi((rng.next() % 40) as i32 - 20)),
            };
            ys.push(y);
            xs.push(x);
        }
        let mut out = vec![0.0; ys.len()];
        atan2_slice(&ys, &xs, &mut out);
        let mut worst = (0, 0.0, 0.0);
        for ((&y, &x), &got) in ys.iter().zip(&xs).zip(&out) {
            assert_eq!(
                got.to_bits(),
                atan2(y, x).to_bits(),
                "slice and scalar differ at ({y:e}, {x:e})"
            );
            let want = y.atan2(x);
            if want.is_nan() {
                assert!(got.is_nan(), "atan2({y:e}, {x:e}) = {got:e}, want NaN");
                continue;
            }
            assert_eq!(
                got.is_sign_negative(),
                want.is_sign_negative(),
                "sign of atan2({y:e}, {x:e})"
            );
            let u = ulps(got, want);
            if u > worst.0 {
                worst = (u, y, x);
            }
        }
        eprintln!("atan2: worst error {} ulp at ({:e}, {:e})", worst.0, worst.1, worst.2);
        assert!(worst.0 <= 2, "atan2 error {} ulp at ({:e}, {:e})", worst.0, worst.1, worst.2);
        // The special values of C99 exactly.
        use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};
        assert_eq!(atan2(0.0, -0.0), PI);
        assert_eq!(atan2(-0.0, -0.0), -PI);
        assert_eq!(atan2(0.0, 0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(atan2(-0.0, 0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(atan2(1.0, 0.0), FRAC_PI_2);
        assert_eq!(atan2(-1.0, -0.0), -FRAC_PI_2);
        assert_eq!(atan2(f64::INFINITY, f64::INFINITY), FRAC_PI_4);
        assert_eq!(atan2(1.0, f64::NEG_INFINITY), PI);
        assert!(atan2(f64::NAN, 1.0).is_nan() && atan2(1.0, f64::NAN).is_nan());
    }

    /// [`atan2`] as it was written before its reduction took the centre
    /// `m` (five-way picks of each coefficient; the operands and the
    /// polynomial are unchanged and shared): the reference the new
    /// reduction must give bit for bit.
    fn atan2_five_way(y: f64, x: f64) -> f64 {
        let (a, b) = atan2_operands(y, x);
        let k = 16.0 * a;
        let (c7, c11, c19, c39) = (k <= 7.0 * b, k <= 11.0 * b, k <= 19.0 * b, k <= 39.0 * b);
        let pick = |v: [f64; 5]| {
            select(c7, v[0], select(c11, v[1], select(c19, v[2], select(c39, v[3], v[4]))))
        };
        let pa = pick([1.0, 2.0, 1.0, 1.0, 0.0]);
        let pb = pick([0.0, -1.0, -1.0, -1.5, -1.0]);
        let qa = pick([0.0, 1.0, 1.0, 1.5, 1.0]);
        let qb = pick([1.0, 2.0, 1.0, 1.0, 0.0]);
        let hi = pick([0.0, ATAN_HI[0], ATAN_HI[1], ATAN_HI[2], ATAN_HI[3]]);
        let lo = pick([0.0, ATAN_LO[0], ATAN_LO[1], ATAN_LO[2], ATAN_LO[3]]);
        let num = pa * a + pb * b;
        let den = qa * a + qb * b;
        atan2_finish::<false>(y, x, num, den, hi, lo)
    }

    /// The centre-based reduction gives the five-way form's bits: random
    /// pairs over every quadrant and a wide range of ratios, the interval
    /// boundaries and the special values.
    #[test]
    fn atan2_keeps_the_bits_of_the_five_way_reduction() {
        let mut rng = Rng(0x5eed);
        let specials =
            [0.0, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, 5e-324, f64::MAX, 1e-300];
        let mut pairs = Vec::new();
        for &y in &specials {
            for &x in &specials {
                pairs.push((y, x));
            }
        }
        for n in 0..2_000_000u64 {
            let x = rng.unit();
            pairs.push(match n % 4 {
                0 => (rng.unit(), x),
                1 => (rng.unit() * 2f64.powi((rng.next() % 120) as i32 - 60), x),
                2 => {
                    let r = [7.0 / 16.0, 11.0 / 16.0, 1.0, 19.0 / 16.0, 39.0 / 16.0]
                        [(rng.next() % 5) as usize];
                    (x * r * (1.0 + rng.unit() * 1e-15), x)
                }
                _ => (f64::from_bits(rng.next()), f64::from_bits(rng.next())),
            });
        }
        for (y, x) in pairs {
            let (got, want) = (atan2(y, x), atan2_five_way(y, x));
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "atan2({y:e}, {x:e}): {got:e} vs {want:e}"
            );
        }
    }

    /// The lane pass gives the same bits on every instruction set (plain
    /// SSE2, AVX2, AVX-512: no FMA anywhere), and the scalar path's angles
    /// (`euler_to_quat`, `resample::slerp`, `quat_to_euler_near`) within
    /// 1e-9 degrees away from gimbal lock, on random angles (huge ones
    /// included), weights and previous angles, for blends and layers.
    #[test]
    fn mix_lanes_are_the_same_bits_everywhere_and_the_scalar_path() {
        use crate::edit::resample::slerp;
        use crate::rotation::{euler_to_quat, quat_to_euler_near};
        let mut rng = Rng(2024);
        let n = 1001;
        let mut lanes = MixLanes::with_capacity(n);
        for round in 0..40 {
            let layered = round % 2 == 1;
            let t =
                [0.0, 1.0, 0.5, 1e-9, 0.3, 0.999][round % 6] * (1.0 - 1e-3 * (round / 6) as f64);
            lanes.clear();
            let mut cases = Vec::new();
            for k in 0..n {
                let order = RotationOrder::ALL[(rng.next() % 6) as usize];
                let mut ang = || match rng.next() % 9 {
                    0 => 1e20 * rng.unit(),
                    1 => 90.0,
                    2 => -180.0,
                    _ => 400.0 * rng.unit(),
                };
                let a = [ang(), ang(), ang()];
                let b = if k % 7 == 0 { a } else { [ang(), ang(), ang()] };
                let near = [ang() % 1000.0, ang() % 1000.0, ang() % 1000.0];
                let inv = euler_to_quat(&order.axes(), &[ang(), ang(), ang()]).inverse();
                lanes.push(order, a, b, near, layered.then_some(inv));
                cases.push((order, a, b, near, inv));
            }
            lanes.solve(t, layered);
            let best = lanes.out.clone();
            mix_lanes_plain(&mut lanes, t, layered);
            assert_eq!(lanes.out, best, "plain loop");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                #[allow(unsafe_code)]
                // SAFETY: the CPU supports AVX2, as checked just above.
                unsafe {
                    if layered {
                        mix_lanes_avx2::<true>(&mut lanes, Source::Angles, t);
                    } else {
                        mix_lanes_avx2::<false>(&mut lanes, Source::Angles, t);
                    }
                }
                lanes.redo_undecided(Source::Angles, t, layered);
                assert_eq!(lanes.out, best, "AVX2 loop");
            }
            for (l, (order, a, b, near, inv)) in cases.into_iter().enumerate() {
                let axes = order.axes();
                let (qa, qb) = (euler_to_quat(&axes, &a), euler_to_quat(&axes, &b));
                let q = if layered {
                    qa * slerp(DQuat::IDENTITY, inv * qb, t)
                } else {
                    slerp(qa, qb, t)
                };
                let want = quat_to_euler_near(q, order, near);
                let got = lanes.angles(l);
                let m = |e: [f64; 3]| DMat3::from_quat(euler_to_quat(&axes, &e));
                let d =
                    (m(got) - m(want)).to_cols_array().iter().fold(0.0f64, |x, y| x.max(y.abs()));
                assert!(d < 1e-12, "{order} t {t}: {got:?} vs {want:?}");
                // Away from gimbal lock (the middle angle's cosine above
                // 1e-6, about 2e-4 degrees off ±90°).
                if crate::rotation::sin_cos_deg(want[1]).1.abs() > 1e-6 {
                    assert_angles_close(got, want, &format!("{order} t {t} layered {layered}"));
                }
            }
        }
    }

    /// The plain (SSE2) lane loop, then the undecided lanes again, as
    /// [`MixLanes::solve`] runs them.
    fn mix_lanes_plain(lanes: &mut MixLanes, t: f64, layered: bool) {
        if layered {
            mix_lanes::<true, STEP>(lanes, Source::Angles, t);
        } else {
            mix_lanes::<false, STEP>(lanes, Source::Angles, t);
        }
        lanes.redo_undecided(Source::Angles, t, layered);
    }

    /// The lane pass as it was before its continuity choice took
    /// [`near_deg_fast`]: one lane at a time, each half angle's sine and
    /// cosine by the scalar `sin_cos_deg` (which reduces huge angles
    /// itself), the closed-form quaternion, the SLERP or layer, the
    /// extraction with the general [`atan2`] and [`near_deg`]'s seven
    /// divisions.
    fn lane_reference(
        order: RotationOrder,
        a: [f64; 3],
        b: [f64; 3],
        near: [f64; 3],
        inv: Option<DQuat>,
        t: f64,
    ) -> [f64; 3] {
        use crate::rotation::sin_cos_deg;
        let (i, j, k, e) = PERMUTATIONS[order as usize];
        let quat = |x: [f64; 3]| {
            let sc = x.map(|x| sin_cos_deg(0.5 * x));
            euler3_quat_lane(sc.map(|p| p.0), sc.map(|p| p.1), e)
        };
        let (qa, qb) = (quat(a), quat(b));
        let q = match inv {
            Some(q) => {
                let v = [q.x, q.y, q.z];
                let delta = quat_mul([e * v[i], e * v[j], e * v[k], q.w], qb);
                quat_mul(qa, slerp_lane([0.0, 0.0, 0.0, 1.0], delta, t))
            }
            None => slerp_lane(qa, qb, t),
        };
        let (r, n, _) = quat_matrix_scaled::<true>(q);
        let (rad, locked) = extract_rad_mix::<true>(r, n, e);
        near_deg(rad, locked, e, near)
    }

    /// Angles that make the continuity choice hard: half and whole turns
    /// from each other, exact quarter turns, huge ones and ordinary ones.
    fn hard_angle(rng: &mut Rng) -> f64 {
        match rng.next() % 12 {
            0 => 180.0,
            1 => -180.0,
            2 => 90.0,
            3 => -90.0,
            4 => 0.0,
            5 => 540.0,
            6 => 1e20 * rng.unit(),
            7 => 180.0 + 1e-9 * rng.unit(),
            8 => (rng.next() % 9) as f64 * 45.0 - 180.0,
            _ => 400.0 * rng.unit(),
        }
    }

    /// The fast continuity choice is [`near_deg`]'s, bit for bit, wherever
    /// it says it decided, on random principal extractions next to random,
    /// half-turn and whole-turn previous angles (ties included); and it
    /// decides nearly everywhere on ordinary motion.
    #[test]
    fn fast_continuity_choice_is_near_deg_where_it_decides() {
        let mut rng = Rng(31337);
        let (mut decided, mut total) = (0usize, 0usize);
        for n in 0..2_000_000u64 {
            let e = if n % 2 == 0 { 1.0 } else { -1.0 };
            let deg = [hard_angle(&mut rng) % 360.0, rng.unit() * 90.0, hard_angle(&mut rng)];
            let deg = [
                crate::rotation::canonical_deg(deg[0].clamp(-180.0, 180.0)),
                match n % 5 {
                    0 => 90.0,
                    1 => -90.0,
                    _ => deg[1],
                },
                crate::rotation::canonical_deg(deg[2].clamp(-180.0, 180.0)),
            ];
            let rad = deg.map(f64::to_radians);
            let locked = n % 11 == 0;
            let prev = match n % 6 {
                0 => deg,
                1 => [deg[0] + 180.0, deg[1] - 180.0, deg[2] + 180.0],
                2 => [deg[0] - 180.0, 180.0 - deg[1], deg[2] + 540.0],
                3 => [hard_angle(&mut rng), hard_angle(&mut rng), hard_angle(&mut rng)],
                4 => [deg[0] + 0.1 * rng.unit(), deg[1] + 0.1 * rng.unit(), deg[2] + 180.0],
                _ => [1e9 * rng.unit(), 1e7 * rng.unit(), 360.0 * rng.unit()],
            };
            let (got, undecided) = near_deg_fast(rad, locked, prev);
            let want = near_deg(rad, locked, e, prev);
            total += 1;
            if !undecided {
                decided += 1;
                assert_eq!(
                    got.map(f64::to_bits),
                    want.map(f64::to_bits),
                    "{rad:?} locked {locked} e {e} near {prev:?}: {got:?} vs {want:?}"
                );
            }
        }
        eprintln!("fast continuity choice: {decided} of {total} decided");
        assert!(decided > total / 2, "{decided} of {total} decided");
        // Ordinary motion: small steps from the previous frame.
        let mut undecided = 0;
        for _ in 0..100_000 {
            let deg = [rng.unit() * 180.0, rng.unit() * 89.0, rng.unit() * 180.0];
            let prev = deg.map(|d| d + 2.0 * rng.unit());
            let rad = deg.map(f64::to_radians);
            let (got, u) = near_deg_fast(rad, false, prev);
            undecided += u as usize;
            if !u {
                assert_eq!(
                    got.map(f64::to_bits),
                    near_deg(rad, false, 1.0, prev).map(f64::to_bits)
                );
            }
        }
        assert_eq!(undecided, 0, "undecided on ordinary motion");
    }

    /// Random and hard cases, many of them undecided by the fast choice:
    /// the lane pass (whichever instruction set) gives the reference
    /// lane's bits, for blends and layers; and [`QuatLanes`] with
    /// [`MixLanes::solve_quats`] give those same bits.
    #[test]
    fn mix_lanes_are_the_reference_lane_bit_for_bit() {
        use crate::rotation::euler_to_quat;
        let mut rng = Rng(4711);
        let n = 997;
        let mut lanes = MixLanes::with_capacity(n);
        let mut by_quats = MixLanes::with_capacity(n);
        let (mut qa, mut qb) = (QuatLanes::with_capacity(n), QuatLanes::with_capacity(n));
        let mut redone = 0;
        for round in 0..60 {
            let layered = round % 3 == 2;
            let t = [0.0, 1.0, 0.5, 1e-9, 0.3, 0.999, 0.25][round % 7];
            lanes.clear();
            by_quats.clear();
            qa.clear();
            qb.clear();
            let mut cases = Vec::new();
            for k in 0..n {
                let order = RotationOrder::ALL[(rng.next() % 6) as usize];
                let a = [hard_angle(&mut rng), hard_angle(&mut rng), hard_angle(&mut rng)];
                let b = match k % 5 {
                    0 => a,
                    1 => [a[0] + 360.0, a[1], a[2] - 720.0],
                    _ => [hard_angle(&mut rng), hard_angle(&mut rng), hard_angle(&mut rng)],
                };
                let near = match k % 4 {
                    0 => a.map(|x| x % 1000.0),
                    1 => a.map(|x| (x + 180.0) % 1000.0),
                    _ => [hard_angle(&mut rng) % 1e4, hard_angle(&mut rng), hard_angle(&mut rng)],
                };
                let inv = layered.then(|| {
                    let r = [hard_angle(&mut rng), hard_angle(&mut rng), hard_angle(&mut rng)];
                    euler_to_quat(&order.axes(), &r).inverse()
                });
                assert_eq!(lanes.push(order, a, b, near, inv), k);
                assert_eq!(by_quats.push_near(order, near, inv), k);
                assert_eq!((qa.push(order, a), qb.push(order, b)), (k, k));
                cases.push((order, a, b, near, inv));
            }
            lanes.solve(t, layered);
            qa.solve();
            qb.solve();
            by_quats.solve_quats(&qa, &qb, t, layered);
            redone += lanes.redo[..n].iter().filter(|&&r| r != 0.0).count();
            for (l, &(order, a, b, near, inv)) in cases.iter().enumerate() {
                let want = lane_reference(order, a, b, near, inv, t).map(f64::to_bits);
                let what = format!("{order} {a:?} {b:?} near {near:?} t {t} inv {inv:?}");
                assert_eq!(lanes.angles(l).map(f64::to_bits), want, "{what}");
                assert_eq!(by_quats.angles(l).map(f64::to_bits), want, "quats: {what}");
                // The quaternion lanes hold the rotation in the order's axes.
                let (i, j, k, e) = PERMUTATIONS[order as usize];
                let q = euler_to_quat(&order.axes(), &a);
                let v = [q.x, q.y, q.z];
                let want_q = DQuat::from_xyzw(e * v[i], e * v[j], e * v[k], q.w);
                let got_q = DQuat::from_array(qa.quat(l));
                assert!(
                    got_q.abs_diff_eq(want_q, 1e-14) || got_q.abs_diff_eq(-want_q, 1e-14),
                    "{order} {a:?}: {got_q:?} vs {want_q:?}"
                );
            }
            mix_lanes_plain(&mut lanes, t, layered);
            for (l, &(order, a, b, near, inv)) in cases.iter().enumerate() {
                let want = lane_reference(order, a, b, near, inv, t).map(f64::to_bits);
                assert_eq!(lanes.angles(l).map(f64::to_bits), want, "plain loop");
            }
        }
        eprintln!("mix lanes: {redone} lanes solved again");
        assert!(redone > 100, "only {redone} lanes exercised the exact choice");
    }

    /// Every frame of every corpus file mixed with the same file reversed,
    /// each frame next to the output frame before it: the lanes (from
    /// angles, and from [`QuatLanes`]) give the reference lane's bits.
    #[test]
    fn mix_lanes_are_the_reference_lane_on_the_corpus() {
        let test = "rotation::batch::mix_lanes_are_the_reference_lane_on_the_corpus";
        let Some(clips) = crate::test_corpus::clips(test) else {
            return;
        };
        let (mut compared, mut redone) = (0usize, 0usize);
        for (name, bvh) in clips {
            let joints: Vec<_> = bvh
                .skeleton()
                .joints()
                .iter()
                .map(crate::edit::JointChannels::of)
                .filter_map(|j| Some((j.rot_index, j.rotation_order()?)))
                .collect();
            let m = bvh.motion();
            let frames = m.n_frames();
            if joints.is_empty() || frames == 0 {
                continue;
            }
            let n = joints.len();
            let mut lanes = MixLanes::with_capacity(n);
            let mut by_quats = MixLanes::with_capacity(n);
            let (mut qa, mut qb) = (QuatLanes::with_capacity(n), QuatLanes::with_capacity(n));
            let inv_frame = m.frame(frames / 2);
            for (t, layered) in [(0.3, false), (0.5, false), (0.7, true)] {
                let mut prev = m.frame(0).to_vec();
                for k in 0..frames {
                    let (fa, fb) = (m.frame(k), m.frame(frames - 1 - k));
                    lanes.clear();
                    by_quats.clear();
                    qa.clear();
                    qb.clear();
                    let mut cases = Vec::with_capacity(n);
                    for &(idx, order) in &joints {
                        let (a, b, near) =
                            (idx.map(|c| fa[c]), idx.map(|c| fb[c]), idx.map(|c| prev[c]));
                        let inv = layered.then(|| {
                            crate::rotation::euler_to_quat(
                                &order.axes(),
                                &idx.map(|c| inv_frame[c]),
                            )
                            .inverse()
                        });
                        lanes.push(order, a, b, near, inv);
                        by_quats.push_near(order, near, inv);
                        qa.push(order, a);
                        qb.push(order, b);
                        cases.push((order, a, b, near, inv));
                    }
                    lanes.solve(t, layered);
                    qa.solve();
                    qb.solve();
                    by_quats.solve_quats(&qa, &qb, t, layered);
                    redone += lanes.redo[..n].iter().filter(|&&r| r != 0.0).count();
                    for (l, &(order, a, b, near, inv)) in cases.iter().enumerate() {
                        let want = lane_reference(order, a, b, near, inv, t);
                        let got = lanes.angles(l);
                        assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{}", name);
                        assert_eq!(by_quats.angles(l).map(f64::to_bits), want.map(f64::to_bits));
                        for (&c, v) in joints[l].0.iter().zip(got) {
                            prev[c] = v;
                        }
                    }
                    compared += n;
                }
            }
        }
        eprintln!("mix lanes on the corpus: {compared} lanes compared, {redone} solved again");
        assert!(compared > 1_000_000, "{compared} lanes compared");
    }

    /// `sin_quarter` against libm's `sin` on `[0, π/2]`.
    #[test]
    fn sine_of_a_quarter_turn_is_within_one_ulp() {
        let mut rng = Rng(12345);
        let mut worst = 0;
        for n in 0..1_000_000 {
            let x = if n == 0 {
                std::f64::consts::FRAC_PI_2
            } else {
                (rng.unit() + 1.0) * std::f64::consts::FRAC_PI_4
            };
            worst = worst.max(ulps(sin_quarter(x), x.sin()));
        }
        assert!(worst <= 1, "sin error {worst} ulp");
    }

    /// SLERP written plainly from its formula, with `acos`.
    fn slerp_formula(q0: DQuat, q1: DQuat, t: f64) -> DQuat {
        let q1 = if q0.dot(q1) < 0.0 { -q1 } else { q1 };
        let theta = q0.dot(q1).clamp(-1.0, 1.0).acos();
        if theta.sin() < 1e-9 {
            return (q0 * (1.0 - t) + q1 * t).normalize();
        }
        q0 * (((1.0 - t) * theta).sin() / theta.sin()) + q1 * ((t * theta).sin() / theta.sin())
    }

    fn random_quat(rng: &mut Rng) -> DQuat {
        loop {
            let q = DQuat::from_xyzw(rng.unit(), rng.unit(), rng.unit(), rng.unit());
            let l = q.length();
            if l > 0.1 && l <= 1.0 {
                return q / l;
            }
        }
    }

    #[test]
    fn slerp_slice_is_slerp_from_its_formula() {
        let mut rng = Rng(777);
        let n = 20_000;
        let mut a = Vec::new();
        let mut b = Vec::new();
        for k in 0..n {
            let q = random_quat(&mut rng);
            a.push(q);
            b.push(match k % 5 {
                0 => random_quat(&mut rng),
                1 => -q,                                             // the same rotation
                2 => (q + random_quat(&mut rng) * 1e-7).normalize(), // nearly the same
                3 => -random_quat(&mut rng),                         // the long way round
                _ => DQuat::from_xyzw(-q.y, q.x, -q.w, q.z),         // a half turn away
            });
        }
        let mut out = vec![DQuat::IDENTITY; n];
        for t in [0.0, 1e-9, 0.25, 0.5, 0.8, 1.0, 1.5, -0.25] {
            slerp_slice(&a, &b, t, &mut out);
            for k in 0..n {
                let want = slerp_formula(a[k], b[k], t);
                assert!(out[k].abs_diff_eq(want, 2e-13), "t {t}: {:?} vs {want:?}", out[k]);
                let scalar = crate::edit::resample::slerp(a[k], b[k], t);
                assert!(out[k].abs_diff_eq(scalar, 2e-15), "t {t}: {:?} vs {scalar:?}", out[k]);
            }
        }
        // The ends are the inputs (the second on the shortest arc).
        slerp_slice(&a, &b, 1.0, &mut out);
        for k in 0..n {
            let b = if a[k].dot(b[k]) < 0.0 { -b[k] } else { b[k] };
            assert!(out[k].abs_diff_eq(b, 1e-15));
        }
    }

    /// The closed-form three-channel quaternion against the product of the
    /// elementary quaternions, for every order.
    #[test]
    fn closed_form_euler_quaternions_are_the_products() {
        use crate::rotation::{euler_to_quat, euler3_to_quat_sin_cos, sin_cos_deg};
        let mut rng = Rng(99);
        for n in 0..60_000 {
            let order = RotationOrder::ALL[n % 6];
            let angles = [rng.unit() * 400.0, rng.unit() * 400.0, rng.unit() * 400.0];
            let half: Vec<(f64, f64)> = angles.iter().map(|a| sin_cos_deg(0.5 * a)).collect();
            let q = euler3_to_quat_sin_cos(
                order,
                [half[0].0, half[1].0, half[2].0],
                [half[0].1, half[1].1, half[2].1],
            );
            let want = euler_to_quat(&order.axes(), &angles);
            assert!(q.abs_diff_eq(want, 1e-15), "{order} {angles:?}: {q:?} vs {want:?}");
        }
    }

    fn assert_angles_close(got: [f64; 3], want: [f64; 3], what: &str) {
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= 1e-9, "{what}: {got:?} vs {want:?}");
        }
    }

    /// Random rotations, gimbal lock (exact and near), ±180° wraps and far
    /// previous angles: the batch gives the scalar extraction's angles.
    #[test]
    fn euler_batch_matches_the_scalar_extraction() {
        let mut rng = Rng(4242);
        let mut batch = EulerBatch::new();
        let mut cases = Vec::new();
        for n in 0..60_000 {
            let order = RotationOrder::ALL[n % 6];
            let mut angles = [rng.unit() * 180.0, rng.unit() * 90.0, rng.unit() * 180.0];
            match n % 7 {
                0 => angles[1] = if rng.unit() < 0.0 { 90.0 } else { -90.0 },
                1 => angles[1] = 90.0 - rng.unit().abs() * 1e-7,
                2 => angles[0] = 180.0 - rng.unit().abs() * 1e-10,
                3 => angles = [180.0, 0.0, -180.0],
                4 => angles[2] = -180.0,
                _ => {}
            }
            let m = euler_to_mat3(&order.axes(), &angles);
            let near = match n % 4 {
                0 => None,
                1 => Some(angles),
                2 => Some([angles[0] + 350.0, angles[1] - 20.0, angles[2] + 725.0]),
                _ => Some([rng.unit() * 1000.0, rng.unit() * 1000.0, rng.unit() * 1000.0]),
            };
            cases.push((m, order, near));
        }
        // Twice: the second time in a reused batch.
        for _ in 0..2 {
            batch.clear();
            for (m, order, near) in &cases {
                batch.push_mat3(m, *order, *near);
            }
            batch.solve();
            for (i, (m, order, near)) in cases.iter().enumerate() {
                let want = match near {
                    Some(p) => mat3_to_euler_near(*m, *order, *p),
                    None => mat3_to_euler(*m, *order),
                };
                assert_angles_close(batch.angles(i), want, &format!("{order} near {near:?}"));
            }
        }
    }
}
