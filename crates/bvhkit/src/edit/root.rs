//! Root motion: the travel of the character over the ground.
//!
//! Root motion is carried by the *carrier*: the topmost joint (smallest
//! depth, then first in file order) whose position channels change over the
//! clip ([`carrier`]). In most files that is the root; in Bandai Namco's it
//! is `Hips`, under a still `joint_Root`. "Up" is a parameter (a
//! [`SignedAxis`], e.g. from [`detect_up`](crate::edit::axes::detect_up));
//! "horizontal" means the two other axes.
//!
//! - [`in_place`]: the carrier's horizontal world position is held at its
//!   first frame's; its height, every rotation and every other joint's
//!   channels are kept bit for bit.
//! - [`to_origin`]: the whole clip is moved and turned about the up axis so
//!   that in the first frame the carrier stands above the origin (height
//!   kept) and the character faces +Z (for Y up; for another up axis, that
//!   axis's [`SignedAxis::default_forward`]).
//! - [`extract`]: a new root joint is added above the carrier's root,
//!   carrying the ground projection of the carrier (its horizontal position,
//!   height 0) and the character's heading (a rotation about up), as game
//!   engines expect root motion. The old root's channels are rewritten so
//!   that every joint keeps its world motion; when the old root cannot hold
//!   a full transform (fewer than three rotation channels or no horizontal
//!   position channels), the joints above the carrier ride with the new
//!   root and the channels of every joint hanging from them (the carrier
//!   and its siblings) are rewritten instead.
//!
//! The character's facing is `left × up`, where `left` is the sum over the
//! left/right pairs ([`Mirror`]) of left minus right world positions,
//! projected on the ground; without pairs it is the carrier's world
//! rotation applied to the target forward direction.

use glam::{DAffine3, DQuat, DVec3};

use super::axes::SignedAxis;
use super::local::{JointSpec, build};
use super::mirror::{Mirror, MirrorOptions};
use super::pose::JointChannels;
use crate::bvh::Bvh;
use crate::channel::Channel;
use crate::error::{Error, Result};
use crate::kinematics::{Kinematics, PositionChannels};
use crate::motion::Motion;
use crate::rotation::Axis;
use crate::skeleton::{JointId, JointKind, Skeleton};

/// The joint that carries the root motion: the topmost joint whose
/// position channels take more than one value over the clip, else the
/// first joint with position channels, else the first root. `None` for an
/// empty skeleton.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// let bvh = Bvh::parse("HIERARCHY ROOT joint_Root { OFFSET 0 0 0 CHANNELS 3 Xposition Yposition Zposition
///     JOINT Hips { OFFSET 0 90 0 CHANNELS 3 Xposition Yposition Zposition End Site { OFFSET 0 10 0 } } }
///     MOTION Frames: 2 Frame Time: 0.1
///     0 0 0 0 90 0
///     0 0 0 5 90 0")?;
/// assert_eq!(bvhkit::edit::root::carrier(&bvh).map(|j| j.index()), Some(1));
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn carrier(bvh: &Bvh) -> Option<JointId> {
    let s = bvh.skeleton();
    let m = bvh.motion();
    let moving = |id: JointId| {
        let j = s.joint(id);
        j.channels().iter().enumerate().any(|(k, c)| {
            let ch = j.first_channel() + k;
            c.is_position() && m.frames().any(|f| f[ch] != m.frame(0)[ch])
        })
    };
    let with_pos = |id: &JointId| s.joint(*id).channels().iter().any(|c| c.is_position());
    let mut ids: Vec<JointId> = s.ids().collect();
    ids.sort_by_key(|id| s.joint(*id).depth());
    if m.n_frames() > 0
        && let Some(id) = ids.iter().copied().filter(with_pos).find(|&id| moving(id))
    {
        return Some(id);
    }
    ids.iter().copied().find(with_pos).or_else(|| s.roots().next())
}

pub(crate) fn horizontal(v: DVec3, up: SignedAxis) -> DVec3 {
    let mut v = v;
    v[up.axis().index()] = 0.0;
    v
}

/// The direction the character should face after [`to_origin`].
fn target_forward(up: SignedAxis) -> DVec3 {
    if up.axis() == Axis::Y { DVec3::Z } else { up.default_forward().vector() }
}

