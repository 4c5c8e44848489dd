//! Rotation maths for BVH joints: Euler channels, matrices, quaternions,
//! the 6D representation and the exponential map.
//!
//! # Conventions
//!
//! * **Angles in BVH channels are in degrees.** Every function taking or
//!   returning Euler angles uses degrees; axis-angle and scaled-axis values
//!   use radians. Degrees are turned into radians in one place only
//!   ([`sin_cos_deg`]).
//! * **Rotation channels are applied in the order they are listed, acting on
//!   column vectors.** For `Zrotation Xrotation Yrotation` the joint rotation
//!   is `R = Rz(z) · Rx(x) · Ry(y)`, i.e. an *intrinsic* rotation: first about
//!   Z, then about the rotated X, then about the twice-rotated Y. A vector `v`
//!   in the joint's frame maps to `R · v` in the parent's frame. Angles are
//!   always given and returned in *listing order* (for `ZXY`: `[z, x, y]`).
//! * A joint may have 0, 1, 2 or 3 rotation channels; [`euler_to_mat3`] and
//!   [`euler_to_quat`] accept any such list. Extraction ([`mat3_to_euler`])
//!   needs the full three-axis [`RotationOrder`].
//! * Right-handed axes and the right-hand rule: a positive angle turns
//!   counter-clockwise when looking down the axis toward the origin, so
//!   `Rz(90°)` maps +X to +Y, `Rx(90°)` maps +Y to +Z and `Ry(90°)` maps +Z
//!   to +X. The elementary matrices are
//!
//!   ```text
//!   Rx(t) = | 1  0   0 |   Ry(t) = |  c  0  s |   Rz(t) = | c -s  0 |
//!           | 0  c  -s |           |  0  1  0 |           | s  c  0 |
//!           | 0  s   c |           | -s  0  c |           | 0  0  1 |
//!   ```
//!
//!   with `c = cos t`, `s = sin t`.
//! * Types are glam's `f64` types ([`DMat3`], [`DQuat`], [`DVec3`]).
//!   Quaternions are stored `[x, y, z, w]` (glam's layout).
//! * The 6D representation (Zhou et al. 2019, *On the Continuity of Rotation
//!   Representations in Neural Networks*) is the first two **columns** of the
//!   rotation matrix, laid out `[c0.x, c0.y, c0.z, c1.x, c1.y, c1.z]`; it is
//!   turned back into a matrix by Gram-Schmidt ([`mat3_from_6d`]).
//! * [`RotationOrder::to_glam`] gives the glam [`EulerRot`] that builds the
//!   same matrix from the same angles (in radians, in listing order): in
//!   glam 0.34 the plain names (`EulerRot::ZXY`, ...) are the intrinsic
//!   orders, `from_euler(EulerRot::ZXY, a, b, c) = Rz(a)·Rx(b)·Ry(c)`. This
//!   is pinned by tests.
//!
//! # Euler extraction
//!
//! [`mat3_to_euler`] returns the principal solution: first and third angle
//! in `(-180, 180]`, middle angle in `[-90, 90]`. Every rotation also has the
//! second solution `(a ± 180, ±180 - b, c ± 180)`, and each angle may be
//! shifted by multiples of 360. [`mat3_to_euler_near`] picks, among all of
//! these, the one closest to the previous frame's angles, so animation
//! curves stay continuous. At gimbal lock (middle angle at ±90°) only a
//! combination of the first and third angles is determined; the principal
//! extraction then sets the third angle to 0, and the continuous extraction
//! keeps the previous frame's third angle.
//!
//! # Forward kinematics hot path
//!
//! Per joint and frame, start from `DMat3::IDENTITY` and, for each rotation
//! channel in listing order, call [`sin_cos_deg`] and then
//! [`apply_axis_rotation`], which rewrites only the two affected columns
//! ([`euler_to_mat3`] does exactly this). The matrix updates cost a few
//! nanoseconds; the three `sin_cos` calls dominate, so when the same frames
//! are evaluated repeatedly, cache the `(sin, cos)` pairs.
//!
//! # Implementation notes
//!
//! Axes, the six orders, Euler ⇄ matrix ⇄ quaternion ⇄ 6D ⇄ axis-angle,
//! continuity-preserving extraction, `mat3_to_repr` (one joint's rotation in an
//! export representation, for `bvh rotations` and Python),
//! `euler_to_quat_sin_cos` (`euler_to_quat` from half-angle sines and cosines
//! computed in a batch; the same product, so the same bits), and `sin_cos_deg`
//! / `sin_cos_deg_slice`, the one place degrees become radians: exact reduction
//! in degrees to ±45° plus a quarter-turn count, then polynomial kernels,
//! branch-free so that the slice version runs on SIMD lanes (the two give the
//! same bits).
//!
//! `sin_cos_deg_slice` runs its loop through `simd_kernel!` (`crate::simd`):
//! the widest build the CPU has, the same bits as the portable loop (a test
//! compares every build the CPU can run with the scalar function); the AVX2
//! build made FK about 1.4x faster.
//!
//! `rotation::atan2` is within 2 ulp of libm's `atan2` (1 observed over
//! millions of pairs) and gives the same bits as `atan2_slice`; `EulerBatch`
//! gives `mat3_to_euler_near`'s angles within 1e-9 degrees (the continuity rule
//! is one function, `near_deg`, used by both); `slerp_slice` is
//! `resample::slerp` within 1e-14; the mixer's lane pass gives the angles of
//! `euler_to_quat`, `resample::slerp` and `quat_to_euler_near` joint by joint
//! within 1e-9 degrees (away from gimbal lock; there the same rotation within
//! 1e-12), on every frame of the corpus (`tests/mix_lanes.rs`). Channels a
//! transform does not recompute (joints at weight 0 or 1, outside a mask,
//! already in the order, frames a resample lands on) are copied bit for bit,
//! never passed through the kernels. Tests: `rotation::batch::tests`,
//! `tests/rotation_batch.rs` (corpus).

use glam::{DMat3, DQuat, DVec3, EulerRot};
use std::fmt;

use crate::simd::{Simd, simd_kernel};

mod batch;
mod quat;
pub use batch::{EulerBatch, atan2, atan2_slice, slerp_slice};
pub(crate) use batch::{
    LayerFrames, MixLanes, QuatLanes, adjacent, euler3_quat_lane, extract_unit, extract_unit_fast,
    lane_quat, parity_of, quat_matrix, write3,
};
pub use quat::mat3_to_quat_slice;

/// Below this value of `cos(middle angle)` a matrix is treated as being in
/// gimbal lock by the Euler extraction.
///
/// The regular extraction stays accurate arbitrarily close to the lock (the
/// third angle is computed to compensate the first), so this only decides
/// when the first/third split becomes a convention; the matrix reproduced at
/// lock is off by at most about this much.
pub const GIMBAL_LOCK_EPSILON: f64 = 1e-12;

/// A coordinate axis, as named in a BVH rotation channel (`Xrotation`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Axis {
    /// The X axis.
    X,
    /// The Y axis.
    Y,
    /// The Z axis.
    Z,
}

impl Axis {
    /// The three axes, in X, Y, Z order.
    pub const ALL: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];

    /// The unit vector along this axis.
    #[inline]
    pub fn unit_vector(self) -> DVec3 {
        match self {
            Axis::X => DVec3::X,
            Axis::Y => DVec3::Y,
            Axis::Z => DVec3::Z,
        }
    }

    /// The index of this axis in a vector: X = 0, Y = 1, Z = 2.
    #[inline]
    pub fn index(self) -> usize {
        match self {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        }
    }

    /// The upper-case letter of this axis (`'X'`, `'Y'` or `'Z'`).
    pub fn letter(self) -> char {
        match self {
            Axis::X => 'X',
            Axis::Y => 'Y',
            Axis::Z => 'Z',
        }
    }

    /// The axis named by a letter, case-insensitive (`'x'` or `'X'`, ...).
    pub fn from_letter(c: char) -> Option<Axis> {
        match c.to_ascii_uppercase() {
            'X' => Some(Axis::X),
            'Y' => Some(Axis::Y),
            'Z' => Some(Axis::Z),
            _ => None,
        }
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// One of the six orders of three distinct rotation axes.
///
/// The letters are in BVH listing order: [`RotationOrder::ZXY`] is the
/// channel list `Zrotation Xrotation Yrotation`, meaning `R = Rz·Rx·Ry`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RotationOrder {
    /// `Xrotation Yrotation Zrotation`: `R = Rx·Ry·Rz`.
    XYZ,
    /// `Xrotation Zrotation Yrotation`: `R = Rx·Rz·Ry`.
    XZY,
    /// `Yrotation Xrotation Zrotation`: `R = Ry·Rx·Rz`.
    YXZ,
    /// `Yrotation Zrotation Xrotation`: `R = Ry·Rz·Rx`.
    YZX,
    /// `Zrotation Xrotation Yrotation`: `R = Rz·Rx·Ry` (the most common BVH order).
    ZXY,
    /// `Zrotation Yrotation Xrotation`: `R = Rz·Ry·Rx`.
    ZYX,
}

impl RotationOrder {
    /// All six orders.
    pub const ALL: [RotationOrder; 6] = [
        RotationOrder::XYZ,
        RotationOrder::XZY,
        RotationOrder::YXZ,
        RotationOrder::YZX,
        RotationOrder::ZXY,
        RotationOrder::ZYX,
    ];

    /// The three axes in listing order.
    ///
    /// # Example
    ///
    /// ```
    /// use bvhkit::rotation::{Axis, RotationOrder};
    /// assert_eq!(RotationOrder::ZXY.axes(), [Axis::Z, Axis::X, Axis::Y]);
    /// ```
    pub fn axes(self) -> [Axis; 3] {
        use Axis::{X, Y, Z};
        match self {
            RotationOrder::XYZ => [X, Y, Z],
            RotationOrder::XZY => [X, Z, Y],
            RotationOrder::YXZ => [Y, X, Z],
            RotationOrder::YZX => [Y, Z, X],
            RotationOrder::ZXY => [Z, X, Y],
            RotationOrder::ZYX => [Z, Y, X],
        }
    }

    /// The order made of exactly these three distinct axes, in this order;
    /// `None` for any other length or a repeated axis.
    ///
    /// # Example
    ///
    /// ```
    /// use bvhkit::rotation::{Axis, RotationOrder};
    /// assert_eq!(
    ///     RotationOrder::from_axes(&[Axis::Y, Axis::X, Axis::Z]),
    ///     Some(RotationOrder::YXZ)
    /// );
    /// assert_eq!(RotationOrder::from_axes(&[Axis::Y, Axis::X]), None);
    /// assert_eq!(RotationOrder::from_axes(&[Axis::Y, Axis::X, Axis::Y]), None);
    /// ```
    pub fn from_axes(axes: &[Axis]) -> Option<RotationOrder> {
        RotationOrder::ALL.into_iter().find(|order| order.axes().as_slice() == axes)
    }

