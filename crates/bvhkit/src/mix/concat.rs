//! Concatenate clips of one skeleton, each continuing from where the one
//! before ends, with an optional crossfade.
//!
//! Clip `B` after clip `A` (`A` may itself be a concatenation):
//! 1. `B` is [`prepare`]d: the same joints in the same tree (else an error
//!    naming the first difference), resampled to `A`'s rate when the rates
//!    differ, converted into `A`'s channel layout when its channels differ
//!    (other rotation orders are converted, never refused).
//! 2. With a crossfade of `N` frames and a search span `S`
//!    ([`ConcatOptions::search`], default 0.5 s), the seam is moved to
//!    match the gait phase: up to `S` frames are dropped from the end of
//!    `A` and from the start of `B`, chosen so that the `N` frames that
//!    overlap are most alike (every joint's position from the carrier,
//!    facing one way, summed over the overlap: poses and velocities). A
//!    hard cut keeps every frame.
//! 3. Unless the position is kept, `B` is moved on the ground and turned
//!    about the up axis (its carrier, the joint that carries the travel,
//!    [`root::carrier`] of `A`) to continue
//!    `A`: `B`'s frame `k` takes the place of frame `n_A - max(N, 1) + k`
//!    of `A`. [`Heading::Travel`] (default): with a crossfade, the turn is the
//!    one between the directions of travel over a whole gait cycle at the
//!    end of `A` and at the start of `B` (the sway of the gait cancels over
//!    a cycle), when both walk; otherwise the one between the hip and
//!    shoulder lines summed over the overlap, unless those lines swing over
//!    either overlap (a kick, a dance: then no turn, `B` keeps its own
//!    heading); the shift puts `B`'s feet that are planted through both
//!    overlaps (`mix::feet`) on `A`'s, or, without such feet, `B`'s
//!    carrier's mean over the overlap on `A`'s (without a crossfade: `B`'s
//!    first frame's carrier exactly on `A`'s last). [`Heading::Frame`]:
//!    the facing of one frame each (`A`'s frame `n_A - max(N, 1)` and
//!    `B`'s first), the carrier on the carrier. Heights are kept. Only the
//!    carrier's channels change; its angles go on from `A`'s frame that
//!    `B`'s first replaces (closest to it, then to the frame before), so
//!    the output does not flip to another Euler triple of the same
//!    rotation at the seam (a 180° turn did: 180° on every rotation
//!    channel of the hips between the crossfade and `B`).
//! 4. The output is `A`'s frames `0 .. n_A - N`, then `N` crossfade frames
//!    (frame `k` mixes `A`'s frame `n_A - N + k` with `B`'s frame `k` at the
//!    weight [`fade`]`(k, N)`, by [`Mixer::blend`]: per-joint SLERP, position
//!    channels linear), then `B`'s frames `N ..`: `n_A + n_B - N` frames.
//!    Outside the crossfade every frame is a copy of `A`'s or the aligned
//!    `B`'s, bit for bit.
//! 5. Unless the position is kept, the feet planted through both overlaps
//!    are locked over the crossfade by two-bone IK (`mix::feet`: their
//!    contact point at the mix of its positions in the two clips at the
//!    crossfade's weight; only the thigh, knee and ankle rotation channels
//!    of the crossfade's frames change).
//!
//! A crossfade longer than either clip is refused. The output has the
//! first clip's skeleton and frame time.

use std::fmt;

use super::weights::{Curve, fade};
use super::{
    GroundMove, Mixer, Prepared, Span, TravelHeading, align, feet, fit_ground_move, need_frames,
    pose_features, prepare, up_axis,
};
use crate::bvh::Bvh;
use crate::edit::axes::SignedAxis;
use crate::edit::root::{self, Setup, move_carrier_after};
use crate::error::{Error, Result};
use crate::motion::Motion;

/// How [`concat()`] turns a clip to continue the one before.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Heading {
    /// With a crossfade, from the travel over a whole gait cycle on each
    /// side when both clips walk, else from the hip and shoulder lines
    /// summed over the frames that overlap (one frame each without a
    /// crossfade); the carriers' means over the overlap laid onto each
    /// other (see the module docs): a straight walk stays straight.
    #[default]
    Travel,
    /// From one frame's left/right pairs each (the first frame of the
    /// overlap and the clip's first), which sway with the gait; the clip's
    /// carrier lands exactly on the other's.
    Frame,
}

