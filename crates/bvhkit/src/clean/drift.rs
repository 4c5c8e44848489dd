//! Drift and ground: the root's position channels corrected.
//!
//! `--remove-drift` removes the root's horizontal travel from the first
//! frame to the last at a constant rate, `p'_f = p_f - f/(n-1) · (p_{n-1} -
//! p_0)` on the position channels across the up axis, so the last frame
//! stands where the first does (a loop, or an inertial capture that walks
//! off while the actor stands). `--ground` moves the root along the up axis
//! by a constant so that the ground the feet stand on
//! ([`crate::quality::lint`]'s contact ground) is at height 0. With
//! [`super::Options::ground_over_time`] it follows the ground over time
//! instead ([`ground_over_time`]): a capture whose height drifts (an
//! inertial suit), or a walk up a slope, keeps its feet on 0 throughout.
//! Only the root's position channels change, by the same amount for every
//! joint under it; a root without the channel an axis needs is noted and
//! left.

use crate::edit::JointChannels;
use crate::edit::axes::SignedAxis;
use crate::quality::stats::quantile_in_place;
use crate::{Bvh, quality};

/// The window of [`ground_over_time`] (seconds): the ground is the height
/// of the planted feet over this long, smoothed over as long again.
pub(crate) const GROUND_WINDOW_S: f64 = 1.0;

/// Removes the root's horizontal drift; returns a note when it cannot.
pub(crate) fn remove_drift(bvh: &mut Bvh, root: &JointChannels, up: SignedAxis) -> Option<String> {
    let n = bvh.motion().n_frames();
    let width = bvh.motion().n_channels();
    if n < 2 {
        return None;
    }
    let across: Vec<usize> = (0..root.n_pos as usize)
        .filter(|&k| root.pos_axes[k] != up.axis())
        .map(|k| root.pos_index[k])
        .collect();
    if across.is_empty() {
        return Some("the root has no horizontal position channel: no drift removed".into());
    }
    let values = bvh.motion_mut().values_mut();
    for &c in &across {
        let (first, last) = (values[c], values[(n - 1) * width + c]);
        let step = (last - first) / (n - 1) as f64;
        if !step.is_finite() {
            continue;
        }
        for f in 1..n {
            values[f * width + c] -= step * f as f64;
        }
    }
    None
}

/// Moves the root by `-height` (file units) along `up`; returns a note when
/// it cannot.
pub(crate) fn ground(
    bvh: &mut Bvh,
    root: &JointChannels,
    up: SignedAxis,
    height: f64,
) -> Option<String> {
    if !height.is_finite() {
        return Some("no ground found (no feet in contact): not grounded".into());
    }
    let Some(k) = (0..root.n_pos as usize).find(|&k| root.pos_axes[k] == up.axis()) else {
        return Some("the root has no position channel along the up axis: not grounded".into());
    };
    let c = root.pos_index[k];
    let width = bvh.motion().n_channels();
    let shift = up.sign() * height;
    if shift == 0.0 {
        return None;
    }
    for row in bvh.motion_mut().values_mut().chunks_exact_mut(width) {
        row[c] -= shift;
    }
    None
}

