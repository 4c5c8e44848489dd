//! A file every reader draws the same way (`--portable`).
//!
//! Readers disagree on what a position channel means: three.js (and the
//! format texts) add it to the joint's `OFFSET`, Blender, bvhio and bvhkit
//! (by default) let it replace the `OFFSET` component it names. The two
//! readings agree exactly when every `OFFSET` component a position channel
//! names is zero, or when a joint has no position channels. [`portable`]
//! rewrites a clip into that form without changing the world motion:
//!
//! - a position channel of a joint below a root whose translation
//!   component is the same in every frame is removed: its value goes into
//!   the `OFFSET` component (for the usual "six channels on every joint"
//!   export, the constant channels only repeat the `OFFSET`, which keeps
//!   its value);
//! - every other position channel (a root's, a carrier's under a fixed
//!   root, a joint whose bone length moves) is kept and the `OFFSET`
//!   component it names is set to zero, the channel carrying the whole
//!   translation (with [`PositionChannels::Add`] the `OFFSET` component is
//!   added into the channel's values).
//!
//! Rotation channels, names, End Sites and the frame time are kept bit for
//! bit, and the remaining channels keep their order. "The same in every
//! frame" means equal as numbers, so the translation of every joint in
//! every frame is the same `f64` before and after, in either reading of the
//! output; world positions are therefore those of the input (tested on
//! every corpus file against `Kinematics`, and against three.js's
//! `BVHLoader` by the CLI tests).
//!
//! A zero `OFFSET` makes a zero-length bone in the rest skeleton: a DCC
//! that builds its armature from the `OFFSET`s (Blender, MotionBuilder,
//! Maya) shows a joint with varying position channels at its parent's head
//! in the rest pose (the root at the origin, which is usual); the animated
//! pose is right. See `docs/format.md`.

use glam::DVec3;

use super::FrameMap;
use super::rebuild_skeleton;
use crate::bvh::Bvh;
use crate::channel::Channel;
use crate::error::Result;
use crate::kinematics::PositionChannels;
use crate::skeleton::{JointId, Skeleton};

/// What [`portable`] changed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PortableReport {
    /// Constant position channels below a root removed whose value was
    /// already the `OFFSET` component.
    pub dropped: usize,
    /// Constant position channels below a root removed whose value
    /// replaced the `OFFSET` component (the rest skeleton changed).
    pub folded: usize,
    /// The joints whose position channels were kept, with the number of
    /// `OFFSET` components that were not zero and now are.
    pub zeroed: Vec<(JointId, usize)>,
}

impl PortableReport {
    /// Whether the clip was already portable.
    pub fn is_empty(&self) -> bool {
        self.dropped == 0 && self.folded == 0 && self.zeroed.iter().all(|z| z.1 == 0)
    }

    /// What changed in a clip of `skeleton` (the input of [`portable`]),
    /// as `--portable` says it: `None` when nothing did.
    pub fn describe(&self, skeleton: &Skeleton) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let names = skeleton.display_names();
        let zeroed: Vec<&str> =
            self.zeroed.iter().filter(|z| z.1 > 0).map(|z| names[z.0.index()].as_str()).collect();
        let mut shown = zeroed.iter().take(8).copied().collect::<Vec<_>>().join(", ");
        if zeroed.len() > 8 {
            shown.push_str(&format!(" and {} more", zeroed.len() - 8));
        }
        let s = |n: usize| if n == 1 { "" } else { "s" };
        let ones = if self.folded == 1 { "one" } else { "ones" };
        Some(format!(
            "--portable: {} constant position channel{} that repeat{} the OFFSET dropped, {} \
             constant {ones} folded into the OFFSET, OFFSET zeroed under the varying position \
             channels of {} joint{}{}",
            self.dropped,
            s(self.dropped),
            if self.dropped == 1 { "s" } else { "" },
            self.folded,
            zeroed.len(),
            s(zeroed.len()),
            if zeroed.is_empty() { String::new() } else { format!(" ({shown})") }
        ))
    }
}

/// Where an output channel's values come from.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// The input channel, bit for bit.
    Copy(usize),
    /// The input channel plus a constant (an `OFFSET` component read with
    /// [`PositionChannels::Add`]).
    Add(usize, f64),
}

/// How far [`portable`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Everything the module docs say (`--portable`).
    Full,
    /// Only the constant position channels below a root that repeat the
    /// `OFFSET` are removed; everything else is kept bit for bit (what
    /// `bvh retarget` always does: the target's "six channels on every
    /// joint" would otherwise make three.js double the bones and pybvh
    /// refuse the file).
    Repeats,
}

