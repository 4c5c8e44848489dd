//! Spike and glitch-frame repair: short excursions that leave the motion and
//! come back, replaced by interpolation from the frames around them.
//!
//! # What a spike is
//!
//! A threshold on acceleration alone (the quality metrics' median + k × MAD)
//! cannot tell a glitch from real motion: accelerations of captured motion
//! are heavy-tailed (fingers and toes of optical captures rattle, a foot
//! strikes the floor), and a first frame that is a reference pose makes a
//! step, not a spike. A span of frames `a..=b` (1 to [`MAX_SPAN`] frames) of
//! a track is a spike when all of these hold:
//!
//! 1. **it is far from its neighbours**: its excursion `E`, the largest
//!    distance of one of its frames from the interpolation between frames
//!    `a - 1` and `b + 1` (SLERP for rotations, the straight line for
//!    positions), is above the track's threshold `max(median + k · MAD,
//!    floor)` of the one-frame excursions over the clip
//!    ([`crate::quality`]'s robust statistics);
//! 2. **it comes back**: `E` is more than [`RETURN_RATIO`] times the
//!    distance `G` between frames `a - 1` and `b + 1` (a step, where the
//!    track jumps and stays, never has `E > G`: its excursion is at most
//!    `G · L / (L + 1)`; a fast move that overshoots, a foot striking the
//!    floor, has `E` about `G`);
//! 3. **it jumps out of the motion around it and back**: `E`, the step into
//!    the span (frame `a - 1` to `a`) and the step out of it (`b` to
//!    `b + 1`) are each above [`LOCAL_RATIO`] times the median step (frame
//!    to frame distance) of the [`LOCAL_WINDOW`] frames on each side of the
//!    span, and the smaller of the two steps is more than half of `E` (it
//!    jumps out and back by about as much as it is away). Real motion, however
//!    fast, moves more per frame than it bends: for a smooth motion the
//!    one-frame excursion is `a·dt²/2` against a step of `v·dt`, a ratio of
//!    about `ω·dt/2`, well below 1 up to the Nyquist frequency, and noise
//!    has a ratio near 1; a glitch jumps out of a calm neighbourhood.
//!
//! Candidates are the frames whose one-frame excursion is above the
//! threshold, largest first; for each the shortest span around it that
//! passes is repaired (the largest excursion among spans of that length),
//! from the input's frames around it. Spans never overlap and never use a
//! repaired frame as an end. The first and last frames have one neighbour
//! only and are never repaired.
//!
//! **Tracks** (`repair`): each joint's rotation (distances in degrees,
//! floor [`FLOOR_DEG`]) and its position channels (file units, floor
//! [`FLOOR_SIZE`] of the figure's size), separately. A rotation's floor is
//! also the angle that moves the joints under it by [`SEEN_SIZE`] of the
//! figure's size (a spike too small to see is left alone: captured fingers
//! and toes rattle), except for one-frame spans, whose floor is at most
//! [`ONE_FRAME_DEG`]: a finger phalanx out 15° to 40° for one frame and
//! back, out of calm motion, moves its tip a few millimetres and is a
//! glitch all the same (the Perception Neuron and Rokoko fingers of the
//! spike tests); on the corpus's 41 files as they are, this repairs
//! nothing that the visible size alone did not.
//!
//! **Whole glitch frames** (`repair_frames`, run first): the same test
//! on the whole pose, a frame's distance being the root mean square over
//! the joints of the distances of their world positions relative to the
//! root (floor [`FRAME_FLOOR_SIZE`] of the figure's size; the root's travel
//! is its own position track): a frame where the figure is far from where
//! it moves even when no single joint is far enough to be a spike of its
//! own. A spike of one joint that carries much of the body (the spine, a
//! hip, a forearm) is a glitch frame too. In a glitch frame every joint off
//! its interpolation by more than [`FRAME_JOINT_TOL_DEG`] (positions:
//! [`FRAME_JOINT_TOL_SIZE`] of the figure's size) is interpolated, so the
//! repaired frame is one pose (SLERP of each local rotation, the straight
//! line for position channels); the joints at their place keep their
//! values.

use glam::{DQuat, DVec3};

use super::rotations;
use crate::edit::JointChannels;
use crate::quality::stats::{median_mad, quantile_in_place};
use crate::{Bvh, Kinematics, PositionChannels, Skeleton};

