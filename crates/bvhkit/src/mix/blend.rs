//! Blend two clips pose by pose, on every joint or on a subtree.
//!
//! Output frame `k` is [`Mixer::blend`] of frame `k` of `A` and frame `k`
//! of `B` at the weight `w(k)` of a [`Weight`] (constant, ramp, keys over
//! the output's normalised time): per joint, the SLERP of the local
//! rotations (shortest arc) and the linear mix of the position channels.
//! Where a joint's two rotations are more than 120 degrees apart and the
//! shortest arc has just changed side (the mix turned more than 60 degrees
//! of Euler angles from the previous output frame), the arc that stays
//! closer to the previous output frame is kept instead, so two takes whose
//! hips pass through opposite headings do not flip the body in one frame
//! (`Mixer::keep_arcs_coherent`).
//! Where a joint's weight is exactly 0 its channels are `A`'s bit for bit,
//! exactly 1 `B`'s (converted into `A`'s layout).
//!
//! With a subtree (`joints`), only the named joint and the joints below it
//! take `B` at the weight; every other joint is `A`'s, bit for bit (a
//! masked blend: `Spine` takes the upper body from `B`).
//!
//! `B` is [`prepare`]d first (same skeleton, resampled to `A`'s rate,
//! converted into `A`'s channel layout). Clips of different lengths: the
//! output is as long as the longer one and the shorter one **holds its last
//! frame** to the end. Nothing is aligned: each clip stays where it is (use
//! root-to-origin on both first to blend two clips that travel in
//! different places).

use std::fmt;

use super::weights::Weight;
use super::{Mixer, Prepared, find_joint, held, mix_frames, need_frames, prepare};
use crate::bvh::Bvh;
use crate::error::Result;
use crate::motion::Motion;

/// Options of [`blend`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlendOptions {
    /// How much of `B` (0: all `A`, 1: all `B`).
    pub weight: Weight,
    /// Blend only this joint and its subtree; the rest is `A`'s.
    pub joints: Option<String>,
}

/// What [`blend`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct BlendReport {
    /// What was done to `B` first.
    pub prepared: Prepared,
    /// Output frames.
    pub frames: usize,
    /// Which clip (0: `A`, 1: `B`) held its last frame, and for how many
    /// frames; `None` when both have the same length.
    pub held: Option<(usize, usize)>,
    /// Output frames where a joint with two rotation channels could not
    /// hold its blended rotation exactly.
    pub inexact_frames: usize,
}

impl fmt::Display for BlendReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let p = self.prepared.to_string();
        if !p.is_empty() {
            parts.push(format!("second clip {p}"));
        }
        if let Some((clip, n)) = self.held {
            let which = if clip == 0 { "first" } else { "second" };
            parts.push(format!(
                "the {which} clip is shorter and holds its last frame for {n} frames"
            ));
        }
        if self.inexact_frames > 0 {
            parts.push(format!(
                "{} frames have a joint with two rotation channels that keeps only part of its blended rotation",
                self.inexact_frames
            ));
        }
        f.write_str(&parts.join("; "))
    }
}

/// Blends `a` towards `b` (see the module docs).
///
/// # Errors
/// When a clip has no frames, the skeletons differ, `b`'s channels cannot
/// be converted, the subtree is not a joint, or the weight is outside
/// `[0, 1]`.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::mix::{blend::{blend, BlendOptions}, weights::Weight};
/// let a = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 1 Yrotation
///     JOINT Head { OFFSET 0 10 0 CHANNELS 1 Xrotation End Site { OFFSET 0 5 0 } } }
///     MOTION Frames: 1 Frame Time: 0.1
///     0 0")?;
/// let b = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 1 Yrotation
///     JOINT Head { OFFSET 0 10 0 CHANNELS 1 Xrotation End Site { OFFSET 0 5 0 } } }
///     MOTION Frames: 1 Frame Time: 0.1
///     90 40")?;
/// let opts = BlendOptions { weight: Weight::Constant(0.5), joints: Some("Head".into()) };
/// let (out, _) = blend(&a, &b, &opts)?;
/// assert_eq!(out.motion().frame(0)[0], 0.0); // Hips: A's, bit for bit
/// assert!((out.motion().frame(0)[1] - 20.0).abs() < 1e-9);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn blend(a: &Bvh, b: &Bvh, opts: &BlendOptions) -> Result<(Bvh, BlendReport)> {
    blend_named(a, "the first clip", b, "the second clip", opts)
}

/// [`blend`], with the clips' names for messages.
///
/// # Errors
/// As for [`blend`].
pub fn blend_named(
    a: &Bvh,
    a_name: &str,
    b: &Bvh,
    b_name: &str,
    opts: &BlendOptions,
) -> Result<(Bvh, BlendReport)> {
    opts.weight.validate()?;
    need_frames(a, a_name)?;
    need_frames(b, b_name)?;
    let (b, prepared) = prepare(a, b, a_name, b_name)?;
    let subtree = opts.joints.as_deref().map(|n| find_joint(a.skeleton(), n)).transpose()?;
    let mut mixer = Mixer::new(a.skeleton(), subtree);
    let (am, bm) = (a.motion(), b.motion());
    let (na, nb) = (am.n_frames(), bm.n_frames());
    let n = na.max(nb);
    let nc = mixer.n_channels();
    let (values, inexact) = mix_frames(n, nc, held(am, 0), |k, near, out| {
        let (a, b, w) = (held(am, k), held(bm, k), opts.weight.frame(k, n));
        let exact = mixer.blend(a, b, w, near, out);
        mixer.keep_arcs_coherent(a, b, w, near, out);
        exact
    });
    let motion = Motion::with_frames(am.frame_time(), n, nc, values)?;
    let held = match na.cmp(&nb) {
        std::cmp::Ordering::Less => Some((0, nb - na)),
        std::cmp::Ordering::Greater => Some((1, na - nb)),
        std::cmp::Ordering::Equal => None,
    };
    let report = BlendReport { prepared, frames: n, held, inexact_frames: inexact };
    Ok((Bvh::new(a.skeleton().clone(), motion)?, report))
}
