//! Concatenate clips of one skeleton, each continuing from where the one
//! before ends, with an optional crossfade.
//!
//! Clip `B` after clip `A` (`A` may itself be a concatenation):
//! 1. `B` is [`prepare`]d: the same joints in the same tree (else an error
//!    naming the first difference), resampled to `A`'s rate when the rates
//!    differ, converted into `A`'s channel layout when its channels differ
//!    (other rotation orders are converted, never refused).
//! 2. Unless the position is kept, `B` is [`align`]ed: its carrier (the
//!    joint that carries the travel, [`root::carrier`](crate::edit::root::carrier)
//!    of `A`) is moved on the ground and turned about the up axis so that
//!    `B`'s first frame stands where `A`'s frame `n_A - max(N, 1)` stands,
//!    facing the same way: without a crossfade `A`'s last frame, with a
//!    crossfade of `N` frames the first frame of the overlap, where `B`
//!    starts to play. Heights are kept. Only the carrier's channels change.
//! 3. The output is `A`'s frames `0 .. n_A - N`, then `N` crossfade frames
//!    (frame `k` mixes `A`'s frame `n_A - N + k` with `B`'s frame `k` at the
//!    weight [`fade`]`(k, N)`, by [`Mixer::blend`]: per-joint SLERP, position
//!    channels linear), then `B`'s frames `N ..`: `n_A + n_B - N` frames.
//!    Outside the crossfade every frame is a copy of `A`'s or the aligned
//!    `B`'s, bit for bit.
//!
//! A crossfade longer than either clip is refused. The output has the
//! first clip's skeleton and frame time.

use std::fmt;

use super::weights::{Curve, fade};
use super::{GroundMove, Mixer, Prepared, Span, align, need_frames, prepare, up_axis};
use crate::bvh::Bvh;
use crate::edit::axes::SignedAxis;
use crate::error::{Error, Result};
use crate::motion::Motion;

/// Options of [`concat()`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConcatOptions {
    /// The crossfade at each seam (0 frames: none).
    pub crossfade: Span,
    /// The crossfade's weight curve (smoothstep by default).
    pub curve: Curve,
    /// Keep every clip where it is instead of moving it to continue from
    /// the clip before.
    pub keep_position: bool,
    /// The up axis for the alignment; `None`: detected from the first
    /// clip ([`super::up_axis`]), Y when none is found.
    pub up: Option<SignedAxis>,
}

/// What [`concat()`] did at one seam (before clip `clip`).
#[derive(Clone, Debug, PartialEq)]
pub struct Seam {
    /// Index of the clip that starts here (1 for the second clip).
    pub clip: usize,
    /// Its name, as given.
    pub name: String,
    /// Resampling and channel conversion done to it.
    pub prepared: Prepared,
    /// Crossfade frames at this seam.
    pub crossfade: usize,
    /// The frame of the output so far that its first frame was aligned
    /// with, and the move; `None` when positions are kept.
    pub aligned: Option<(usize, GroundMove)>,
}

/// What [`concat()`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct ConcatReport {
    /// The up axis used for alignment.
    pub up: SignedAxis,
    /// Whether it was given or detected (`false`: Y by default).
    pub up_found: bool,
    /// One entry per seam.
    pub seams: Vec<Seam>,
}

impl fmt::Display for ConcatReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.seams.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: ", s.name)?;
            let mut parts = Vec::new();
            let p = s.prepared.to_string();
            if !p.is_empty() {
                parts.push(p);
            }
            match &s.aligned {
                Some((frame, g)) => parts.push(format!(
                    "moved {:.4} units and turned {:.2} degrees about {}{} to start at frame {frame}",
                    g.shift.length(),
                    g.turn_deg,
                    self.up,
                    if self.up_found { "" } else { " (no up axis detected: Y assumed)" },
                )),
                None => parts.push("kept where it is".to_string()),
            }
            if s.crossfade > 0 {
                parts.push(format!("crossfade of {} frames", s.crossfade));
            }
            f.write_str(&parts.join("; "))?;
        }
        Ok(())
    }
}

/// Concatenates `clips` (name, clip), each after the one before (see the
/// module docs). Names are used in messages.
///
/// # Errors
/// When there is no clip, a clip has no frames, the skeletons differ, a
/// crossfade is longer than a clip, or a clip cannot be converted or moved.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::mix::concat::{concat, ConcatOptions};
/// let walk = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0
///     CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
///     End Site { OFFSET 0 10 0 } }
///     MOTION Frames: 3 Frame Time: 0.1
///     0 90 0 0 0 0
///     0 90 5 0 0 0
///     0 90 10 0 0 0")?;
/// let (both, _) = concat(&[("a", &walk), ("b", &walk)], &ConcatOptions::default())?;
/// assert_eq!(both.motion().n_frames(), 6);
/// // The second walk starts where the first ends and keeps walking.
/// assert!((both.motion().frame(5)[2] - 20.0).abs() < 1e-9);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn concat(clips: &[(&str, &Bvh)], opts: &ConcatOptions) -> Result<(Bvh, ConcatReport)> {
    let Some(&(first_name, first)) = clips.first() else {
        return Err(Error::invalid("nothing to concatenate: no clips"));
    };
    need_frames(first, first_name)?;
    let (up, up_found) = up_axis(first, opts.up);
    let mut mixer = Mixer::new(first.skeleton(), None);
    let nc = first.skeleton().n_channels();
    let ft = first.motion().frame_time();
    let n_fade = opts.crossfade.frames(ft);
    let mut acc = first.clone();
    let mut prev_len = first.motion().n_frames();
    let mut prev_name = first_name;
    let mut seams = Vec::new();
    for (i, &(name, clip)) in clips.iter().enumerate().skip(1) {
        need_frames(clip, name)?;
        let (b, prepared) = prepare(first, clip, first_name, name)?;
        let nb = b.motion().n_frames();
        for (len, who) in [(prev_len, prev_name), (nb, name)] {
            if n_fade > len {
                return Err(Error::invalid(format!(
                    "the crossfade ({}) is longer than {who} ({len} frames)",
                    opts.crossfade.describe(ft)
                )));
            }
        }
        let na = acc.motion().n_frames();
        let (b, aligned) = if opts.keep_position {
            (b, None)
        } else {
            let fa = na - n_fade.max(1);
            let (moved, g) = align(&acc, fa, &b, 0, up)
                .map_err(|e| Error::invalid(format!("{name}: {}", e.message())))?;
            (moved, Some((fa, g)))
        };
        let n_out = na + nb - n_fade;
        let mut values = Vec::with_capacity(n_out * nc);
        values.extend_from_slice(&acc.motion().values()[..(na - n_fade) * nc]);
        values.resize(n_out * nc, 0.0);
        let (am, bm) = (acc.motion(), b.motion());
        for k in 0..n_fade {
            let at = na - n_fade + k;
            let (done, rest) = values.split_at_mut(at * nc);
            let near = if at > 0 { &done[(at - 1) * nc..] } else { am.frame(at) };
            mixer.blend(
                am.frame(at),
                bm.frame(k),
                fade(k, n_fade, opts.curve),
                near,
                &mut rest[..nc],
            );
        }
        values[na * nc..].copy_from_slice(&bm.values()[n_fade * nc..]);
        let motion = Motion::with_frames(ft, n_out, nc, values)?;
        acc = Bvh::new(first.skeleton().clone(), motion)?;
        seams.push(Seam { clip: i, name: name.to_string(), prepared, crossfade: n_fade, aligned });
        prev_len = nb;
        prev_name = name;
    }
    Ok((acc, ConcatReport { up, up_found, seams }))
}
