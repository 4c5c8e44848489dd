//! Rest pose: make another pose the rest pose (all rotation channels zero)
//! while every joint keeps its world motion, as bvhio's rest-pose editing
//! does.
//!
//! A new rest pose is given as a world rotation `G(j)` per joint: how the
//! joint is turned in the new rest pose relative to the old one. Then
//! - `OFFSET'(j) = G(parent)·OFFSET(j)` (a root's is kept), and position
//!   channels likewise `t'(j) = G(parent)·t(j)`: bones keep their lengths
//!   and point where the new rest pose has them;
//! - local rotations compensate: `L'(j) = G(parent)·L(j)·G(j)ᵀ`, written in
//!   the joint's own channel order, closest to the previous frame;
//!
//! so every world rotation becomes `W(j)·G(j)ᵀ` and every world position is
//! unchanged. A joint without rotation channels keeps its parent's `G` (it
//! could not compensate anything else), and so do End Sites.
//!
//! - [`from_frame`]: `G(j)` is the joint's world rotation in that frame, so
//!   that frame becomes the rest pose: its rotation channels become zero
//!   and the offsets are its bones.
//! - [`from_skeleton`]: the rest pose of another file with the same joint
//!   names: `G(j)` turns the joint's child bones onto the other skeleton's
//!   directions (lengths are kept): the shortest arc for one child, the
//!   frame of the first two non-parallel children for more.
//!
//! Exact where channels allow it: a joint with position channels on some
//! axes only, or with one or two rotation channels, may not hold its new
//! local transform; the largest world-position error is returned.

use glam::{DAffine3, DMat3, DQuat, DVec3};

use super::local::WorldError;
use super::pose::JointChannels;
use super::{FrameMap, SplitFrameMap, rebuild_skeleton};
use crate::bvh::Bvh;
use crate::error::{Error, Result};
use crate::kinematics::{Kinematics, PositionChannels};
use crate::skeleton::{JointId, Skeleton};

/// Makes the rest pose the one given by `rest` (one world rotation per
/// joint, see the module documentation). Returns the new clip and the
/// largest world-position error (0 up to rounding where channels allow).
///
/// This is [`RestMap`] mapped over every frame.
///
/// # Errors
/// When `rest` does not hold one rotation per joint.
pub fn with_rotations(bvh: &Bvh, rest: &[DMat3], mode: PositionChannels) -> Result<(Bvh, f64)> {
    let map = RestMap::new(bvh.skeleton(), rest, mode)?;
    let (out, map) = super::map_frames_chunked(bvh, map)?;
    Ok((out, map.max_position_error()))
}

/// A new rest pose one frame at a time: a [`FrameMap`] (and
/// [`SplitFrameMap`]) from the input skeleton to the one with the new
/// offsets, so a stream changes the rest pose in constant memory with the
/// same bits as [`with_rotations`]. The state carried from frame to frame
/// is the previous output frame's angles (Euler continuity); the largest
/// world-position error over the frames mapped is kept as a statistic.
///
/// # Example
/// ```
/// use bvhkit::{Bvh, PositionChannels};
/// use bvhkit::edit::{FrameMap, rest::RestMap};
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
///     JOINT Arm { OFFSET 5 0 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 5 0 0 } } }
///     MOTION Frames: 2 Frame Time: 0.1
///     0 0 0 -90 0 0
///     0 0 0 -45 0 0")?;
/// // Frame 0's pose (the arm hanging down) as the rest pose.
/// let mut map = RestMap::from_frame(bvh.skeleton(), bvh.motion().frame(0), PositionChannels::Replace);
/// let mut out = [0.0; 6];
/// map.map(bvh.motion().frame(1), &mut out);
/// assert!((out[3] - 45.0).abs() < 1e-9);
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RestMap {
    output: Skeleton,
    mode: PositionChannels,
    /// Per joint: its rest rotation `G(j)` and its parent's.
    g: Vec<DMat3>,
    g_parent: Vec<DMat3>,
    has_parent: Vec<bool>,
    channels: Vec<JointChannels>,
    fk: Kinematics,
    local: Vec<DAffine3>,
    /// World positions before and after.
    check: WorldError,
    /// The previous output frame's angles per joint (`None` before the
    /// first frame).
    near: Option<Vec<[f64; 3]>>,
}