/// The frames' side of [`portable`] for a clip that is never held whole:
/// [`Observer::observe`] every frame, then [`Observer::plan`] gives the map
/// (run it over the same frames again) and the report.
#[derive(Clone, Debug)]
pub struct Observer {
    skeleton: Skeleton,
    mode: PositionChannels,
    first: Option<Vec<f64>>,
    constant: Vec<bool>,
}

impl Observer {
    /// An observer of frames of `skeleton`, position channels read as `mode`.
    pub fn new(skeleton: &Skeleton, mode: PositionChannels) -> Observer {
        Observer {
            skeleton: skeleton.clone(),
            mode,
            first: None,
            constant: vec![true; skeleton.n_channels()],
        }
    }

    /// Takes one frame into account.
    ///
    /// # Panics
    /// When the frame has the wrong length.
    pub fn observe(&mut self, frame: &[f64]) {
        match &self.first {
            None => self.first = Some(frame.to_vec()),
            Some(first) => {
                for ((c, a), b) in self.constant.iter_mut().zip(first).zip(frame) {
                    *c &= a == b;
                }
            }
        }
    }

    /// The map to the portable layout of the frames observed, and what it
    /// changes.
    ///
    /// # Errors
    /// Never for a valid skeleton.
    pub fn plan(&self, scope: Scope) -> Result<(PortableMap, PortableReport)> {
        let mode = self.mode;
        let mut report = PortableReport::default();
        let mut sources = Vec::with_capacity(self.skeleton.n_channels());
        let out = rebuild_skeleton(&self.skeleton, |id, j| {
            let mut offset = j.offset();
            let mut channels: Vec<Channel> = Vec::with_capacity(j.channels().len());
            let mut zeroed = 0;
            let mut any_kept = false;
            for (k, &c) in j.channels().iter().enumerate() {
                let i = j.first_channel() + k;
                if !c.is_position() {
                    channels.push(c);
                    sources.push(Source::Copy(i));
                    continue;
                }
                let a = c.axis().index();
                let o = offset[a];
                let add = match mode {
                    PositionChannels::Replace => 0.0,
                    PositionChannels::Add => o,
                };
                // The translation component, the same in every frame.
                let constant = match &self.first {
                    None => Some(o),
                    Some(f) => self.constant[i].then_some(f[i] + add),
                };
                match constant {
                    Some(t) if j.parent().is_some() && (t == o || scope == Scope::Full) => {
                        if t == o {
                            report.dropped += 1;
                        } else {
                            report.folded += 1;
                            set(&mut offset, a, t);
                        }
                    }
                    _ if scope == Scope::Repeats => {
                        channels.push(c);
                        sources.push(Source::Copy(i));
                    }
                    _ => {
                        any_kept = true;
                        if o != 0.0 {
                            zeroed += 1;
                        }
                        set(&mut offset, a, 0.0);
                        channels.push(c);
                        sources.push(if add == 0.0 {
                            Source::Copy(i)
                        } else {
                            Source::Add(i, add)
                        });
                    }
                }
            }
            if any_kept {
                report.zeroed.push((id, zeroed));
            }
            Ok((offset, channels))
        })?;
        Ok((PortableMap { skeleton: out, sources }, report))
    }
}

/// The per-frame map [`Observer::plan`] gives.
#[derive(Clone, Debug)]
pub struct PortableMap {
    skeleton: Skeleton,
    sources: Vec<Source>,
}

impl FrameMap for PortableMap {
    fn output_skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    fn map(&mut self, input: &[f64], output: &mut [f64]) {
        for (o, s) in output.iter_mut().zip(&self.sources) {
            *o = match *s {
                Source::Copy(i) => input[i],
                Source::Add(i, a) => a + input[i],
            };
        }
    }
}

/// `bvh` with position channels every reader reads alike (see the module
/// docs; [`Scope::Repeats`]: only the repeats of the `OFFSET` removed);
/// `mode` is how the input's position channels are read.
///
/// # Errors
/// Never for a valid clip.
///
/// # Example
/// ```
/// use bvhkit::{Bvh, PositionChannels};
/// use bvhkit::edit::portable::{portable, Scope};
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 1 90 0
///     CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
///     JOINT Spine { OFFSET 0 10 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
///     End Site { OFFSET 0 5 0 } } }
///     MOTION Frames: 2 Frame Time: 0.1
///     1 90 0 0 0 0 0 10 0 0 0 5
///     2 91 0 0 0 0 0 10 0 0 0 6")?;
/// let (out, report) = portable(&bvh, PositionChannels::Replace, Scope::Full)?;
/// assert_eq!(out.skeleton().joints()[0].offset().to_array(), [0.0, 0.0, 0.0]);
/// assert_eq!(out.skeleton().joints()[1].channels().len(), 3); // three rotations
/// assert_eq!(out.motion().frame(1), &[2.0, 91.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 6.0]);
/// assert_eq!(report.dropped, 3);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn portable(bvh: &Bvh, mode: PositionChannels, scope: Scope) -> Result<(Bvh, PortableReport)> {
    let mut obs = Observer::new(bvh.skeleton(), mode);
    for f in bvh.motion().frames() {
        obs.observe(f);
    }
    let (mut map, report) = obs.plan(scope)?;
    Ok((super::map_frames(bvh, &mut map)?, report))
}