/// What every root-motion transform needs: the carrier, FK, the pairs.
/// Also used by `crate::mix` (alignment of clips, loops).
pub(crate) struct Setup {
    pub(crate) carrier: usize,
    pub(crate) fk: Kinematics,
    pairs: Vec<(usize, usize)>,
    pub(crate) height: f64,
}

impl Setup {
    pub(crate) fn new(bvh: &Bvh) -> Result<Setup> {
        let carrier = carrier(bvh).ok_or_else(|| Error::invalid("the skeleton has no joints"))?;
        Setup::with_carrier(bvh, carrier)
    }

    /// The same, with the carrier given (for a clip that must move the
    /// same joint as another clip of its skeleton).
    pub(crate) fn with_carrier(bvh: &Bvh, carrier: JointId) -> Result<Setup> {
        let pairs = Mirror::new(bvh, &MirrorOptions::default())?
            .pairs()
            .into_iter()
            .map(|(l, r)| (l.index(), r.index()))
            .collect();
        Ok(Setup {
            carrier: carrier.index(),
            fk: Kinematics::new(bvh.skeleton(), PositionChannels::Replace),
            pairs,
            height: super::rest_height(bvh.skeleton()),
        })
    }

    /// The horizontal facing direction (unit) in one frame's world transforms.
    pub(crate) fn facing(&self, world: &[DAffine3], up: SignedAxis) -> DVec3 {
        let left: DVec3 =
            self.pairs.iter().map(|&(l, r)| world[l].translation - world[r].translation).sum();
        let f = horizontal(left.cross(up.vector()), up);
        if f.length() > 1e-9 * self.height {
            return f.normalize();
        }
        let f = horizontal(world[self.carrier].matrix3 * target_forward(up), up);
        if f.length() > 1e-12 { f.normalize() } else { target_forward(up) }
    }
}

/// The signed angle (radians) about `up` from `a` to `b` (both horizontal).
pub(crate) fn yaw_between(a: DVec3, b: DVec3, up: DVec3) -> f64 {
    up.dot(a.cross(b)).atan2(a.dot(b))
}

/// Rewrites joint `j` of `skeleton` in `out` so that its world transform is
/// `world`, given its new parent's world transform. Fails when the joint's
/// position channels cannot hold the translation.
#[allow(clippy::too_many_arguments)]
fn put_world(
    jc: &JointChannels,
    name: &str,
    parent: DAffine3,
    world: DAffine3,
    near: [f64; 3],
    out: &mut [f64],
    tolerance: f64,
) -> Result<()> {
    let local = parent.inverse() * world;
    let q = DQuat::from_mat3(&local.matrix3);
    let rot_ok = jc.write_rotation(q, Some(near), out);
    let miss = jc.write_translation(local.translation, PositionChannels::Replace, out);
    if !rot_ok || miss > tolerance {
        return Err(Error::invalid(format!(
            "joint {name:?} cannot carry the new root motion: its channels cannot hold the transform (position off by {miss})"
        )));
    }
    Ok(())
}

/// Removes horizontal travel: the carrier's horizontal world position is
/// held at the first frame's, its height kept; nothing else changes. See
/// the module documentation.
///
/// # Errors
/// When the carrier's position channels cannot hold the change (a
/// horizontal axis without a position channel while its parent turns).
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::{axes::SignedAxis, root};
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
///     End Site { OFFSET 0 10 0 } }
///     MOTION Frames: 2 Frame Time: 0.1
///     1 90 2 0 0 0
///     4 92 8 5 6 7")?;
/// let still = root::in_place(&bvh, SignedAxis::PosY)?;
/// assert_eq!(still.motion().frame(1), [1.0, 92.0, 2.0, 5.0, 6.0, 7.0]);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn in_place(bvh: &Bvh, up: SignedAxis) -> Result<Bvh> {
    let setup = Setup::new(bvh)?;
    let s = bvh.skeleton();
    let c = setup.carrier;
    let jc = JointChannels::of(s.joint(JointId::new(c)));
    let mut out = bvh.clone();
    let nc = s.n_channels();
    let mut world = vec![DAffine3::IDENTITY; s.len()];
    let mut start = DVec3::ZERO;
    for f in 0..bvh.motion().n_frames() {
        setup.fk.world(bvh.motion().frame(f), &mut world);
        let p = world[c].translation;
        if f == 0 {
            start = p;
        }
        let mut target = start;
        target[up.axis().index()] = p[up.axis().index()];
        let parent =
            s.joint(JointId::new(c)).parent().map_or(DAffine3::IDENTITY, |q| world[q.index()]);
        let t = parent.inverse().transform_point3(target);
        let frame = &mut out.motion_mut().values_mut()[f * nc..(f + 1) * nc];
        let miss = jc.write_translation(t, PositionChannels::Replace, frame);
        if miss > 1e-9 * setup.height {
            return Err(Error::invalid(format!(
                "joint {:?} carries the root motion but its position channels cannot hold it in place (off by {miss} in frame {f})",
                s.joint(JointId::new(c)).name()
            )));
        }
    }
    Ok(out)
}