    /// The order's name, e.g. `"ZXY"`.
    pub fn name(self) -> &'static str {
        match self {
            RotationOrder::XYZ => "XYZ",
            RotationOrder::XZY => "XZY",
            RotationOrder::YXZ => "YXZ",
            RotationOrder::YZX => "YZX",
            RotationOrder::ZXY => "ZXY",
            RotationOrder::ZYX => "ZYX",
        }
    }

    /// The order with this name, case-insensitive (`"zxy"` or `"ZXY"`).
    pub fn from_name(s: &str) -> Option<RotationOrder> {
        RotationOrder::ALL.into_iter().find(|order| order.name().eq_ignore_ascii_case(s))
    }

    /// The glam Euler order that builds the same rotation from the same
    /// angles (radians, in listing order): the *intrinsic* glam order with
    /// the same letters, e.g. `EulerRot::ZXY` for `ZXY`, not the `...Ex`
    /// (extrinsic) variants.
    ///
    /// # Example
    ///
    /// ```
    /// use bvhkit::rotation::{euler_to_mat3, RotationOrder};
    /// use glam::DMat3;
    /// let order = RotationOrder::ZXY;
    /// let (z, x, y) = (30.0_f64, -20.0_f64, 75.0_f64);
    /// let ours = euler_to_mat3(&order.axes(), &[z, x, y]);
    /// let glams = DMat3::from_euler(order.to_glam(), z.to_radians(), x.to_radians(), y.to_radians());
    /// assert!(ours.abs_diff_eq(glams, 1e-12));
    /// ```
    pub fn to_glam(self) -> EulerRot {
        match self {
            RotationOrder::XYZ => EulerRot::XYZ,
            RotationOrder::XZY => EulerRot::XZY,
            RotationOrder::YXZ => EulerRot::YXZ,
            RotationOrder::YZX => EulerRot::YZX,
            RotationOrder::ZXY => EulerRot::ZXY,
            RotationOrder::ZYX => EulerRot::ZYX,
        }
    }

    /// Axis indices `(i, j, k)` and the parity sign: `+1.0` when `i, j, k`
    /// is a cyclic permutation of X, Y, Z, `-1.0` otherwise.
    #[inline]
    fn indices_and_parity(self) -> (usize, usize, usize, f64) {
        let [a, b, c] = self.axes();
        let (i, j, k) = (a.index(), b.index(), c.index());
        let parity = if j == (i + 1) % 3 { 1.0 } else { -1.0 };
        (i, j, k, parity)
    }
}

impl fmt::Display for RotationOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `(sin, cos)` of an angle given in degrees: the one place where degrees
/// become radians.
///
/// The angle is first reduced exactly, in degrees, to `[-45, 45]` plus a
/// quarter-turn count (angles beyond about 2e17 degrees are first reduced
/// modulo 360, also exactly); sine and cosine of the reduced angle in
/// radians (`|x| <= pi/4`) are then minimax polynomials (the classic fdlibm
/// kernels, under one ulp on that range), with no general range reduction
/// and no library call: this is the inner loop of forward kinematics.
/// Multiples of 90° give exact `0` and `±1` (e.g. `Rz(90°)` is an exact
/// permutation and an exact ±90° middle angle is an exact gimbal lock), and
/// large angles (BVH files do contain 400° or -1000°) lose no accuracy in
/// the conversion to radians. A NaN or an infinity gives NaNs.
///
/// # Example
///
/// ```
/// use bvhkit::rotation::sin_cos_deg;
/// let (s, c) = sin_cos_deg(30.0);
/// assert!((s - 0.5).abs() < 1e-15 && (c - 3f64.sqrt() / 2.0).abs() < 1e-15);
/// assert_eq!(sin_cos_deg(-270.0), (1.0, 0.0));
/// ```
#[inline]
pub fn sin_cos_deg(angle_deg: f64) -> (f64, f64) {
    if angle_deg.abs() < REDUCE_LIMIT {
        sin_cos_deg_reduced(angle_deg)
    } else {
        sin_cos_deg_huge(angle_deg)
    }
}

/// [`sin_cos_deg`] of every angle of `angles` into `sin` and `cos`, bit for
/// bit the same values, about twice as fast on long slices: the loop has no
/// branch and no call, so the compiler runs it on SIMD lanes. Forward
/// kinematics uses it on a whole frame at once.
///
/// # Panics
/// When the three slices differ in length.
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{sin_cos_deg, sin_cos_deg_slice};
/// let angles = [0.0, 30.0, -270.0, 1e20];
/// let (mut s, mut c) = ([0.0; 4], [0.0; 4]);
/// sin_cos_deg_slice(&angles, &mut s, &mut c);
/// for i in 0..4 {
///     assert_eq!((s[i], c[i]), sin_cos_deg(angles[i]));
/// }
/// ```
pub fn sin_cos_deg_slice(angles: &[f64], sin: &mut [f64], cos: &mut [f64]) {
    assert!(
        angles.len() == sin.len() && angles.len() == cos.len(),
        "angles, sin and cos must have the same length"
    );
    if angles.iter().all(|a| a.abs() < REDUCE_LIMIT) {
        reduced_slice(Simd::best(), angles, sin, cos);
    } else {
        for ((a, s), c) in angles.iter().zip(sin.iter_mut()).zip(cos.iter_mut()) {
            (*s, *c) = sin_cos_deg(*a);
        }
    }
}

simd_kernel! {
    /// [`sin_cos_deg_reduced`] over equal-length slices: a loop without
    /// branches or calls, which the compiler runs on SIMD lanes (AVX2 made
    /// FK about 1.4x faster).
    fn reduced_slice(simd: Simd, angles: &[f64], sin: &mut [f64], cos: &mut [f64]) {
        for ((a, s), c) in angles.iter().zip(sin.iter_mut()).zip(cos.iter_mut()) {
            (*s, *c) = sin_cos_deg_reduced(*a);
        }
    }
}

/// Angles (degrees) below which [`sin_cos_deg_reduced`] counts quarter
/// turns exactly: `|angle / 90| < 2^51`.
pub(crate) const REDUCE_LIMIT: f64 = 2_251_799_813_685_248.0 * 90.0;

/// [`sin_cos_deg`] for `|angle_deg| < REDUCE_LIMIT` (and NaN), without a
/// branch or a library call.
#[inline(always)]
pub(crate) fn sin_cos_deg_reduced(angle_deg: f64) -> (f64, f64) {
    let (x, q) = reduce_quarter_turns(angle_deg);
    let (s, c) = sin_cos_kernel(x);
    place_quadrant(s, c, q)
}

/// `1.5·2^52`: adding it to a number below `2^51` in magnitude rounds
/// that number to an integer (ties to even), which the sum holds in its
/// low bits; taking it away again gives the integer as an `f64` (with
/// `+0` for a number in `(-0.5, 0]`). The quarter- and half-turn counts
/// of the reductions and the continuity choice's whole turns.
pub(crate) const ROUNDING: f64 = 6_755_399_441_055_744.0;

/// [`sin_cos_deg_reduced`]'s reduction: the angle less its nearest
/// multiple of 90° (exact, in degrees), in radians (`|x| <= pi/4`), and
/// the quarter-turn count `q` in the low bits of the second value (for
/// [`place_quadrant`]; the mixes' lanes reduce with it too).
#[inline(always)]
pub(crate) fn reduce_quarter_turns(angle_deg: f64) -> (f64, u64) {
    // Rounds angle/90 to an integer q (|q| < 2^51) and leaves q in the
    // low bits of the sum.
    let shifted = angle_deg * (1.0 / 90.0) + ROUNDING;
    let quarter_turns = shifted - ROUNDING;
    let q = shifted.to_bits();
    // Exact: 90·q is exact and within 45 of angle_deg (Sterbenz).
    let reduced = angle_deg - 90.0 * quarter_turns;
    (reduced * (std::f64::consts::PI / 180.0), q)
}

/// The sine and cosine of the angle [`reduce_quarter_turns`] reduced, from
/// those `(s, c)` of the reduced angle and its quarter-turn count `q`.
#[inline(always)]
pub(crate) fn place_quadrant(s: f64, c: f64, q: u64) -> (f64, f64) {
    // The quadrant with selects and sign bits, so that SIMD lanes can take
    // it: q mod 4 = 0: (s, c); 1: (c, -s); 2: (-s, -c); 3: (-c, s). An odd
    // q is tested by its lowest bit moved to the sign (a blend on SIMD
    // lanes reads the sign bit alone: no compare).
    let odd = ((q << 63) as i64) < 0;
    let (s, c) = (select(odd, c, s), select(odd, s, c));
    let negate_sin = (q & 2) << 62;
    let negate_cos = (q.wrapping_add(1) & 2) << 62;
    // Adding 0.0 turns -0.0 into +0.0 so exact results are exactly 0.0.
    (f64::from_bits(s.to_bits() ^ negate_sin) + 0.0, f64::from_bits(c.to_bits() ^ negate_cos) + 0.0)
}

/// [`sin_cos_deg`] of a huge or infinite angle: `%` (an exact remainder)
/// brings it below 360 first.
#[cold]
fn sin_cos_deg_huge(angle_deg: f64) -> (f64, f64) {
    sin_cos_deg_reduced(angle_deg % 360.0)
}

/// `(sin x, cos x)` for `|x| <= pi/4`: fdlibm's minimax polynomials
/// (`k_sin.c`, `k_cos.c`), each under one ulp there. Outside that range the
/// result is not accurate; [`sin_cos_deg`] never passes such an `x`.
#[inline(always)]
// The coefficients keep the digits they are published with; each literal
// rounds to the intended f64.
#[allow(clippy::excessive_precision)]
fn sin_cos_kernel(x: f64) -> (f64, f64) {
    const S1: f64 = -1.666_666_666_666_663_243_48e-1;
    const S2: f64 = 8.333_333_333_322_489_461_24e-3;
    const S3: f64 = -1.984_126_982_985_794_931_34e-4;
    const S4: f64 = 2.755_731_370_707_006_767_89e-6;
    const S5: f64 = -2.505_076_025_340_686_341_95e-8;
    const S6: f64 = 1.589_690_995_211_550_102_21e-10;
    const C1: f64 = 4.166_666_666_666_660_190_37e-2;
    const C2: f64 = -1.388_888_888_887_410_957_49e-3;
    const C3: f64 = 2.480_158_728_947_672_941_78e-5;
    const C4: f64 = -2.755_731_435_139_066_330_35e-7;
    const C5: f64 = 2.087_572_321_298_174_827_90e-9;
    const C6: f64 = -1.135_964_755_778_819_482_65e-11;
    let z = x * x;
    let w = z * z;
    let rs = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
    let sin = x + z * x * (S1 + z * rs);
    let rc = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    let hz = 0.5 * z;
    let one_minus = 1.0 - hz;
    let cos = one_minus + (((1.0 - one_minus) - hz) + z * rc);
    (sin, cos)
}

/// Right-multiplies `m` by the elementary rotation about `axis` whose angle
/// has the given sine and cosine: `m = m · R_axis`.
///
/// Only the two columns of `m` that the rotation touches are rewritten
/// (12 flops, no full matrix product); this is the hot path of forward
/// kinematics. Starting from the identity and applying each channel in
/// listing order builds the joint rotation: for `Zrotation Xrotation
/// Yrotation`, applying Z, then X, then Y gives `Rz·Rx·Ry`.
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{apply_axis_rotation, euler_to_mat3, sin_cos_deg, Axis};
/// use glam::DMat3;
/// let channels = [(Axis::Z, 10.0), (Axis::X, 20.0), (Axis::Y, 30.0)];
/// let mut m = DMat3::IDENTITY;
/// for (axis, deg) in channels {
///     let (s, c) = sin_cos_deg(deg);
///     apply_axis_rotation(&mut m, axis, s, c);
/// }
/// let expected = euler_to_mat3(&[Axis::Z, Axis::X, Axis::Y], &[10.0, 20.0, 30.0]);
/// assert!(m.abs_diff_eq(expected, 1e-15));
/// ```
#[inline]
pub fn apply_axis_rotation(m: &mut DMat3, axis: Axis, sin: f64, cos: f64) {
    // Columns of R_axis: Rx = [x, (0,c,s), (0,-s,c)], Ry = [(c,0,-s), y, (s,0,c)],
    // Rz = [(c,s,0), (-s,c,0), z]; column n of m·R is m times column n of R.
    match axis {
        Axis::X => {
            let (c1, c2) = (m.y_axis, m.z_axis);
            m.y_axis = c1 * cos + c2 * sin;
            m.z_axis = c2 * cos - c1 * sin;
        }
        Axis::Y => {
            let (c0, c2) = (m.x_axis, m.z_axis);
            m.x_axis = c0 * cos - c2 * sin;
            m.z_axis = c0 * sin + c2 * cos;
        }
        Axis::Z => {
            let (c0, c1) = (m.x_axis, m.y_axis);
            m.x_axis = c0 * cos + c1 * sin;
            m.y_axis = c1 * cos - c0 * sin;
        }
    }
}