/// The default `k`.
pub const DEFAULT_K: f64 = 40.0;
/// The smallest rotation excursion repaired (degrees), whatever the
/// joint's statistics (a joint that hardly moves has a MAD near 0).
pub const FLOOR_DEG: f64 = 5.0;
/// The smallest position excursion repaired, as a fraction of the figure's
/// size.
pub const FLOOR_SIZE: f64 = 0.01;
/// The smallest whole-frame excursion repaired (root mean square over the
/// joints), as a fraction of the figure's size.
pub const FRAME_FLOOR_SIZE: f64 = 0.01;
/// The smallest visible rotation spike: a joint's rotation excursion is
/// repaired only when it moves the joints under it (at the joint's
/// reach: the longest chain of offsets below it) by at least this fraction of the figure's size.
pub const SEEN_SIZE: f64 = 0.0075;
/// The one-frame rotation spike repaired however little it moves the
/// joints under it (degrees): a joint out by this much for one frame and
/// back, out of calm motion, is a glitch whatever its size (a finger
/// phalanx turned 15° moves its tip a few millimetres).
pub const ONE_FRAME_DEG: f64 = 12.0;
/// In a glitch frame, the joints whose rotation is within this many
/// degrees of the interpolation keep their values.
pub const FRAME_JOINT_TOL_DEG: f64 = 0.5;
/// In a glitch frame, the position channels within this fraction of the
/// figure's size of the interpolation keep their values.
pub const FRAME_JOINT_TOL_SIZE: f64 = 0.001;
/// The longest glitch repaired (frames).
pub const MAX_SPAN: usize = 4;
/// How many times the distance between the frames around it a span's
/// excursion must be.
pub const RETURN_RATIO: f64 = 2.0;
/// How many times the median step of the frames around it a span's
/// excursion must be.
pub const LOCAL_RATIO: f64 = 4.0;
/// The frames on each side of a span whose steps give its neighbourhood's
/// median step.
pub const LOCAL_WINDOW: usize = 8;

/// The frames on each side of a candidate frame that deciding it looks
/// at: a span of up to [`MAX_SPAN`] frames around it, the frames on each
/// side of the span and [`LOCAL_WINDOW`] steps beyond them.
pub const REACH: usize = MAX_SPAN + LOCAL_WINDOW;

/// A track's thresholds on the one-frame excursions: of one-frame spans
/// and of longer ones (never below it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Thresholds {
    one: f64,
    long: f64,
}

impl Thresholds {
    /// `max(median + k · MAD, floor)` of `devs` (the one-frame excursions
    /// of frames 1 to n - 2), with `one_frame_floor` (at most `floor`) for
    /// one-frame spans; `None` (nothing repaired) when no excursion is
    /// finite or the threshold is not.
    pub(crate) fn of(devs: &[f64], k: f64, floor: f64, one_frame_floor: f64) -> Option<Thresholds> {
        let (med, mad) = median_mad(devs)?;
        let long = (med + k * mad).max(floor);
        let one = (med + k * mad).max(one_frame_floor.min(floor));
        one.is_finite().then_some(Thresholds { one, long })
    }

    /// A span of `len` frames' threshold.
    pub(crate) fn at(&self, len: usize) -> f64 {
        if len == 1 { self.one } else { self.long }
    }

    /// Whether a frame of one-frame excursion `dev` is a candidate.
    pub(crate) fn candidate(&self, dev: f64) -> bool {
        dev > self.one
    }
}

/// The excursion of span `a..=b`: the largest `off(i, s)`, the distance of
/// frame `i` from the interpolation at `s` between frames `a - 1` and `b + 1`.
pub(crate) fn excursion(a: usize, b: usize, off: impl Fn(usize, f64) -> f64) -> f64 {
    let len = b + 1 - a;
    (a..=b).map(|i| off(i, (i + 1 - a) as f64 / (len + 1) as f64)).fold(0.0, f64::max)
}