/// Sets component `a` (0, 1, 2) of `v`.
fn set(v: &mut DVec3, a: usize, x: f64) {
    match a {
        0 => v.x = x,
        1 => v.y = x,
        _ => v.z = x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kinematics;

    const CARRIER: &str = "HIERARCHY ROOT R { OFFSET 5 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
        JOINT Hips { OFFSET 0 90 -3 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
        JOINT Leg { OFFSET 10 -40 0 CHANNELS 6 Zrotation Xrotation Yrotation Xposition Yposition Zposition
        End Site { OFFSET 0 -40 0 } } } }
        MOTION Frames: 3 Frame Time: 0.1
        5 0 0 0 0 0 1 88 -3 10 0 0 30 0 0 10 -40 2
        5 0 0 0 0 0 2 89 -3 20 0 0 40 0 0 10 -40 2
        5 0 0 0 0 0 3 90 -3 30 0 0 50 0 0 10 -40 2";

    fn world(bvh: &Bvh, mode: PositionChannels) -> Vec<DVec3> {
        Kinematics::new(bvh.skeleton(), mode).positions_all(bvh.motion())
    }

    #[test]
    fn drops_repeats_folds_constants_zeroes_varying_and_keeps_world_positions() {
        let bvh = Bvh::parse(CARRIER).unwrap();
        let (out, r) = portable(&bvh, PositionChannels::Replace, Scope::Full).unwrap();
        let j = out.skeleton().joints();
        // The root keeps its constant channels, its OFFSET zeroed.
        assert_eq!(j[0].channels().len(), 6);
        assert_eq!(j[0].offset(), DVec3::ZERO);
        // Hips: X and Y vary (zeroed), Z repeats the OFFSET (dropped).
        assert_eq!(j[1].channels()[..2], [Channel::Xposition, Channel::Yposition]);
        assert_eq!(j[1].channels().len(), 5);
        assert_eq!(j[1].offset(), DVec3::new(0.0, 0.0, -3.0));
        // Leg: constant X, Y repeat the OFFSET; constant Z = 2 is folded.
        assert_eq!(j[2].channels(), &[Channel::Zrotation, Channel::Xrotation, Channel::Yrotation]);
        assert_eq!(j[2].offset(), DVec3::new(10.0, -40.0, 2.0));
        assert_eq!((r.dropped, r.folded), (3, 1));
        assert_eq!(r.zeroed, vec![(JointId::new(0), 1), (JointId::new(1), 1)]);
        let before = world(&bvh, PositionChannels::Replace);
        // Both readings of the output give the input's world positions, exactly.
        assert_eq!(world(&out, PositionChannels::Replace), before);
        assert_eq!(world(&out, PositionChannels::Add), before);
        // Again: nothing left to do.
        let (again, r2) = portable(&out, PositionChannels::Replace, Scope::Full).unwrap();
        assert!(r2.is_empty(), "{r2:?}");
        assert_eq!(again, out);
    }

    #[test]
    fn add_mode_moves_the_offset_into_the_channels() {
        let bvh = Bvh::parse(CARRIER).unwrap();
        let (out, _) = portable(&bvh, PositionChannels::Add, Scope::Full).unwrap();
        let before = world(&bvh, PositionChannels::Add);
        assert_eq!(world(&out, PositionChannels::Replace), before);
        assert_eq!(world(&out, PositionChannels::Add), before);
        // The root's X channel now holds OFFSET + value.
        assert_eq!(out.motion().frame(0)[0], 10.0);
    }

    #[test]
    fn repeats_scope_only_drops_repeats_of_the_offset() {
        let bvh = Bvh::parse(CARRIER).unwrap();
        let (out, r) = portable(&bvh, PositionChannels::Replace, Scope::Repeats).unwrap();
        let j = out.skeleton().joints();
        assert_eq!(
            (j[0].channels().len(), j[1].channels().len(), j[2].channels().len()),
            (6, 5, 4)
        );
        assert_eq!(j[0].offset(), DVec3::new(5.0, 0.0, 0.0));
        assert_eq!(j[2].offset(), DVec3::new(10.0, -40.0, 0.0));
        assert_eq!((r.dropped, r.folded), (3, 0));
        assert_eq!(world(&out, PositionChannels::Replace), world(&bvh, PositionChannels::Replace));
    }
}