/// Moves and turns the whole clip about the up axis so that the first
/// frame's carrier is above the origin and the character faces +Z (for Y
/// up). See the module documentation.
///
/// # Errors
/// When the carrier's channels cannot hold a full transform.
pub fn to_origin(bvh: &Bvh, up: SignedAxis) -> Result<Bvh> {
    let setup = Setup::new(bvh)?;
    let c = setup.carrier;
    let mut g = DAffine3::IDENTITY;
    move_carrier(bvh, &setup, |f, world| {
        if f == 0 {
            let yaw = yaw_between(setup.facing(world, up), target_forward(up), up.vector());
            let turn = DQuat::from_axis_angle(up.vector(), yaw);
            let shift = -horizontal(world[c].translation, up);
            g = DAffine3::from_quat(turn) * DAffine3::from_translation(shift);
        }
        g
    })
}

/// Moves the carrier (and so everything below it) of every frame `f` by
/// the world transform `g(f, world)`, given that frame's world transforms:
/// the carrier's world transform becomes `g · W`, written into its own
/// channels (Euler angles in its order, closest to the previous output
/// frame). The joints above the carrier (a still `joint_Root`) keep their
/// channels, and so does every other joint: only the carrier's channels
/// change.
///
/// # Errors
/// When the carrier's channels cannot hold its new transform.
pub(crate) fn move_carrier(
    bvh: &Bvh,
    setup: &Setup,
    mut g: impl FnMut(usize, &[DAffine3]) -> DAffine3,
) -> Result<Bvh> {
    let s = bvh.skeleton();
    let c = setup.carrier;
    let joint = s.joint(JointId::new(c));
    let jc = JointChannels::of(joint);
    let mut out = bvh.clone();
    let nc = s.n_channels();
    let mut world = vec![DAffine3::IDENTITY; s.len()];
    for f in 0..bvh.motion().n_frames() {
        setup.fk.world(bvh.motion().frame(f), &mut world);
        let gf = g(f, &world);
        let parent = joint.parent().map_or(DAffine3::IDENTITY, |q| world[q.index()]);
        let near = if f == 0 {
            jc.angles(bvh.motion().frame(0))
        } else {
            jc.angles(&out.motion().values()[(f - 1) * nc..f * nc])
        };
        let frame = &mut out.motion_mut().values_mut()[f * nc..(f + 1) * nc];
        let target = gf * world[c];
        put_world(&jc, joint.name(), parent, target, near, frame, 1e-9 * setup.height.max(1.0))?;
    }
    Ok(out)
}