/// Whether span `a..=b` of a track of `n` frames is a spike (see the module
/// documentation) but for the frames other spans cover: its excursion `e`
/// above `t` and [`RETURN_RATIO`] times `gap` (the distance between frames
/// `a - 1` and `b + 1`), and out of the motion around it, whose steps
/// `step(i)` (frame `i` to `i + 1`) it reads within [`LOCAL_WINDOW`] of
/// its ends. `buf` is a buffer kept by the caller.
#[allow(clippy::too_many_arguments)]
pub(crate) fn passes(
    n: usize,
    a: usize,
    b: usize,
    e: f64,
    gap: impl FnOnce() -> f64,
    t: f64,
    step: impl Fn(usize) -> f64,
    buf: &mut Vec<f64>,
) -> bool {
    // Written so that a NaN fails.
    let comes_back = e > t && e > RETURN_RATIO * gap();
    if !comes_back {
        return false;
    }
    // The steps that do not touch the span.
    buf.clear();
    buf.extend(
        ((a - 1).saturating_sub(LOCAL_WINDOW)..a - 1)
            .chain(b + 1..(b + 1 + LOCAL_WINDOW).min(n - 1))
            .map(&step)
            .filter(|s| s.is_finite()),
    );
    let local = quantile_in_place(buf, 0.5).unwrap_or(0.0);
    let jump = LOCAL_RATIO * local;
    let back = step(a - 1).min(step(b));
    e > jump && back > jump && back > 0.5 * e
}

/// The spans to repair of a track of `n` frames, from its candidates
/// `order` (frame and one-frame excursion, largest first, frames in order
/// among equals) and `span(a, len)`, the excursion of span `a..a + len`
/// when it [`passes`] (`None` when it does not), in the order they were
/// found: for each candidate not yet covered the shortest span around it
/// that passes and touches no covered frame (of that length, the largest
/// excursion, the first of equals). `covered` (one flag a frame, `false`
/// on entry) marks the frames of the spans found.
///
/// A candidate reads `covered` within [`MAX_SPAN`] frames of itself and
/// sets it within `MAX_SPAN - 1`: candidates more than `2 · MAX_SPAN - 1`
/// frames apart never meet, and the spans of candidates resolved in
/// groups so separated are those of all of them at once.
pub(crate) fn resolve(
    n: usize,
    order: impl IntoIterator<Item = (usize, f64)>,
    th: Thresholds,
    covered: &mut [bool],
    mut span: impl FnMut(usize, usize) -> Option<f64>,
) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for (f, dev) in order {
        if covered[f] {
            continue;
        }
        for len in 1..=MAX_SPAN {
            // A longer span needs a candidate above the full floor.
            if dev <= th.at(len) {
                break;
            }
            let mut best: Option<(f64, usize, usize)> = None;
            for a in (f + 1).saturating_sub(len).max(1)..=f {
                let b = a + len - 1;
                if b + 1 >= n || covered[a - 1..=b + 1].iter().any(|&c| c) {
                    continue;
                }
                let Some(e) = span(a, len) else { continue };
                if best.is_none_or(|(be, _, _)| e > be) {
                    best = Some((e, a, b));
                }
            }
            if let Some((_, a, b)) = best {
                covered[a..=b].iter_mut().for_each(|c| *c = true);
                spans.push((a, b));
                break;
            }
        }
    }
    spans
}

/// The candidates of `devs` (frames 1 to n - 2): the frames above the
/// one-frame threshold with their excursions, largest first, frames in
/// order among equals.
pub(crate) fn candidates(devs: &[f64], th: Thresholds) -> Vec<(usize, f64)> {
    let mut order: Vec<(usize, f64)> = devs
        .iter()
        .enumerate()
        .filter(|(_, d)| th.candidate(**d))
        .map(|(i, &d)| (i + 1, d))
        .collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1));
    order
}

/// A track seen through two distances: `dist(i, j)` between frames `i` and
/// `j`, and `off(i, a, b, s)`, the distance of frame `i` from the
/// interpolation at `s` (0 to 1) between frames `a` and `b`.
struct Track<D, O> {
    n: usize,
    dist: D,
    off: O,
}

impl<D: Fn(usize, usize) -> f64, O: Fn(usize, usize, usize, f64) -> f64> Track<D, O> {
    /// The spans (first, last frame) to repair (see the module
    /// documentation), in frame order.
    ///
    /// `one_frame_floor`, at most `floor`, is the floor of one-frame spans
    /// (rotations of joints whose visible size is out of reach of a
    /// one-frame angle: [`ONE_FRAME_DEG`]); longer spans keep `floor`.
    fn spikes(&self, k: f64, floor: f64, one_frame_floor: f64) -> Vec<(usize, usize)> {
        let n = self.n;
        if n < 3 {
            return Vec::new();
        }
        let devs: Vec<f64> = (1..n - 1).map(|f| (self.off)(f, f - 1, f + 1, 0.5)).collect();
        let Some(th) = Thresholds::of(&devs, k, floor, one_frame_floor) else {
            return Vec::new();
        };
        let order = candidates(&devs, th);
        let steps: Vec<f64> = (0..n - 1).map(|i| (self.dist)(i, i + 1)).collect();
        let mut covered = vec![false; n];
        let mut buf = Vec::new();
        let mut spans = resolve(n, order, th, &mut covered, |a, len| {
            let b = a + len - 1;
            let e = excursion(a, b, |i, s| (self.off)(i, a - 1, b + 1, s));
            let gap = || (self.dist)(a - 1, b + 1);
            passes(n, a, b, e, gap, th.at(len), |i| steps[i], &mut buf).then_some(e)
        });
        spans.sort_unstable();
        spans
    }
}

