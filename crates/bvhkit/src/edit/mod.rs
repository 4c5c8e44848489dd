//! Edit motion: single-clip transforms over the model.
//!
//! Every transform is a small unit with documented semantics. It either
//! takes a [`Bvh`] and returns a new one, or, when it works one frame at a
//! time, is a [`FrameMap`]: built once from the input skeleton, it knows
//! its output skeleton and maps each input frame into a caller-owned output
//! frame, so a caller can stream a file of any length through it
//! ([`crate::FrameReader`] in, writer out) in constant memory.
//! [`map_frames`] applies a [`FrameMap`] to a whole [`Bvh`].
//!
//! A transform changes only what it means to change: joint names, channel
//! layout, offsets and values it does not touch are kept bit for bit.
//!
//! The shared pieces:
//! - [`PoseLayout`] and [`Pose`]: a frame as local rotations (quaternions,
//!   built by [`rotation::euler_to_quat`] from each joint's own channels)
//!   and local translations, and back: rotations are written as Euler
//!   angles in each joint's own channel order, closest to a reference frame
//!   (the previous output frame) so that angle curves stay continuous
//!   ([`rotation::quat_to_euler_near`]). Nothing is allocated per frame.
//! - [`rebuild_skeleton`]: a copy of a skeleton with new offsets or channels
//!   per joint, in the same file order.
//! - World transforms come from [`Kinematics`] ([`PoseLayout::kinematics`]);
//!   nothing here re-derives the Euler convention or forward kinematics.
//!
//! The transforms:
//! - [`frames`]: keep a range, every Nth frame, reverse.
//! - [`resample`]: any frame rate, by quaternion SLERP.
//! - [`order`]: rotation channel order of one or every joint.
//! - [`layout`]: every joint three rotation channels in one order, position
//!   channels dropped or added.
//! - [`scale`]: offsets and position channels times a factor.
//! - [`axes`]: up/forward axis conventions, and detection of a file's up axis.
//! - [`root`]: root motion: in place, to the origin, extracted onto a new
//!   ground-projected root joint.
//! - [`joints`]: rename joints, remove joints (their motion folded into
//!   their children), remove or add End Sites.
//! - [`rest`]: a frame or another file's rest pose as the new rest pose,
//!   world motion kept.
//! - [`mirror`]: left for right, pairs found by name and confirmed by the
//!   rest pose, reflected in world space.
//! - [`plan`]: the steps of a streamed edit ([`plan::Steps`]): frame
//!   ranges, every Nth frame and these transforms' maps ([`plan::Stage`]),
//!   run a batch of frames at a time; what `bvh edit` streams.
//!
//! `docs/editing.md` in the repository gives the semantics and the choices
//! made.
//!
//! # Example
//! ```
//! use bvhkit::Bvh;
//! use bvhkit::edit::{frames, resample};
//!
//! let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
//!     End Site { OFFSET 0 10 0 } }
//!     MOTION Frames: 5 Frame Time: 0.0083333
//!     0 0 0
//!     10 0 0
//!     20 0 0
//!     30 0 0
//!     40 0 0")?;
//! // Frames 1 to 4, then at 60 fps: every second frame of the 120 fps clip.
//! let clip = resample::to_fps(&frames::range(&bvh, 1..5)?, 60.0)?;
//! assert_eq!(clip.motion().n_frames(), 2);
//! assert_eq!(clip.motion().frame(1), [30.0, 0.0, 0.0]);
//! assert_eq!(clip.motion().frame_time(), 1.0 / 60.0);
//! # Ok::<(), bvhkit::Error>(())
//! ```
//!
//! # Implementation notes
//!
//! The `FrameMap` trait (built for an input skeleton, knows its output
//! skeleton, maps one frame at a time into a caller-owned buffer, so streams
//! stay constant-memory), `map_frames`, `rebuild_skeleton`, `same_rate`.

use glam::DVec3;

use crate::bvh::Bvh;
use crate::channel::Channel;
use crate::error::Result;
use crate::motion::Motion;
use crate::skeleton::{Joint, JointId, JointKind, Skeleton, SkeletonBuilder};

#[allow(unused_imports)] // for the links in the docs above
use crate::{Kinematics, rotation};

pub mod axes;
mod chunked;
pub mod frames;
pub mod joints;
pub mod layout;
mod local;
pub mod mirror;
pub mod order;
pub mod plan;
pub mod portable;
mod pose;
pub mod resample;
pub mod rest;
pub mod root;
pub mod run;
pub mod scale;

pub use chunked::{ChunkedMap, SplitFrameMap};
pub use pose::{JointChannels, Pose, PoseLayout};
pub(crate) use pose::{lerp_snapped, lerp_snapped_moved};

/// A transform that works one frame at a time.
///
/// It is built for one input skeleton (usually by a `new` function of the
/// transform's module), knows the skeleton it produces, and maps each input
/// frame to an output frame in caller-owned buffers. It may keep state from
/// frame to frame (the previous output frame, for Euler continuity), so
/// frames must be given in order, each exactly once. [`ChunkedMap`] maps
/// runs of frames of a [`SplitFrameMap`] on several threads with the same
/// output.
pub trait FrameMap {
    /// The skeleton of the output frames.
    fn output_skeleton(&self) -> &Skeleton;

