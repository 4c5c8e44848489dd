//! Shared pieces of the edit-b transforms: writing a local transform back
//! into a joint's own channels, rebuilding a skeleton joint by joint, and
//! measuring how far world positions moved.
//!
//! Rotation maths stays in [`crate::rotation`] and forward kinematics in
//! [`Kinematics`]; this module only maps their results onto channels.

use glam::{DMat3, DVec3};

use crate::channel::Channel;
use crate::error::Result;
use crate::kinematics::{Kinematics, PositionChannels};
use crate::motion::Motion;
use crate::rotation::{Axis, RotationOrder, mat3_to_euler_near};
use crate::skeleton::{Joint, JointKind, Skeleton, SkeletonBuilder};

/// The values of a joint's rotation channels in listed order, padded with 0.
pub(crate) fn rotation_values(joint: &Joint, frame: &[f64]) -> [f64; 3] {
    let mut out = [0.0; 3];
    let mut n = 0;
    for (k, c) in joint.channels().iter().enumerate() {
        if c.is_rotation() {
            out[n] = frame[joint.first_channel() + k];
            n += 1;
        }
    }
    out
}

/// The rotation order that starts with the joint's rotation axes (1, 2 or 3
/// of them), completed with the missing axes in X, Y, Z order.
fn completed_order(axes: &[Axis]) -> Option<RotationOrder> {
    let mut all: Vec<Axis> = axes.to_vec();
    for a in Axis::ALL {
        if !all.contains(&a) {
            all.push(a);
        }
    }
    RotationOrder::from_axes(&all)
}

/// Writes the local transform `(rotation, translation)` into `joint`'s
/// channels of `frame` (a whole frame of the joint's skeleton).
///
/// Rotation channels get Euler angles in the joint's own order, closest to
/// `seed` (the same channels' previous values, for continuity). A joint
/// with fewer than three rotation channels gets the leading angles of the
/// completed order; what they cannot express is lost (callers measure the
/// result with [`max_position_error`]). Position channels get the named
/// translation component (`Replace`) or its difference to the `OFFSET`
/// (`Add`); components without a channel are the `OFFSET`'s.
pub(crate) fn write_local(
    joint: &Joint,
    mode: PositionChannels,
    rotation: DMat3,
    translation: DVec3,
    seed: [f64; 3],
    frame: &mut [f64],
) {
    let axes: Vec<Axis> = joint.rotation_axes().collect();
    let angles = if axes.is_empty() {
        [0.0; 3]
    } else {
        let order = completed_order(&axes).expect("distinct axes");
        let mut s = seed;
        for v in s.iter_mut().skip(axes.len()) {
            *v = 0.0;
        }
        mat3_to_euler_near(rotation, order, s)
    };
    let mut n_rot = 0;
    for (k, &c) in joint.channels().iter().enumerate() {
        let slot = &mut frame[joint.first_channel() + k];
        if c.is_rotation() {
            *slot = angles[n_rot];
            n_rot += 1;
        } else {
            let a = c.axis().index();
            *slot = match mode {
                PositionChannels::Replace => translation[a],
                PositionChannels::Add => translation[a] - joint.offset()[a],
            };
        }
    }
}

/// One joint of a skeleton being rebuilt.
#[derive(Clone, Debug)]
pub(crate) struct JointSpec {
    pub(crate) name: String,
    pub(crate) kind: JointKind,
    /// Index into the spec list; must precede this joint.
    pub(crate) parent: Option<usize>,
    pub(crate) offset: DVec3,
    pub(crate) channels: Vec<Channel>,
}

impl JointSpec {
    pub(crate) fn of(joint: &Joint) -> JointSpec {
        JointSpec {
            name: joint.name().to_string(),
            kind: joint.kind(),
            parent: joint.parent().map(|p| p.index()),
            offset: joint.offset(),
            channels: joint.channels().to_vec(),
        }
    }
}

/// Builds a skeleton from specs given in file pre-order.
pub(crate) fn build(specs: &[JointSpec]) -> Result<Skeleton> {
    let mut b = SkeletonBuilder::new();
    let mut ids = Vec::with_capacity(specs.len());
    for s in specs {
        let id = match (s.parent, s.kind) {
            (None, _) => b.root(&s.name, s.offset, &s.channels)?,
            (Some(p), JointKind::EndSite) => b.end_site(ids[p], s.offset)?,
            (Some(p), _) => b.joint(ids[p], &s.name, s.offset, &s.channels)?,
        };
        ids.push(id);
    }
    Ok(b.build())
}

/// The largest distance, over all frames, between the world position of
/// every joint of `new` and the joint `map[j]` of `old` (`None`: not
/// compared). Both motions must have the same number of frames.
pub(crate) fn max_position_error(
    old: (&Skeleton, &Motion),
    new: (&Skeleton, &Motion),
    map: &[Option<usize>],
    mode: PositionChannels,
) -> f64 {
    let fk_old = Kinematics::new(old.0, mode);
    let fk_new = Kinematics::new(new.0, mode);
    let (mut so, mut sn) = (fk_old.scratch(), fk_new.scratch());
    let mut po = vec![DVec3::ZERO; old.0.len()];
    let mut pn = vec![DVec3::ZERO; new.0.len()];
    let mut worst: f64 = 0.0;
    for f in 0..new.1.n_frames() {
        fk_old.positions_with(old.1.frame(f), &mut so, &mut po);
        fk_new.positions_with(new.1.frame(f), &mut sn, &mut pn);
        for (j, m) in map.iter().enumerate() {
            if let Some(o) = m {
                worst = worst.max((pn[j] - po[*o]).length());
            }
        }
    }
    worst
}

/// The height of a skeleton's rest pose along `up`: the extent of the
/// joints' rest positions (all channels zero, offsets only), at least the
/// largest offset length, so that tolerances scale with the figure.
pub(crate) fn rest_height(skeleton: &Skeleton, up: Axis) -> f64 {
    let rest = rest_positions(skeleton);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for p in &rest {
        lo = lo.min(p[up.index()]);
        hi = hi.max(p[up.index()]);
    }
    let longest = skeleton.joints().iter().map(|j| j.offset().length()).fold(0.0, f64::max);
    if rest.is_empty() { 0.0 } else { (hi - lo).max(longest) }
}

/// World positions of the rest pose (every rotation zero, offsets only).
pub(crate) fn rest_positions(skeleton: &Skeleton) -> Vec<DVec3> {
    let mut out: Vec<DVec3> = Vec::with_capacity(skeleton.len());
    for j in skeleton.joints() {
        let p = match j.parent() {
            Some(p) => out[p.index()] + j.offset(),
            None => j.offset(),
        };
        out.push(p);
    }
    out
}