/// Repairs the spikes of every joint's rotation and position channels of
/// `bvh`; returns the repaired (joint, frame) pairs in joint then frame
/// order.
pub(crate) fn repair(bvh: &mut Bvh, layouts: &[JointChannels], k: f64) -> Vec<(usize, usize)> {
    let width = bvh.motion().n_channels();
    let n = bvh.motion().n_frames();
    let mut out = Vec::new();
    if n < 3 || width == 0 {
        return out;
    }
    let floors = Floors::new(bvh.skeleton(), size_of(bvh));
    let input = bvh.motion().values().to_vec();
    let values = bvh.motion_mut().values_mut();
    for (j, c) in layouts.iter().enumerate() {
        let mut frames = std::collections::BTreeSet::new();
        if c.n_rot > 0 {
            let q = rotations(c, &input, width);
            let track = Track {
                n,
                dist: |i: usize, j: usize| rotation_dist(q[i], q[j]),
                off: |i: usize, a: usize, b: usize, s: f64| rotation_off(q[a], q[b], q[i], s),
            };
            let (floor, one_frame) = floors.rotation(j);
            for (a, b) in track.spikes(k, floor, one_frame) {
                let rows = (a * width)..((b + 1) * width);
                rotation_span(
                    c,
                    q[a - 1],
                    q[b + 1],
                    width,
                    &input[rows.clone()],
                    &mut values[rows],
                );
                frames.extend(a..=b);
            }
        }
        if c.n_pos > 0 {
            let p = positions(c, &input, width);
            let track = Track {
                n,
                dist: |i: usize, j: usize| p[i].distance(p[j]),
                off: |i: usize, a: usize, b: usize, s: f64| p[a].lerp(p[b], s).distance(p[i]),
            };
            for (a, b) in track.spikes(k, floors.position, floors.position) {
                position_span(
                    c,
                    p[a - 1],
                    p[b + 1],
                    width,
                    &mut values[a * width..(b + 1) * width],
                );
                frames.extend(a..=b);
            }
        }
        out.extend(frames.into_iter().map(|f| (j, f)));
    }
    out
}

/// The distance of two rotations (degrees): a rotation track's `dist`.
pub(crate) fn rotation_dist(a: DQuat, b: DQuat) -> f64 {
    a.angle_between(b).to_degrees()
}

/// The distance of `i` from the SLERP at `s` from `a` to `b` (degrees): a
/// rotation track's `off`.
pub(crate) fn rotation_off(a: DQuat, b: DQuat, i: DQuat, s: f64) -> f64 {
    a.slerp(b, s).angle_between(i).to_degrees()
}

/// The floors of each track's threshold (see the module documentation).
pub(crate) struct Floors {
    /// Of position tracks (file units).
    pub(crate) position: f64,
    /// The smallest visible rotation's move ([`SEEN_SIZE`] of the size).
    seen: f64,
    /// Each joint's reach.
    reach: Vec<f64>,
}

impl Floors {
    /// For `skeleton`, of a figure `size` units in size.
    pub(crate) fn new(skeleton: &Skeleton, size: f64) -> Floors {
        Floors {
            position: size_floor(size, FLOOR_SIZE),
            seen: size_floor(size, SEEN_SIZE),
            reach: reach(skeleton),
        }
    }

    /// Joint `j`'s rotation floors: of longer spans, of one-frame spans.
    pub(crate) fn rotation(&self, j: usize) -> (f64, f64) {
        // The smallest angle that moves the joints under it by `seen`.
        let visible = (self.seen / (2.0 * self.reach[j])).min(1.0).asin() * 2.0;
        let floor = if visible.is_nan() { f64::INFINITY } else { visible.to_degrees() };
        let one_frame = FLOOR_DEG.max(floor.min(ONE_FRAME_DEG));
        (FLOOR_DEG.max(floor), one_frame)
    }
}

