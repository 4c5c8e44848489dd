//! Resample a clip to another frame rate.
//!
//! Output frame `k` is the pose at time `k / fps`; frames are made up to
//! the last input frame's time (`(n - 1) · Frame Time`), so the clip keeps
//! its duration to within one output frame. A rate is `1 / Frame Time`;
//! rates within 0.01% of each other are the same rate ([`super::same_rate`]),
//! so 120 fps on a file with `Frame Time: 0.0083333` is the identity (the
//! clip is returned unchanged, `Frame Time` included).
//!
//! An output time that falls on an input frame (within 1e-9 of a frame)
//! copies that frame bit for bit: where the new rate divides the old one
//! (within 0.01%), every output frame is an input frame. Between two input
//! frames, at fraction `u`:
//! - a joint with three rotation channels turns by quaternion SLERP along
//!   the shortest arc, `q = q0 · sin((1-u)θ)/sin θ + q1 · sin(uθ)/sin θ`,
//!   written back as Euler angles in the joint's own channel order, closest
//!   to the previous output frame's angles (no ±180° or 360° jumps);
//! - a joint with one or two rotation channels interpolates each angle
//!   along its shortest arc, `a0 + u · d` with `d` the difference wrapped
//!   into `[-180, 180]` (for one channel this is exactly SLERP; two
//!   channels cannot hold an arbitrary rotation, so SLERP is not used);
//! - position channels are interpolated linearly, `a0 + u · (a1 - a0)`.
//!
//! The new `Frame Time` is `1 / fps` computed in `f64`, so 30 fps is
//! written `0.03333333333333333` (the shortest text that reads back to
//! exactly 1/30).

use glam::DQuat;

use super::pose::{JointChannels, unwrap_deg};
use super::same_rate;
use crate::bvh::Bvh;
use crate::error::{Error, Result};
use crate::motion::Motion;
use crate::rotation::{EulerBatch, RotationOrder, slerp_slice};
use crate::skeleton::Skeleton;

/// Output times within this fraction of an input frame copy that frame.
const ON_FRAME: f64 = 1e-9;

/// Resamples `bvh` to `fps` frames per second (see the module docs).
///
/// # Errors
/// When `fps` is not finite and positive.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::resample;
/// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 4 Xposition Zrotation Xrotation Yrotation }
///     MOTION Frames: 3 Frame Time: 0.5
///     0 0 0 0
///     1 90 0 0
///     4 100 0 0")?;
/// let fast = resample::to_fps(&bvh, 4.0)?;
/// assert_eq!(fast.motion().n_frames(), 5);
/// assert_eq!(fast.motion().frame(2), bvh.motion().frame(1)); // copied bit for bit
/// let mid = fast.motion().frame(1);
/// assert_eq!(mid[0], 0.5);
/// assert!((mid[1] - 45.0).abs() < 1e-9); // SLERP about one axis: half the angle
/// assert!(fast.to_string().contains("\nFrame Time: 0.25\n"));
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn to_fps(bvh: &Bvh, fps: f64) -> Result<Bvh> {
    if !(fps.is_finite() && fps > 0.0) {
        return Err(Error::invalid(format!("the frame rate must be positive, found {fps}")));
    }
    let m = bvh.motion();
    if same_rate(m.fps(), fps) {
        return Ok(bvh.clone());
    }
    let frame_time = 1.0 / fps;
    let mut r = Resampler::new(bvh.skeleton());
    let n_out = r.n_out_frames(m.n_frames(), m.frame_time(), frame_time);
    let n = m.n_channels();
    let mut values = vec![0.0; n_out * n];
    if n > 0 {
        for (k, out) in values.chunks_exact_mut(n).enumerate() {
            r.frame(m, k, m.frame_time(), frame_time, out);
        }
    }
    let motion = Motion::with_frames(frame_time, n_out, n, values)?;
    Bvh::new(bvh.skeleton().clone(), motion)
}

