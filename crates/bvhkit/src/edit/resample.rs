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
//! Interpolated values are written rounded to nine decimals (at most 5e-10
//! degrees, or 5e-10 of the length unit; the last digits of a computed
//! angle are rounding noise), except a channel that is the same bits in
//! both frames, which keeps them.
//!
//! The new `Frame Time` is `1 / fps` computed in `f64`, so 30 fps is
//! written `0.03333333333333333` (the shortest text that reads back to
//! exactly 1/30).
//!
//! # Implementation notes
//!
//! (SLERP, kept frames bit for bit; `Resampler` makes each input frame's
//! three-channel joints into quaternion lanes once (`rotation::QuatLanes`) and
//! keeps the two frames around the output time, so that an interpolated frame
//! is one `MixLanes::solve_quats` pass, the mixes' lane kernel: SLERP and
//! extraction, no Euler batch, its angles rounded to nine decimals in the pass
//! (`rotation::snap_angle`, as the arcs and positions are: `arc_snapped`,
//! `edit::lerp_snapped`); `to_fps` appends frames to a reserved buffer and
//! takes each frame's continuity from the frame before it in place; unit tests
//! keep the earlier per-frame engine (every channel within 1e-9 degrees on the
//! corpus) and the angle-lane engine (bit for bit on the corpus, frames made in
//! order, backwards and in jumps)).

use glam::DQuat;

use super::pose::{JointChannels, lerp_snapped, unwrap_deg};
use super::same_rate;
use crate::bvh::Bvh;
use crate::error::{Error, Result, num};
use crate::motion::Motion;
use crate::rotation::{MixLanes, QuatLanes, RotationOrder, snap_angle};
use crate::skeleton::Skeleton;

/// Output times within this fraction of an input frame copy that frame.
const ON_FRAME: f64 = 1e-9;

/// The most frames a resampled clip may have (`u32::MAX`, the largest
/// frame number the command line takes).
pub const MAX_FRAMES: usize = u32::MAX as usize;

/// The most values (frames × channels) a resampled clip may hold: 2^29,
/// 4 GiB of `f64` (the command line's default `--max-size` of input).
pub const MAX_VALUES: usize = 1 << 29;

/// A file's rate in seven significant digits, for messages that give its
/// exact `Frame Time` beside it: `120.0005`, not `120.00048000192001`.
fn rate(fps: f64) -> String {
    num(format!("{fps:.6e}").parse().unwrap_or(fps))
}

/// How many frames [`to_fps`] makes of `motion` at `fps` frames per
/// second, checked before anything is allocated.
///
/// # Errors
/// When `fps` is not finite and positive, or the output would have more
/// than [`MAX_FRAMES`] frames or [`MAX_VALUES`] values (an extreme rate,
/// or an extreme `Frame Time` in the file); the message names the rates,
/// the frames and values the output would need and the limit.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::resample;
/// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 1 Xposition }
///     MOTION Frames: 3 Frame Time: 0.5
///     0
///     1
///     2")?;
/// assert_eq!(resample::output_frames(bvh.motion(), 4.0)?, 5);
/// let err = resample::output_frames(bvh.motion(), 1e300).unwrap_err();
/// assert!(err.message().contains("at most 4294967295 frames"), "{err}");
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn output_frames(motion: &Motion, fps: f64) -> Result<usize> {
    if !(fps.is_finite() && fps > 0.0) {
        return Err(Error::invalid(format!(
            "the frame rate must be finite and positive, found {}",
            num(fps)
        )));
    }
    let (n_in, ft) = (motion.n_frames(), motion.frame_time());
    if n_in == 0 || same_rate(motion.fps(), fps) {
        return Ok(n_in);
    }
    let new_ft = 1.0 / fps;
    // The count in floating point first: a ratio of extreme rates gives an
    // infinite or huge count, which must not reach an integer conversion.
    let approx = (n_in - 1) as f64 / (new_ft / ft) + 1.0;
    let n_channels = motion.n_channels();
    let values = approx * n_channels as f64;
    if !(approx <= MAX_FRAMES as f64 && values <= MAX_VALUES as f64) {
        return Err(Error::invalid(format!(
            "resampling {n_in} frames of {n_channels} channels from {} fps (Frame Time {}) \
             to {} fps would make {approx:.4e} frames ({values:.4e} values); \
             a resampled clip has at most {MAX_FRAMES} frames and {MAX_VALUES} values (4 GiB)",
            rate(motion.fps()),
            num(ft),
            num(fps)
        )));
    }
    let n_out = Resampler::count(n_in, ft, new_ft);
    if n_out > MAX_FRAMES || n_out.saturating_mul(n_channels) > MAX_VALUES {
        return Err(Error::invalid(format!(
            "resampling {n_in} frames of {n_channels} channels from {} fps to {} fps \
             would make {n_out} frames; a resampled clip has at most {MAX_FRAMES} frames \
             and {MAX_VALUES} values (4 GiB)",
            rate(motion.fps()),
            num(fps)
        )));
    }
    Ok(n_out)
}