/// Writes the rotations of a repaired span of `c` into `out`, its frames
/// (`width` values each) whose input is `input`: the SLERP from `qa` (the
/// frame before) to `qb` (the frame after), each closest to the input's
/// angles.
pub(crate) fn rotation_span(
    c: &JointChannels,
    qa: DQuat,
    qb: DQuat,
    width: usize,
    input: &[f64],
    out: &mut [f64],
) {
    let len = input.len() / width;
    for (k, (row, o)) in input.chunks_exact(width).zip(out.chunks_exact_mut(width)).enumerate() {
        let s = (k + 1) as f64 / (len + 1) as f64;
        c.write_rotation(qa.slerp(qb, s), Some(c.angles(row)), o);
    }
}

/// Writes the position channels of a repaired span of `c` into `out`, its
/// frames (`width` values each): the straight line from `pa` (the frame
/// before) to `pb` (the frame after).
pub(crate) fn position_span(
    c: &JointChannels,
    pa: DVec3,
    pb: DVec3,
    width: usize,
    out: &mut [f64],
) {
    let len = out.len() / width;
    for (k, o) in out.chunks_exact_mut(width).enumerate() {
        let s = (k + 1) as f64 / (len + 1) as f64;
        write_positions(c, pa.lerp(pb, s), o);
    }
}

/// The root mean square over the joints of `f(j)`, a squared distance.
fn rms(nj: usize, f: impl Fn(usize) -> f64) -> f64 {
    ((0..nj).map(f).sum::<f64>() / nj as f64).sqrt()
}

/// The distance of two poses (world positions less the root's): the
/// glitch frames' `dist`.
pub(crate) fn pose_dist(a: &[DVec3], b: &[DVec3]) -> f64 {
    rms(a.len(), |j| a[j].distance_squared(b[j]))
}

/// The distance of pose `i` from the straight line at `s` from `a` to
/// `b`: the glitch frames' `off`.
pub(crate) fn pose_off(a: &[DVec3], b: &[DVec3], i: &[DVec3], s: f64) -> f64 {
    rms(a.len(), |j| a[j].lerp(b[j], s).distance_squared(i[j]))
}

/// World positions of one frame less the root's, in place.
pub(crate) fn relative_to_root(pose: &mut [DVec3]) {
    if let Some(&root) = pose.first() {
        pose.iter_mut().for_each(|p| *p -= root);
    }
}

/// Repairs whole glitch frames of `bvh` (see the module documentation):
/// every joint of each span interpolated from the frames around it.
/// Returns the frames repaired and the (joint, frame) pairs whose channels
/// changed, in joint then frame order.
pub(crate) fn repair_frames(
    bvh: &mut Bvh,
    layouts: &[JointChannels],
    k: f64,
) -> (Vec<usize>, Vec<(usize, usize)>) {
    let width = bvh.motion().n_channels();
    let n = bvh.motion().n_frames();
    let nj = layouts.len();
    if n < 3 || width == 0 || nj == 0 {
        return (Vec::new(), Vec::new());
    }
    let size = size_of(bvh);
    let floor = size_floor(size, FRAME_FLOOR_SIZE);
    // The pose: world positions less the root's (its travel is a track of
    // its own, and would hide a pose that leaves and comes back).
    let mut world =
        Kinematics::new(bvh.skeleton(), PositionChannels::Replace).positions_all(bvh.motion());
    world.chunks_exact_mut(nj).for_each(relative_to_root);
    let at = |f: usize| &world[f * nj..(f + 1) * nj];
    let track = Track {
        n,
        dist: |i: usize, j: usize| pose_dist(at(i), at(j)),
        off: |i: usize, a: usize, b: usize, s: f64| pose_off(at(a), at(b), at(i), s),
    };
    let spans = track.spikes(k, floor, floor);
    if spans.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let input = bvh.motion().values().to_vec();
    let mut frames = Vec::new();
    let pos_tol = size_floor(size, FRAME_JOINT_TOL_SIZE);
    let values = bvh.motion_mut().values_mut();
    for &(a, b) in &spans {
        let rows = &input[(a - 1) * width..(b + 2) * width];
        glitch_span(layouts, width, pos_tol, rows, &mut values[a * width..(b + 1) * width]);
        frames.extend(a..=b);
    }
    let mut changed = Vec::new();
    for (j, c) in layouts.iter().enumerate() {
        for &f in &frames {
            let row = f * width..(f + 1) * width;
            if joint_differs(c, &values[row.clone()], &input[row]) {
                changed.push((j, f));
            }
        }
    }
    (frames, changed)
}