/// The engine of [`to_fps`], with its per-frame buffers: the quaternions
/// of the two input frames around the current output time are kept, so
/// each input frame's rotations are built once.
#[derive(Clone, Debug)]
pub struct Resampler {
    joints: Vec<(JointChannels, Option<RotationOrder>)>,
    qa: Vec<DQuat>,
    qb: Vec<DQuat>,
    /// The SLERPs of an output frame (one batch, [`slerp_slice`]) and
    /// their Euler extraction (one batch, [`EulerBatch`]).
    q: Vec<DQuat>,
    euler: EulerBatch,
    cached: Option<usize>,
    previous: Vec<f64>,
    have_previous: bool,
}

impl Resampler {
    /// Buffers for `skeleton`.
    pub fn new(skeleton: &Skeleton) -> Resampler {
        let joints: Vec<_> = skeleton
            .joints()
            .iter()
            .map(JointChannels::of)
            .filter(|j| j.n_rot > 0 || j.n_pos > 0)
            .map(|j| (j, j.rotation_order()))
            .collect();
        Resampler {
            qa: vec![DQuat::IDENTITY; joints.len()],
            qb: vec![DQuat::IDENTITY; joints.len()],
            q: vec![DQuat::IDENTITY; joints.len()],
            euler: EulerBatch::new(),
            joints,
            cached: None,
            previous: vec![0.0; skeleton.n_channels()],
            have_previous: false,
        }
    }

    /// How many output frames `n_frames` input frames give at
    /// `new_frame_time` seconds per frame: every output time up to the last
    /// input frame's time.
    pub fn n_out_frames(&self, n_frames: usize, frame_time: f64, new_frame_time: f64) -> usize {
        if n_frames == 0 {
            return 0;
        }
        let last = (n_frames - 1) as f64;
        let ratio = new_frame_time / frame_time;
        if let Some(step) = integer_ratio(ratio) {
            return (n_frames - 1) / step + 1;
        }
        ((last / ratio + ON_FRAME).floor() as usize).min(usize::MAX - 1) + 1
    }

    /// Output frame `k` of `motion` resampled from `frame_time` to
    /// `new_frame_time` seconds per frame, into `out`. Frames are best made
    /// in order (the input rotations and the previous output frame, for
    /// Euler continuity, are kept between calls).
    ///
    /// # Panics
    /// When `out` does not hold one value per channel, or `k` is past the
    /// last output frame ([`Resampler::n_out_frames`]).
    pub fn frame(
        &mut self,
        motion: &Motion,
        k: usize,
        frame_time: f64,
        new_frame_time: f64,
        out: &mut [f64],
    ) {
        let ratio = new_frame_time / frame_time;
        let (i0, u) = match integer_ratio(ratio) {
            Some(step) => (k * step, 0.0),
            None => {
                let s = k as f64 * ratio;
                let i0 = s.floor();
                let u = s - i0;
                if u < ON_FRAME {
                    (i0 as usize, 0.0)
                } else if u > 1.0 - ON_FRAME {
                    (i0 as usize + 1, 0.0)
                } else {
                    (i0 as usize, u)
                }
            }
        };
        if u == 0.0 {
            out.copy_from_slice(motion.frame(i0));
        } else {
            self.load(motion, i0);
            self.between(motion.frame(i0), motion.frame(i0 + 1), u, out);
        }
        self.previous.copy_from_slice(out);
        self.have_previous = true;
    }

    /// Makes `qa`, `qb` the rotations of frames `i0` and `i0 + 1`.
    fn load(&mut self, motion: &Motion, i0: usize) {
        if self.cached == Some(i0) {
            return;
        }
        if self.cached == Some(i0.wrapping_sub(1)) {
            std::mem::swap(&mut self.qa, &mut self.qb);
        } else {
            let a = motion.frame(i0);
            for (q, (j, order)) in self.qa.iter_mut().zip(&self.joints) {
                if order.is_some() {
                    *q = j.rotation(a);
                }
            }
        }
        let b = motion.frame(i0 + 1);
        for (q, (j, order)) in self.qb.iter_mut().zip(&self.joints) {
            if order.is_some() {
                *q = j.rotation(b);
            }
        }
        self.cached = Some(i0);
    }

