//! Change the channel layout: every joint three rotation channels in one
//! order, position channels dropped or added.
//!
//! Every joint that is not an End Site gets its position channels (when
//! [`Positions`] gives it any) as `Xposition Yposition Zposition`, then
//! `order`'s three rotation channels: with [`Positions::Root`], the usual
//! "root six, joints three". A channel that exists in both layouts (for
//! rotation channels: with the same rotation axes in the same order) is
//! copied bit for bit; a new position channel holds the `OFFSET` component
//! (0 with [`PositionChannels::Add`]); a joint without rotation channels
//! gets three zeros; every other joint's local rotation (the product of
//! its old channels) is written in `order`, closest to the previous output
//! frame (the first frame: the principal solution), as [`super::order`]
//! writes it (the same lane kernel, on rayon's pool over groups of joints
//! for a run of frames). Rotations are always kept (three channels hold
//! any rotation), within rounding. A translation is kept exactly when its
//! joint keeps or gains position channels; when a joint loses position
//! channels, its translation falls back to the `OFFSET` and the world
//! motion changes: [`LayoutMap::max_position_error`] reports the largest
//! world position difference over the frames mapped so far,
//! [`LayoutMap::losses`] each such joint's own part and
//! [`LayoutMap::lost_motion`] the sentence `bvh edit` refuses such a layout
//! with (unless `--drop-motion`) when a position moves by more than
//! [`LOST_MOTION`] of the skeleton's size. Rotations
//! being kept, that difference is, for each joint that lost its channels
//! and everything below it, the sum of the lost translations
//! (`OFFSET` minus the old translation) turned by the old world rotation
//! of each one's parent ([`crate::Kinematics::subset`] over the ancestors
//! of those joints only); the tests compare it with world positions by
//! 4x4 matrices. Names and offsets are kept bit for bit.
//!
//! # Implementation notes
//!
//! (channels copied, new ones constant, changed axes through `Rewrite`; its
//! largest world position error from the lost translations turned by their
//! parents' world rotations, a `Kinematics::subset` of the ancestors of the
//! joints that lose channels).

use glam::{DAffine3, DVec3};

use super::order::{Changed, Rewrite, rotation_channel};
use super::pose::JointChannels;
use super::{FrameMap, rebuild_skeleton};
use crate::channel::Channel;
use crate::error::Result;
use crate::kinematics::{FkScratch, Kinematics, PositionChannels};
use crate::rotation::RotationOrder;
use crate::skeleton::{JointId, Skeleton};

/// The world position change, as a fraction of the skeleton's size, below
/// which dropping position channels loses no motion
/// ([`LayoutMap::lost_motion`]): one millionth, 1.7 µm on a 1.7 m figure,
/// far under any capture's noise and the rounding of files written to six
/// decimals (MakeHuman's position channels differ from their `OFFSET`s in
/// the sixth decimal, moving joints by up to 4e-6, 2.4e-7 of its size),
/// yet a thousand times the 1e-9 every
/// transform keeps, so no real travel passes for none.
pub const LOST_MOTION: f64 = 1e-6;

/// Which joints get position channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Positions {
    /// Joints keep position channels exactly when they had some.
    Keep,
    /// Roots only (the usual "root six, joints three").
    Root,
    /// Every joint.
    All,
    /// No joint (the clip no longer moves through space).
    None,
}

/// A [`FrameMap`] to a uniform channel layout (see the module docs).
///
/// # Example
/// ```
/// use bvhkit::{Bvh, PositionChannels};
/// use bvhkit::edit::{map_frames, layout::{LayoutMap, Positions}};
/// use bvhkit::rotation::RotationOrder;
/// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 4 Yposition Xrotation Zrotation Yrotation
///     JOINT B { OFFSET 0 1 0 CHANNELS 1 Zrotation End Site { OFFSET 0 1 0 } } }
///     MOTION Frames: 1 Frame Time: 0.1 5 10 0 0 30")?;
/// let mut map = LayoutMap::new(bvh.skeleton(), RotationOrder::ZXY, Positions::Root, PositionChannels::Replace)?;
/// let out = map_frames(&bvh, &mut map)?;
/// assert_eq!(out.skeleton().n_channels(), 9);
/// assert_eq!(out.motion().frame(0)[..3], [0.0, 5.0, 0.0]); // X and Z from the OFFSET
/// assert_eq!(map.max_position_error(), 0.0);
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct LayoutMap {
    skeleton: Skeleton,
    /// The output frame's values that no input value feeds (new position
    /// channels, the rotation channels of joints that had none); every
    /// other value is written each frame.
    base: Vec<f64>,
    /// (output channel, input channel) pairs copied bit for bit, by
    /// output channel.
    copy: Vec<(usize, usize)>,
    /// The joints whose rotation axes change.
    rewrite: Rewrite,
    /// The joints that lose their position channels, when some do, and
    /// the buffers of one frame at a time.
    lost: Option<Lost>,
    scratch: Option<LostScratch>,
    max_error: f64,
    /// The largest world position difference of each joint in
    /// [`Lost::joints`] so far.
    worst: Vec<f64>,
}

