//! Spike repair: joint-frames far from the motion around them, found as the
//! quality metrics find spikes (a value above median + k × MAD of the
//! joint's own values over the clip, [`crate::quality`]'s robust
//! statistics), replaced by interpolation from the frames around them.
//!
//! A joint's deviation at frame `f` is how far its rotation is from the
//! SLERP midpoint of frames `f - 1` and `f + 1` (degrees; half its angular
//! acceleration per frame²), and for its position channels how far they are
//! from the mean of the two (file units). A frame whose deviation is above
//! the joint's threshold `max(median + k · MAD, floor)` is repaired,
//! largest first: its rotation becomes the SLERP between the frames before
//! and after it, its positions the straight line. When a neighbour is then
//! still above the threshold (a glitch two or three frames long), the span
//! grows towards it, up to [`MAX_SPAN`] frames, and is interpolated again
//! from the original frames around it. The first and last frames have one
//! neighbour only and are never repaired.

use glam::{DQuat, DVec3};

use super::rotations;
use crate::Bvh;
use crate::edit::JointChannels;
use crate::quality::stats::median_mad;

/// The default `k`.
pub const DEFAULT_K: f64 = 40.0;
/// The smallest rotation deviation repaired (degrees), whatever the
/// joint's statistics (a joint that hardly moves has a MAD near 0).
pub const FLOOR_DEG: f64 = 5.0;
/// The smallest position deviation repaired, as a fraction of the figure's
/// size.
pub const FLOOR_SIZE: f64 = 0.01;
/// The longest glitch repaired (frames).
pub const MAX_SPAN: usize = 4;

/// Repairs the spikes of every joint of `bvh` (rotation and position
/// channels separately); returns the repaired (joint, frame) pairs in
/// joint then frame order.
pub(crate) fn repair(bvh: &mut Bvh, layouts: &[JointChannels], k: f64) -> Vec<(usize, usize)> {
    let width = bvh.motion().n_channels();
    let n = bvh.motion().n_frames();
    let mut out = Vec::new();
    if n < 3 || width == 0 {
        return out;
    }
    let size = crate::units::UnitGuess::of_bvh(bvh, crate::PositionChannels::Replace).size;
    let pos_floor = if size.is_finite() && size > 0.0 { FLOOR_SIZE * size } else { f64::INFINITY };
    let input = bvh.motion().values().to_vec();
    let values = bvh.motion_mut().values_mut();
    for (j, c) in layouts.iter().enumerate() {
        let mut frames = std::collections::BTreeSet::new();
        if c.n_rot > 0 {
            let mut q = rotations(c, &input, width);
            let d = |q: &[DQuat], f: usize| -> f64 {
                let mid = q[f - 1].slerp(q[f + 1], 0.5);
                mid.angle_between(q[f]).to_degrees()
            };
            let lerp = |a: DQuat, b: DQuat, t: f64| a.slerp(b, t);
            for f in fix(&mut q, n, k, FLOOR_DEG, d, lerp) {
                let row = &mut values[f * width..(f + 1) * width];
                let near = c.angles(&input[f * width..(f + 1) * width]);
                c.write_rotation(q[f], Some(near), row);
                frames.insert(f);
            }
        }
        if c.n_pos > 0 {
            let idx = &c.pos_index[..c.n_pos as usize];
            let mut p: Vec<DVec3> = (0..n)
                .map(|f| {
                    let mut v = DVec3::ZERO;
                    for (a, &i) in idx.iter().enumerate() {
                        v[a] = input[f * width + i];
                    }
                    v
                })
                .collect();
            let d = |p: &[DVec3], f: usize| (p[f] - (p[f - 1] + p[f + 1]) * 0.5).length();
            let lerp = |a: DVec3, b: DVec3, t: f64| a.lerp(b, t);
            for f in fix(&mut p, n, k, pos_floor, d, lerp) {
                for (a, &i) in idx.iter().enumerate() {
                    values[f * width + i] = p[f][a];
                }
                frames.insert(f);
            }
        }
        out.extend(frames.into_iter().map(|f| (j, f)));
    }
    out
}

/// Repairs the spikes of one track `x` in place (see the module
/// documentation); returns the frames changed.
fn fix<T: Copy>(
    x: &mut [T],
    n: usize,
    k: f64,
    floor: f64,
    dev: impl Fn(&[T], usize) -> f64,
    interp: impl Fn(T, T, f64) -> T,
) -> Vec<usize> {
    let devs: Vec<f64> = (1..n - 1).map(|f| dev(x, f)).collect();
    let Some((med, mad)) = median_mad(&devs) else { return Vec::new() };
    let t = (med + k * mad).max(floor);
    let mut order: Vec<usize> = (1..n - 1).filter(|&f| devs[f - 1] > t).collect();
    order.sort_by(|&a, &b| devs[b - 1].total_cmp(&devs[a - 1]));
    let mut changed = vec![false; n];
    let original: Vec<T> = x.to_vec();
    for f in order {
        if changed[f] || dev(x, f) <= t || dev(x, f).is_nan() {
            continue;
        }
        let (mut a, mut b) = (f, f);
        loop {
            for i in a..=b {
                let s = (i - (a - 1)) as f64 / (b + 1 - (a - 1)) as f64;
                x[i] = interp(x[a - 1], x[b + 1], s);
            }
            let left = if a >= 2 { dev(x, a - 1) } else { 0.0 };
            let right = if b + 2 < n { dev(x, b + 1) } else { 0.0 };
            let worse = left.max(right);
            if worse <= t || worse.is_nan() || b - a + 1 >= MAX_SPAN {
                break;
            }
            // Grow towards the worse side and interpolate again from the
            // original frames around the span.
            let (na, nb) = if left >= right && a >= 2 {
                (a - 1, b)
            } else if b + 2 < n {
                (a, b + 1)
            } else if a >= 2 {
                (a - 1, b)
            } else {
                break;
            };
            x[a..=b].copy_from_slice(&original[a..=b]);
            (a, b) = (na, nb);
        }
        for c in &mut changed[a..=b] {
            *c = true;
        }
    }
    (0..n).filter(|&f| changed[f]).collect()
}