    /// Interpolates between frames `a` and `b` at fraction `u`, using the
    /// cached rotations: the SLERPs of every joint (those without three
    /// rotation channels hold the identity, which costs little) and the
    /// Euler extractions run as batches.
    fn between(&mut self, a: &[f64], b: &[f64], u: f64, out: &mut [f64]) {
        let near: &[f64] = if self.have_previous { &self.previous } else { a };
        slerp_slice(&self.qa, &self.qb, u, &mut self.q);
        self.euler.clear();
        for (idx, (j, order)) in self.joints.iter().enumerate() {
            for k in 0..j.n_pos as usize {
                let c = j.pos_index[k];
                out[c] = a[c] + u * (b[c] - a[c]);
            }
            match order {
                Some(order) => {
                    self.euler.push_quat(self.q[idx], *order, Some(j.angles(near)));
                }
                None => {
                    for k in 0..j.n_rot as usize {
                        let c = j.rot_index[k];
                        let d = unwrap_deg(b[c] - a[c], 0.0);
                        out[c] = a[c] + u * d;
                    }
                }
            }
        }
        self.euler.solve();
        let mut e = 0;
        for (j, order) in &self.joints {
            if order.is_some() {
                for (&c, v) in j.rot_index.iter().zip(self.euler.angles(e)) {
                    out[c] = v;
                }
                e += 1;
            }
        }
    }
}

/// `Some(n)` when `ratio` is within 0.01% of the whole number `n >= 1`.
fn integer_ratio(ratio: f64) -> Option<usize> {
    let n = ratio.round();
    ((1.0..1e15).contains(&n) && (ratio - n).abs() <= 1e-4 * ratio).then_some(n as usize)
}

/// Spherical linear interpolation from `q0` (at `u = 0`) to `q1` (at
/// `u = 1`) along the shortest arc: `q1` is negated when `q0 · q1 < 0`.
///
/// # Example
/// ```
/// use bvhkit::edit::resample::slerp;
/// use bvhkit::rotation::{euler_to_quat, Axis};
/// let q = slerp(euler_to_quat(&[Axis::Y], &[10.0]), euler_to_quat(&[Axis::Y], &[50.0]), 0.25);
/// assert!(q.abs_diff_eq(euler_to_quat(&[Axis::Y], &[20.0]), 1e-15));
/// ```
#[inline]
pub fn slerp(q0: DQuat, q1: DQuat, u: f64) -> DQuat {
    let q1 = if q0.dot(q1) < 0.0 { -q1 } else { q1 };
    // The angle between the two unit 4-vectors, accurate at both ends:
    // with a = |q0 - q1| = 2 sin(θ/2) and b = |q0 + q1| = 2 cos(θ/2),
    // sin θ = a·b/2.
    let (a, b) = ((q0 - q1).length(), (q0 + q1).length());
    let theta = 2.0 * a.atan2(b);
    let s = 0.5 * a * b;
    if s < 1e-12 {
        // (Nearly) the same rotation: the weights tend to 1 - u and u.
        return (q0 * (1.0 - u) + q1 * u).normalize();
    }
    q0 * (((1.0 - u) * theta).sin() / s) + q1 * ((u * theta).sin() / s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ratios_within_a_hundredth_of_a_percent() {
        assert_eq!(integer_ratio((1.0 / 30.0) / 0.0083333), Some(4));
        assert_eq!(integer_ratio(2.0), Some(2));
        assert_eq!(integer_ratio(2.4), None);
        assert_eq!(integer_ratio(0.5), None);
    }

    #[test]
    fn output_frame_counts_cover_the_clip() {
        let r = Resampler::new(&Skeleton::default());
        assert_eq!(r.n_out_frames(0, 0.01, 0.02), 0);
        assert_eq!(r.n_out_frames(1, 0.01, 0.02), 1);
        assert_eq!(r.n_out_frames(5, 0.01, 0.02), 3); // 0, 2, 4
        assert_eq!(r.n_out_frames(6, 0.01, 0.02), 3); // 0, 2, 4 (5 is past)
        assert_eq!(r.n_out_frames(3, 0.5, 0.25), 5);
        assert_eq!(r.n_out_frames(121, 1.0 / 120.0, 1.0 / 50.0), 51);
    }
}