/// Resamples `bvh` to `fps` frames per second (see the module docs).
///
/// # Errors
/// When `fps` is not finite and positive, or the output would be too large
/// ([`output_frames`]).
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
    let m = bvh.motion();
    let n_out = output_frames(m, fps)?;
    if same_rate(m.fps(), fps) {
        return Ok(bvh.clone());
    }
    let frame_time = 1.0 / fps;
    let mut r = Resampler::new(bvh.skeleton());
    let n = m.n_channels();
    // Fresh pages, advised to be huge ones: a large output is written
    // with far fewer page faults. Every value is written once (no zeros
    // first).
    let mut values = crate::buffer::with_capacity(n_out * n);
    if n > 0 {
        r.fill(m, n_out, m.frame_time(), frame_time, &mut values);
    }
    let motion = Motion::with_frames(frame_time, n_out, n, values)?;
    Bvh::new(bvh.skeleton().clone(), motion)
}

/// The engine of [`to_fps`], with its per-frame buffers (nothing is
/// allocated per frame).
///
/// An output frame that lands on an input frame is a copy and computes
/// nothing. The joints with three rotation channels of an input frame are
/// turned into quaternions once, in one pass on SIMD lanes (one lane per
/// joint: half-angle sines and cosines, closed-form quaternions in each
/// order's axes), when output time first falls next to that frame; the two
/// frames around the output time are kept while it stays between them. An
/// output frame between two input frames then runs the SLERP and the
/// continuous Euler extraction of those joints in one more pass, with no
/// branch on the rotation order (`rotation::batch`'s lane kernel, which
/// the mixes share); one- and two-channel rotations and positions are
/// interpolated channel by channel.
#[derive(Clone, Debug)]
pub struct Resampler {
    turn: Turn,
    previous: Vec<f64>,
    have_previous: bool,
}

/// What interpolates a frame: the plan, the lanes and the kept pair.
#[derive(Clone, Debug)]
struct Turn {
    plan: Plan,
    /// One lane per `rot3` joint.
    lanes: MixLanes,
    /// The quaternion lanes of the two input frames around the output time.
    pair: Pair,
}

/// The quaternion lanes of input frames `at` and `at + 1`.
#[derive(Clone, Debug)]
struct Pair {
    a: QuatLanes,
    b: QuatLanes,
    at: Option<usize>,
}

impl Pair {
    /// Makes `a` and `b` the lanes of `motion`'s frames `i0` and `i0 + 1`,
    /// computing only those it does not hold yet (output time moving on by
    /// one input frame, forwards or backwards, makes one frame's lanes).
    fn load(&mut self, rot3: &Rot3, motion: &Motion, i0: usize) {
        match self.at {
            Some(at) if at == i0 => return,
            Some(at) if at + 1 == i0 => {
                std::mem::swap(&mut self.a, &mut self.b);
                quat_lanes(&mut self.b, rot3, motion.frame(i0 + 1));
            }
            Some(at) if at == i0 + 1 => {
                std::mem::swap(&mut self.a, &mut self.b);
                quat_lanes(&mut self.a, rot3, motion.frame(i0));
            }
            _ => {
                quat_lanes(&mut self.a, rot3, motion.frame(i0));
                quat_lanes(&mut self.b, rot3, motion.frame(i0 + 1));
            }
        }
        self.at = Some(i0);
    }
}

