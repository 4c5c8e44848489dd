//! Drift and ground: the root's position channels corrected.
//!
//! `--remove-drift` removes the root's horizontal travel from the first
//! frame to the last at a constant rate, `p'_f = p_f - f/(n-1) · (p_{n-1} -
//! p_0)` on the position channels across the up axis, so the last frame
//! stands where the first does (a loop, or an inertial capture that walks
//! off while the actor stands). `--ground` moves the root along the up axis
//! by a constant so that the ground the feet stand on
//! ([`crate::quality::lint`]'s contact ground) is at height 0. Only the
//! root's position channels change, by the same amount for every joint
//! under it; a root without the channel an axis needs is noted and left.

use crate::Bvh;
use crate::edit::JointChannels;
use crate::edit::axes::SignedAxis;

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