/// The ground under the figure at each frame (metres along `lint.up`), from
/// `lint`'s per-frame foot heights and speeds: a foot is planted at a frame
/// when it is within `options.contact_height` of the lowest tenth of the
/// feet's heights over the [`GROUND_WINDOW_S`] around it and slower than
/// `options.contact_speed`; the raw ground at a frame is the lowest of the
/// feet's median planted heights over the window around it (the constant
/// ground's rule over a window: rigs often have one foot's End Site a
/// little higher than the other's; until 2026-11-30 the median of the
/// planted feet's mean height, which sat between them), carried straight across
/// windows with none (constant beyond the first and last), then smoothed
/// by a straight line fitted over the window around each frame
/// (Savitzky-Golay of order 1). `None` when no foot is ever planted.
pub(crate) fn ground_curve(lint: &quality::Report, options: &quality::Options) -> Option<Vec<f64>> {
    let n = lint.frames;
    let feet = &lint.series.foot_height;
    if n == 0 || feet.is_empty() || !lint.ground.is_finite() {
        return None;
    }
    let half = ((GROUND_WINDOW_S * lint.fps / 2.0).round() as usize).max(1);
    let win = |f: usize| f.saturating_sub(half)..(f + half + 1).min(n);
    // Absolute heights (m) of each foot's lowest point.
    let h = |foot: usize, f: usize| feet[foot][f] + lint.ground;
    let sole: Vec<f64> =
        (0..n).map(|f| (0..feet.len()).map(|k| h(k, f)).fold(f64::NAN, f64::min)).collect();
    let mut buf = Vec::new();
    // Per foot, its height at the frames it is planted (NaN elsewhere).
    let mut planted = vec![vec![f64::NAN; n]; feet.len()];
    for f in 0..n {
        buf.clear();
        buf.extend(sole[win(f)].iter().copied().filter(|x| x.is_finite()));
        let Some(low) = quantile_in_place(&mut buf, 0.1) else { continue };
        for (k, p) in planted.iter_mut().enumerate() {
            let speed =
                lint.series.foot_speed.get(k).and_then(|s| s.get(f.min(n.saturating_sub(2))));
            let slow = speed.is_none_or(|&v| v < options.contact_speed);
            if h(k, f) - low < options.contact_height && slow {
                p[f] = h(k, f);
            }
        }
    }
    // The lowest of the feet's medians over the window, as the constant
    // ground is the lowest of their medians over the clip.
    let mut raw = vec![f64::NAN; n];
    for (f, r) in raw.iter_mut().enumerate() {
        for p in &planted {
            buf.clear();
            buf.extend(p[win(f)].iter().copied().filter(|x| x.is_finite()));
            if let Some(m) = quantile_in_place(&mut buf, 0.5) {
                *r = r.min(m);
            }
        }
    }
    let known: Vec<usize> = (0..n).filter(|&f| raw[f].is_finite()).collect();
    let (&first, &last) = (known.first()?, known.last()?);
    for f in 0..first {
        raw[f] = raw[first];
    }
    for f in last + 1..n {
        raw[f] = raw[last];
    }
    for w in known.windows(2) {
        let (a, b) = (w[0], w[1]);
        for f in a + 1..b {
            let t = (f - a) as f64 / (b - a) as f64;
            raw[f] = raw[a] + (raw[b] - raw[a]) * t;
        }
    }
    // Smoothed by a straight line fitted over the window around each frame
    // (Savitzky-Golay of order 1: the moving mean inside, no pull towards
    // the middle at the ends, so a slope stays a slope).
    let window = (2 * half + 1).min(if n % 2 == 1 { n } else { n - 1 });
    if window < 3 {
        return Some(raw);
    }
    super::filter::savgol(&raw, super::SavGol { window, poly: 1 }).ok()
}

/// Moves the root by `-height[f]` (file units) along `up` at each frame
/// `f`; returns a note when it cannot.
pub(crate) fn ground_over_time(
    bvh: &mut Bvh,
    root: &JointChannels,
    up: SignedAxis,
    height: Option<&[f64]>,
) -> Option<String> {
    let Some(height) = height else {
        return Some("no ground found (no feet in contact): not grounded".into());
    };
    let Some(k) = (0..root.n_pos as usize).find(|&k| root.pos_axes[k] == up.axis()) else {
        return Some("the root has no position channel along the up axis: not grounded".into());
    };
    let c = root.pos_index[k];
    let width = bvh.motion().n_channels();
    for (row, &h) in bvh.motion_mut().values_mut().chunks_exact_mut(width).zip(height) {
        let shift = up.sign() * h;
        if shift != 0.0 && shift.is_finite() {
            row[c] -= shift;
        }
    }
    None
}