/// `q` made the quaternion lanes of the `rot3` joints of `frame`.
fn quat_lanes(q: &mut QuatLanes, rot3: &Rot3, frame: &[f64]) {
    q.clear();
    for &(c, order) in &rot3.adjacent {
        let v = &frame[c..c + 3];
        q.push(order, [v[0], v[1], v[2]]);
    }
    for &(idx, order) in &rot3.apart {
        q.push(order, idx.map(|c| frame[c]));
    }
    q.solve();
}

/// The joints with three rotation channels (a rotation order), one lane
/// each: first those whose three channels are adjacent (nearly every
/// joint), by their first channel, then the others by their three channel
/// indices in listed order; each with its order.
#[derive(Clone, Debug, Default)]
struct Rot3 {
    adjacent: Vec<(usize, RotationOrder)>,
    apart: Vec<([usize; 3], RotationOrder)>,
}

impl Rot3 {
    fn len(&self) -> usize {
        self.adjacent.len() + self.apart.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Which channels are interpolated how.
#[derive(Clone, Debug)]
struct Plan {
    rot3: Rot3,
    /// The rotation channels of the joints with one or two, each along
    /// its shortest arc.
    arc: Vec<usize>,
    /// The position channels, linear.
    linear: Vec<usize>,
}

impl Resampler {
    /// Buffers for `skeleton`.
    pub fn new(skeleton: &Skeleton) -> Resampler {
        let (mut rot3, mut arc, mut linear) = (Rot3::default(), vec![], vec![]);
        for j in skeleton.joints().iter().map(JointChannels::of) {
            match j.rotation_order() {
                Some(order) => {
                    let [c, d, e] = j.rot_index;
                    if d == c + 1 && e == c + 2 {
                        rot3.adjacent.push((c, order));
                    } else {
                        rot3.apart.push((j.rot_index, order));
                    }
                }
                None => arc.extend_from_slice(&j.rot_index[..j.n_rot as usize]),
            }
            linear.extend_from_slice(&j.pos_index[..j.n_pos as usize]);
        }
        let quats = || QuatLanes::with_capacity(rot3.len());
        Resampler {
            turn: Turn {
                lanes: MixLanes::with_capacity(rot3.len()),
                pair: Pair { a: quats(), b: quats(), at: None },
                plan: Plan { rot3, arc, linear },
            },
            previous: vec![0.0; skeleton.n_channels()],
            have_previous: false,
        }
    }

    /// How many output frames `n_frames` input frames give at
    /// `new_frame_time` seconds per frame: every output time up to the last
    /// input frame's time.
    /// [`output_frames`] checks that count against the limits first.
    pub fn n_out_frames(&self, n_frames: usize, frame_time: f64, new_frame_time: f64) -> usize {
        Resampler::count(n_frames, frame_time, new_frame_time)
    }

    fn count(n_frames: usize, frame_time: f64, new_frame_time: f64) -> usize {
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
    /// in order: the Euler angles are written closest to the previous call's
    /// output frame (the first call's, to the input frame before it).
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
        let (i0, u) = position(k, frame_time, new_frame_time);
        if u == 0.0 {
            out.copy_from_slice(motion.frame(i0));
        } else {
            let a = motion.frame(i0);
            let near = if self.have_previous { &self.previous[..] } else { a };
            self.turn.between(motion, i0, u, near, out);
        }
        self.previous.copy_from_slice(out);
        self.have_previous = true;
    }

    /// Output frames `0..n_out` appended to `values`, in order, each next
    /// to the one before it (the first, to its input frame): what
    /// [`Resampler::frame`] makes for `k = 0, 1, ...` from a fresh
    /// resampler, without keeping a copy of the previous frame.
    fn fill(
        &mut self,
        motion: &Motion,
        n_out: usize,
        frame_time: f64,
        new_frame_time: f64,
        values: &mut Vec<f64>,
    ) {
        let n = motion.n_channels();
        for k in 0..n_out {
            let (i0, u) = position(k, frame_time, new_frame_time);
            let start = values.len();
            if u == 0.0 {
                values.extend_from_slice(motion.frame(i0));
                continue;
            }
            values.resize(start + n, 0.0);
            let (done, out) = values.split_at_mut(start);
            let near = if k > 0 { &done[start - n..] } else { motion.frame(i0) };
            self.turn.between(motion, i0, u, near, out);
        }
        if n_out > 0 {
            self.previous.copy_from_slice(&values[values.len() - n..]);
            self.have_previous = true;
        }
    }
}

impl Turn {
    /// Interpolates between `motion`'s frames `i0` and `i0 + 1` at fraction
    /// `u` into `out`, the three-channel joints' Euler angles closest to
    /// `near`'s: positions, then the one- and two-channel rotations one
    /// channel at a time, then the three-channel joints on the lanes, from
    /// the two frames' quaternion lanes.
    fn between(&mut self, motion: &Motion, i0: usize, u: f64, near: &[f64], out: &mut [f64]) {
        let (a, b) = (motion.frame(i0), motion.frame(i0 + 1));
        let plan = &self.plan;
        for &c in &plan.linear {
            out[c] = lerp_snapped(a[c], b[c], u);
        }
        for &c in &plan.arc {
            out[c] = arc_snapped(a[c], b[c], u);
        }
        let rot3 = &plan.rot3;
        if rot3.is_empty() {
            return;
        }
        self.pair.load(rot3, motion, i0);
        let lanes = &mut self.lanes;
        lanes.clear();
        for &(c, order) in &rot3.adjacent {
            let v = &near[c..c + 3];
            lanes.push_near(order, [v[0], v[1], v[2]], None);
        }
        for &(idx, order) in &rot3.apart {
            lanes.push_near(order, idx.map(|c| near[c]), None);
        }
        lanes.solve_quats(&self.pair.a, &self.pair.b, u, false);
        for (l, &(c, _)) in rot3.adjacent.iter().enumerate() {
            out[c..c + 3].copy_from_slice(&lanes.angles(l));
        }
        let n = rot3.adjacent.len();
        for (l, (idx, _)) in rot3.apart.iter().enumerate() {
            for (&c, v) in idx.iter().zip(lanes.angles(n + l)) {
                out[c] = v;
            }
        }
    }
}

/// The angle `u` of the way from `a` to `b` along the shortest arc (a
/// joint with one or two rotation channels), `a + u · d` with `d` the
/// difference wrapped into `[-180, 180]`, as written: rounded to nine
/// decimals ([`snap_angle`]) unless `a` and `b` are the same bits (then
/// `a + u · 0`, as [`lerp_snapped`] keeps an unchanged position).
#[inline]
fn arc_snapped(a: f64, b: f64, u: f64) -> f64 {
    let x = a + u * unwrap_deg(b - a, 0.0);
    if a.to_bits() == b.to_bits() { x } else { snap_angle(x) }
}

/// `Some(n)` when `ratio` is within 0.01% of the whole number `n >= 1`.
/// Where output frame `k` falls on the input frames: the input frame
/// before it and the fraction `u` of the way to the next one, `u = 0` when
/// it falls on an input frame (within [`ON_FRAME`]; every frame when the
/// new frame time is a whole multiple of the old one).
fn position(k: usize, frame_time: f64, new_frame_time: f64) -> (usize, f64) {
    let ratio = new_frame_time / frame_time;
    match integer_ratio(ratio) {
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
    }
}

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
    use crate::rotation::{EulerBatch, euler_to_mat3, slerp_slice};

    #[test]
    fn integer_ratios_within_a_hundredth_of_a_percent() {
        assert_eq!(integer_ratio((1.0 / 30.0) / 0.0083333), Some(4));
        assert_eq!(integer_ratio(2.0), Some(2));
        assert_eq!(integer_ratio(2.4), None);
        assert_eq!(integer_ratio(0.5), None);
    }

    /// The per-frame engine as it was before the batched rotations: every
    /// joint's rotation built one channel at a time
    /// ([`JointChannels::rotation`]), SLERPs of every joint, joints walked
    /// one by one. Kept as the reference the fast path must match bit for
    /// bit.
    struct Reference {
        joints: Vec<(JointChannels, Option<RotationOrder>)>,
        qa: Vec<DQuat>,
        qb: Vec<DQuat>,
        q: Vec<DQuat>,
        euler: EulerBatch,
        cached: Option<usize>,
        previous: Vec<f64>,
        have_previous: bool,
    }

    impl Reference {
        fn new(skeleton: &Skeleton) -> Reference {
            let joints: Vec<_> = skeleton
                .joints()
                .iter()
                .map(JointChannels::of)
                .filter(|j| j.n_rot > 0 || j.n_pos > 0)
                .map(|j| (j, j.rotation_order()))
                .collect();
            Reference {
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

        fn frame(&mut self, motion: &Motion, k: usize, ft: f64, new_ft: f64, out: &mut [f64]) {
            let (i0, u) = position(k, ft, new_ft);
            if u == 0.0 {
                out.copy_from_slice(motion.frame(i0));
            } else {
                self.load(motion, i0);
                self.between(motion.frame(i0), motion.frame(i0 + 1), u, out);
            }
            self.previous.copy_from_slice(out);
            self.have_previous = true;
        }

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

        fn between(&mut self, a: &[f64], b: &[f64], u: f64, out: &mut [f64]) {
            let near: &[f64] = if self.have_previous { &self.previous } else { a };
            slerp_slice(&self.qa, &self.qb, u, &mut self.q);
            self.euler.clear();
            for (idx, (j, order)) in self.joints.iter().enumerate() {
                for k in 0..j.n_pos as usize {
                    let c = j.pos_index[k];
                    out[c] = lerp_snapped(a[c], b[c], u);
                }
                match order {
                    Some(order) => {
                        self.euler.push_quat(self.q[idx], *order, Some(j.angles(near)));
                    }
                    None => {
                        for k in 0..j.n_rot as usize {
                            let c = j.rot_index[k];
                            out[c] = arc_snapped(a[c], b[c], u);
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

    /// The lane engine as it was before the quaternion pairs: every
    /// interpolated output frame pushes both input frames' angles and runs
    /// [`MixLanes::solve`] (the sines and quaternions of both frames, then
    /// the SLERP and the extraction). Kept as the reference the quaternion
    /// pairs must match bit for bit.
    struct AngleLanes {
        plan: Plan,
        rot3: Vec<([usize; 3], RotationOrder)>,
        lanes: MixLanes,
        previous: Vec<f64>,
        have_previous: bool,
    }

    impl AngleLanes {
        fn new(skeleton: &Skeleton) -> AngleLanes {
            let r = Resampler::new(skeleton);
            let rot3: Vec<_> = skeleton
                .joints()
                .iter()
                .map(JointChannels::of)
                .filter_map(|j| Some((j.rot_index, j.rotation_order()?)))
                .collect();
            AngleLanes {
                lanes: MixLanes::with_capacity(rot3.len()),
                rot3,
                plan: r.turn.plan,
                previous: r.previous,
                have_previous: false,
            }
        }

        fn frame(&mut self, motion: &Motion, k: usize, ft: f64, new_ft: f64, out: &mut [f64]) {
            let (i0, u) = position(k, ft, new_ft);
            if u == 0.0 {
                out.copy_from_slice(motion.frame(i0));
            } else {
                let (a, b) = (motion.frame(i0), motion.frame(i0 + 1));
                let near: &[f64] = if self.have_previous { &self.previous } else { a };
                for &c in &self.plan.linear {
                    out[c] = lerp_snapped(a[c], b[c], u);
                }
                for &c in &self.plan.arc {
                    out[c] = arc_snapped(a[c], b[c], u);
                }
                self.lanes.clear();
                for &(idx, order) in &self.rot3 {
                    let (ja, jb, jn) = (idx.map(|c| a[c]), idx.map(|c| b[c]), idx.map(|c| near[c]));
                    self.lanes.push(order, ja, jb, jn, None);
                }
                if !self.rot3.is_empty() {
                    self.lanes.solve(u, false);
                }
                for (l, (idx, _)) in self.rot3.iter().enumerate() {
                    for (&c, v) in idx.iter().zip(self.lanes.angles(l)) {
                        out[c] = v;
                    }
                }
            }
            self.previous.copy_from_slice(out);
            self.have_previous = true;
        }
    }

    /// The output frames `order` of `bvh` at `fps` by [`AngleLanes`] and
    /// by [`Resampler::frame`], made in that order, and checked to be the
    /// same bits; with `whole`, also the frames of [`to_fps`] (for `order`
    /// `0, 1, ...`). Returns the number of values compared.
    fn same_bits_as_angle_lanes(
        bvh: &Bvh,
        fps: f64,
        order: &[usize],
        whole: Option<&Bvh>,
    ) -> usize {
        let m = bvh.motion();
        let (ft, new_ft) = (m.frame_time(), 1.0 / fps);
        let mut reference = AngleLanes::new(bvh.skeleton());
        let mut fast = Resampler::new(bvh.skeleton());
        let (mut want, mut got) = (vec![0.0; m.n_channels()], vec![0.0; m.n_channels()]);
        let bits = |f: &[f64]| f.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        for &k in order {
            reference.frame(m, k, ft, new_ft, &mut want);
            fast.frame(m, k, ft, new_ft, &mut got);
            assert_eq!(bits(&got), bits(&want), "output frame {k} at {fps} fps");
            if let Some(whole) = whole {
                assert_eq!(bits(whole.motion().frame(k)), bits(&want), "to_fps frame {k}");
            }
        }
        order.len() * m.n_channels()
    }

    /// Output frames in order, backwards, and in jumps (each jump far from
    /// the frame before it, so that no input frame's lanes are kept).
    fn orders(n_out: usize) -> [Vec<usize>; 3] {
        let gcd = |mut a: usize, mut b: usize| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        // A stride of about a third of the clip, prime to its length: every
        // frame once.
        let stride = (n_out / 3..n_out).find(|&s| gcd(s, n_out) == 1).unwrap_or(1);
        let jumps = (0..n_out).map(|k| k * stride % n_out).collect();
        [(0..n_out).collect(), (0..n_out).rev().collect(), jumps]
    }

    #[test]
    fn quaternion_pairs_are_the_angle_lanes_bit_for_bit_on_the_corpus() {
        let test = "resample::quaternion_pairs_are_the_angle_lanes_bit_for_bit_on_the_corpus";
        let Some(clips) = crate::test_corpus::clips(test) else {
            return;
        };
        let mut compared = 0usize;
        for (_, bvh) in clips {
            let m = bvh.motion();
            for rate in RATES {
                let fps = m.fps() * rate;
                let whole = to_fps(&bvh, fps).unwrap();
                let [forwards, backwards, jumps] = orders(whole.motion().n_frames());
                compared += same_bits_as_angle_lanes(&bvh, fps, &forwards, Some(&whole));
                compared += same_bits_as_angle_lanes(&bvh, fps, &backwards, None);
                compared += same_bits_as_angle_lanes(&bvh, fps, &jumps, None);
            }
        }
        assert!(compared > 10_000_000, "{compared} values compared");
        eprintln!("resample quaternion pairs: {compared} values compared");
    }

    #[test]
    fn quaternion_pairs_are_the_angle_lanes_bit_for_bit_on_odd_channels() {
        let bvh = odd_channels();
        let fps = bvh.motion().fps();
        for rate in RATES.into_iter().chain([1.9, 0.77]) {
            let whole = to_fps(&bvh, fps * rate).unwrap();
            let [forwards, backwards, jumps] = orders(whole.motion().n_frames());
            same_bits_as_angle_lanes(&bvh, fps * rate, &forwards, Some(&whole));
            same_bits_as_angle_lanes(&bvh, fps * rate, &backwards, None);
            same_bits_as_angle_lanes(&bvh, fps * rate, &jumps, None);
        }
    }

    /// Every output frame of `bvh` at `fps`, made in `order` by the
    /// reference engine (`reference`) or by [`Resampler`].
    fn frames_of(bvh: &Bvh, fps: f64, order: &[usize], reference: bool) -> Vec<Vec<f64>> {
        let m = bvh.motion();
        let (mut r, mut fast) = (Reference::new(bvh.skeleton()), Resampler::new(bvh.skeleton()));
        let mut frames = vec![vec![0.0; m.n_channels()]; order.len()];
        for &k in order {
            if reference {
                r.frame(m, k, m.frame_time(), 1.0 / fps, &mut frames[k]);
            } else {
                fast.frame(m, k, m.frame_time(), 1.0 / fps, &mut frames[k]);
            }
        }
        frames
    }

    /// Checks output frame `got` against the reference's `want`: the
    /// channels of joints with three rotation channels within 1e-9
    /// degrees, or, where the middle angle is within 1e-4 degrees of ±90°
    /// (gimbal lock: only the sum or difference of the first and third
    /// angles is defined, and it is ill-conditioned there), the same
    /// rotation within 1e-12 and the same middle angle within 1e-9; every
    /// other channel bit for bit. Returns the number of three-channel
    /// rotations compared and of those at gimbal lock.
    fn compare(bvh: &Bvh, got: &[f64], want: &[f64], what: &str) -> (usize, usize) {
        let (mut n, mut locked) = (0, 0);
        for j in bvh.skeleton().joints().iter().map(JointChannels::of) {
            for &c in &j.pos_index[..j.n_pos as usize] {
                assert_eq!(got[c].to_bits(), want[c].to_bits(), "{what}: channel {c}");
            }
            if j.rotation_order().is_none() {
                for &c in &j.rot_index[..j.n_rot as usize] {
                    assert_eq!(got[c].to_bits(), want[c].to_bits(), "{what}: channel {c}");
                }
                continue;
            }
            let (g, w) = (j.angles(got), j.angles(want));
            if (w[1].abs() - 90.0).abs() < 1e-4 {
                let axes = j.rotation_axes();
                let (mg, mw) = (euler_to_mat3(axes, &g), euler_to_mat3(axes, &w));
                let d =
                    (0..3).map(|i| (mg.col(i) - mw.col(i)).abs().max_element()).fold(0.0, f64::max);
                // 1e-12, plus the lanes' nine decimals (`snap_angle`: up to
                // 2.7e-11 in a matrix element).
                assert!(d < 3e-11 && (g[1] - w[1]).abs() < 1e-9, "{what}: {g:?} vs {w:?}");
                locked += 1;
            } else {
                for k in 0..3 {
                    assert!((g[k] - w[k]).abs() <= 1e-9, "{what}: {g:?} vs {w:?}");
                }
            }
            n += 1;
        }
        (n, locked)
    }

    /// Rates relative to a clip's own: up and down, rational and not, and
    /// whole multiples of the frame time (every output frame a copy).
    const RATES: [f64; 6] = [2.5, 1.0 / 2.5, 50.0 / 120.0, 1.37, 3.0, 0.5];

    #[test]
    fn lanes_match_the_per_frame_reference_on_the_corpus() {
        let test = "resample::lanes_match_the_per_frame_reference_on_the_corpus";
        let Some(clips) = crate::test_corpus::clips(test) else {
            return;
        };
        let (mut compared, mut locked) = (0usize, 0usize);
        for (name, bvh) in clips {
            let m = bvh.motion();
            for rate in RATES {
                let fps = m.fps() * rate;
                let whole = to_fps(&bvh, fps).unwrap();
                let n_out = whole.motion().n_frames();
                let order: Vec<usize> = (0..n_out).collect();
                let want = frames_of(&bvh, fps, &order, true);
                for (k, w) in want.iter().enumerate() {
                    let what = format!("{name} at x{rate}: output frame {k}");
                    let (n, l) = compare(&bvh, whole.motion().frame(k), w, &what);
                    compared += n;
                    locked += l;
                }
            }
        }
        assert!(compared > 1_000_000, "{compared} rotations compared");
        eprintln!("resample lanes: {compared} rotations compared ({locked} at gimbal lock)");
    }

    /// Joints of every kind: positions on non-root joints and between
    /// rotation channels, one and two rotation channels, a joint without
    /// channels; angles wandering past ±180.
    fn odd_channels() -> Bvh {
        let mut text = String::from(
            "HIERARCHY
ROOT R { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Yrotation Xrotation Zrotation
  JOINT A { OFFSET 0 1 0 CHANNELS 1 Zrotation
    JOINT B { OFFSET 0 1 0 CHANNELS 2 Xrotation Yrotation
      JOINT C { OFFSET 0 1 0 CHANNELS 5 Zrotation Yposition Xrotation Zposition Yrotation
        JOINT D { OFFSET 0 1 0 CHANNELS 0
          JOINT E { OFFSET 1 0 0 CHANNELS 4 Xposition Zrotation Yrotation Xrotation
            End Site { OFFSET 0 1 0 } } } } } } }
MOTION
Frames: 40
Frame Time: 0.04
",
        );
        let mut x: u64 = 7;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for f in 0..40 {
            let t = f as f64;
            let row: Vec<String> = (0..18)
                .map(|c| format!("{}", 47.0 * t * (c as f64 - 8.5) / 8.5 + 90.0 * next()))
                .collect();
            text.push_str(&row.join(" "));
            text.push('\n');
        }
        Bvh::parse(&text).unwrap()
    }

    #[test]
    fn lanes_match_the_per_frame_reference_on_odd_channels() {
        let bvh = odd_channels();
        let fps = bvh.motion().fps();
        for rate in RATES.into_iter().chain([1.9, 0.77]) {
            let whole = to_fps(&bvh, fps * rate).unwrap();
            let n_out = whole.motion().n_frames();
            // In order, and backwards (each frame next to the one after it).
            let forwards: Vec<usize> = (0..n_out).collect();
            let backwards: Vec<usize> = (0..n_out).rev().collect();
            for order in [forwards, backwards] {
                let want = frames_of(&bvh, fps * rate, &order, true);
                let got = frames_of(&bvh, fps * rate, &order, false);
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    compare(&bvh, g, w, &format!("x{rate} frame {k} (from {})", order[0]));
                    if order[0] == 0 {
                        let bits = |f: &[f64]| f.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(whole.motion().frame(k)), bits(g), "x{rate} frame {k}");
                    }
                }
            }
        }
    }

    /// Every value an interpolated output frame computes is written with at
    /// most nine decimals (the lanes' angles, the one- and two-channel arcs,
    /// the positions; the input's have 12 or more); an output frame on an
    /// input frame is that frame, bit for bit.
    #[test]
    fn interpolated_values_are_written_with_nine_decimals() {
        let bvh = odd_channels();
        let m = bvh.motion();
        use crate::rotation::decimals;
        let long = m.values().iter().filter(|&&v| decimals(v) > 9).count();
        assert!(long * 10 > m.values().len() * 9, "{long} of {}", m.values().len());
        let bits = |f: &[f64]| f.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let (mut copied, mut mixed) = (0, 0);
        for rate in [2.5, 1.37] {
            let out = to_fps(&bvh, m.fps() * rate).unwrap();
            for k in 0..out.motion().n_frames() {
                let f = out.motion().frame(k);
                match position(k, m.frame_time(), out.motion().frame_time()) {
                    (i0, 0.0) => {
                        assert_eq!(bits(f), bits(m.frame(i0)), "x{rate} frame {k}");
                        copied += 1;
                    }
                    _ => {
                        for (c, &v) in f.iter().enumerate() {
                            assert!(decimals(v) <= 9, "x{rate} frame {k} channel {c}: {v}");
                        }
                        mixed += 1;
                    }
                }
            }
        }
        assert!(copied >= 10 && mixed >= 100, "{copied} copied, {mixed} interpolated");
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