/// A joint that loses position channels in a [`LayoutMap`], and what that
/// costs ([`LayoutMap::losses`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutLoss {
    /// The joint (in the input skeleton; the output keeps the order).
    pub joint: JointId,
    /// The position channels it loses.
    pub channels: Vec<Channel>,
    /// The largest distance by which the loss of its own channels moves
    /// it (and everything below it), over the frames mapped so far.
    pub max_error: f64,
    /// The joints that move with it: itself and every joint below it, End
    /// Sites included (a range of file order).
    pub moved: std::ops::Range<usize>,
}

/// What [`LayoutMap`] needs to measure the world position error of the
/// joints that lose their position channels.
#[derive(Clone, Debug)]
struct Lost {
    /// The ancestors of those joints (their parents and up), compiled on a
    /// compact frame gathered by `gather`.
    fk: Kinematics,
    gather: Vec<usize>,
    joints: Vec<LostJoint>,
    mode: PositionChannels,
    /// The joints below each of `joints` (its subtree's end).
    ends: Vec<usize>,
}

#[derive(Clone, Copy, Debug)]
struct LostJoint {
    id: JointId,
    /// The joint's input channels (its old translation).
    channels: JointChannels,
    /// Its parent's index in the compact program, if any.
    parent: Option<usize>,
    /// The nearest joint above it that loses its channels too (an index
    /// into [`Lost::joints`]), whose difference it carries.
    above: Option<usize>,
}

/// Buffers of one [`Lost::error`] caller.
#[derive(Clone, Debug)]
struct LostScratch {
    compact: Vec<f64>,
    fk: FkScratch,
    world: Vec<DAffine3>,
    diff: Vec<DVec3>,
}

impl Lost {
    fn new(skeleton: &Skeleton, lost: &[usize], mode: PositionChannels) -> Lost {
        let parents: Vec<Option<usize>> =
            skeleton.joints().iter().map(|j| j.parent().map(|p| p.index())).collect();
        let mut keep = vec![false; skeleton.len()];
        for &j in lost {
            let mut p = parents[j];
            while let Some(i) = p {
                keep[i] = true;
                p = parents[i];
            }
        }
        let kept: Vec<usize> = (0..skeleton.len()).filter(|&i| keep[i]).collect();
        let (fk, gather) = Kinematics::new(skeleton, mode).subset(&kept);
        let joints = lost
            .iter()
            .map(|&j| {
                let mut above = None;
                let mut p = parents[j];
                while let Some(i) = p {
                    if let Some(k) = lost.iter().position(|&l| l == i) {
                        above = Some(k);
                        break;
                    }
                    p = parents[i];
                }
                LostJoint {
                    id: JointId::new(j),
                    channels: JointChannels::of(skeleton.joint(JointId::new(j))),
                    parent: parents[j].and_then(|p| kept.iter().position(|&k| k == p)),
                    above,
                }
            })
            .collect();
        let ends = lost.iter().map(|&j| skeleton.subtree_end(JointId::new(j))).collect();
        Lost { fk, gather, joints, mode, ends }
    }

    fn scratch(&self) -> LostScratch {
        LostScratch {
            compact: vec![0.0; self.gather.len()],
            fk: self.fk.scratch(),
            world: vec![DAffine3::IDENTITY; self.fk.len()],
            diff: vec![DVec3::ZERO; self.joints.len()],
        }
    }

    /// The largest world position difference in the input frame `frame`
    /// when the lost joints' translations fall back to their `OFFSET`s;
    /// each lost joint's own in `worst`, when it is larger.
    fn error(&self, frame: &[f64], s: &mut LostScratch, worst_of: &mut [f64]) -> f64 {
        for (c, &g) in s.compact.iter_mut().zip(&self.gather) {
            *c = frame[g];
        }
        self.fk.world_with(&s.compact, &mut s.fk, &mut s.world);
        let mut worst: f64 = 0.0;
        for (k, j) in self.joints.iter().enumerate() {
            let lost = j.channels.offset - j.channels.translation(frame, self.mode);
            let turned = match j.parent {
                Some(p) => s.world[p].matrix3 * lost,
                None => lost,
            };
            let d = match j.above {
                Some(a) => s.diff[a] + turned,
                None => turned,
            };
            s.diff[k] = d;
            worst_of[k] = worst_of[k].max(turned.length());
            worst = worst.max(d.length());
        }
        worst
    }
}