    /// Maps one input frame (one value per input channel) to one output
    /// frame (one value per channel of [`FrameMap::output_skeleton`]).
    ///
    /// # Panics
    /// When a frame has the wrong length.
    fn map(&mut self, input: &[f64], output: &mut [f64]);
}

/// Applies a [`FrameMap`] to every frame of `bvh`, in order; the frame time
/// is kept.
///
/// # Errors
/// When the map's output skeleton does not fit its frames (a bug in the
/// map).
pub fn map_frames(bvh: &Bvh, map: &mut dyn FrameMap) -> Result<Bvh> {
    let skeleton = map.output_skeleton().clone();
    let m = bvh.motion();
    let n_out = skeleton.n_channels();
    let mut values = vec![0.0; m.n_frames() * n_out];
    if n_out > 0 {
        for (input, output) in m.frames().zip(values.chunks_exact_mut(n_out)) {
            map.map(input, output);
        }
    }
    let motion = Motion::with_frames(m.frame_time(), m.n_frames(), n_out, values)?;
    Bvh::new(skeleton, motion)
}

/// [`map_frames`] on rayon's pool (with the `parallel` feature) through a
/// [`ChunkedMap`]: the same frames, whatever the thread count. Returns the
/// clip and the map after the last frame (for what it reports, such as
/// [`layout::LayoutMap::max_position_error`]).
///
/// # Errors
/// As for [`map_frames`].
pub fn map_frames_chunked<M: SplitFrameMap>(bvh: &Bvh, map: M) -> Result<(Bvh, M)> {
    let skeleton = map.output_skeleton().clone();
    let m = bvh.motion();
    let n_out = skeleton.n_channels();
    let mut values = vec![0.0; m.n_frames() * n_out];
    let mut chunked = ChunkedMap::new(map);
    chunked.map(m.n_frames(), m.values(), &mut values);
    let motion = Motion::with_frames(m.frame_time(), m.n_frames(), n_out, values)?;
    Ok((Bvh::new(skeleton, motion)?, chunked.get().clone()))
}

/// A copy of `skeleton`, in the same file order with the same names and
/// kinds, where `f(id, joint)` gives each joint's new offset and channels
/// (End Sites must be given no channels).
///
/// # Errors
/// When `f` gives an End Site channels, or a channel list that is not valid
/// (more than six channels, or one twice).
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::rebuild_skeleton;
/// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 1 2 3 CHANNELS 1 Xrotation End Site { OFFSET 0 1 0 } }
///     MOTION Frames: 0 Frame Time: 0.1")?;
/// let doubled = rebuild_skeleton(bvh.skeleton(), |_, j| Ok((j.offset() * 2.0, j.channels().to_vec())))?;
/// assert_eq!(doubled.joints()[0].offset().z, 6.0);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn rebuild_skeleton(
    skeleton: &Skeleton,
    mut f: impl FnMut(JointId, &Joint) -> Result<(DVec3, Vec<Channel>)>,
) -> Result<Skeleton> {
    let mut b = SkeletonBuilder::new();
    for (i, j) in skeleton.joints().iter().enumerate() {
        let id = JointId::new(i);
        let (offset, channels) = f(id, j)?;
        match (j.kind(), j.parent()) {
            (JointKind::EndSite, Some(p)) => {
                if !channels.is_empty() {
                    return Err(crate::Error::invalid("an End Site cannot have channels"));
                }
                b.end_site(p, offset)?;
            }
            (_, Some(p)) => {
                b.joint(p, j.name(), offset, &channels)?;
            }
            (_, None) => {
                b.root(j.name(), offset, &channels)?;
            }
        }
    }
    Ok(b.build())
}

/// Whether two rates in frames per second are the same rate: within 0.01%
/// of each other (so 120 fps and `Frame Time: 0.0083333` are the same).
pub fn same_rate(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-4 * a.abs().max(b.abs())
}

/// The size of a skeleton, for tolerances: the largest extent along X, Y or
/// Z of its joints in the rest pose (offsets composed without rotation),
/// whatever the up axis; never below `f64::MIN_POSITIVE`.
///
/// # Example
/// ```
/// let bvh = bvhkit::Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 0
///     End Site { OFFSET 0 17 0 } } MOTION Frames: 0 Frame Time: 0.1")?;
/// assert_eq!(bvhkit::edit::rest_height(bvh.skeleton()), 17.0);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn rest_height(skeleton: &Skeleton) -> f64 {
    let (lo, hi) = rest_bounds(skeleton);
    let h = (hi - lo).max_element();
    if h.is_finite() && h > 0.0 { h } else { f64::MIN_POSITIVE }
}

/// Rest-pose positions of all joints (offsets composed without rotation).
pub(crate) fn rest_positions(skeleton: &Skeleton) -> Vec<DVec3> {
    let mut pos: Vec<DVec3> = Vec::with_capacity(skeleton.len());
    for j in skeleton.joints() {
        let base = j.parent().map_or(DVec3::ZERO, |p| pos[p.index()]);
        pos.push(base + j.offset());
    }
    pos
}

fn rest_bounds(skeleton: &Skeleton) -> (DVec3, DVec3) {
    let pos = rest_positions(skeleton);
    let lo = pos.iter().copied().fold(DVec3::splat(f64::INFINITY), DVec3::min);
    let hi = pos.iter().copied().fold(DVec3::splat(f64::NEG_INFINITY), DVec3::max);
    if pos.is_empty() { (DVec3::ZERO, DVec3::ZERO) } else { (lo, hi) }
}
