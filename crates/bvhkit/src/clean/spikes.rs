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

use glam::DVec3;

use super::rotations;
use crate::edit::JointChannels;
use crate::quality::stats::{median_mad, quantile_in_place};
use crate::{Bvh, Kinematics, PositionChannels};

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
        let Some((med, mad)) = median_mad(&devs) else { return Vec::new() };
        let t_long = (med + k * mad).max(floor);
        let t_one = (med + k * mad).max(one_frame_floor.min(floor));
        if !t_one.is_finite() {
            return Vec::new();
        }
        let mut order: Vec<usize> = (1..n - 1).filter(|&f| devs[f - 1] > t_one).collect();
        order.sort_by(|&a, &b| devs[b - 1].total_cmp(&devs[a - 1]));
        let steps: Vec<f64> = (0..n - 1).map(|i| (self.dist)(i, i + 1)).collect();
        let mut covered = vec![false; n];
        let mut spans = Vec::new();
        let mut buf = Vec::new();
        for f in order {
            if covered[f] {
                continue;
            }
            for len in 1..=MAX_SPAN {
                // A longer span needs a candidate above the full floor.
                let t = if len == 1 { t_one } else { t_long };
                if devs[f - 1] <= t {
                    break;
                }
                let mut best: Option<(f64, usize, usize)> = None;
                for a in (f + 1).saturating_sub(len).max(1)..=f {
                    let b = a + len - 1;
                    if b + 1 >= n || covered[a - 1..=b + 1].iter().any(|&c| c) {
                        continue;
                    }
                    let e = (a..=b)
                        .map(|i| (self.off)(i, a - 1, b + 1, (i + 1 - a) as f64 / (len + 1) as f64))
                        .fold(0.0, f64::max);
                    // Written so that a NaN fails.
                    let comes_back = e > t && e > RETURN_RATIO * (self.dist)(a - 1, b + 1);
                    if !comes_back {
                        continue;
                    }
                    // The steps that do not touch the span.
                    buf.clear();
                    buf.extend(
                        steps[(a - 1).saturating_sub(LOCAL_WINDOW)..a - 1]
                            .iter()
                            .chain(&steps[b + 1..(b + 1 + LOCAL_WINDOW).min(n - 1)])
                            .copied()
                            .filter(|s| s.is_finite()),
                    );
                    let local = quantile_in_place(&mut buf, 0.5).unwrap_or(0.0);
                    let jump = LOCAL_RATIO * local;
                    let back = steps[a - 1].min(steps[b]);
                    if !(e > jump && back > jump && back > 0.5 * e) {
                        continue;
                    }
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
    let pos_floor = size_floor(bvh, FLOOR_SIZE);
    let seen = size_floor(bvh, SEEN_SIZE);
    let reach = reach(bvh);
    let input = bvh.motion().values().to_vec();
    let values = bvh.motion_mut().values_mut();
    for (j, c) in layouts.iter().enumerate() {
        let mut frames = std::collections::BTreeSet::new();
        if c.n_rot > 0 {
            let q = rotations(c, &input, width);
            let track = Track {
                n,
                dist: |i: usize, j: usize| q[i].angle_between(q[j]).to_degrees(),
                off: |i: usize, a: usize, b: usize, s: f64| {
                    q[a].slerp(q[b], s).angle_between(q[i]).to_degrees()
                },
            };
            // The smallest angle that moves the joints under it by `seen`.
            let visible = (seen / (2.0 * reach[j])).min(1.0).asin() * 2.0;
            let floor = if visible.is_nan() { f64::INFINITY } else { visible.to_degrees() };
            let one_frame = FLOOR_DEG.max(floor.min(ONE_FRAME_DEG));
            for (a, b) in track.spikes(k, FLOOR_DEG.max(floor), one_frame) {
                for f in a..=b {
                    let s = (f + 1 - a) as f64 / (b + 2 - a) as f64;
                    let row = &mut values[f * width..(f + 1) * width];
                    let near = c.angles(&input[f * width..(f + 1) * width]);
                    c.write_rotation(q[a - 1].slerp(q[b + 1], s), Some(near), row);
                    frames.insert(f);
                }
            }
        }
        if c.n_pos > 0 {
            let p = positions(c, &input, width);
            let track = Track {
                n,
                dist: |i: usize, j: usize| p[i].distance(p[j]),
                off: |i: usize, a: usize, b: usize, s: f64| p[a].lerp(p[b], s).distance(p[i]),
            };
            for (a, b) in track.spikes(k, pos_floor, pos_floor) {
                for f in a..=b {
                    let s = (f + 1 - a) as f64 / (b + 2 - a) as f64;
                    write_positions(c, p[a - 1].lerp(p[b + 1], s), &mut values[f * width..]);
                    frames.insert(f);
                }
            }
        }
        out.extend(frames.into_iter().map(|f| (j, f)));
    }
    out
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
    let floor = size_floor(bvh, FRAME_FLOOR_SIZE);
    // The pose: world positions less the root's (its travel is a track of
    // its own, and would hide a pose that leaves and comes back).
    let mut world =
        Kinematics::new(bvh.skeleton(), PositionChannels::Replace).positions_all(bvh.motion());
    for frame in world.chunks_exact_mut(nj) {
        let root = frame[0];
        frame.iter_mut().for_each(|p| *p -= root);
    }
    let at = |f: usize| &world[f * nj..(f + 1) * nj];
    let rms = |it: &mut dyn Iterator<Item = f64>| (it.sum::<f64>() / nj as f64).sqrt();
    let track = Track {
        n,
        dist: |i: usize, j: usize| {
            rms(&mut at(i).iter().zip(at(j)).map(|(p, q)| p.distance_squared(*q)))
        },
        off: |i: usize, a: usize, b: usize, s: f64| {
            let (pa, pb, pi) = (at(a), at(b), at(i));
            rms(&mut (0..nj).map(|j| pa[j].lerp(pb[j], s).distance_squared(pi[j])))
        },
    };
    let spans = track.spikes(k, floor, floor);
    if spans.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let input = bvh.motion().values().to_vec();
    let mut frames = Vec::new();
    let pos_tol = size_floor(bvh, FRAME_JOINT_TOL_SIZE);
    let values = bvh.motion_mut().values_mut();
    let row = |f: usize| &input[f * width..(f + 1) * width];
    for &(a, b) in &spans {
        let (ra, rb) = (row(a - 1), row(b + 1));
        let at = |f: usize| (f + 1 - a) as f64 / (b + 2 - a) as f64;
        for c in layouts {
            // Only the joints that are off: a joint at its place in a
            // glitch frame (a spike of one limb is a glitch frame too)
            // keeps its values.
            let (qa, qb) = (c.rotation(ra), c.rotation(rb));
            let rot_off = (a..=b).any(|f| {
                qa.slerp(qb, at(f)).angle_between(c.rotation(row(f))).to_degrees()
                    > FRAME_JOINT_TOL_DEG
            });
            let (pa, pb) = (positions(c, ra, width)[0], positions(c, rb, width)[0]);
            let pos_off = (a..=b)
                .any(|f| pa.lerp(pb, at(f)).distance(positions(c, row(f), width)[0]) > pos_tol);
            for f in a..=b {
                let out = &mut values[f * width..(f + 1) * width];
                if c.n_rot > 0 && rot_off {
                    c.write_rotation(qa.slerp(qb, at(f)), Some(c.angles(row(f))), out);
                }
                if c.n_pos > 0 && pos_off {
                    write_positions(c, pa.lerp(pb, at(f)), out);
                }
            }
        }
        frames.extend(a..=b);
    }
    let mut changed = Vec::new();
    for (j, c) in layouts.iter().enumerate() {
        let idx = c.rot_index[..c.n_rot as usize].iter().chain(&c.pos_index[..c.n_pos as usize]);
        let idx: Vec<usize> = idx.copied().collect();
        for &f in &frames {
            if idx
                .iter()
                .any(|&i| values[f * width + i].to_bits() != input[f * width + i].to_bits())
            {
                changed.push((j, f));
            }
        }
    }
    (frames, changed)
}

/// Each joint's reach (file units): the longest chain of offsets from it
/// to a joint or end site under it, or, for a joint with nothing under it,
/// the length of its own offset (the bone into it).
fn reach(bvh: &Bvh) -> Vec<f64> {
    let joints = bvh.skeleton().joints();
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

/// `fraction` of the figure's size (file units); infinite (nothing
/// repaired) when the size is unknown.
fn size_floor(bvh: &Bvh, fraction: f64) -> f64 {
    let size = crate::units::UnitGuess::of_bvh(bvh, PositionChannels::Replace).size;
    if size.is_finite() && size > 0.0 { fraction * size } else { f64::INFINITY }
}

/// Every frame's position channels of `c` as a vector (absent axes 0).
fn positions(c: &JointChannels, values: &[f64], width: usize) -> Vec<DVec3> {
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