/// Options of [`concat()`].
#[derive(Clone, Debug, PartialEq)]
pub struct ConcatOptions {
    /// The crossfade at each seam (0 frames: none).
    pub crossfade: Span,
    /// With a crossfade, how far the seam may move to match the gait phase:
    /// up to this many frames are dropped from the end of the clip before
    /// and from the start of the next, chosen so that the crossfaded frames
    /// are most alike (0: the seam stays where the clips meet). Default
    /// 0.5 s. A hard cut (no crossfade) keeps every frame.
    pub search: Span,
    /// How a clip is turned to continue the one before.
    pub heading: Heading,
    /// The crossfade's weight curve (smoothstep by default).
    pub curve: Curve,
    /// Keep every clip where it is instead of moving it to continue from
    /// the clip before.
    pub keep_position: bool,
    /// The up axis for the alignment; `None`: detected from the first
    /// clip ([`super::up_axis`]), Y when none is found.
    pub up: Option<SignedAxis>,
}

impl Default for ConcatOptions {
    fn default() -> ConcatOptions {
        ConcatOptions {
            crossfade: Span::Frames(0),
            search: Span::Seconds(0.5),
            heading: Heading::Travel,
            curve: Curve::Smoothstep,
            keep_position: false,
            up: None,
        }
    }
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
    /// Frames dropped by the search for the gait phase
    /// ([`ConcatOptions::search`]): from the end of the output before the
    /// seam, and from the start of this clip.
    pub dropped: (usize, usize),
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
            if s.dropped != (0, 0) {
                parts.push(format!(
                    "seam moved to match the gait: {} frames dropped before it, {} of this clip",
                    s.dropped.0, s.dropped.1
                ));
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
    let n_search = if n_fade > 0 { opts.search.frames(ft) } else { 0 };
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
        // The seam by gait phase: frames dropped from the end of the output
        // so far and from the start of `b`.
        let (cut_a, cut_b) = if n_search > 0 {
            let setup =
                Setup::new(&acc).map_err(|e| Error::invalid(format!("{name}: {}", e.message())))?;
            search_seam(
                &setup,
                acc.motion(),
                b.motion(),
                n_fade,
                n_search.min(prev_len - n_fade),
                n_search.min(nb - n_fade),
                up,
                0.0,
            )
        } else {
            (0, 0)
        };
        if cut_a > 0 {
            let keep = acc.motion().n_frames() - cut_a;
            acc = crate::edit::frames::range(&acc, 0..keep)?;
        }
        let b = if cut_b > 0 { crate::edit::frames::range(&b, cut_b..nb)? } else { b };
        let nb = b.motion().n_frames();
        let na = acc.motion().n_frames();
        // The feet planted through both overlaps: the alignment lays them
        // onto each other and the crossfade keeps them there.
        let legs = if n_fade >= 2 && !opts.keep_position {
            feet::planted_legs(&acc, na - n_fade, &b, 0, n_fade, up)
        } else {
            Vec::new()
        };
        let (b, aligned) = if opts.keep_position {
            (b, None)
        } else {
            let fa = na - n_fade.max(1);
            let anchor: Vec<usize> = legs.iter().map(|l| l.leg.point).collect();
            let (moved, g) = align_fit(&acc, fa, &b, n_fade.max(1), opts.heading, up, &anchor)
                .map_err(|e| Error::invalid(format!("{name}: {}", e.message())))?;
            (moved, Some((fa, g)))
        };
        let n_out = na + nb - n_fade;
        let mut values = Vec::with_capacity(n_out * nc);
        values.extend_from_slice(&acc.motion().values()[..(na - n_fade) * nc]);
        values.resize(n_out * nc, 0.0);
        let (am, bm) = (acc.motion(), b.motion());
        let weights: Vec<f64> = (0..n_fade).map(|k| fade(k, n_fade, opts.curve)).collect();
        for (k, &w) in weights.iter().enumerate() {
            let at = na - n_fade + k;
            let (done, rest) = values.split_at_mut(at * nc);
            let near = if at > 0 { &done[(at - 1) * nc..] } else { am.frame(at) };
            mixer.blend(am.frame(at), bm.frame(k), w, near, &mut rest[..nc]);
        }
        feet::lock_crossfade(
            &acc,
            na - n_fade,
            &b,
            &weights,
            &legs,
            up,
            &mut values[(na - n_fade) * nc..na * nc],
        );
        values[na * nc..].copy_from_slice(&bm.values()[n_fade * nc..]);
        let motion = Motion::with_frames(ft, n_out, nc, values)?;
        acc = Bvh::new(first.skeleton().clone(), motion)?;
        seams.push(Seam {
            clip: i,
            name: name.to_string(),
            prepared,
            crossfade: n_fade,
            dropped: (cut_a, cut_b),
            aligned,
        });
        prev_len = nb;
        prev_name = name;
    }
    Ok((acc, ConcatReport { up, up_found, seams }))
}