impl LayoutMap {
    /// Every joint to three rotation channels in `order`, position channels
    /// as `positions` says; position channels are read as `mode` says.
    ///
    /// # Errors
    /// Never for a valid skeleton.
    pub fn new(
        skeleton: &Skeleton,
        order: RotationOrder,
        positions: Positions,
        mode: PositionChannels,
    ) -> Result<LayoutMap> {
        let mut lost = Vec::new();
        let out = rebuild_skeleton(skeleton, |id, j| {
            if j.is_end_site() {
                return Ok((j.offset(), Vec::new()));
            }
            let had = j.channels().iter().any(|c| c.is_position());
            let gets = match positions {
                Positions::Keep => had,
                Positions::Root => j.parent().is_none(),
                Positions::All => true,
                Positions::None => false,
            };
            let mut ch = Vec::with_capacity(6);
            if gets {
                ch.extend([Channel::Xposition, Channel::Yposition, Channel::Zposition]);
            }
            ch.extend(order.axes().map(rotation_channel));
            // Losing a channel whose value differs from what the OFFSET gives
            // changes the motion; measured per frame.
            if had && !gets {
                lost.push(id.index());
            }
            Ok((j.offset(), ch))
        })?;
        let mut base = vec![0.0; out.n_channels()];
        let mut copy = Vec::new();
        let mut changed = Vec::new();
        for (ji, jo) in skeleton.joints().iter().zip(out.joints()) {
            let (ci, co) = (JointChannels::of(ji), JointChannels::of(jo));
            for k in 0..co.n_pos as usize {
                let (o, a) = (co.pos_index[k], co.pos_axes[k]);
                match ci.pos_axes[..ci.n_pos as usize].iter().position(|&b| b == a) {
                    Some(i) => copy.push((o, ci.pos_index[i])),
                    None if mode == PositionChannels::Replace => base[o] = co.offset[a.index()],
                    None => base[o] = 0.0,
                }
            }
            if co.n_rot == 0 || ci.n_rot == 0 {
                // No rotation in: the identity, three zeros out.
                continue;
            }
            if ci.rotation_axes() == co.rotation_axes() {
                copy.extend(co.rot_index.iter().copied().zip(ci.rot_index));
            } else {
                changed.push(Changed::new(&ci, &co));
            }
        }
        copy.sort_unstable();
        let n_lost = lost.len();
        let lost = (!lost.is_empty()).then(|| Lost::new(skeleton, &lost, mode));
        Ok(LayoutMap {
            worst: vec![0.0; n_lost],
            scratch: lost.as_ref().map(Lost::scratch),
            lost,
            skeleton: out,
            base,
            copy,
            rewrite: Rewrite::new(changed),
            max_error: 0.0,
        })
    }

    /// Whether the new layout drops position channels, so that the world
    /// motion may change.
    pub fn is_lossy(&self) -> bool {
        self.lost.is_some()
    }

    /// The largest distance between a joint's world position before and
    /// after, over every frame mapped so far (0 when nothing changed).
    pub fn max_position_error(&self) -> f64 {
        self.max_error
    }

    /// What the layout loses, when the world position of some joint moved
    /// by more than [`LOST_MOTION`] of the skeleton's size
    /// ([`super::rest_height`]) over the frames mapped so far: the joints
    /// that lose channels and move, the largest first (five of them), which
    /// channels, how far and how many joints move with each, and the
    /// largest error against the size; `None` when nothing moved that far
    /// (what moved less is said by [`LayoutMap::max_position_error`]).
    pub fn lost_motion(&self) -> Option<String> {
        let size = super::rest_height(&self.skeleton);
        let tol = LOST_MOTION * size;
        if !self.is_lossy() || self.max_error <= tol {
            return None;
        }
        let names = self.skeleton.display_names();
        let mut losses: Vec<_> = self.losses().into_iter().filter(|l| l.max_error > tol).collect();
        losses.sort_by(|a, b| b.max_error.total_cmp(&a.max_error));
        let mut moves = vec![false; names.len()];
        for l in &losses {
            moves[l.moved.clone()].fill(true);
        }
        let moved = moves.iter().filter(|&&m| m).count();
        let mut list: Vec<String> = losses
            .iter()
            .take(5)
            .map(|l| {
                let ch: Vec<&str> = l.channels.iter().map(|c| c.name()).collect();
                format!(
                    "{} ({}) by up to {} ({} joints with it)",
                    names[l.joint.index()],
                    ch.join(" "),
                    sig(l.max_error),
                    l.moved.len()
                )
            })
            .collect();
        if losses.len() > 5 {
            list.push(format!("and {} more joints", losses.len() - 5));
        }
        Some(format!(
            "would drop position channels that move their joints, losing motion on {moved} of {} \
             joints (largest world position error {}, {} of the skeleton's size {}): {}",
            names.len(),
            sig(self.max_error),
            sig(self.max_error / size),
            sig(size),
            list.join("; ")
        ))
    }