/// Adds a root joint named `name` carrying the ground projection and the
/// heading of the carrier, with channels `Xposition Yposition Zposition`
/// and one rotation about the up axis. See the module documentation.
///
/// # Errors
/// When a joint is already called `name`, or the rewritten joint's channels
/// cannot hold its new transform.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::{axes::SignedAxis, root};
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
///     End Site { OFFSET 0 10 0 } }
///     MOTION Frames: 2 Frame Time: 0.1
///     0 90 0 0 0 0
///     30 90 40 0 0 0")?;
/// let out = root::extract(&bvh, SignedAxis::PosY, "Root")?;
/// assert_eq!(out.skeleton().joints()[0].name(), "Root");
/// // The root travels on the ground; Hips stays above it.
/// let f = out.motion().frame(1);
/// assert!((f[0] - 30.0).abs() < 1e-9 && f[1] == 0.0 && (f[2] - 40.0).abs() < 1e-9);
/// assert!(f[4].abs() < 1e-9 && (f[5] - 90.0).abs() < 1e-9 && f[6].abs() < 1e-9);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn extract(bvh: &Bvh, up: SignedAxis, name: &str) -> Result<Bvh> {
    let setup = Setup::new(bvh)?;
    let s = bvh.skeleton();
    if s.find(name).is_some() {
        return Err(Error::invalid(format!("a joint is already called {name:?}")));
    }
    let c = setup.carrier;
    let mut top = c;
    while let Some(p) = s.joint(JointId::new(top)).parent() {
        top = p.index();
    }
    let top_joint = s.joint(JointId::new(top));
    let holds = |j: &crate::skeleton::Joint| {
        j.rotation_axes().count() == 3
            && Axis::ALL
                .iter()
                .filter(|&&a| a != up.axis())
                .all(|a| j.channels().iter().any(|ch| ch.is_position() && ch.axis() == *a))
    };
    // The joints whose channels take the compensation: the old root, or
    // when it cannot, every joint hanging from the chain above the carrier.
    let mut chain = vec![false; s.len()];
    let mut a = s.joint(JointId::new(c)).parent();
    while let Some(p) = a {
        chain[p.index()] = true;
        a = s.joint(p).parent();
    }
    let rewrite: Vec<usize> = if holds(top_joint) {
        vec![top]
    } else {
        (0..s.len())
            .filter(|&j| {
                let jj = s.joint(JointId::new(j));
                !chain[j]
                    && !jj.is_end_site()
                    && (j == top || jj.parent().is_some_and(|p| chain[p.index()]))
            })
            .collect()
    };
    // The new skeleton: the new root just before the old top root.
    let rot = match up.axis() {
        Axis::X => Channel::Xrotation,
        Axis::Y => Channel::Yrotation,
        Axis::Z => Channel::Zrotation,
    };
    let mut specs = Vec::with_capacity(s.len() + 1);
    let shift = |i: usize| if i >= top { i + 1 } else { i };
    for (i, j) in s.joints().iter().enumerate() {
        if i == top {
            specs.push(JointSpec {
                name: name.to_string(),
                kind: JointKind::Root,
                parent: None,
                offset: DVec3::ZERO,
                channels: vec![Channel::Xposition, Channel::Yposition, Channel::Zposition, rot],
            });
        }
        let mut spec = JointSpec::of(j);
        spec.parent = match j.parent() {
            Some(p) => Some(shift(p.index())),
            None if i == top => Some(top),
            None => None,
        };
        if i == top {
            spec.kind = JointKind::Joint;
        }
        specs.push(spec);
    }
    let skeleton: Skeleton = build(&specs)?;
    let root_first = top_joint.first_channel();
    let nc_old = s.n_channels();
    let nc = skeleton.n_channels();
    let n_frames = bvh.motion().n_frames();
    let mut values = vec![0.0; n_frames * nc];
    let jcs: Vec<JointChannels> = rewrite
        .iter()
        .map(|&r| JointChannels::of(skeleton.joint(JointId::new(shift(r)))))
        .collect();
    let mut world = vec![DAffine3::IDENTITY; s.len()];
    let mut yaw_prev = 0.0;
    let target = target_forward(up);
    for f in 0..n_frames {
        let src = bvh.motion().frame(f);
        let (done, rest) = values.split_at_mut(f * nc);
        let dst = &mut rest[..nc];
        dst[..root_first].copy_from_slice(&src[..root_first]);
        dst[root_first + 4..].copy_from_slice(&src[root_first..nc_old]);
        setup.fk.world(src, &mut world);
        let ground = horizontal(world[c].translation, up);
        let mut yaw = yaw_between(target, setup.facing(&world, up), up.vector()).to_degrees();
        yaw += 360.0 * ((yaw_prev - yaw) / 360.0).round();
        yaw_prev = yaw;
        dst[root_first..root_first + 3].copy_from_slice(&ground.to_array());
        // A rotation channel turns about the positive axis.
        dst[root_first + 3] = yaw * up.sign();
        let n_world = DAffine3::from_translation(ground)
            * DAffine3::from_quat(DQuat::from_axis_angle(up.vector(), yaw.to_radians()));
        for (&r, jc) in rewrite.iter().zip(&jcs) {
            let parent = match s.joint(JointId::new(r)).parent() {
                Some(p) => n_world * world[p.index()],
                None => n_world,
            };
            let near = if f == 0 { jc.angles(dst) } else { jc.angles(&done[(f - 1) * nc..]) };
            let name = s.joint(JointId::new(r)).name();
            put_world(jc, name, parent, world[r], near, dst, 1e-9 * setup.height.max(1.0))?;
        }
    }
    let motion = Motion::with_frames(bvh.motion().frame_time(), n_frames, nc, values)?;
    Bvh::new(skeleton, motion)
}
