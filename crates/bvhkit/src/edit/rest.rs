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

use super::local::max_position_error;
use super::pose::JointChannels;
use super::rebuild_skeleton;
use crate::bvh::Bvh;
use crate::error::{Error, Result};
use crate::kinematics::{Kinematics, PositionChannels};
use crate::motion::Motion;
use crate::skeleton::{JointId, Skeleton};

/// Makes the rest pose the one given by `rest` (one world rotation per
/// joint, see the module documentation). Returns the new clip and the
/// largest world-position error (0 up to rounding where channels allow).
///
/// # Errors
/// When `rest` does not hold one rotation per joint.
pub fn with_rotations(bvh: &Bvh, rest: &[DMat3], mode: PositionChannels) -> Result<(Bvh, f64)> {
    let s = bvh.skeleton();
    if rest.len() != s.len() {
        return Err(Error::invalid("rest pose: one rotation per joint is needed"));
    }
    // A joint that cannot turn keeps its parent's rest rotation.
    let mut g: Vec<DMat3> = Vec::with_capacity(s.len());
    for (i, j) in s.joints().iter().enumerate() {
        let parent = j.parent().map_or(DMat3::IDENTITY, |p| g[p.index()]);
        g.push(if j.rotation_axes().next().is_none() { parent } else { rest[i] });
    }
    let gp = |id: JointId| s.joint(id).parent().map_or(DMat3::IDENTITY, |p| g[p.index()]);
    let skeleton: Skeleton = rebuild_skeleton(s, |id, j| {
        let offset = if j.parent().is_some() { gp(id) * j.offset() } else { j.offset() };
        Ok((offset, j.channels().to_vec()))
    })?;
    let fk = Kinematics::new(s, mode);
    let nc = s.n_channels();
    let n_frames = bvh.motion().n_frames();
    let mut values = bvh.motion().values().to_vec();
    let mut local = vec![DAffine3::IDENTITY; s.len()];
    let channels: Vec<JointChannels> = skeleton.joints().iter().map(JointChannels::of).collect();
    for f in 0..n_frames {
        fk.local(bvh.motion().frame(f), &mut local);
        let (done, rest) = values.split_at_mut(f * nc);
        let dst = &mut rest[..nc];
        for (i, j) in s.joints().iter().enumerate() {
            if j.channels().is_empty() {
                continue;
            }
            let id = JointId::new(i);
            let jc = &channels[i];
            let r = gp(id) * local[i].matrix3 * g[i].transpose();
            let near = if f == 0 { jc.angles(dst) } else { jc.angles(&done[(f - 1) * nc..]) };
            jc.write_rotation(DQuat::from_mat3(&r), Some(near), dst);
            let t = if j.parent().is_some() {
                gp(id) * local[i].translation
            } else {
                local[i].translation
            };
            jc.write_translation(t, mode, dst);
        }
    }
    let motion = Motion::with_frames(bvh.motion().frame_time(), n_frames, nc, values)?;
    let out = Bvh::new(skeleton, motion)?;
    let map: Vec<Option<usize>> = (0..s.len()).map(Some).collect();
    let error = max_position_error((s, bvh.motion()), (out.skeleton(), out.motion()), &map, mode);
    Ok((out, error))
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
    let fk = Kinematics::new(bvh.skeleton(), mode);
    let mut world = vec![DAffine3::IDENTITY; bvh.skeleton().len()];
    fk.world(bvh.motion().frame(frame), &mut world);
    let rest: Vec<DMat3> = world.iter().map(|w| w.matrix3).collect();
    with_rotations(bvh, &rest, mode)
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
    let s = bvh.skeleton();
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
    with_rotations(bvh, &rest, mode)
}
