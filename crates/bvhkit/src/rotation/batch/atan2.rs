//! `atan2` in fdlibm's reduction and polynomial, branch-free: [`atan2`](fn@atan2),
//! [`atan2_slice`], and the unit and mix variants the extractions use.

use super::*;

// fdlibm `s_atan.c`: atan of the interval centres 0.5, 1, 1.5 and infinity
// (high and low parts), and the odd minimax polynomial on |t| <= 7/16. The
// literals keep the digits they are published with; each rounds to the
// intended f64 (π/4 and π/2 among them).
#[allow(clippy::excessive_precision, clippy::approx_constant)]
pub(super) const ATAN_HI: [f64; 4] = [
    4.636_476_090_008_060_935_15e-01,
    7.853_981_633_974_482_789_99e-01,
    9.827_937_232_473_290_540_82e-01,
    1.570_796_326_794_896_558_00e+00,
];
#[allow(clippy::excessive_precision)]
pub(super) const ATAN_LO: [f64; 4] = [
    2.269_877_745_296_168_709_24e-17,
    3.061_616_997_868_383_017_93e-17,
    1.390_331_103_123_099_845_16e-17,
    6.123_233_995_736_766_035_87e-17,
];
#[allow(clippy::excessive_precision)]
pub(super) const AT: [f64; 11] = [
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
pub(super) const PI_HI: f64 = 3.141_592_653_589_793_116_00e+00;
#[allow(clippy::excessive_precision)]
pub(super) const PI_LO: f64 = 1.224_646_799_147_353_177_20e-16;
#[allow(clippy::excessive_precision, clippy::approx_constant)]
pub(super) const PIO2_HI: f64 = 1.570_796_326_794_896_558_00e+00;
#[allow(clippy::excessive_precision)]
pub(super) const PIO2_LO: f64 = 6.123_233_995_736_766_035_87e-17;

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

/// [`atan2`](fn@atan2) of a pair that the lanes of [`MixLanes`] make: unit vectors
/// within rounding (a rotation matrix's rows and columns, a quaternion's
/// `|q0 - q1|` and `|q0 + q1|`), or NaN. [`atan2_operands`] leaves such a
/// pair as it is (no infinity; the larger magnitude far from both scaling
/// limits, 1e300 and 1e-270), and is never (±0, ±0), the one pair with a
/// zero denominator or a mirror at `x = -0` ([`atan2_finish`]), so this is
/// [`atan2`](fn@atan2)'s bits without those steps.
#[inline(always)]
pub(super) fn atan2_unit(y: f64, x: f64) -> f64 {
    atan2_of::<true>(y, x, y.abs(), x.abs())
}

/// `atan2(y, x)` for the pairs the mix lanes make (finite, not both
/// zero, the larger magnitude between about `1e-250` and `1e250`: a
/// SLERP's sine and cosine, a rotation matrix's entries), within 3 ulp
/// of libm's: an octant reduction instead of [`atan2`](fn@atan2)'s five intervals
/// (fewer selects): `p / q` with `p = min(|y|, |x|)`, `q = max(|y|, |x|)`,
/// about 0 up to 7/16, else about 1 (fdlibm's `(r - 1) / (r + 1)`, as
/// `(p - q) / (q + p)`), so `|t| <= 7/16` for fdlibm's polynomial; then
/// `π/2 -` that where `|y| > |x|`, and the quadrant.
///
/// With `FAST` (the mixes' lanes, [`MixLanes`]'s `fast`), the same
/// reduction with [`atan_mix`] instead of fdlibm's polynomial and without
/// the low parts of `π/4`, `π/2` and `π` (below 1.3e-16): within 1e-15
/// of `atan2` (the SLERP's angle, whose error reaches the quaternion),
/// or with `SHORT` within 1.3e-13 radians, 7.5e-12 degrees (the Euler
/// extraction's three angles, whose error reaches nothing else).
#[inline(always)]
pub(super) fn atan2_mix<const FAST: bool, const SHORT: bool>(y: f64, x: f64) -> f64 {
    let (a, b) = (y.abs(), x.abs());
    let swap = a > b;
    let (p, q) = (select(swap, b, a), select(swap, a, b));
    // p > 7/16 q: the same test as fdlibm's 16 p > 7 q (scaling by 16 is
    // exact at these magnitudes), one product fewer.
    let one = p > 0.4375 * q;
    let num = select(one, p - q, p);
    let den = select(one, q + p, q);
    if FAST {
        let t = num / den;
        let at = select(one, ATAN_HI[1], 0.0) + atan_mix::<SHORT>(t);
        let at = select(swap, PIO2_HI - at, at);
        let r = select(x < 0.0, PI_HI - at, at);
        return r.copysign(y);
    }
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

/// `atan t` for `|t| <= 7/16`, the mixes' kernels: an odd polynomial
/// fitted for this range, evaluated in pairs (Estrin) rather than as one
/// chain: of degree 21 (ten coefficients; within 2e-16 of `atan` before
/// rounding) or, `SHORT`, of degree 17 (eight; within 1.2e-13).
#[inline(always)]
#[allow(clippy::excessive_precision)]
pub(super) fn atan_mix<const SHORT: bool>(t: f64) -> f64 {
    const A: [f64; 10] = [
        -0.3333333333333311,
        0.1999999999976452,
        -0.14285714244408274,
        0.11111108295894029,
        -0.09090811341993606,
        0.07690347573635323,
        -0.06642512464661499,
        0.05694964939457229,
        -0.04353825665020385,
        0.021065968775512825,
    ];
    const B: [f64; 8] = [
        -0.33333333333193504,
        0.1999999990454856,
        -0.14285703584841838,
        0.11110652551751889,
        -0.09081193291922054,
        0.07579044480307895,
        -0.05915005039016004,
        0.031044060328146807,
    ];
    let z = t * t;
    let z2 = z * z;
    let z4 = z2 * z2;
    let r = if SHORT {
        ((B[0] + z * B[1]) + z2 * (B[2] + z * B[3]))
            + z4 * ((B[4] + z * B[5]) + z2 * (B[6] + z * B[7]))
    } else {
        let z8 = z4 * z4;
        ((A[0] + z * A[1]) + z2 * (A[2] + z * A[3]))
            + z4 * ((A[4] + z * A[5]) + z2 * (A[6] + z * A[7]))
            + z8 * (A[8] + z * A[9])
    };
    t + t * (z * r)
}

/// [`atan2`](fn@atan2) from its operands `a` and `b` ([`atan2_operands`]); `UNIT`
/// as for [`atan2_finish`].
#[inline(always)]
pub(super) fn atan2_of<const UNIT: bool>(y: f64, x: f64, a: f64, b: f64) -> f64 {
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

/// [`atan2`](fn@atan2)'s operands: `|y|` and `|x|` with infinities made directions
/// ((∞, finite) → (1, 0), (∞, ∞) → (1, 1)) and both scaled by a power of two
/// so that 39·|x| and the reduction's sums stay finite and tiny inputs
/// normal.
#[inline(always)]
pub(super) fn atan2_operands(y: f64, x: f64) -> (f64, f64) {
    let (a, b) = (y.abs(), x.abs());
    let inf = a == f64::INFINITY || b == f64::INFINITY;
    let a = select(inf, select(a == f64::INFINITY, 1.0, 0.0), a);
    let b = select(inf, select(b == f64::INFINITY, 1.0, 0.0), b);
    let mx = select(a > b, a, b);
    let scale = select(mx > 1e300, 2f64.powi(-200), select(mx < 1e-270, 2f64.powi(200), 1.0));
    (a * scale, b * scale)
}

/// [`atan2`](fn@atan2) after its reduction: `atan t + atan m` for `t = num / den`
/// (fdlibm's polynomial; `hi`, `lo` the two parts of `atan m`), placed in
/// `y` and `x`'s quadrant. With `UNIT`, for a pair other than (±0, ±0)
/// (which [`atan2_unit`]'s never is): no zero denominator to guard, and
/// `x = -0` mirrors nothing (then `y ≠ 0`: ±π/2 as it is).
#[inline(always)]
pub(super) fn atan2_finish<const UNIT: bool>(
    y: f64,
    x: f64,
    num: f64,
    den: f64,
    hi: f64,
    lo: f64,
) -> f64 {
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

/// [`atan2`](fn@atan2) of every pair `(y[i], x[i])` into `out[i]`, the same bits, on
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
    atan2_loop(Simd::best(), y, x, out);
}

simd_kernel! {
    /// [`atan2_slice`]'s loop.
    fn atan2_loop(simd: Simd, y: &[f64], x: &[f64], out: &mut [f64]) {
        for ((o, &y), &x) in out.iter_mut().zip(y).zip(x) {
            *o = atan2(y, x);
        }
    }
}