    /// Each joint that loses position channels, with its largest world
    /// position error over the frames mapped so far, in file order.
    pub fn losses(&self) -> Vec<LayoutLoss> {
        let Some(lost) = &self.lost else { return Vec::new() };
        lost.joints
            .iter()
            .zip(&self.worst)
            .enumerate()
            .map(|(k, (j, &max_error))| LayoutLoss {
                joint: j.id,
                channels: j.channels.pos_axes[..j.channels.n_pos as usize]
                    .iter()
                    .map(|a| match a.index() {
                        0 => Channel::Xposition,
                        1 => Channel::Yposition,
                        _ => Channel::Zposition,
                    })
                    .collect(),
                max_error,
                moved: j.id.index()..lost.ends[k],
            })
            .collect()
    }
}

/// `v` to six significant digits, for messages (scientific below 1e-4 and
/// from 1e15: `4e-6`, not `0.0000039999999999762355`); the notes of
/// `edit::run` say their measurements with it too.
pub(crate) fn sig(v: f64) -> String {
    let r: f64 = format!("{v:.5e}").parse().unwrap_or(v);
    if r != 0.0 && !(1e-4..1e15).contains(&r.abs()) { format!("{r:e}") } else { format!("{r}") }
}

/// One output frame's base values and copies (every channel but the
/// rewritten rotations).
#[inline]
fn fill(base: &[f64], copy: &[(usize, usize)], input: &[f64], output: &mut [f64]) {
    output.copy_from_slice(base);
    for &(o, i) in copy {
        output[o] = input[i];
    }
}

impl FrameMap for LayoutMap {
    fn output_skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    fn map(&mut self, input: &[f64], output: &mut [f64]) {
        fill(&self.base, &self.copy, input, output);
        self.rewrite.map(input, output);
        if let (Some(lost), Some(s)) = (&self.lost, &mut self.scratch) {
            self.max_error = self.max_error.max(lost.error(input, s, &mut self.worst));
        }
    }
}

impl super::SplitFrameMap for LayoutMap {
    /// The largest world position error of both copies.
    fn absorb(&mut self, earlier: &Self) {
        self.max_error = self.max_error.max(earlier.max_error);
        for (w, e) in self.worst.iter_mut().zip(&earlier.worst) {
            *w = w.max(*e);
        }
    }

    /// The errors of every frame in pieces of frames on rayon's pool; the
    /// joints whose axes change in groups on the pool, each through every
    /// frame in order (no guesses; the same bits as one frame at a time),
    /// making the base values and copies of its block of columns of each
    /// frame and putting its angles in place.
    fn map_many(&mut self, frames: usize, input: &[f64], output: &mut [f64]) -> bool {
        if !self.rewrite.many_pays(frames) {
            return false;
        }
        #[cfg(feature = "parallel")]
        if let Some(lost) = &self.lost {
            use rayon::prelude::*;
            const PIECE: usize = 256;
            let n_in = input.len() / frames.max(1);
            let n_lost = self.worst.len();
            let worst = input
                .par_chunks(PIECE * n_in.max(1))
                .map(|i| {
                    let mut s = lost.scratch();
                    let mut of = vec![0.0; n_lost];
                    let w = i
                        .chunks_exact(n_in)
                        .map(|f| lost.error(f, &mut s, &mut of))
                        .fold(0.0, f64::max);
                    (w, of)
                })
                .reduce(
                    || (0.0, vec![0.0; n_lost]),
                    |(a, mut x), (b, y)| {
                        for (x, y) in x.iter_mut().zip(&y) {
                            *x = x.max(*y);
                        }
                        (a.max(b), x)
                    },
                );
            self.max_error = self.max_error.max(worst.0);
            for (w, e) in self.worst.iter_mut().zip(&worst.1) {
                *w = w.max(*e);
            }
        }
        let n_out = self.skeleton.n_channels();
        let (base, copy) = (&self.base, &self.copy);
        self.rewrite.map_many(frames, input, output, n_out, |c, i, o| {
            o.copy_from_slice(&base[c.clone()]);
            let from = copy.partition_point(|m| m.0 < c.start);
            for &(out, inp) in copy[from..].iter().take_while(|m| m.0 < c.end) {
                o[out - c.start] = i[inp];
            }
        });
        true
    }
}