/// The elementary rotation matrix about `axis` by `angle_deg` degrees
/// (right-hand rule, column vectors).
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{axis_rotation, Axis};
/// use glam::DVec3;
/// // Rz(90°) turns +X into +Y.
/// let v = axis_rotation(Axis::Z, 90.0) * DVec3::X;
/// assert!(v.abs_diff_eq(DVec3::Y, 1e-15));
/// ```
#[inline]
pub fn axis_rotation(axis: Axis, angle_deg: f64) -> DMat3 {
    let (s, c) = sin_cos_deg(angle_deg);
    let mut m = DMat3::IDENTITY;
    apply_axis_rotation(&mut m, axis, s, c);
    m
}

/// The rotation matrix of a BVH joint's rotation channels: the product of
/// the elementary rotations in listing order, `R = R_axes[0] · R_axes[1] · ...`.
///
/// Any number of channels is accepted (BVH uses 0 to 3 distinct axes; no
/// channel gives the identity).
///
/// # Panics
///
/// If `axes` and `angles_deg` differ in length.
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{euler_to_mat3, Axis};
/// use glam::DVec3;
/// // Rz(90)·Rx(90): X first turns +Z into -Y, then Z turns -Y into +X.
/// let m = euler_to_mat3(&[Axis::Z, Axis::X], &[90.0, 90.0]);
/// assert!((m * DVec3::Z).abs_diff_eq(DVec3::X, 1e-15));
/// ```
pub fn euler_to_mat3(axes: &[Axis], angles_deg: &[f64]) -> DMat3 {
    assert_eq!(axes.len(), angles_deg.len(), "euler_to_mat3: one angle per axis");
    let mut m = DMat3::IDENTITY;
    for (&axis, &deg) in axes.iter().zip(angles_deg) {
        let (s, c) = sin_cos_deg(deg);
        apply_axis_rotation(&mut m, axis, s, c);
    }
    m
}

/// The unit quaternion of a BVH joint's rotation channels: the same rotation
/// as [`euler_to_mat3`], built as the product of the elementary quaternions
/// in listing order.
///
/// # Panics
///
/// If `axes` and `angles_deg` differ in length.
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{euler_to_quat, Axis};
/// use glam::DVec3;
/// let q = euler_to_quat(&[Axis::Z, Axis::X], &[90.0, 90.0]);
/// assert!((q * DVec3::Z).abs_diff_eq(DVec3::X, 1e-15));
/// ```
pub fn euler_to_quat(axes: &[Axis], angles_deg: &[f64]) -> DQuat {
    assert_eq!(axes.len(), angles_deg.len(), "euler_to_quat: one angle per axis");
    let mut q = DQuat::IDENTITY;
    for (&axis, &deg) in axes.iter().zip(angles_deg) {
        let (s, c) = sin_cos_deg(0.5 * deg);
        q *= half_angle_quat(axis, s, c);
    }
    q
}

/// [`euler_to_quat`] from the sines and cosines of the half angles
/// (`sin_cos_deg(0.5 * angle)`, e.g. a whole frame's at once by
/// [`sin_cos_deg_slice`]): the same product, so the same bits.
///
/// # Panics
///
/// If the three slices differ in length.
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{euler_to_quat, euler_to_quat_sin_cos, sin_cos_deg_slice, Axis};
/// let axes = [Axis::Z, Axis::X, Axis::Y];
/// let half = [0.5 * 120.0, 0.5 * -40.0, 0.5 * 15.0];
/// let (mut s, mut c) = ([0.0; 3], [0.0; 3]);
/// sin_cos_deg_slice(&half, &mut s, &mut c);
/// assert_eq!(euler_to_quat_sin_cos(&axes, &s, &c), euler_to_quat(&axes, &[120.0, -40.0, 15.0]));
/// ```
#[inline]
pub fn euler_to_quat_sin_cos(axes: &[Axis], sin_half: &[f64], cos_half: &[f64]) -> DQuat {
    assert!(
        axes.len() == sin_half.len() && axes.len() == cos_half.len(),
        "euler_to_quat_sin_cos: one sine and cosine per axis"
    );
    let mut q = DQuat::IDENTITY;
    for ((&axis, &s), &c) in axes.iter().zip(sin_half).zip(cos_half) {
        q *= half_angle_quat(axis, s, c);
    }
    q
}

/// [`euler_to_quat_sin_cos`] for a joint with three rotation channels in
/// `order`, from the half-angle sines and cosines in listing order, as one
/// closed-form product instead of three quaternion products (the same
/// rotation within an ulp or so, not the same bits). With `(i, j, k)` the
/// order's axes and `e` its parity:
/// `q_i = sa·cb·cc + e·ca·sb·sc`, `q_j = ca·sb·cc - e·sa·cb·sc`,
/// `q_k = ca·cb·sc + e·sa·sb·cc`, `w = ca·cb·cc - e·sa·sb·sc`.
#[inline]
#[cfg_attr(not(test), allow(dead_code))] // the lanes have their own copy; the tests compare
pub(crate) fn euler3_to_quat_sin_cos(order: RotationOrder, s: [f64; 3], c: [f64; 3]) -> DQuat {
    let (i, j, k, e) = order.indices_and_parity();
    let [sa, sb, sc] = s;
    let [ca, cb, cc] = c;
    let (cacb, sasb, sacb, casb) = (ca * cb, sa * sb, sa * cb, ca * sb);
    let mut v = [0.0; 3];
    v[i] = sacb * cc + e * casb * sc;
    v[j] = casb * cc - e * sacb * sc;
    v[k] = cacb * sc + e * sasb * cc;
    DQuat::from_xyzw(v[0], v[1], v[2], cacb * cc - e * sasb * sc)
}

/// The elementary quaternion about `axis` with half-angle sine `s` and
/// cosine `c`.
#[inline]
fn half_angle_quat(axis: Axis, s: f64, c: f64) -> DQuat {
    match axis {
        Axis::X => DQuat::from_xyzw(s, 0.0, 0.0, c),
        Axis::Y => DQuat::from_xyzw(0.0, s, 0.0, c),
        Axis::Z => DQuat::from_xyzw(0.0, 0.0, s, c),
    }
}

/// Element at row `r`, column `c`.
#[inline]
fn el(m: &DMat3, r: usize, c: usize) -> f64 {
    m.col(c)[r]
}

/// Maps -180 to 180 so principal angles lie in `(-180, 180]`.
#[inline(always)]
fn canonical_deg(a: f64) -> f64 {
    select(a <= -180.0, a + 360.0, a)
}

/// Principal extraction in radians. Returns the angles and whether the
/// matrix is in gimbal lock (then the third angle is 0).
fn extract_rad(m: &DMat3, order: RotationOrder) -> ([f64; 3], bool) {
    let (i, j, k, e) = order.indices_and_parity();
    // With R = Ri(a)·Rj(b)·Rk(c):
    //   R[i][k] = e·sin b, R[i][i] = cos b cos c, R[i][j] = -e·cos b sin c,
    //   R[j][k] = -e·sin a cos b, R[k][k] = cos a cos b.
    // sqrt rather than hypot: the entries are at most 1 in magnitude, so
    // the squares neither overflow nor lose anything that matters here.
    let cos_b = (el(m, i, i) * el(m, i, i) + el(m, i, j) * el(m, i, j)).sqrt();
    let b = (e * el(m, i, k)).atan2(cos_b);
    if cos_b < GIMBAL_LOCK_EPSILON {
        // R = Ri(a + e·σ·c)·Rj(±90°) with σ = sign(sin b): only the combined
        // angle is known. Take c = 0; column j of R is then Ri(a)·e_j
        // = cos a·e_j + e·sin a·e_k.
        let a = (e * el(m, k, j)).atan2(el(m, j, j));
        return ([a, b, 0.0], true);
    }
    let (ya, xa) = (-e * el(m, j, k), el(m, k, k));
    let a = ya.atan2(xa);
    // Remove Ri(a): Ri(a)^T·R = Rj(b)·Rk(c), whose row j is row j of Rk(c):
    // [.., e·sin c (column i), cos c (column j), ..]. Row j of Ri(a)^T is
    // cos a·e_j + e·sin a·e_k. This stays accurate near the lock, where the
    // first angle alone is ill-conditioned: c compensates for it. The sine
    // and cosine of `a` are those of the vector it is the angle of.
    let ra = (ya * ya + xa * xa).sqrt();
    let (sa, ca) = if ra > 0.0 { (ya / ra, xa / ra) } else { a.sin_cos() };
    let sin_c = e * (ca * el(m, j, i) + e * sa * el(m, k, i));
    let cos_c = ca * el(m, j, j) + e * sa * el(m, k, j);
    let c = sin_c.atan2(cos_c);
    ([a, b, c], false)
}

/// Euler angles (degrees, in listing order) of a rotation matrix: the
/// principal solution, first and third angles in `(-180, 180]`, middle angle
/// in `[-90, 90]`.
///
/// At gimbal lock (middle angle ±90°, i.e. its cosine below
/// [`GIMBAL_LOCK_EPSILON`]) only a combination of the first and third angles
/// is determined; the third angle is then set to 0. `m` must be a rotation
/// matrix (orthonormal, determinant +1).
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{euler_to_mat3, mat3_to_euler, RotationOrder};
/// let order = RotationOrder::ZXY;
/// let m = euler_to_mat3(&order.axes(), &[120.0, -40.0, 15.0]);
/// let [z, x, y] = mat3_to_euler(m, order);
/// assert!((z - 120.0).abs() < 1e-9 && (x + 40.0).abs() < 1e-9 && (y - 15.0).abs() < 1e-9);
/// ```
pub fn mat3_to_euler(m: DMat3, order: RotationOrder) -> [f64; 3] {
    let (rad, _) = extract_rad(&m, order);
    principal_deg(rad)
}

/// The principal extraction `rad` (radians, from [`extract_rad`]) in
/// degrees, first and third angles in `(-180, 180]`.
#[inline(always)]
pub(crate) fn principal_deg([a, b, c]: [f64; 3]) -> [f64; 3] {
    [canonical_deg(a.to_degrees()), b.to_degrees(), canonical_deg(c.to_degrees())]
}

/// `x` plus the multiple of 360 that brings it closest to `target`.
#[inline(always)]
fn unwrap_deg(x: f64, target: f64) -> f64 {
    x + 360.0 * round_half_away((target - x) / 360.0)
}

