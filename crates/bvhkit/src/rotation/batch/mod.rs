//! Batched rotation maths: `atan2`, SLERP, continuous Euler extraction
//! and the mixer's whole per-joint pipeline ([`MixLanes`]) over slices,
//! written without branches or library calls so that the compiler runs
//! them on SIMD lanes (AVX-512F or AVX2 where the CPU has them, like
//! [`sin_cos_deg_slice`](super::sin_cos_deg_slice)'s dispatch, and no
//! FMA, so the results do not depend on the CPU).
//!
//! Accuracy: [`atan2`](fn@atan2) (and so [`atan2_slice`], the same bits) is within
//! 2 ulp of the correctly rounded `atan2` (the tests compare it with
//! `f64::atan2` on millions of pairs); [`EulerBatch`] gives the angles of
//! [`mat3_to_euler_near`](super::mat3_to_euler_near) within 1e-9 degrees
//! (in practice a few ulp); [`slerp_slice`] is SLERP within a few ulp.
//! The mixes' lanes (`MixLanes` made by `fast_with_capacity`: the
//! `Mixer`'s) trade fdlibm's bits for speed: their angles are within 1e-10
//! degrees of SLERP and Euler extraction written from the formulas with
//! std's functions (`fast_mix_lanes_are_within_1e_9_degrees_of_the_formulas`:
//! 6.1e-11 on random angles, 1.6e-11 on the corpus, against 2.4e-11 and
//! 1.1e-11 for the exact lanes), the same bits on every SIMD build. Both
//! lanes then round each angle to nine decimals as it is written
//! (`snap_angle`, at most 5e-10 degrees), so the test now measures
//! 5.06e-10 for the mixes' lanes (random and corpus) and 5.03e-10 and
//! 5.00e-10 for the exact ones: the rounding, and the kernels' error beside
//! it.
//!
//! # Implementation notes
//!
//! The batched kernels of the rotation-heavy paths, written with selects
//! instead of branches and run on SIMD lanes behind the same dispatch (no
//! FMA): `atan2` / `atan2_slice` (fdlibm's `atan` reduction and polynomial, the
//! same bits either way, within 2 ulp of libm), `slerp_slice` (shortest arc,
//! `resample::slerp`'s small-angle rule; its weights' sines through the fdlibm
//! kernel) and `EulerBatch` (caller-owned, reused structure-of-arrays buffers:
//! push a frame's matrices or quaternions with their orders and previous
//! angles, `solve` once: quaternion to matrix in the order's own axes,
//! `extract_rad`'s operations with selects, three `atan2`s, and the continuity
//! choice `near_deg`, which the scalar `mat3_to_euler_near` shares; the
//! entries padded to the lane count of the build that runs, `Simd::pad`: 4
//! with AVX2, 8 with AVX-512F; a batch of matrices alone, or of
//! quaternions alone, runs a loop without the other kind's columns and
//! select: the same bits). `MixLanes`
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
//! runs in a scalar remainder, and its loop takes its five outputs as `&mut`
//! parameters of their own (`mix_lanes_into`: fields of one `&mut MixLanes`
//! left the vectoriser to check at run time that no output overlaps an
//! input, about 300 of the pass's 470 instructions a frame outside its
//! loop; 3% to 4% of a blend on a 20- to 30-joint clip, the same bits);
//! a layer's SLERP from the identity leaves out the
//! identity's products (`slerp_from_identity`, the same bits), and its frame
//! copies the lanes' parities and reference inverses as slices (`Reference`
//! keeps them by lane) up to the first joint the layer leaves unchanged.
//! The `Mixer`'s lanes (`MixLanes::fast_with_capacity`, `FAST` through
//! the pass) run kernels of their own where the resampler's keep
//! `sin_cos_deg`'s and fdlibm's bits: the half angles' sines and
//! cosines (`sin_cos_half`: `sin_cos_deg`'s exact reduction, then
//! `sin_cos_kernel_mix`, minimax polynomials fitted for `[-π/4, π/4]`,
//! the sine's of degree 13 and the cosine's of degree 12, evaluated in
//! pairs (Estrin) rather than as one chain), the SLERP's sine and cosine
//! (the same kernel) and its angle (`atan2_mix` with `atan_mix`: a degree
//! 21 polynomial in pairs, without the low parts of the constants), and
//! the extraction's three `atan2`s (`atan_mix` of degree 17: within
//! 1.3e-13 radians). What reaches the quaternion stays within about an
//! ulp, because gimbal lock amplifies its error by `1 / cos b` in the
//! first and third angles (a sine of degree 11, 1.3e-14 off, put the
//! random angles' worst at 1.05e-9 degrees, near 89.96°); the
//! extraction's angles are the end of the chain, so their `atan` may be
//! shorter. On AVX2 (2-core EPYC, paired whole-process runs of the
//! `mix_count` example) a mix takes about 0.84 of the time it took with
//! the exact lanes: 1.19x for crossfade and blend, 1.17x for the masked
//! blend, 1.12x for the layer; then `keep_same` (a joint whose two
//! frames hold the same angles gets them back bit for bit where the
//! lanes' are within 1e-6 degrees of them, so a clip blended with itself
//! is itself), a select loop after the pass, took 3% to 5% of that back
//! (criterion: crossfade 16.2 to 18.1 M joint-frames/s); the pass now
//! flags the lanes it may change (`MixLanes::same`: the two frames' angles
//! the same bits, or huge) and the loop runs only in a frame with one
//! (a crossfade of different frames has none: 1.03x to 1.05x on the
//! synthetic clip's crossfade). And a blend's `MixLanes::gather` leaves
//! out the joints whose angles are the same bits in both frames and the
//! previous output frame and `settled` (every angle finite and at most
//! 1e5 degrees, the middle one at least a degree from a quarter turn):
//! the lanes give such a joint its angles within about 1e-11 degrees,
//! the continuity choice takes them (the other solution is half a turn
//! away, no unwrapping is a tie, no gimbal lock) and `keep_same` puts
//! them back, so gather copies them into the output instead, the same
//! bits (`gathered_blend_lanes_leave_out_only_joints_the_lanes_give_back`
//! checks each left-out joint against the lanes, around the margins);
//! constant joints (a mocap clip's fingers: 41 of Perception Neuron's 59
//! three-channel joints in every frame of its crossfade with itself
//! reversed) no longer take a lane: 2.4x to 2.5x on that crossfade (CPU
//! time of the `mix_count` example). No FMA still:
//! the plain, AVX2 and AVX-512 loops and the lanes solved again one by
//! one give the same bits
//! (`fast_mix_lanes_are_the_same_bits_everywhere_and_the_reference_lane`).
//! Session 30 (mix37), the same bits: the pass's continuity choice rounds
//! its six quotients with `round_ties_even` (one instruction on AVX2 and
//! AVX-512, `simd_kernel!`'s `ROUND`; the portable x86-64 build, which
//! has no SSE4.1, keeps the `ROUNDING` sum) instead of adding and taking
//! away `ROUNDING`, whose `+0` for a quotient in `(-0.5, 0]` needed a
//! `copysign` (`round_ties_even` keeps the sign; the unsigned candidates
//! are never `-0`; beyond `2^51` the lane is flagged anyway:
//! `rounded_unwrap_is_the_magic_sum`), and the half angles' reduction
//! counts quarter turns from `x · (1/180)` beside the halving
//! (`reduce_half_quarter_turns`: `1/180` is `1/90` halved exactly;
//! `half_reduction_is_the_reduction_of_the_half`), a shorter chain of
//! dependent operations: 1.6% to 1.7% fewer instructions (callgrind) and
//! about 2% to 3% less CPU time on crossfade and blend (AVX2, paired
//! runs of `mix_count`; noisy). A pass
//! split in two loops (the quaternions through memory, then the rest, so
//! that the core overlaps more lanes' chains) lost about 2%, and one
//! loop running lane `l` of both halves (two chains side by side) was not
//! vectorised at all (about 4x slower): neither kept.
//! Session 31: the pass writes each angle rounded to nine decimals
//! (`snap_angle`, before `keep_same`, so a rotation mixed with itself still
//! gets its own bits back; the lanes solved again round with the scalar
//! function, the same bits): 2.5% to 3.4% more instructions (callgrind) and
//! about 5% more CPU time in the kernels (paired runs of `mix_count`), the
//! divider's; whole commands got faster (shorter numbers to write: `bvh
//! blend` of a corpus clip 0.75 to 0.91 of the CPU time). Rounding with
//! `round_ties_even` on AVX2 and AVX-512 (`+ 0.0` for the `2^52` sum's
//! `+0`: the same bits) saved 0.3% of the instructions and no measurable
//! time: not kept.
//! `QuatLanes` (crate-private) is the first half alone: one frame's
//! three-channel joints as quaternions in their orders' axes, in one pass;
//! `MixLanes::push_near` + `solve_quats` mix two such frames from there with
//! the same bits as the angle path (a resample computes each input frame's
//! quaternions once). `OrderMap` runs each frame's three-channel extractions
//! through `EulerBatch`; joints with one or two rotation channels (and any
//! joint at a weight outside [0, 1]) still go through `slerp_slice` and
//! `JointChannels::write_rotation` (its exactness report).
//!
//! Dispatch: `rotation::atan2_slice`, `rotation::slerp_slice`,
//! `EulerBatch::solve`, the mixer's lane pass `MixLanes::solve` and
//! `QuatLanes::solve`, like the rewrite lanes `edit::order::Lanes::solve`,
//! the dataset export's quaternions `rotation::mat3_to_quat_slice`
//! (`rotation/quat.rs`) and forward kinematics eight frames at a time,
//! `Kinematics::positions_many` (`FkLanes`), run their loops through
//! `simd_kernel!` (`crate::simd`): the AVX-512F build (eight lanes) where the
//! CPU has it, else the AVX2 build, else the portable one. No FMA: the
//! portable, AVX2 and AVX-512 loops give the same bits;
//! `mix_lanes_are_the_same_bits_everywhere_and_the_scalar_path` and the
//! other tests run every build the CPU can and compare with the scalar
//! functions.
//!
//! The kernels by what they compute: `atan2` (`atan2.rs`),
//! SLERP (`slerp.rs`), continuous Euler extraction ([`EulerBatch`],
//! `euler.rs`) and the mixer's lanes ([`MixLanes`], [`QuatLanes`],
//! `mix.rs`). Each runs its loop through `simd_kernel!` (`crate::simd`);
//! the tests (`tests.rs`) compare every build with the scalar references.

mod atan2;
mod euler;
mod mix;
mod slerp;
#[cfg(test)]
mod tests;

pub use self::atan2::{atan2, atan2_slice};
pub use self::euler::EulerBatch;
pub(crate) use self::euler::{extract_unit, extract_unit_fast, quat_matrix};
pub(crate) use self::mix::{
    LayerFrames, MixLanes, QuatLanes, adjacent, euler3_quat_lane, lane_quat, parity_of, write3,
};
pub use self::slerp::slerp_slice;

// The kernels share their steps: each file sees the others' items (and the
// imports below) through `use super::*`.
#[allow(unused_imports)]
use self::{atan2::*, euler::*, mix::*, slerp::*};

use glam::{DMat3, DQuat};

use crate::simd::{Simd, simd_kernel};

use super::{
    GIMBAL_LOCK_EPSILON, ROUNDING, RotationOrder, distance_sq, near_deg, place_quadrant,
    principal_deg, select, sin_cos_deg_reduced, sin_cos_kernel, snap_angle,
};