impl RestMap {
    /// The map that makes `rest` (one world rotation per joint) the rest
    /// pose of `skeleton`.
    ///
    /// # Errors
    /// When `rest` does not hold one rotation per joint.
    pub fn new(skeleton: &Skeleton, rest: &[DMat3], mode: PositionChannels) -> Result<RestMap> {
        let s = skeleton;
        if rest.len() != s.len() {
            return Err(Error::invalid("rest pose: one rotation per joint is needed"));
        }
        // A joint that cannot turn keeps its parent's rest rotation.
        let mut g: Vec<DMat3> = Vec::with_capacity(s.len());
        for (i, j) in s.joints().iter().enumerate() {
            let parent = j.parent().map_or(DMat3::IDENTITY, |p| g[p.index()]);
            g.push(if j.rotation_axes().next().is_none() { parent } else { rest[i] });
        }
        let g_parent: Vec<DMat3> = s
            .joints()
            .iter()
            .map(|j| j.parent().map_or(DMat3::IDENTITY, |p| g[p.index()]))
            .collect();
        let output: Skeleton = rebuild_skeleton(s, |id, j| {
            let offset =
                if j.parent().is_some() { g_parent[id.index()] * j.offset() } else { j.offset() };
            Ok((offset, j.channels().to_vec()))
        })?;
        let channels: Vec<JointChannels> = output.joints().iter().map(JointChannels::of).collect();
        Ok(RestMap {
            mode,
            has_parent: s.joints().iter().map(|j| j.parent().is_some()).collect(),
            g,
            g_parent,
            channels,
            fk: Kinematics::new(s, mode),
            local: vec![DAffine3::IDENTITY; s.len()],
            check: WorldError::new(s, &output, mode, (0..s.len()).collect()),
            output,
            near: None,
        })
    }

    /// The map that makes the pose of `frame` (a frame of `skeleton`) its
    /// rest pose ([`from_frame`]).
    pub fn from_frame(skeleton: &Skeleton, frame: &[f64], mode: PositionChannels) -> RestMap {
        let fk = Kinematics::new(skeleton, mode);
        let mut world = vec![DAffine3::IDENTITY; skeleton.len()];
        fk.world(frame, &mut world);
        let rest: Vec<DMat3> = world.iter().map(|w| w.matrix3).collect();
        RestMap::new(skeleton, &rest, mode).expect("one rotation per joint")
    }

    /// The map that makes the rest pose of `other` that of `skeleton`
    /// ([`from_skeleton`]).
    ///
    /// # Errors
    /// As [`from_skeleton`].
    pub fn from_skeleton(
        skeleton: &Skeleton,
        other: &Skeleton,
        mode: PositionChannels,
    ) -> Result<RestMap> {
        RestMap::new(skeleton, &rest_towards(skeleton, other)?, mode)
    }

    /// The largest world-position error over the frames mapped so far (0 up
    /// to rounding where channels allow).
    pub fn max_position_error(&self) -> f64 {
        self.check.max
    }
}

impl FrameMap for RestMap {
    fn output_skeleton(&self) -> &Skeleton {
        &self.output
    }

    fn map(&mut self, src: &[f64], dst: &mut [f64]) {
        dst.copy_from_slice(src);
        self.fk.local(src, &mut self.local);
        let first = self.near.is_none();
        let near = self.near.get_or_insert_with(|| vec![[0.0; 3]; self.channels.len()]);
        for (i, jc) in self.channels.iter().enumerate() {
            if self.output.joints()[i].channels().is_empty() {
                continue;
            }
            let gp = self.g_parent[i];
            let r = gp * self.local[i].matrix3 * self.g[i].transpose();
            // The first frame's reference is its own angles.
            let n = if first { jc.angles(dst) } else { near[i] };
            jc.write_rotation(DQuat::from_mat3(&r), Some(n), dst);
            let t = if self.has_parent[i] {
                gp * self.local[i].translation
            } else {
                self.local[i].translation
            };
            jc.write_translation(t, self.mode, dst);
            near[i] = jc.angles(dst);
        }
        self.check.measure(src, dst);
    }
}

impl SplitFrameMap for RestMap {
    fn absorb(&mut self, earlier: &Self) {
        self.check.max = self.check.max.max(earlier.check.max);
    }
}