/// `x.round()` bit for bit (half-way cases away from zero, the sign of
/// zero kept, NaN and infinities unchanged) without a call into libm,
/// which `f64::round` is on x86-64 without SSE4.1, and without a branch,
/// so that SIMD lanes can take it ([`EulerBatch`]): below 2^52, adding and
/// subtracting 2^52 (with the sign of `x`) rounds to the nearest integer,
/// ties to even; the exact remainder then moves the ties that went toward
/// zero away from it.
#[inline(always)]
pub(crate) fn round_half_away(x: f64) -> f64 {
    const TWO_52: f64 = 4_503_599_627_370_496.0;
    let small = x.abs() < TWO_52; // false for NaN and infinities
    let xs = select(small, x, 0.0);
    let m = TWO_52.copysign(xs);
    let r = (xs + m) - m;
    let d = xs - r; // exact
    let r = r + select(d == 0.5 && xs > 0.0, 1.0, 0.0) - select(d == -0.5 && xs < 0.0, 1.0, 0.0);
    select(small, r.copysign(x), x)
}

/// `c ? a : b` (both already computed), so that SIMD lanes can take it: a
/// blend or a masked move there (no branch: the compiler turns a choice
/// between two values into a select).
#[inline(always)]
pub(crate) fn select(c: bool, a: f64, b: f64) -> f64 {
    if c { a } else { b }
}

/// A value the crate computed (an angle in degrees; a mix's position), as
/// it is written: rounded to nine decimal places (to the `f64` nearest
/// that decimal; a tie to either neighbour, and -0 to 0), when its
/// magnitude is below 2^22 (every angle the lanes make; others, and NaN,
/// are kept). The angles of `edit::order`'s rewrite (its lanes and the
/// lanes it solves again), and those the mixes compute (`MixLanes`' pass
/// and its lanes solved again, so the `Mixer`'s and the `Resampler`'s; the
/// `Mixer`'s other joints and the arcs it keeps coherent; a crossfade's
/// locked feet) and their linear values (`edit::pose::lerp_snapped`).
///
/// The extraction is exact to about 1e-13 degrees, so the last digits of
/// the shortest text of the `f64` it returns are rounding noise: written
/// whole they nearly double the file (17 significant digits per angle
/// against the 4 to 6 decimals of captured motion) and cost most of the
/// time of writing it. Nine places (5e-10 degrees, under 1e-11 radians)
/// move a joint's world position by less than 3e-11 of the distance from
/// each rotated ancestor, far inside the 1e-9 of the skeleton's height
/// that a rewrite promises, and the writer prints such decimals on its
/// fast path. A value that already has at most nine decimals (the nearest
/// `f64` to one, below 2^22) comes back bit for bit (but -0 as 0). The
/// continuity of the next frame is chosen from the unrounded angles (the
/// rewrite's) or from the previous frame as written (the mixes'), which
/// only picks the whole turns and the Euler solution, so rounding never
/// accumulates.
#[inline(always)]
pub(crate) fn snap_angle(a: f64) -> f64 {
    // Below 2^52, adding and subtracting 2^52 (with the sign) rounds to an
    // integer (ties to even: any nearest integer will do here).
    const TWO_52: f64 = 4_503_599_627_370_496.0;
    let x = a * 1e9;
    let m = TWO_52.copysign(x);
    if a.abs() < 4_194_304.0 { ((x + m) - m) / 1e9 } else { a }
}

/// Digits after the point of `x`'s shortest round-trip text (`Display`,
/// the digits `ryu` gives the writer): the tests of [`snap_angle`]'s users.
#[cfg(test)]
pub(crate) fn decimals(x: f64) -> usize {
    let s = format!("{x}");
    s.find('.').map_or(0, |p| s.len() - p - 1)
}

#[inline(always)]
fn distance_sq(a: [f64; 3], b: [f64; 3]) -> f64 {
    (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2])
}

/// Euler angles (degrees, in listing order) of a rotation matrix, chosen
/// closest to `previous_deg` (typically the previous frame's angles) so that
/// a sequence of frames has no ±180°/360° flips.
///
/// Among the two solutions `(a, b, c)` and `(a + 180, 180 - b, c + 180)`,
/// each angle shifted by any multiple of 360, the one with the smallest
/// Euclidean distance to `previous_deg` is returned. At gimbal lock (middle
/// angle ±90°) the third angle of `previous_deg` is kept and the first angle
/// takes up the rest, so the first/third split does not jump.
///
/// Seed a sequence with [`mat3_to_euler`] for its first frame (or with the
/// angles that frame was built from).
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{euler_to_mat3, mat3_to_euler, mat3_to_euler_near, RotationOrder};
/// let order = RotationOrder::ZXY;
/// let m = euler_to_mat3(&order.axes(), &[185.0, 0.0, 0.0]);
/// // The principal extraction wraps to -175 ...
/// assert!((mat3_to_euler(m, order)[0] + 175.0).abs() < 1e-9);
/// // ... the continuous one stays next to the previous frame.
/// let near = mat3_to_euler_near(m, order, [183.0, 0.0, 0.0]);
/// assert!((near[0] - 185.0).abs() < 1e-9);
/// ```
pub fn mat3_to_euler_near(m: DMat3, order: RotationOrder, previous_deg: [f64; 3]) -> [f64; 3] {
    let (_, _, _, e) = order.indices_and_parity();
    let (rad, locked) = extract_rad(&m, order);
    near_deg(rad, locked, e, previous_deg)
}

/// The continuity choice of [`mat3_to_euler_near`]: of the principal
/// extraction `rad` (radians, from [`extract_rad`], `locked` at gimbal lock)
/// of an order of parity `e`, the solution closest to `previous_deg`.
/// Written with selects only, so that [`EulerBatch`] runs it on SIMD lanes
/// (the one implementation of the rule for both).
#[inline(always)]
pub(crate) fn near_deg(rad: [f64; 3], locked: bool, e: f64, previous_deg: [f64; 3]) -> [f64; 3] {
    let (a, b, c) = (rad[0].to_degrees(), rad[1].to_degrees(), rad[2].to_degrees());
    let [pa, pb, pc] = previous_deg;
    // At the lock R = Ri(a + e·σ·c)·Rj(b), σ = sign(sin b), and c = 0 here:
    // the previous third angle is kept and the first takes up the rest.
    let sigma = select(b >= 0.0, 1.0, -1.0);
    let locked_first = unwrap_deg(a - e * sigma * pc, pa);
    let first = [unwrap_deg(a, pa), unwrap_deg(b, pb), unwrap_deg(c, pc)];
    let second = [unwrap_deg(a + 180.0, pa), unwrap_deg(180.0 - b, pb), unwrap_deg(c + 180.0, pc)];
    let take_second = distance_sq(second, previous_deg) < distance_sq(first, previous_deg);
    [
        select(locked, locked_first, select(take_second, second[0], first[0])),
        select(locked, first[1], select(take_second, second[1], first[1])),
        select(locked, pc, select(take_second, second[2], first[2])),
    ]
}

/// Euler angles (degrees, in listing order) of a quaternion; see
/// [`mat3_to_euler`]. The quaternion is normalized first.
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{euler_to_quat, quat_to_euler, RotationOrder};
/// let order = RotationOrder::YXZ;
/// let q = euler_to_quat(&order.axes(), &[-60.0, 25.0, 170.0]);
/// let [y, x, z] = quat_to_euler(q, order);
/// assert!((y + 60.0).abs() < 1e-9 && (x - 25.0).abs() < 1e-9 && (z - 170.0).abs() < 1e-9);
/// ```
pub fn quat_to_euler(q: DQuat, order: RotationOrder) -> [f64; 3] {
    mat3_to_euler(DMat3::from_quat(canonical_quat(q)), order)
}

/// Euler angles of a quaternion closest to `previous_deg`; see
/// [`mat3_to_euler_near`]. The quaternion is normalized first.
pub fn quat_to_euler_near(q: DQuat, order: RotationOrder, previous_deg: [f64; 3]) -> [f64; 3] {
    mat3_to_euler_near(DMat3::from_quat(canonical_quat(q)), order, previous_deg)
}

/// The 6D representation of a rotation matrix: its first two columns,
/// `[c0.x, c0.y, c0.z, c1.x, c1.y, c1.z]`.
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{axis_rotation, mat3_to_6d, Axis};
/// // Rz(90°): column 0 is +Y, column 1 is -X.
/// let v = mat3_to_6d(axis_rotation(Axis::Z, 90.0));
/// let expected = [0.0, 1.0, 0.0, -1.0, 0.0, 0.0];
/// assert!(v.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-15));
/// ```
pub fn mat3_to_6d(m: DMat3) -> [f64; 6] {
    let (c0, c1) = (m.x_axis, m.y_axis);
    [c0.x, c0.y, c0.z, c1.x, c1.y, c1.z]
}

/// The rotation matrix of a 6D representation, by Gram-Schmidt: column 0 is
/// the first vector normalized, column 1 the second vector made orthogonal
/// to it and normalized, column 2 their cross product.
///
/// Any input yields a rotation matrix: a zero (or non-finite) first vector
/// is replaced by +X, and a second vector that is zero or parallel to the
/// first by an arbitrary (deterministic) orthogonal unit vector.
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{euler_to_mat3, mat3_from_6d, mat3_to_6d, Axis};
/// let m = euler_to_mat3(&[Axis::Z, Axis::X, Axis::Y], &[10.0, 20.0, 30.0]);
/// assert!(mat3_from_6d(mat3_to_6d(m)).abs_diff_eq(m, 1e-15));
/// // Unnormalized, non-orthogonal input still gives a rotation.
/// let r = mat3_from_6d([2.0, 0.0, 0.0, 1.0, 3.0, 0.0]);
/// assert!((r.determinant() - 1.0).abs() < 1e-15);
/// ```
pub fn mat3_from_6d(v: [f64; 6]) -> DMat3 {
    let a1 = DVec3::new(v[0], v[1], v[2]);
    let a2 = DVec3::new(v[3], v[4], v[5]);
    let b1 = a1.try_normalize().unwrap_or(DVec3::X);
    let b2 = (a2 - b1 * b1.dot(a2)).try_normalize().unwrap_or_else(|| b1.any_orthonormal_vector());
    DMat3::from_cols(b1, b2, b1.cross(b2))
}

/// The quaternion with `w >= 0` (of `q` normalized); a zero or non-finite
/// quaternion gives the identity.
#[inline]
fn canonical_quat(q: DQuat) -> DQuat {
    let len = q.length();
    if !(len > 0.0 && len.is_finite()) {
        return DQuat::IDENTITY;
    }
    let q = q / len;
    if q.w < 0.0 { -q } else { q }
}

/// Unit axis and angle (radians, in `[0, π]`) of a quaternion, which is
/// normalized first.
///
/// The identity gives axis +X and angle 0. Unlike glam's `to_axis_angle`,
/// tiny rotations keep their axis and angle, and the angle never exceeds π
/// (a quaternion with negative `w` is flipped first).
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{euler_to_quat, quat_to_axis_angle, Axis};
/// use glam::DVec3;
/// let (axis, angle) = quat_to_axis_angle(euler_to_quat(&[Axis::Z], &[-90.0]));
/// assert!(axis.abs_diff_eq(-DVec3::Z, 1e-15));
/// assert!((angle - std::f64::consts::FRAC_PI_2).abs() < 1e-15);
/// ```
pub fn quat_to_axis_angle(q: DQuat) -> (DVec3, f64) {
    let q = canonical_quat(q);
    let v = q.xyz();
    let n = v.length();
    if n > 0.0 { (v / n, 2.0 * n.atan2(q.w)) } else { (DVec3::X, 0.0) }
}