/// `b` moved on the ground to continue `a` from its frame `fa`: over the
/// `len` frames where they overlap ([`Heading::Travel`],
/// [`fit_ground_move`]) or from the single frames `fa` and 0
/// ([`Heading::Frame`], [`align`]).
fn align_fit(
    a: &Bvh,
    fa: usize,
    b: &Bvh,
    len: usize,
    heading: Heading,
    up: SignedAxis,
    anchor: &[usize],
) -> Result<(Bvh, GroundMove)> {
    if heading == Heading::Frame {
        return align(a, fa, b, 0, up);
    }
    let carrier = root::carrier(a).ok_or_else(|| Error::invalid("the skeleton has no joints"))?;
    let sa = Setup::with_carrier(a, carrier)?;
    let sb = Setup::with_carrier(b, carrier)?;
    // With a crossfade, the heading of the travel over whole gait cycles
    // at the end of `a` and the start of `b`.
    let travel = if len > 1 { TravelHeading::Continue } else { TravelHeading::None };
    let (g, _) = fit_ground_move(&sa, a.motion(), fa, &sb, b.motion(), 0, len, up, travel, anchor);
    let before = Some(a.motion().frame(fa));
    let moved = move_carrier_after(b, &sb, before, |_, _| g.transform).map_err(|e| {
        Error::invalid(format!("{} (keep the clip where it is instead)", e.message()))
    })?;
    Ok((moved, g))
}

/// The seam by gait phase: how many frames to drop from the end of `a`
/// (at most `max_a`) and from the start of `b` (at most `max_b`) so that
/// the `n_fade` frames that overlap in the crossfade are most alike, pose
/// by pose ([`pose_features`]: the sum of squared joint distances over the
/// overlap, which compares velocities as well as poses). With a
/// `velocity` weight `v > 0`, the frame-to-frame steps of the two overlaps
/// are compared as well, their differences times `v` (a loop passes its
/// crossfade's length: a velocity difference held over the crossfade):
/// a seam between poses that look alike but move differently costs more.
/// Ties keep the fewest frames dropped.
#[allow(clippy::too_many_arguments)]
pub(crate) fn search_seam(
    setup: &Setup,
    a: &Motion,
    b: &Motion,
    n_fade: usize,
    max_a: usize,
    max_b: usize,
    up: SignedAxis,
    velocity: f64,
) -> (usize, usize) {
    let n = setup.fk.len();
    let na = a.n_frames();
    let start_a = na - max_a - n_fade;
    let fa = pose_features(setup, a, start_a..na, up);
    let fb = pose_features(setup, b, 0..max_b + n_fade, up);
    // At most about 16 frames of the overlap compared.
    let step = n_fade.div_ceil(16).max(1);
    let mut best = (f64::INFINITY, 0, 0);
    for cut_a in 0..=max_a {
        // The overlap of `a`: frames `na - cut_a - n_fade ..`.
        let oa = na - cut_a - n_fade - start_a;
        for cut_b in 0..=max_b {
            let mut cost = 0.0;
            for k in (0..n_fade).step_by(step) {
                let (x, y) = (&fa[(oa + k) * n..][..n], &fb[(cut_b + k) * n..][..n]);
                cost += x.iter().zip(y).map(|(p, q)| (*p - *q).length_squared()).sum::<f64>();
                if velocity > 0.0 && k + 1 < n_fade {
                    let (x1, y1) = (&fa[(oa + k + 1) * n..][..n], &fb[(cut_b + k + 1) * n..][..n]);
                    let dv = |j: usize| ((x1[j] - x[j]) - (y1[j] - y[j])) * velocity;
                    cost += (0..n).map(|j| dv(j).length_squared()).sum::<f64>();
                }
                if cost >= best.0 {
                    break;
                }
            }
            if cost < best.0 {
                best = (cost, cut_a, cut_b);
            }
        }
    }
    (best.1, best.2)
}