/// Whether a channel of `c` differs between frames `a` and `b`.
pub(crate) fn joint_differs(c: &JointChannels, a: &[f64], b: &[f64]) -> bool {
    c.rot_index[..c.n_rot as usize]
        .iter()
        .chain(&c.pos_index[..c.n_pos as usize])
        .any(|&i| a[i].to_bits() != b[i].to_bits())
}

/// Repairs one glitch span into `out`, its frames (`width` values each):
/// `rows` are the input's frames from the one before the span to the one
/// after it. Only the joints that are off: a joint at its place in a
/// glitch frame (a spike of one limb is a glitch frame too) keeps its
/// values.
pub(crate) fn glitch_span(
    layouts: &[JointChannels],
    width: usize,
    pos_tol: f64,
    rows: &[f64],
    out: &mut [f64],
) {
    let len = rows.len() / width - 2;
    let row = |k: usize| &rows[k * width..(k + 1) * width];
    let (ra, rb) = (row(0), row(len + 1));
    let at = |k: usize| k as f64 / (len + 1) as f64;
    for c in layouts {
        let (qa, qb) = (c.rotation(ra), c.rotation(rb));
        let rot_off = (1..=len).any(|k| {
            qa.slerp(qb, at(k)).angle_between(c.rotation(row(k))).to_degrees() > FRAME_JOINT_TOL_DEG
        });
        let (pa, pb) = (positions(c, ra, width)[0], positions(c, rb, width)[0]);
        let pos_off = (1..=len)
            .any(|k| pa.lerp(pb, at(k)).distance(positions(c, row(k), width)[0]) > pos_tol);
        for k in 1..=len {
            let o = &mut out[(k - 1) * width..k * width];
            if c.n_rot > 0 && rot_off {
                c.write_rotation(qa.slerp(qb, at(k)), Some(c.angles(row(k))), o);
            }
            if c.n_pos > 0 && pos_off {
                write_positions(c, pa.lerp(pb, at(k)), o);
            }
        }
    }
}

/// Each joint's reach (file units): the longest chain of offsets from it
/// to a joint or end site under it, or, for a joint with nothing under it,
/// the length of its own offset (the bone into it).
fn reach(skeleton: &Skeleton) -> Vec<f64> {
    let joints = skeleton.joints();
    let mut r = vec![0.0f64; joints.len()];
    // Children come after their parents: one pass from the end.
    for (j, joint) in joints.iter().enumerate().rev() {
        if let Some(p) = joint.parent() {
            let p = p.index();
            r[p] = r[p].max(r[j] + joint.offset().length());
        }
    }
    for (j, joint) in joints.iter().enumerate() {
        if r[j] == 0.0 {
            r[j] = joint.offset().length();
        }
    }
    r
}

/// The figure's size ([`crate::units::UnitGuess::of_bvh`]'s).
fn size_of(bvh: &Bvh) -> f64 {
    crate::units::UnitGuess::of_bvh(bvh, PositionChannels::Replace).size
}

/// `fraction` of the figure's size `size` (file units); infinite (nothing
/// repaired) when the size is unknown.
pub(crate) fn size_floor(size: f64, fraction: f64) -> f64 {
    if size.is_finite() && size > 0.0 { fraction * size } else { f64::INFINITY }
}

/// Every frame's position channels of `c` as a vector (absent axes 0).
pub(crate) fn positions(c: &JointChannels, values: &[f64], width: usize) -> Vec<DVec3> {
    values
        .chunks_exact(width)
        .map(|fr| {
            let mut v = DVec3::ZERO;
            for (a, &i) in c.pos_index[..c.n_pos as usize].iter().enumerate() {
                v[a] = fr[i];
            }
            v
        })
        .collect()
}

/// Writes `p` into the position channels of `c` in `row`.
fn write_positions(c: &JointChannels, p: DVec3, row: &mut [f64]) {
    for (a, &i) in c.pos_index[..c.n_pos as usize].iter().enumerate() {
        row[i] = p[a];
    }
}