/// Exponential-map (scaled-axis, rotation-vector) form of a quaternion:
/// unit axis times angle in radians, with the angle in `[0, π]`. The
/// quaternion is normalized first.
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{euler_to_quat, quat_to_scaled_axis, Axis};
/// use glam::DVec3;
/// let v = quat_to_scaled_axis(euler_to_quat(&[Axis::Y], &[90.0]));
/// assert!(v.abs_diff_eq(DVec3::Y * std::f64::consts::FRAC_PI_2, 1e-15));
/// ```
pub fn quat_to_scaled_axis(q: DQuat) -> DVec3 {
    let q = canonical_quat(q);
    let v = q.xyz();
    let n = v.length();
    if n > 0.0 { v * (2.0 * n.atan2(q.w) / n) } else { DVec3::ZERO }
}

/// Unit quaternion of an exponential-map (scaled-axis) vector: rotation by
/// `|v|` radians about `v / |v|`; the zero vector gives the identity.
///
/// Accurate for tiny vectors (no division by a vanishing length).
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{euler_to_quat, quat_from_scaled_axis, Axis};
/// use glam::DVec3;
/// let q = quat_from_scaled_axis(DVec3::X * std::f64::consts::FRAC_PI_2);
/// assert!(q.abs_diff_eq(euler_to_quat(&[Axis::X], &[90.0]), 1e-15));
/// ```
pub fn quat_from_scaled_axis(v: DVec3) -> DQuat {
    let angle = v.length();
    let (half_sin, half_cos) = (0.5 * angle).sin_cos();
    // sin(angle/2)/angle, with its series near 0 (error < angle^4/3840).
    let k = if angle < 1e-4 { 0.5 - angle * angle / 48.0 } else { half_sin / angle };
    let xyz = v * k;
    DQuat::from_xyzw(xyz.x, xyz.y, xyz.z, half_cos)
}

/// The representations a joint rotation is exported in (`bvh rotations
/// --repr`, and `Bvh.rotations(repr=...)` in the Python package).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RotationRepr {
    /// Euler angles in degrees, in the listing order of a [`RotationOrder`].
    Euler,
    /// Unit quaternion `[x, y, z, w]`.
    Quat,
    /// 3x3 matrix, row-major `m00 m01 m02 m10 ... m22`, acting on column
    /// vectors.
    Matrix,
    /// The first two columns of the matrix ([`mat3_to_6d`]).
    SixD,
    /// Rotation vector: axis times angle in radians ([`quat_to_scaled_axis`]).
    AxisAngle,
}

impl RotationRepr {
    /// Values per rotation: 3, 4, 9, 6 or 3.
    pub const fn width(self) -> usize {
        self.components().len()
    }

    /// Names of the values, in output order.
    pub const fn components(self) -> &'static [&'static str] {
        match self {
            RotationRepr::Euler => &["angle1", "angle2", "angle3"],
            RotationRepr::Quat => &["x", "y", "z", "w"],
            RotationRepr::Matrix => {
                &["m00", "m01", "m02", "m10", "m11", "m12", "m20", "m21", "m22"]
            }
            RotationRepr::SixD => &["c0x", "c0y", "c0z", "c1x", "c1y", "c1z"],
            RotationRepr::AxisAngle => &["rx", "ry", "rz"],
        }
    }
}

