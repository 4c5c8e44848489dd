//! Additive layer: a clip's change since its reference pose, added on top
//! of another clip (as Blender's additive strips and game engines'
//! additive animations do: an added nod, a breathing layer).
//!
//! For each joint, with `L` the layer clip, `r` its reference frame (the
//! first by default) and `w` the influence ([`Weight`], over the base's
//! normalised time, times a mask when a subtree is given):
//! - rotation: `q = q_base · slerp(identity, q_r⁻¹ · q_L, w)`. The delta
//!   `q_r⁻¹ · q_L` is the layer's rotation since its reference in the
//!   joint's own local frame (right-multiplied: the rotation the layer
//!   adds after its reference pose), applied after the base's own local
//!   rotation;
//! - position channels: `base + w · (L - r)` (additive, so a layer whose
//!   root does not travel adds no travel).
//!
//! Where the weight is 0, or the layer's channels in a frame equal the
//! reference's bit for bit, the base's channels are copied bit for bit: a
//! layer that holds its reference pose changes nothing. Rotations are
//! written in the base's channel order, closest to the previous output
//! frame.
//!
//! The layer is [`prepare`]d first (same skeleton, resampled to the base's
//! rate, converted into the base's layout); the reference frame is taken
//! from the layer before resampling. The output has the base's length:
//! a shorter layer **holds its last frame** to the end, a longer one is
//! cut.

use std::fmt;

use super::weights::Weight;
use super::{Mixer, Prepared, find_joint, held, mix_frames, need_frames, prepare};
use crate::bvh::Bvh;
use crate::edit::frames;
use crate::error::{Error, Result};
use crate::motion::Motion;

/// Options of [`layer`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerOptions {
    /// The layer's influence (1: the whole change).
    pub weight: Weight,
    /// Add the layer only to this joint and its subtree.
    pub joints: Option<String>,
    /// The layer's reference frame (its motion is measured from this
    /// pose).
    pub reference: usize,
}

/// What [`layer`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerReport {
    /// What was done to the layer first.
    pub prepared: Prepared,
    /// Output frames (the base's).
    pub frames: usize,
    /// Base frames past the layer's end, which got the layer's last frame.
    pub held: usize,
    /// Layer frames past the base's end, not used.
    pub cut: usize,
    /// Output frames where a joint with two rotation channels could not
    /// hold its rotation exactly.
    pub inexact_frames: usize,
}

impl fmt::Display for LayerReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let p = self.prepared.to_string();
        if !p.is_empty() {
            parts.push(format!("layer {p}"));
        }
        if self.held > 0 {
            parts.push(format!(
                "the layer is shorter: its last frame holds for {} frames",
                self.held
            ));
        }
        if self.cut > 0 {
            parts.push(format!("the layer is longer: its last {} frames are not used", self.cut));
        }
        if self.inexact_frames > 0 {
            parts.push(format!(
                "{} frames have a joint with two rotation channels that keeps only part of its rotation",
                self.inexact_frames
            ));
        }
        f.write_str(&parts.join("; "))
    }
}

/// Adds `add`'s motion since its reference frame on top of `base` (see the
/// module docs).
///
/// # Errors
/// When a clip has no frames, the skeletons differ, the layer's channels
/// cannot be converted, the reference frame is past the layer's end, the
/// subtree is not a joint, or the weight is outside `[0, 1]`.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::mix::layer::{layer, LayerOptions};
/// let text = |f: &str| format!("HIERARCHY ROOT Hips {{ OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
///     End Site {{ OFFSET 0 10 0 }} }} MOTION Frames: 2 Frame Time: 0.1 {f}");
/// let base = Bvh::parse(text("0 10 30\n0 30 0"))?;
/// let nod = Bvh::parse(text("0 0 0\n0 20 0"))?;
/// let (out, _) = layer(&base, &nod, &LayerOptions::default())?;
/// assert_eq!(out.motion().frame(0), base.motion().frame(0)); // the reference pose adds nothing
/// assert!((out.motion().frame(1)[1] - 50.0).abs() < 1e-9); // 30 + the nod's 20 about X
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn layer(base: &Bvh, add: &Bvh, opts: &LayerOptions) -> Result<(Bvh, LayerReport)> {
    layer_named(base, "the base", add, "the layer", opts)
}

/// [`layer`], with the clips' names for messages.
///
/// # Errors
/// As for [`layer`].
pub fn layer_named(
    base: &Bvh,
    base_name: &str,
    add: &Bvh,
    add_name: &str,
    opts: &LayerOptions,
) -> Result<(Bvh, LayerReport)> {
    opts.weight.validate()?;
    need_frames(base, base_name)?;
    need_frames(add, add_name)?;
    let r = opts.reference;
    if r >= add.motion().n_frames() {
        return Err(Error::invalid(format!(
            "the reference frame {r} is past the end of {add_name} ({} frames)",
            add.motion().n_frames()
        )));
    }
    let one = frames::range(add, r..r + 1)?;
    let (reference, _) = prepare(base, &one, base_name, add_name)?;
    let (add, prepared) = prepare(base, add, base_name, add_name)?;
    let subtree = opts.joints.as_deref().map(|n| find_joint(base.skeleton(), n)).transpose()?;
    let mut mixer = Mixer::new(base.skeleton(), subtree);
    let reference = mixer.reference(reference.motion().frame(0));
    let (bm, lm) = (base.motion(), add.motion());
    let (n, nl) = (bm.n_frames(), lm.n_frames());
    let nc = mixer.n_channels();
    let (values, inexact) = mix_frames(n, nc, bm.frame(0), |k, near, out| {
        mixer.layer(bm.frame(k), held(lm, k), &reference, opts.weight.frame(k, n), near, out)
    });
    let motion = Motion::with_frames(bm.frame_time(), n, nc, values)?;
    let report = LayerReport {
        prepared,
        frames: n,
        held: n.saturating_sub(nl),
        cut: nl.saturating_sub(n),
        inexact_frames: inexact,
    };
    Ok((Bvh::new(base.skeleton().clone(), motion)?, report))
}