/// Makes frame `frame` the rest pose; see the module documentation.
///
/// # Errors
/// When `frame` is not a frame of the clip.
///
/// # Example
/// ```
/// use bvhkit::{Bvh, PositionChannels};
/// use bvhkit::edit::rest;
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
///     JOINT Arm { OFFSET 5 0 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 5 0 0 } } }
///     MOTION Frames: 2 Frame Time: 0.1
///     0 0 0 -90 0 0
///     0 0 0 -45 0 0")?;
/// let (out, error) = rest::from_frame(&bvh, 0, PositionChannels::Replace)?;
/// // The arm hangs down in the new rest pose, and frame 0 is all zeros.
/// assert!((out.skeleton().joints()[2].offset() - bvhkit::glam::DVec3::new(0.0, -5.0, 0.0)).length() < 1e-12);
/// assert!(out.motion().frame(0).iter().all(|v| v.abs() < 1e-9));
/// assert!(error < 1e-9);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn from_frame(bvh: &Bvh, frame: usize, mode: PositionChannels) -> Result<(Bvh, f64)> {
    let n = bvh.motion().n_frames();
    if frame >= n {
        return Err(Error::invalid(format!(
            "rest pose: frame {frame} is not in the clip (0..{n})"
        )));
    }
    let map = RestMap::from_frame(bvh.skeleton(), bvh.motion().frame(frame), mode);
    let (out, map) = super::map_frames_chunked(bvh, map)?;
    Ok((out, map.max_position_error()))
}

/// The rotation that turns the directions `ours` onto `theirs`: the shortest
/// arc for one, the orthonormal frame of the first two non-parallel for more.
pub(crate) fn align(ours: &[DVec3], theirs: &[DVec3]) -> DMat3 {
    let pairs: Vec<(DVec3, DVec3)> = ours
        .iter()
        .zip(theirs)
        .filter(|(a, b)| a.length() > 1e-12 && b.length() > 1e-12)
        .map(|(a, b)| (a.normalize(), b.normalize()))
        .collect();
    let Some(&(a0, b0)) = pairs.first() else { return DMat3::IDENTITY };
    let second = pairs
        .iter()
        .skip(1)
        .find(|(a, b)| a.cross(a0).length() > 1e-6 && b.cross(b0).length() > 1e-6);
    match second {
        None => DMat3::from_quat(DQuat::from_rotation_arc(a0, b0)),
        Some(&(a1, b1)) => {
            let frame = |x: DVec3, y: DVec3| {
                let z = x.cross(y).normalize();
                DMat3::from_cols(x, z.cross(x), z)
            };
            frame(b0, b1) * frame(a0, a1).transpose()
        }
    }
}

/// Makes the rest pose of `other` (a skeleton with the same joint names)
/// the rest pose of `bvh`, keeping `bvh`'s bone lengths; see the module
/// documentation.
///
/// # Errors
/// When a joint of `bvh` has no joint of the same name in `other`.
pub fn from_skeleton(bvh: &Bvh, other: &Skeleton, mode: PositionChannels) -> Result<(Bvh, f64)> {
    with_rotations(bvh, &rest_towards(bvh.skeleton(), other)?, mode)
}

/// The rest rotations that turn `s`'s bones onto `other`'s directions.
fn rest_towards(s: &Skeleton, other: &Skeleton) -> Result<Vec<DMat3>> {
    let names = s.display_names();
    let other_names = other.display_names();
    let index: std::collections::HashMap<&str, usize> =
        other_names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let mut rest = Vec::with_capacity(s.len());
    for (i, _) in s.joints().iter().enumerate() {
        let Some(&k) = index.get(names[i].as_str()) else {
            return Err(Error::invalid(format!(
                "rest pose: the other skeleton has no joint {:?}",
                names[i]
            )));
        };
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for c in s.children(JointId::new(i)) {
            if let Some(&kc) = index.get(names[c.index()].as_str())
                && other.joint(JointId::new(kc)).parent() == Some(JointId::new(k))
            {
                ours.push(s.joint(c).offset());
                theirs.push(other.joint(JointId::new(kc)).offset());
            }
        }
        rest.push(align(&ours, &theirs));
    }
    Ok(rest)
}