/// One joint's rotation `m` in representation `repr`, written to
/// `out[..repr.width()]`: the one conversion that `bvh rotations` and the
/// Python package share.
///
/// - `Euler`: angles in `order`. When `exact_deg` is given (the angles `m`
///   was built from, in `order`: a joint's local rotation in its own channel
///   order, [`Joint::euler_angles`](crate::Joint::euler_angles)) they are
///   written unchanged, unless `previous` is given and
///   [`mat3_to_euler_near`] the previous output is nearer to it (a 359° jump
///   in the file becomes -1°); without `exact_deg`, [`mat3_to_euler`], or
///   [`mat3_to_euler_near`] the previous output when `previous` is given.
/// - `Quat`: `m` as a normalized quaternion with `w >= 0`, or, when
///   `previous` is given, with the sign nearest `previous` (no sign flips
///   from frame to frame).
/// - `Matrix`, `SixD`, `AxisAngle`: row-major matrix, [`mat3_to_6d`],
///   [`quat_to_scaled_axis`]; `previous` is not used.
///
/// `previous` is this joint's output for the previous frame, in the same
/// representation, when continuity is wanted.
///
/// # Panics
/// When `out` (or a given `previous`) is shorter than `repr.width()`.
///
/// # Example
///
/// ```
/// use bvhkit::rotation::{axis_rotation, mat3_to_repr, Axis, RotationOrder, RotationRepr};
/// let m = axis_rotation(Axis::Z, 90.0);
/// let mut q = [0.0; 4];
/// mat3_to_repr(m, RotationRepr::Quat, RotationOrder::ZXY, None, None, &mut q);
/// let h = std::f64::consts::FRAC_1_SQRT_2;
/// assert!((q[2] - h).abs() < 1e-15 && (q[3] - h).abs() < 1e-15);
/// let mut e = [0.0; 3];
/// mat3_to_repr(m, RotationRepr::Euler, RotationOrder::ZXY, None, None, &mut e);
/// assert!((e[0] - 90.0).abs() < 1e-12);
/// ```
pub fn mat3_to_repr(
    m: DMat3,
    repr: RotationRepr,
    order: RotationOrder,
    exact_deg: Option<[f64; 3]>,
    previous: Option<&[f64]>,
    out: &mut [f64],
) {
    match repr {
        RotationRepr::Euler => {
            let e = match (exact_deg, previous) {
                (Some(e), None) => e,
                // The same rotation in the angles next to the previous
                // frame's: the exact ones when they are those.
                (Some(e), Some(p)) => {
                    let p = [p[0], p[1], p[2]];
                    let near = mat3_to_euler_near(m, order, p);
                    if distance_sq(e, p) <= distance_sq(near, p) + 1e-9 { e } else { near }
                }
                (None, Some(p)) => mat3_to_euler_near(m, order, [p[0], p[1], p[2]]),
                (None, None) => mat3_to_euler(m, order),
            };
            out[..3].copy_from_slice(&e);
        }
        RotationRepr::Quat => {
            let mut q = DQuat::from_mat3(&m).normalize();
            let flip = match previous {
                Some(p) => DQuat::from_slice(p).dot(q) < 0.0,
                None => q.w < 0.0,
            };
            if flip {
                q = -q;
            }
            out[..4].copy_from_slice(&q.to_array());
        }
        RotationRepr::Matrix => out[..9].copy_from_slice(&m.transpose().to_cols_array()),
        RotationRepr::SixD => out[..6].copy_from_slice(&mat3_to_6d(m)),
        RotationRepr::AxisAngle => {
            let v = quat_to_scaled_axis(DQuat::from_mat3(&m).normalize());
            out[..3].copy_from_slice(&v.to_array());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `snap_angle` below 2^22: a value whose shortest text has at most
    /// nine decimals, within 5e-10 of the input (and the products'
    /// rounding); a value that has at most nine decimals already (the
    /// `f64` nearest `N / 10^9`) back bit for bit, -0 as 0; larger
    /// magnitudes, infinities and NaN kept.
    #[test]
    fn snapped_values_have_nine_decimals_and_short_ones_are_kept() {
        let mut next = crate::xorshift(0x9e37_79b9_7f4a_7c15);
        let (mut moved, mut kept) = (0, 0);
        for k in 0..1_000_000 {
            let scale = [1e-12, 1e-6, 1.0, 180.0, 1e4, 4_194_303.0][k % 6];
            let v = ((next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2.0 * scale;
            let s = snap_angle(v);
            assert!(decimals(s) <= 9, "{v} -> {s}");
            assert!((s - v).abs() <= 5e-10 + 3e-16 * v.abs(), "{v} -> {s}");
            moved += (s != v) as usize;
            // N / 10^9 with N below 4.19e15, rounded once (N and 10^9 are
            // exact): what the reader makes of a text with nine decimals;
            // and with fewer (N a multiple of a power of ten).
            let n = (next() % 4_194_303_999_999_999) as f64 * [1.0, -1.0][k % 2];
            let p = 10f64.powi((k % 10) as i32);
            let d = ((n / p).trunc() * p) / 1e9;
            assert_eq!(snap_angle(d).to_bits(), d.to_bits(), "{d}");
            kept += 1;
        }
        assert!(moved > 900_000 && kept == 1_000_000, "{moved} moved");
        for (x, want) in [(-0.0, 0.0), (0.0, 0.0), (-25.5927, -25.5927), (154.4073, 154.4073)] {
            assert_eq!(snap_angle(x).to_bits(), f64::to_bits(want), "{x}");
        }
        assert_eq!(snap_angle(-25.592700000002765), -25.5927);
        for x in [4_194_304.0, -4_194_304.125, 1e300, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(snap_angle(x).to_bits(), x.to_bits(), "{x}");
        }
        assert!(snap_angle(f64::NAN).is_nan());
    }

    /// `round_half_away` is `f64::round` bit for bit.
    #[test]
    fn round_half_away_is_round() {
        let mut next = crate::xorshift(0x2545_f491_4f6c_dd1d);
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            -4_503_599_627_370_497.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            5e-324,
            -0.3,
            -0.7,
            359.5 / 360.0,
        ];
        for _ in 0..1_000_000 {
            let x = next();
            values.push(match x % 3 {
                0 => f64::from_bits(x.rotate_left(17)),
                1 => ((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 4000.0,
                _ => ((x >> 20) % 10_000) as f64 * 0.5 - 2500.0,
            });
        }
        for v in values {
            if v.is_nan() {
                assert!(round_half_away(v).is_nan()); // libm may quiet a signalling NaN
                continue;
            }
            assert_eq!(round_half_away(v).to_bits(), v.round().to_bits(), "{v:e}");
        }
    }
    use proptest::prelude::*;

    #[test]
    fn huge_angles_are_reduced_exactly_and_slices_match_scalars() {
        // 1e20 is exact in f64 and 10^20 mod 360 = 280.
        assert_eq!(sin_cos_deg(1e20), sin_cos_deg(280.0));
        assert_eq!(sin_cos_deg(-1e20), sin_cos_deg(-280.0));
        let (s, c) = sin_cos_deg(f64::INFINITY);
        assert!(s.is_nan() && c.is_nan());
        let (s, c) = sin_cos_deg(f64::NAN);
        assert!(s.is_nan() && c.is_nan());
        let mut x: u64 = 7;
        let mut angles: Vec<f64> = (0..1000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x >> 11) as f64 / (1u64 << 53) as f64) * 2000.0 - 1000.0
            })
            .collect();
        // `slice_fn` gives, bit for bit, what `sin_cos_deg` gives per angle.
        fn check(angles: &[f64], slice_fn: impl Fn(&[f64], &mut [f64], &mut [f64])) {
            let (mut s, mut c) = (vec![0.0; angles.len()], vec![0.0; angles.len()]);
            slice_fn(angles, &mut s, &mut c);
            for (i, a) in angles.iter().enumerate() {
                let (es, ec) = sin_cos_deg(*a);
                assert_eq!((s[i].to_bits(), c[i].to_bits()), (es.to_bits(), ec.to_bits()), "{a}");
            }
        }
        // The branch-free loop (AVX-512F or AVX2 where the CPU has it), then
        // its portable build whatever the CPU.
        check(&angles, sin_cos_deg_slice);
        // Each build the CPU can run (the slice function takes the widest).
        for simd in Simd::available() {
            check(&angles, |a, s, c| reduced_slice(simd, a, s, c));
        }
        angles.push(3e19);
        check(&angles, sin_cos_deg_slice); // one huge angle: the careful loop
    }

    #[test]
    fn sin_cos_deg_agrees_with_the_library_to_an_ulp_or_two() {
        // A dense sweep over the reduced range, plus large angles and the
        // awkward spots near each multiple of 45 degrees.
        let mut angles: Vec<f64> = (-200_000..=200_000).map(|i| f64::from(i) * 0.000_237).collect();
        angles.extend((-80..=80).flat_map(|k| {
            let a = f64::from(k) * 45.0;
            [a, a + 1e-9, a - 1e-9, a + 1e-3, a - 1e-3]
        }));
        angles.extend([1234.5678, -98765.4321, 1e6 + 0.25, 359.999_999_999]);
        let mut worst = 0.0f64;
        for a in angles {
            let (s, c) = sin_cos_deg(a);
            // The library on the exactly reduced angle (the reduction is
            // exact, so this is the true value to within the library's ulp).
            let q = (a / 90.0).round();
            let r = (a - 90.0 * q).to_radians();
            let (rs, rc) = r.sin_cos();
            let (es, ec) = match (q as i64) & 3 {
                0 => (rs, rc),
                1 => (rc, -rs),
                2 => (-rs, -rc),
                _ => (-rc, rs),
            };
            worst = worst.max((s - es).abs()).max((c - ec).abs());
            assert!((s * s + c * c - 1.0).abs() < 4e-16, "{a}: {s} {c}");
        }
        assert!(worst <= 2.3e-16, "worst error {worst:e}");
        // Exact where it must be.
        for k in -8..=8 {
            let (s, c) = sin_cos_deg(f64::from(k) * 90.0);
            assert!(s.abs() <= 1.0 && c.abs() <= 1.0 && (s == 0.0) != (c == 0.0));
            assert_eq!(s.abs() + c.abs(), 1.0);
        }
    }

    // ---- textbook elementary matrices, written out row by row ----

    fn from_rows(r: [[f64; 3]; 3]) -> DMat3 {
        DMat3::from_cols_array_2d(&r).transpose()
    }

    fn rx(deg: f64) -> DMat3 {
        let (s, c) = (deg.to_radians().sin(), deg.to_radians().cos());
        from_rows([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    }

    fn ry(deg: f64) -> DMat3 {
        let (s, c) = (deg.to_radians().sin(), deg.to_radians().cos());
        from_rows([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    }

    fn rz(deg: f64) -> DMat3 {
        let (s, c) = (deg.to_radians().sin(), deg.to_radians().cos());
        from_rows([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    }

    fn textbook(axis: Axis, deg: f64) -> DMat3 {
        match axis {
            Axis::X => rx(deg),
            Axis::Y => ry(deg),
            Axis::Z => rz(deg),
        }
    }

    fn textbook_product(axes: &[Axis], angles: &[f64]) -> DMat3 {
        axes.iter().zip(angles).fold(DMat3::IDENTITY, |m, (&a, &d)| m * textbook(a, d))
    }

    fn assert_mat_eq(a: DMat3, b: DMat3, tol: f64, what: &str) {
        assert!(a.abs_diff_eq(b, tol), "{what}:\n{a:?}\n!=\n{b:?}");
    }

    fn is_rotation(m: DMat3, tol: f64) -> bool {
        (m.transpose() * m).abs_diff_eq(DMat3::IDENTITY, tol) && (m.determinant() - 1.0).abs() < tol
    }

    fn same_rotation_q(a: DQuat, b: DQuat, tol: f64) -> bool {
        a.abs_diff_eq(b, tol) || a.abs_diff_eq(-b, tol)
    }

    /// Grid with awkward values: multiples of 90, near 90, beyond 180.
    const GRID: [f64; 15] = [
        -270.0, -180.0, -135.0, -90.0, -89.5, -45.0, -10.0, 0.0, 1e-7, 17.0, 60.0, 90.0, 91.0,
        179.0, 400.0,
    ];

    #[test]
    fn sin_cos_deg_is_accurate_and_exact_at_quarter_turns() {
        for q in -12i32..=12 {
            let d = 90.0 * f64::from(q);
            let want = match q.rem_euclid(4) {
                0 => (0.0, 1.0),
                1 => (1.0, 0.0),
                2 => (0.0, -1.0),
                _ => (-1.0, 0.0),
            };
            assert_eq!(sin_cos_deg(d), want, "{d}");
        }
        let mut d = -1000.0;
        while d < 1000.0 {
            let (s, c) = sin_cos_deg(d);
            // Reference: reduce exactly (`%` is exact on floats) before converting,
            // so the reference is not itself off by the rounding of d·π/180.
            let (s0, c0) = (d % 360.0).to_radians().sin_cos();
            assert!((s - s0).abs() < 1e-15 && (c - c0).abs() < 1e-15, "{d}");
            assert!((s * s + c * c - 1.0).abs() < 4e-16, "{d}");
            d += 0.0137;
        }
        let (s, c) = sin_cos_deg(f64::NAN);
        assert!(s.is_nan() && c.is_nan());
    }

    // ---- the textbook matrices themselves follow the right-hand rule ----

    #[test]
    fn textbook_matrices_follow_right_hand_rule() {
        assert!((rz(90.0) * DVec3::X).abs_diff_eq(DVec3::Y, 1e-15));
        assert!((rx(90.0) * DVec3::Y).abs_diff_eq(DVec3::Z, 1e-15));
        assert!((ry(90.0) * DVec3::Z).abs_diff_eq(DVec3::X, 1e-15));
    }

    // ---- euler_to_mat3 against hand-multiplied textbook matrices ----

    #[test]
    fn euler_to_mat3_matches_textbook_for_every_order() {
        for order in RotationOrder::ALL {
            for &a in &GRID {
                for &b in &GRID {
                    for &c in &GRID {
                        let got = euler_to_mat3(&order.axes(), &[a, b, c]);
                        let want = textbook_product(&order.axes(), &[a, b, c]);
                        assert_mat_eq(got, want, 1e-14, &format!("{order} {a} {b} {c}"));
                    }
                }
            }
        }
    }

    #[test]
    fn euler_to_mat3_matches_textbook_for_one_and_two_axes() {
        assert_eq!(euler_to_mat3(&[], &[]), DMat3::IDENTITY);
        assert_eq!(euler_to_quat(&[], &[]), DQuat::IDENTITY);
        for axis in Axis::ALL {
            for &a in &GRID {
                assert_mat_eq(euler_to_mat3(&[axis], &[a]), textbook(axis, a), 1e-15, "one axis");
                assert_mat_eq(axis_rotation(axis, a), textbook(axis, a), 1e-15, "axis_rotation");
            }
        }
        for first in Axis::ALL {
            for second in Axis::ALL {
                if first == second {
                    continue;
                }
                for &a in &GRID {
                    for &b in &GRID {
                        let got = euler_to_mat3(&[first, second], &[a, b]);
                        let want = textbook(first, a) * textbook(second, b);
                        assert_mat_eq(got, want, 1e-14, &format!("{first}{second} {a} {b}"));
                        let q = euler_to_quat(&[first, second], &[a, b]);
                        assert_mat_eq(DMat3::from_quat(q), want, 1e-14, "two-axis quat");
                    }
                }
            }
        }
    }

    #[test]
    fn hand_computed_examples() {
        // Rz(90)·Rx(90)·(0,0,1): Rx(90) takes +Z to -Y, Rz(90) takes -Y to +X.
        let m = euler_to_mat3(&[Axis::Z, Axis::X], &[90.0, 90.0]);
        assert!((m * DVec3::Z).abs_diff_eq(DVec3::X, 1e-15));
        // Rx(90)·Ry(90)·(1,0,0): Ry(90) takes +X to -Z, Rx(90) takes -Z to +Y.
        let m = euler_to_mat3(&[Axis::X, Axis::Y], &[90.0, 90.0]);
        assert!((m * DVec3::X).abs_diff_eq(DVec3::Y, 1e-15));
        // Ry(90)·Rz(90)·(0,1,0): Rz(90) takes +Y to -X, Ry(90) takes -X to +Z.
        let m = euler_to_mat3(&[Axis::Y, Axis::Z], &[90.0, 90.0]);
        assert!((m * DVec3::Y).abs_diff_eq(DVec3::Z, 1e-15));
        // Rz(30)·(1,0,0) = (cos 30, sin 30, 0).
        let m = euler_to_mat3(&[Axis::Z], &[30.0]);
        let want = DVec3::new(3f64.sqrt() / 2.0, 0.5, 0.0);
        assert!((m * DVec3::X).abs_diff_eq(want, 1e-15));
        // Full ZXY: Rz(90)·Rx(90)·Ry(90)·(1,0,0): Ry takes +X to -Z,
        // Rx takes -Z to +Y, Rz takes +Y to -X.
        let m = euler_to_mat3(&[Axis::Z, Axis::X, Axis::Y], &[90.0, 90.0, 90.0]);
        assert!((m * DVec3::X).abs_diff_eq(-DVec3::X, 1e-15));
        let q = euler_to_quat(&[Axis::Z, Axis::X, Axis::Y], &[90.0, 90.0, 90.0]);
        assert!((q * DVec3::X).abs_diff_eq(-DVec3::X, 1e-15));
    }

    #[test]
    fn apply_axis_rotation_is_right_multiplication() {
        let m0 = euler_to_mat3(&[Axis::Y, Axis::Z, Axis::X], &[12.0, -70.0, 133.0])
            * DMat3::from_diagonal(DVec3::new(1.0, 2.0, 3.0));
        for axis in Axis::ALL {
            for &d in &GRID {
                let mut m = m0;
                let (s, c) = sin_cos_deg(d);
                apply_axis_rotation(&mut m, axis, s, c);
                assert_mat_eq(m, m0 * textbook(axis, d), 1e-14, "apply");
            }
        }
    }

    #[test]
    fn euler_to_quat_matches_euler_to_mat3() {
        for order in RotationOrder::ALL {
            for &a in &GRID {
                for &b in &GRID {
                    for &c in &GRID {
                        let q = euler_to_quat(&order.axes(), &[a, b, c]);
                        assert!(q.is_normalized());
                        let m = euler_to_mat3(&order.axes(), &[a, b, c]);
                        assert_mat_eq(DMat3::from_quat(q), m, 1e-14, "quat vs mat");
                    }
                }
            }
        }
    }

    // ---- orders and names ----

    #[test]
    fn rotation_order_names_and_axes() {
        for order in RotationOrder::ALL {
            assert_eq!(RotationOrder::from_axes(&order.axes()), Some(order));
            assert_eq!(RotationOrder::from_name(order.name()), Some(order));
            assert_eq!(RotationOrder::from_name(&order.name().to_lowercase()), Some(order));
            let letters: String = order.axes().iter().map(|a| a.letter()).collect();
            assert_eq!(letters, order.name());
            assert_eq!(order.to_string(), order.name());
        }
        let mut names: Vec<_> = RotationOrder::ALL.iter().map(|o| o.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 6);
        assert_eq!(RotationOrder::from_name("zXy"), Some(RotationOrder::ZXY));
        assert_eq!(RotationOrder::from_name("XXY"), None);
        assert_eq!(RotationOrder::from_name("ZX"), None);
        assert_eq!(RotationOrder::from_name(""), None);
        assert_eq!(RotationOrder::from_axes(&[]), None);
        assert_eq!(RotationOrder::from_axes(&[Axis::X, Axis::Y]), None);
        assert_eq!(RotationOrder::from_axes(&[Axis::X, Axis::Y, Axis::X]), None);
        assert_eq!(RotationOrder::from_axes(&[Axis::X, Axis::Y, Axis::Z, Axis::X]), None);
        assert_eq!(Axis::from_letter('y'), Some(Axis::Y));
        assert_eq!(Axis::from_letter('w'), None);
        for axis in Axis::ALL {
            assert_eq!(axis.unit_vector()[axis.index()], 1.0);
            assert_eq!(axis.unit_vector().length(), 1.0);
        }
    }

    // ---- glam's EulerRot convention, pinned ----

    #[test]
    fn to_glam_agrees_with_euler_to_quat() {
        for order in RotationOrder::ALL {
            for &a in &GRID {
                for &b in &GRID {
                    for &c in &GRID {
                        let ours = euler_to_quat(&order.axes(), &[a, b, c]);
                        let (ar, br, cr) = (a.to_radians(), b.to_radians(), c.to_radians());
                        let glams = DQuat::from_euler(order.to_glam(), ar, br, cr);
                        assert!(
                            same_rotation_q(ours, glams, 1e-14),
                            "{order} {a} {b} {c}: {ours:?} vs {glams:?}"
                        );
                        let glam_m = DMat3::from_euler(order.to_glam(), ar, br, cr);
                        let m = euler_to_mat3(&order.axes(), &[a, b, c]);
                        assert_mat_eq(glam_m, m, 1e-14, "glam mat");
                    }
                }
            }
        }
    }

    #[test]
    fn glam_extrinsic_variant_is_the_reverse() {
        // Documents the trap: `EulerRot::ZXYEx` is NOT the BVH `ZXY`; it is
        // extrinsic, i.e. Ry(c)·Rx(b)·Rz(a).
        let (a, b, c) = (30.0_f64, 40.0_f64, 50.0_f64);
        let ex = DMat3::from_euler(EulerRot::ZXYEx, a.to_radians(), b.to_radians(), c.to_radians());
        let bvh = euler_to_mat3(&RotationOrder::ZXY.axes(), &[a, b, c]);
        assert!(!ex.abs_diff_eq(bvh, 1e-3));
        assert_mat_eq(ex, ry(c) * rx(b) * rz(a), 1e-14, "extrinsic");
    }

    #[test]
    fn glam_to_euler_returns_angles_in_listing_order() {
        for order in RotationOrder::ALL {
            let angles = [35.0, -50.0, 120.0];
            let m = euler_to_mat3(&order.axes(), &angles);
            let (a, b, c) = m.to_euler(order.to_glam());
            let glams = [a.to_degrees(), b.to_degrees(), c.to_degrees()];
            let ours = mat3_to_euler(m, order);
            for n in 0..3 {
                assert!((glams[n] - angles[n]).abs() < 1e-9, "{order}: {glams:?}");
                assert!((ours[n] - angles[n]).abs() < 1e-9, "{order}: {ours:?}");
            }
        }
    }

    // ---- Euler round trips ----

    /// |a - b| modulo 360, in [0, 180].
    fn wrapped_diff(a: f64, b: f64) -> f64 {
        let d = (a - b).rem_euclid(360.0);
        d.min(360.0 - d)
    }

    fn check_round_trip(order: RotationOrder, angles: [f64; 3]) {
        let m = euler_to_mat3(&order.axes(), &angles);
        let q = euler_to_quat(&order.axes(), &angles);
        let from_m = mat3_to_euler(m, order);
        let from_q = quat_to_euler(q, order);
        for got in [from_m, from_q] {
            assert!(got[0] > -180.0 && got[0] <= 180.0, "{order} {angles:?} -> {got:?}");
            assert!(got[2] > -180.0 && got[2] <= 180.0, "{order} {angles:?} -> {got:?}");
            assert!(got[1].abs() <= 90.0, "{order} {angles:?} -> {got:?}");
            assert_mat_eq(
                euler_to_mat3(&order.axes(), &got),
                m,
                1e-9,
                &format!("{order} {angles:?} -> {got:?}"),
            );
        }
        // Away from gimbal lock, angles in the principal range come back.
        let principal = angles[0] > -180.0
            && angles[0] <= 180.0
            && angles[2] > -180.0
            && angles[2] <= 180.0
            && angles[1].abs() < 89.0;
        if principal {
            for got in [from_m, from_q] {
                for n in 0..3 {
                    // Modulo 360 only so that 180 may come back as -179.99999999999997.
                    assert!(
                        wrapped_diff(got[n], angles[n]) < 1e-9,
                        "{order} {angles:?} -> {got:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn euler_round_trip_grid() {
        let mut count = 0;
        for order in RotationOrder::ALL {
            let mut a = -180.0;
            while a <= 180.0 {
                let mut b = -180.0;
                while b <= 180.0 {
                    let mut c = -180.0;
                    while c <= 180.0 {
                        check_round_trip(order, [a, b, c]);
                        count += 1;
                        c += 15.0;
                    }
                    b += 7.5;
                }
                a += 15.0;
            }
            for &a in &GRID {
                for &b in &GRID {
                    for &c in &GRID {
                        check_round_trip(order, [a, b, c]);
                    }
                }
            }
        }
        assert!(count > 6 * 25 * 49 * 25 - 1);
    }

    #[test]
    fn gimbal_lock_reproduces_matrix() {
        for order in RotationOrder::ALL {
            for b in [90.0, -90.0, 270.0, -270.0] {
                for &a in &GRID {
                    for &c in &GRID {
                        let m = euler_to_mat3(&order.axes(), &[a, b, c]);
                        let got = mat3_to_euler(m, order);
                        assert_eq!(got[2], 0.0, "{order} {a} {b} {c}: third angle at lock");
                        assert!((got[1].abs() - 90.0).abs() < 1e-6);
                        assert_mat_eq(
                            euler_to_mat3(&order.axes(), &got),
                            m,
                            1e-12,
                            &format!("lock {order} {a} {b} {c} -> {got:?}"),
                        );
                        let q = euler_to_quat(&order.axes(), &[a, b, c]);
                        let got_q = quat_to_euler(q, order);
                        assert_mat_eq(
                            euler_to_mat3(&order.axes(), &got_q),
                            m,
                            1e-9,
                            "lock via quat",
                        );
                        // Continuous extraction keeps the previous third angle.
                        let prev = [a + 3.0, b - 2.0, c - 4.0];
                        let near = mat3_to_euler_near(m, order, prev);
                        assert_eq!(near[2], prev[2]);
                        assert!((near[0] - a).abs() < 4.0 + 1e-6, "{near:?} vs {prev:?}");
                        assert_mat_eq(euler_to_mat3(&order.axes(), &near), m, 1e-12, "lock near");
                    }
                }
            }
        }
    }

    #[test]
    fn near_lock_extraction_is_accurate() {
        // Just outside the lock threshold the split of first and third angle
        // is ill-conditioned, but the matrix must still be reproduced.
        for order in RotationOrder::ALL {
            for db in [1e-3, 1e-6, 1e-8, 1e-9, 1e-10, 1e-12] {
                for b in [90.0 - db, -90.0 + db] {
                    let m = euler_to_mat3(&order.axes(), &[33.0, b, -71.0]);
                    let got = mat3_to_euler(m, order);
                    assert_mat_eq(euler_to_mat3(&order.axes(), &got), m, 1e-11, "near lock");
                }
            }
        }
    }

    // ---- continuity ----

    /// A smooth track: first angle winds over 700°, middle crosses +90° and
    /// -90°, third drifts over 400°. Steps stay below 3° per frame.
    fn track(t: f64) -> [f64; 3] {
        [
            -170.0 + 700.0 * t,
            60.0 * (std::f64::consts::TAU * t).sin()
                + 40.0 * (3.0 * std::f64::consts::TAU * t).sin()
                + 10.0,
            150.0 + 400.0 * t * t,
        ]
    }

    #[test]
    fn continuity_without_flips() {
        let frames = 600;
        for order in RotationOrder::ALL {
            let mut prev = track(0.0);
            let mut raw_prev = prev;
            let mut raw_max_jump: f64 = 0.0;
            for f in 1..=frames {
                let want = track(f as f64 / frames as f64);
                let m = euler_to_mat3(&order.axes(), &want);
                let got = mat3_to_euler_near(m, order, prev);
                for n in 0..3 {
                    assert!(
                        (got[n] - prev[n]).abs() < 5.0,
                        "{order} frame {f}: {prev:?} -> {got:?}"
                    );
                    // Far from lock, the only continuous solution is the track itself.
                    assert!(
                        (got[n] - want[n]).abs() < 1e-6,
                        "{order} frame {f}: {got:?} vs {want:?}"
                    );
                }
                assert_mat_eq(euler_to_mat3(&order.axes(), &got), m, 1e-9, "continuity");
                let q = euler_to_quat(&order.axes(), &want);
                let got_q = quat_to_euler_near(q, order, prev);
                for n in 0..3 {
                    assert!((got_q[n] - got[n]).abs() < 1e-6);
                }
                let raw = mat3_to_euler(m, order);
                for n in 0..3 {
                    raw_max_jump = raw_max_jump.max((raw[n] - raw_prev[n]).abs());
                }
                raw_prev = raw;
                prev = got;
            }
            // The test is meaningful: the raw extraction does flip.
            assert!(raw_max_jump > 170.0, "{order}: raw max jump {raw_max_jump}");
        }
    }

    #[test]
    fn continuity_through_exact_gimbal_lock() {
        // Middle angle passes exactly through 90° at frame 50.
        for order in RotationOrder::ALL {
            let angles = |f: f64| [20.0 + 0.5 * f, 40.0 + f, -30.0 + 0.8 * f];
            let mut prev = angles(0.0);
            for f in 1..=100 {
                let want = angles(f as f64);
                let m = euler_to_mat3(&order.axes(), &want);
                let got = mat3_to_euler_near(m, order, prev);
                for n in 0..3 {
                    assert!(
                        (got[n] - prev[n]).abs() < 3.0,
                        "{order} frame {f}: {prev:?} -> {got:?}"
                    );
                }
                assert_mat_eq(euler_to_mat3(&order.axes(), &got), m, 1e-9, "through lock");
                if f == 50 {
                    assert_eq!(got[2], prev[2], "at lock the third angle is kept");
                }
                prev = got;
            }
            assert!((prev[1] - 140.0).abs() < 1e-6, "{order}: {prev:?}");
        }
    }

    #[test]
    fn near_picks_second_solution_and_wraps() {
        let order = RotationOrder::ZXY;
        let m = euler_to_mat3(&order.axes(), &[10.0, 100.0, 20.0]);
        let principal = mat3_to_euler(m, order);
        assert!((principal[1] - 80.0).abs() < 1e-9, "{principal:?}");
        let near = mat3_to_euler_near(m, order, [12.0, 98.0, 19.0]);
        assert!((near[0] - 10.0).abs() < 1e-9 && (near[1] - 100.0).abs() < 1e-9);
        let near = mat3_to_euler_near(m, order, [732.0, -262.0, -341.0]);
        assert!((near[0] - 730.0).abs() < 1e-9, "{near:?}");
        assert!((near[1] + 260.0).abs() < 1e-9, "{near:?}");
        assert!((near[2] + 340.0).abs() < 1e-9, "{near:?}");
    }

    // ---- 6D ----

    #[test]
    fn six_d_layout_and_round_trip() {
        assert_eq!(mat3_to_6d(DMat3::IDENTITY), [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
        let m = from_rows([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]);
        assert_eq!(mat3_to_6d(m), [0.0, 1.0, 0.0, -1.0, 0.0, 0.0]);
        assert_eq!(mat3_from_6d(mat3_to_6d(m)), m);
        for order in RotationOrder::ALL {
            for &a in &GRID {
                for &b in &GRID {
                    let m = euler_to_mat3(&order.axes(), &[a, b, a - b]);
                    assert_mat_eq(mat3_from_6d(mat3_to_6d(m)), m, 1e-15, "6d");
                }
            }
        }
    }

    #[test]
    fn six_d_degenerate_inputs_give_rotations() {
        for v in [
            [0.0; 6],
            [1.0, 0.0, 0.0, 2.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
            [0.0, 3.0, 0.0, 0.0, -1.0, 0.0],
            [f64::NAN, 0.0, 0.0, 0.0, 1.0, 0.0],
        ] {
            assert!(is_rotation(mat3_from_6d(v), 1e-15), "{v:?}");
        }
        // Gram-Schmidt keeps the direction of the first vector and the plane
        // of the first two.
        let r = mat3_from_6d([2.0, 0.0, 0.0, 1.0, 3.0, 0.0]);
        assert_mat_eq(r, DMat3::IDENTITY, 1e-15, "gram-schmidt");
    }

    // ---- axis-angle and exponential map ----

    #[test]
    fn axis_angle_examples() {
        let (axis, angle) = quat_to_axis_angle(DQuat::IDENTITY);
        assert_eq!((axis, angle), (DVec3::X, 0.0));
        assert_eq!(quat_to_scaled_axis(DQuat::IDENTITY), DVec3::ZERO);
        assert_eq!(quat_to_scaled_axis(-DQuat::IDENTITY), DVec3::ZERO);
        assert_eq!(quat_from_scaled_axis(DVec3::ZERO), DQuat::IDENTITY);
        // 270° about +Z is 90° about -Z.
        let q = euler_to_quat(&[Axis::Z], &[270.0]);
        let (axis, angle) = quat_to_axis_angle(q);
        assert!(axis.abs_diff_eq(-DVec3::Z, 1e-15));
        assert!((angle - std::f64::consts::FRAC_PI_2).abs() < 1e-15);
        // Negated (same rotation) and scaled quaternions give the same answer.
        let (axis2, angle2) = quat_to_axis_angle(-q * 3.0);
        assert!(axis2.abs_diff_eq(axis, 1e-15) && (angle2 - angle).abs() < 1e-15);
        // Tiny rotations keep their axis and angle (glam would snap to 0).
        let tiny = DVec3::new(1e-12, -2e-12, 3e-13);
        let v = quat_to_scaled_axis(quat_from_scaled_axis(tiny));
        assert!((v - tiny).length() < 1e-26, "{v:?}");
        // Half turn.
        let q = euler_to_quat(&[Axis::Y], &[180.0]);
        let v = quat_to_scaled_axis(q);
        assert!((v.length() - std::f64::consts::PI).abs() < 1e-15);
        assert!(same_rotation_q(quat_from_scaled_axis(v), q, 1e-15));
    }

    #[test]
    fn from_scaled_axis_series_branch_is_accurate() {
        // Just inside the series branch the result must match the closed form
        // (glam's from_scaled_axis) to the last bits.
        for len in [0.99e-4, 0.5e-4, 1e-6, 1e-9] {
            let v = DVec3::new(2.0, -1.0, 2.0) * (len / 3.0);
            let ours = quat_from_scaled_axis(v);
            let glams = DQuat::from_scaled_axis(v);
            assert!(ours.abs_diff_eq(glams, 1e-20), "{len}: {ours:?} vs {glams:?}");
        }
    }

    #[test]
    fn scaled_axis_round_trip_grid() {
        for order in RotationOrder::ALL {
            for &a in &GRID {
                for &b in &GRID {
                    for &c in &GRID {
                        let q = euler_to_quat(&order.axes(), &[a, b, c]);
                        check_scaled_axis(q);
                    }
                }
            }
        }
    }

    fn check_scaled_axis(q: DQuat) {
        let v = quat_to_scaled_axis(q);
        assert!(v.length() <= std::f64::consts::PI + 1e-15);
        let back = quat_from_scaled_axis(v);
        assert!(back.is_normalized());
        assert!(same_rotation_q(back, q.normalize(), 1e-13), "{q:?} -> {v:?} -> {back:?}");
        let (axis, angle) = quat_to_axis_angle(q);
        assert!((0.0..=std::f64::consts::PI).contains(&angle));
        assert!((axis * angle).abs_diff_eq(v, 1e-14));
        // glam agrees on the rotation.
        assert!(same_rotation_q(DQuat::from_scaled_axis(v), q.normalize(), 1e-13));
    }

    // ---- property tests ----

    #[test]
    fn repr_conversion_matches_its_definitions() {
        let m = euler_to_mat3(&RotationOrder::YXZ.axes(), &[170.0, -35.0, 100.0]);
        let mut out = [0.0; 9];
        // Matrix: row-major, element (r, c) = column c's component r.
        mat3_to_repr(m, RotationRepr::Matrix, RotationOrder::XYZ, None, None, &mut out);
        for (k, v) in out.iter().enumerate() {
            assert_eq!(*v, m.col(k % 3)[k / 3]);
        }
        // Euler: the exact angles win; otherwise principal or near `previous`.
        let exact = Some([1.0, 2.0, 3.0]);
        mat3_to_repr(m, RotationRepr::Euler, RotationOrder::YXZ, exact, None, &mut out);
        assert_eq!(out[..3], [1.0, 2.0, 3.0]);
        mat3_to_repr(m, RotationRepr::Euler, RotationOrder::YXZ, None, None, &mut out);
        assert_eq!(out[..3], mat3_to_euler(m, RotationOrder::YXZ));
        // Exact angles with `previous`: kept when nearest, else unwrapped.
        let prev = [1.0, 2.0, 3.0];
        mat3_to_repr(m, RotationRepr::Euler, RotationOrder::YXZ, exact, Some(&prev), &mut out);
        assert_eq!(out[..3], [1.0, 2.0, 3.0]);
        let m359 = euler_to_mat3(&RotationOrder::YXZ.axes(), &[359.0, 10.0, 20.0]);
        let prev = [0.0, 10.0, 20.0];
        let e359 = Some([359.0, 10.0, 20.0]);
        mat3_to_repr(m359, RotationRepr::Euler, RotationOrder::YXZ, e359, Some(&prev), &mut out);
        assert!((out[0] + 1.0).abs() < 1e-9 && (out[1] - 10.0).abs() < 1e-9, "{out:?}");
        let near = [530.0, -35.0, 100.0];
        mat3_to_repr(m, RotationRepr::Euler, RotationOrder::YXZ, None, Some(&near), &mut out);
        assert!((out[0] - 530.0).abs() < 1e-9, "{out:?}");
        // Quat: w >= 0 alone, the previous frame's hemisphere with `previous`.
        let q = DQuat::from_mat3(&m).normalize();
        let q = if q.w < 0.0 { -q } else { q };
        mat3_to_repr(m, RotationRepr::Quat, RotationOrder::XYZ, None, None, &mut out);
        assert_eq!(out[..4], q.to_array());
        let opposite = (-q).to_array();
        mat3_to_repr(m, RotationRepr::Quat, RotationOrder::XYZ, None, Some(&opposite), &mut out);
        assert_eq!(out[..4], opposite);
        mat3_to_repr(m, RotationRepr::SixD, RotationOrder::XYZ, None, None, &mut out);
        assert_eq!(out[..6], mat3_to_6d(m));
        mat3_to_repr(m, RotationRepr::AxisAngle, RotationOrder::XYZ, None, None, &mut out);
        assert_eq!(out[..3], quat_to_scaled_axis(q).to_array());
        let widths = [3, 4, 9, 6, 3];
        let reprs = [
            RotationRepr::Euler,
            RotationRepr::Quat,
            RotationRepr::Matrix,
            RotationRepr::SixD,
            RotationRepr::AxisAngle,
        ];
        for (r, w) in reprs.into_iter().zip(widths) {
            assert_eq!(r.width(), w);
        }
    }

    fn order_strategy() -> impl Strategy<Value = RotationOrder> {
        (0usize..6).prop_map(|i| RotationOrder::ALL[i])
    }

    proptest! {
        #[test]
        fn prop_euler_round_trip(
            order in order_strategy(),
            a in -720.0f64..720.0,
            b in -720.0f64..720.0,
            c in -720.0f64..720.0,
        ) {
            check_round_trip(order, [a, b, c]);
        }

        #[test]
        fn prop_principal_angles_come_back(
            order in order_strategy(),
            a in -179.9f64..180.0,
            b in -89.0f64..89.0,
            c in -179.9f64..180.0,
        ) {
            let q = euler_to_quat(&order.axes(), &[a, b, c]);
            let got = quat_to_euler(q, order);
            prop_assert!((got[0] - a).abs() < 1e-9 && (got[1] - b).abs() < 1e-9 && (got[2] - c).abs() < 1e-9,
                "{} {:?} -> {:?}", order, [a, b, c], got);
            prop_assert!(same_rotation_q(DQuat::from_euler(order.to_glam(), a.to_radians(), b.to_radians(), c.to_radians()), q, 1e-13));
        }

        #[test]
        fn prop_near_is_exact_and_close(
            order in order_strategy(),
            a in -720.0f64..720.0,
            b in -720.0f64..720.0,
            c in -720.0f64..720.0,
            da in -20.0f64..20.0,
            db in -20.0f64..20.0,
            dc in -20.0f64..20.0,
        ) {
            // With the previous frame a small step away, the continuous
            // extraction returns the angles themselves (away from lock).
            let m = euler_to_mat3(&order.axes(), &[a, b, c]);
            let got = mat3_to_euler_near(m, order, [a + da, b + db, c + dc]);
            prop_assert!(euler_to_mat3(&order.axes(), &got).abs_diff_eq(m, 1e-9));
            if b.to_radians().cos().abs() > 0.35 {
                prop_assert!((got[0] - a).abs() < 1e-6 && (got[1] - b).abs() < 1e-6 && (got[2] - c).abs() < 1e-6,
                    "{} {:?} -> {:?}", order, [a, b, c], got);
            }
        }

        #[test]
        fn prop_six_d_round_trip(
            order in order_strategy(),
            a in -360.0f64..360.0,
            b in -360.0f64..360.0,
            c in -360.0f64..360.0,
            noise in proptest::array::uniform6(-0.2f64..0.2),
            scale in 0.1f64..10.0,
        ) {
            let m = euler_to_mat3(&order.axes(), &[a, b, c]);
            prop_assert!(mat3_from_6d(mat3_to_6d(m)).abs_diff_eq(m, 1e-14));
            let mut v = mat3_to_6d(m);
            for (x, n) in v.iter_mut().zip(noise) {
                *x = (*x + n) * scale;
            }
            prop_assert!(is_rotation(mat3_from_6d(v), 1e-14));
        }

        #[test]
        fn prop_scaled_axis_round_trip(
            x in -1.0f64..1.0, y in -1.0f64..1.0, z in -1.0f64..1.0, w in -1.0f64..1.0,
        ) {
            let q = DQuat::from_xyzw(x, y, z, w);
            prop_assume!(q.length() > 1e-3);
            check_scaled_axis(q);
        }

        #[test]
        fn prop_from_scaled_axis_round_trip(
            x in -3.0f64..3.0, y in -3.0f64..3.0, z in -3.0f64..3.0,
        ) {
            let v = DVec3::new(x, y, z);
            prop_assume!(v.length() < std::f64::consts::PI - 1e-6);
            let back = quat_to_scaled_axis(quat_from_scaled_axis(v));
            prop_assert!(back.abs_diff_eq(v, 1e-13), "{:?} -> {:?}", v, back);
        }
    }
}
