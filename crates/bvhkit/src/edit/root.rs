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
//!
//! # Implementation notes
//!
//! (the root-motion carrier, in place (`InPlace` runs forward kinematics of the
//! carrier's chain of ancestors alone, `Kinematics::subset`: the same world
//! transforms), to the origin, extraction onto a new ground-projected root).

use glam::{DAffine3, DQuat, DVec3};

use super::axes::SignedAxis;
use super::local::{JointSpec, build};
use super::mirror::{Mirror, MirrorOptions};
use super::pose::JointChannels;
use super::{FrameMap, SplitFrameMap};
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
    let mut search = CarrierSearch::new(bvh.skeleton());
    for f in bvh.motion().frames() {
        if search.push(f) {
            break;
        }
    }
    search.carrier()
}

/// [`carrier`] decided frame by frame, for a stream: push the clip's frames
/// in order until [`CarrierSearch::push`] says the carrier is decided (the
/// topmost joint with position channels moved; in almost every clip
/// within its first frames), or until the last frame (when the topmost
/// candidate has not moved yet, as Bandai Namco's still `joint_Root`).
/// [`CarrierSearch::carrier`] then gives what [`carrier`] gives on the
/// whole clip. The first frame is kept ([`CarrierSearch::first_frame`]),
/// which the root-motion maps need.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::root::CarrierSearch;
/// let bvh = Bvh::parse("HIERARCHY ROOT joint_Root { OFFSET 0 0 0 CHANNELS 3 Xposition Yposition Zposition
///     JOINT Hips { OFFSET 0 90 0 CHANNELS 3 Xposition Yposition Zposition End Site { OFFSET 0 10 0 } } }
///     MOTION Frames: 2 Frame Time: 0.1
///     0 0 0 0 90 0
///     0 0 0 5 90 0")?;
/// let mut search = CarrierSearch::new(bvh.skeleton());
/// // joint_Root may still move later: not decided before the end.
/// assert!(!search.push(bvh.motion().frame(0)));
/// assert!(!search.push(bvh.motion().frame(1)));
/// assert_eq!(search.carrier().map(|j| j.index()), Some(1));
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CarrierSearch {
    /// Joints with position channels, topmost first (then in file order),
    /// with their position channel indices.
    candidates: Vec<(JointId, Vec<usize>)>,
    /// Whether each candidate's position channels took a second value.
    moved: Vec<bool>,
    first: Option<Vec<f64>>,
    /// The first root, for a skeleton without position channels.
    root: Option<JointId>,
}

impl CarrierSearch {
    /// A search over frames of `skeleton`.
    pub fn new(skeleton: &Skeleton) -> CarrierSearch {
        let mut ids: Vec<JointId> = skeleton.ids().collect();
        ids.sort_by_key(|id| skeleton.joint(*id).depth());
        let candidates: Vec<(JointId, Vec<usize>)> = ids
            .into_iter()
            .filter_map(|id| {
                let j = skeleton.joint(id);
                let pos: Vec<usize> = j
                    .channels()
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.is_position())
                    .map(|(k, _)| j.first_channel() + k)
                    .collect();
                (!pos.is_empty()).then_some((id, pos))
            })
            .collect();
        CarrierSearch {
            moved: vec![false; candidates.len()],
            candidates,
            first: None,
            root: skeleton.roots().next(),
        }
    }

    /// Takes the next frame; returns whether the carrier is decided (no
    /// later frame can change it).
    pub fn push(&mut self, frame: &[f64]) -> bool {
        let first = self.first.get_or_insert_with(|| frame.to_vec());
        for (k, (_, channels)) in self.candidates.iter().enumerate() {
            // `!=`, as the whole-clip rule: a NaN differs even from itself
            // (so a NaN in the first frame moves).
            if !self.moved[k] && channels.iter().any(|&ch| frame[ch] != first[ch]) {
                self.moved[k] = true;
            }
        }
        self.decided()
    }

    /// Whether the frames so far decide the carrier: the topmost candidate
    /// moved, or there is no candidate.
    pub fn decided(&self) -> bool {
        self.candidates.is_empty() || self.moved.first() == Some(&true)
    }

    /// The carrier of the frames pushed so far, taken as the whole clip
    /// ([`carrier`]'s rule).
    pub fn carrier(&self) -> Option<JointId> {
        if self.first.is_some()
            && let Some(k) = self.moved.iter().position(|&m| m)
        {
            return Some(self.candidates[k].0);
        }
        self.candidates.first().map(|c| c.0).or(self.root)
    }

    /// The first frame pushed.
    pub fn first_frame(&self) -> Option<&[f64]> {
        self.first.as_deref()
    }
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
#[derive(Clone, Debug)]
pub(crate) struct Setup {
    pub(crate) carrier: usize,
    pub(crate) fk: Kinematics,
    pub(crate) pairs: Vec<(usize, usize)>,
    /// The pairs at the top of their chains (whose parents are not a pair:
    /// hips and shoulders, or the hip and clavicle joints).
    pub(crate) top_pairs: Vec<(usize, usize)>,
    pub(crate) height: f64,
}

impl Setup {
    pub(crate) fn new(bvh: &Bvh) -> Result<Setup> {
        let carrier = carrier(bvh).ok_or_else(|| Error::invalid("the skeleton has no joints"))?;
        Setup::with_carrier(bvh, carrier)
    }

    /// The same for a stream: the skeleton, the carrier (from a
    /// [`CarrierSearch`]) and the clip's first frame (`None` for a clip
    /// without frames), which is all [`Setup::with_carrier`] reads of a
    /// clip (the mirror pairs may need the first frame).
    pub(crate) fn for_stream(
        skeleton: &Skeleton,
        carrier: JointId,
        first: Option<&[f64]>,
    ) -> Result<Setup> {
        let nc = skeleton.n_channels();
        let (n, values) = match first {
            Some(f) => (1, f.to_vec()),
            None => (0, Vec::new()),
        };
        let clip = Bvh::new(skeleton.clone(), Motion::with_frames(1.0, n, nc, values)?)?;
        Setup::with_carrier(&clip, carrier)
    }

    /// The same, with the carrier given (for a clip that must move the
    /// same joint as another clip of its skeleton).
    pub(crate) fn with_carrier(bvh: &Bvh, carrier: JointId) -> Result<Setup> {
        // The pairs the rest pose confirms by direction only: the facing of
        // the Kinect rigs, whose pairs are confirmed by length, stays the
        // carrier's (their outputs unchanged).
        let options = MirrorOptions { by_length: false, ..MirrorOptions::default() };
        let pairs: Vec<(usize, usize)> = Mirror::new(bvh, &options)?
            .pairs()
            .into_iter()
            .map(|(l, r)| (l.index(), r.index()))
            .collect();
        let s = bvh.skeleton();
        let paired = |j: usize| pairs.iter().any(|&(l, r)| l == j || r == j);
        let top_pairs = pairs
            .iter()
            .copied()
            .filter(|&(l, _)| s.joints()[l].parent().is_none_or(|p| !paired(p.index())))
            .collect();
        Ok(Setup {
            top_pairs,
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
    let carrier = carrier(bvh).ok_or_else(|| Error::invalid("the skeleton has no joints"))?;
    let first = (bvh.motion().n_frames() > 0).then(|| bvh.motion().frame(0));
    let mut map = InPlace::new(bvh.skeleton(), carrier, first, up)?;
    let mut out = bvh.clone();
    let nc = bvh.skeleton().n_channels();
    for f in 0..bvh.motion().n_frames() {
        let frame = &mut out.motion_mut().values_mut()[f * nc..(f + 1) * nc];
        if let Err(miss) = map.hold(bvh.motion().frame(f), frame) {
            return Err(Error::invalid(format!(
                "joint {:?} carries the root motion but its position channels cannot hold it in place (off by {miss} in frame {f})",
                bvh.skeleton().joint(carrier).name()
            )));
        }
    }
    Ok(out)
}

/// [`in_place`] one frame at a time, for a stream: a [`FrameMap`] built
/// from the skeleton, the carrier ([`CarrierSearch`]) and the first frame
/// (the position held). It keeps no state from frame to frame. A frame
/// whose carrier cannot be held is written as far as it goes and counted
/// ([`InPlace::failed`]); [`in_place`] on the whole clip names it.
#[derive(Clone, Debug)]
pub struct InPlace {
    setup: Setup,
    output: Skeleton,
    jc: JointChannels,
    /// Forward kinematics of the carrier and its ancestors only (root
    /// first, the carrier last), on the frame's channels `gather` picks
    /// into `compact`: their world transforms are the whole skeleton's.
    chain: Kinematics,
    gather: Vec<usize>,
    compact: Vec<f64>,
    start: DVec3,
    up: SignedAxis,
    /// The chain's world transforms.
    world: Vec<DAffine3>,
    failed: bool,
}

impl InPlace {
    /// The map for clips of `skeleton` whose carrier is `carrier` and whose
    /// first frame is `first` (`None`: a clip without frames).
    ///
    /// # Errors
    /// When `first` does not fit the skeleton.
    pub fn new(
        skeleton: &Skeleton,
        carrier: JointId,
        first: Option<&[f64]>,
        up: SignedAxis,
    ) -> Result<InPlace> {
        let setup = Setup::for_stream(skeleton, carrier, first)?;
        let c = setup.carrier;
        let mut ancestors = vec![c];
        while let Some(p) = skeleton.joint(JointId::new(ancestors[ancestors.len() - 1])).parent() {
            ancestors.push(p.index());
        }
        ancestors.reverse();
        let (chain, gather) = setup.fk.subset(&ancestors);
        let mut map = InPlace {
            output: skeleton.clone(),
            jc: JointChannels::of(skeleton.joint(JointId::new(c))),
            compact: vec![0.0; gather.len()],
            world: vec![DAffine3::IDENTITY; ancestors.len()],
            chain,
            gather,
            start: DVec3::ZERO,
            up,
            setup,
            failed: false,
        };
        if let Some(f) = first {
            map.start = map.carrier_world(f).1.translation;
        }
        Ok(map)
    }

    /// Whether a frame's carrier could not be held in place.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// The world transforms of the carrier's parent (the identity for a
    /// root) and of the carrier in `frame`.
    fn carrier_world(&mut self, frame: &[f64]) -> (DAffine3, DAffine3) {
        for (v, &c) in self.compact.iter_mut().zip(&self.gather) {
            *v = frame[c];
        }
        self.chain.world(&self.compact, &mut self.world);
        let n = self.world.len();
        let parent = if n > 1 { self.world[n - 2] } else { DAffine3::IDENTITY };
        (parent, self.world[n - 1])
    }

    /// Maps one frame; `Err` with how far off the carrier stays when its
    /// channels cannot hold it.
    fn hold(&mut self, src: &[f64], dst: &mut [f64]) -> std::result::Result<(), f64> {
        dst.copy_from_slice(src);
        let (parent, carrier) = self.carrier_world(src);
        let p = carrier.translation;
        let mut target = self.start;
        target[self.up.axis().index()] = p[self.up.axis().index()];
        let t = parent.inverse().transform_point3(target);
        let miss = self.jc.write_translation(t, PositionChannels::Replace, dst);
        if miss > 1e-9 * self.setup.height { Err(miss) } else { Ok(()) }
    }
}

/// `FrameMap` and `SplitFrameMap` for a root-motion map whose per-frame
/// step (`$step`) can fail on a frame (the carrier cannot hold the motion):
/// the failure is remembered in `failed` (the whole-clip functions report
/// it), and runs mapped in parts on the pool pass it on.
macro_rules! carrier_map {
    ($map:ty, $step:ident) => {
        impl FrameMap for $map {
            fn output_skeleton(&self) -> &Skeleton {
                &self.output
            }

            fn map(&mut self, input: &[f64], output: &mut [f64]) {
                if self.$step(input, output).is_err() {
                    self.failed = true;
                }
            }
        }

        impl SplitFrameMap for $map {
            fn absorb(&mut self, earlier: &Self) {
                self.failed |= earlier.failed;
            }
        }
    };
}

carrier_map!(InPlace, hold);

/// Moves and turns the whole clip about the up axis so that the first
/// frame's carrier is above the origin and the character faces +Z (for Y
/// up). See the module documentation.
///
/// # Errors
/// When the carrier's channels cannot hold a full transform.
pub fn to_origin(bvh: &Bvh, up: SignedAxis) -> Result<Bvh> {
    let carrier = carrier(bvh).ok_or_else(|| Error::invalid("the skeleton has no joints"))?;
    let first = (bvh.motion().n_frames() > 0).then(|| bvh.motion().frame(0));
    let mut map = ToOrigin::new(bvh.skeleton(), carrier, first, up)?;
    let mut out = bvh.clone();
    let nc = bvh.skeleton().n_channels();
    for f in 0..bvh.motion().n_frames() {
        let frame = &mut out.motion_mut().values_mut()[f * nc..(f + 1) * nc];
        map.apply(bvh.motion().frame(f), frame)?;
    }
    Ok(out)
}

/// [`to_origin`] one frame at a time, for a stream: a [`FrameMap`] built
/// from the skeleton, the carrier ([`CarrierSearch`]) and the first frame
/// (which decides the move). The state carried from frame to frame is the
/// carrier's previous output angles (Euler continuity). A frame whose
/// carrier cannot hold its new transform is counted
/// ([`ToOrigin::failed`]); [`to_origin`] on the whole clip says why.
#[derive(Clone, Debug)]
pub struct ToOrigin {
    output: Skeleton,
    fk: Kinematics,
    mover: Mover,
    g: DAffine3,
    near: Option<[f64; 3]>,
    world: Vec<DAffine3>,
    failed: bool,
}

impl ToOrigin {
    /// The map for clips of `skeleton` whose carrier is `carrier` and whose
    /// first frame is `first` (`None`: a clip without frames).
    ///
    /// # Errors
    /// When `first` does not fit the skeleton.
    pub fn new(
        skeleton: &Skeleton,
        carrier: JointId,
        first: Option<&[f64]>,
        up: SignedAxis,
    ) -> Result<ToOrigin> {
        let setup = Setup::for_stream(skeleton, carrier, first)?;
        let c = setup.carrier;
        let mut world = vec![DAffine3::IDENTITY; skeleton.len()];
        let g = match first {
            Some(f) => {
                setup.fk.world(f, &mut world);
                let yaw = yaw_between(setup.facing(&world, up), target_forward(up), up.vector());
                let turn = DQuat::from_axis_angle(up.vector(), yaw);
                let shift = -horizontal(world[c].translation, up);
                DAffine3::from_quat(turn) * DAffine3::from_translation(shift)
            }
            None => DAffine3::IDENTITY,
        };
        Ok(ToOrigin {
            output: skeleton.clone(),
            mover: Mover::new(skeleton, &setup),
            fk: setup.fk,
            g,
            near: None,
            world,
            failed: false,
        })
    }

    /// Whether a frame's carrier could not hold its new transform.
    pub fn failed(&self) -> bool {
        self.failed
    }

    fn apply(&mut self, src: &[f64], dst: &mut [f64]) -> Result<()> {
        dst.copy_from_slice(src);
        self.fk.world(src, &mut self.world);
        let near = self.near.unwrap_or_else(|| self.mover.jc.angles(src));
        let done = self.mover.put(&self.world, self.g, near, dst);
        self.near = Some(self.mover.jc.angles(dst));
        done
    }
}

carrier_map!(ToOrigin, apply);

/// The carrier rewritten to a new world transform: the one rule that
/// [`move_carrier`] and [`ToOrigin`] share.
#[derive(Clone, Debug)]
struct Mover {
    c: usize,
    jc: JointChannels,
    name: String,
    parent: Option<usize>,
    tolerance: f64,
}

impl Mover {
    fn new(skeleton: &Skeleton, setup: &Setup) -> Mover {
        let joint = skeleton.joint(JointId::new(setup.carrier));
        Mover {
            c: setup.carrier,
            jc: JointChannels::of(joint),
            name: joint.name().to_string(),
            parent: joint.parent().map(|p| p.index()),
            tolerance: 1e-9 * setup.height.max(1.0),
        }
    }

    /// Writes into `out` (a copy of the input frame whose world transforms
    /// are `world`) the carrier's channels that make its world transform
    /// `g · W`, angles closest to `near`.
    fn put(&self, world: &[DAffine3], g: DAffine3, near: [f64; 3], out: &mut [f64]) -> Result<()> {
        let parent = self.parent.map_or(DAffine3::IDENTITY, |q| world[q]);
        let target = g * world[self.c];
        put_world(&self.jc, &self.name, parent, target, near, out, self.tolerance)
    }
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
    g: impl FnMut(usize, &[DAffine3]) -> DAffine3,
) -> Result<Bvh> {
    move_carrier_after(bvh, setup, None, g)
}

/// [`move_carrier`], the first frame's angles closest to those of `before`
/// (a frame of the same layout, the one the moved clip continues) instead
/// of its own: a clip turned to continue another (a concat's next clip)
/// then carries on in the Euler angles the output has reached rather than
/// flipping to another triple of the same rotation (180° apart on the
/// carrier's channels at the seam, which a player interpolating channels
/// turns through).
pub(crate) fn move_carrier_after(
    bvh: &Bvh,
    setup: &Setup,
    before: Option<&[f64]>,
    mut g: impl FnMut(usize, &[DAffine3]) -> DAffine3,
) -> Result<Bvh> {
    let s = bvh.skeleton();
    let mover = Mover::new(s, setup);
    let mut out = bvh.clone();
    let nc = s.n_channels();
    let mut world = vec![DAffine3::IDENTITY; s.len()];
    for f in 0..bvh.motion().n_frames() {
        setup.fk.world(bvh.motion().frame(f), &mut world);
        let gf = g(f, &world);
        let near = if f == 0 {
            mover.jc.angles(before.unwrap_or(bvh.motion().frame(0)))
        } else {
            mover.jc.angles(&out.motion().values()[(f - 1) * nc..f * nc])
        };
        let frame = &mut out.motion_mut().values_mut()[f * nc..(f + 1) * nc];
        mover.put(&world, gf, near, frame)?;
    }
    Ok(out)
}

/// Adds a root joint named `name` carrying the ground projection and the
/// heading of the carrier, with channels `Xposition Yposition Zposition`
/// and one rotation about the up axis. See the module documentation.
///
/// # Errors
/// When `name` is not a valid joint name (empty, outer whitespace, a brace or
/// a control character), a joint is already called `name`, or the rewritten joint's channels
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
    let carrier = carrier(bvh).ok_or_else(|| Error::invalid("the skeleton has no joints"))?;
    let first = (bvh.motion().n_frames() > 0).then(|| bvh.motion().frame(0));
    let mut map = Extract::new(bvh.skeleton(), carrier, first, up, name)?;
    let nc = map.output.n_channels();
    let n_frames = bvh.motion().n_frames();
    let mut values = vec![0.0; n_frames * nc];
    for (src, dst) in bvh.motion().frames().zip(values.chunks_exact_mut(nc.max(1))) {
        map.apply(src, dst)?;
    }
    let motion = Motion::with_frames(bvh.motion().frame_time(), n_frames, nc, values)?;
    Bvh::new(map.output, motion)
}

/// [`extract`] one frame at a time, for a stream: a [`FrameMap`] from the
/// skeleton to the one with the new root, built from the carrier
/// ([`CarrierSearch`]) and the first frame (the left/right pairs that give
/// the heading may need it). The state carried from frame to frame is
/// the previous output frame's heading and rewritten angles (continuity).
/// A frame whose rewritten joints cannot hold their transforms is counted
/// ([`Extract::failed`]); [`extract`] on the whole clip says why.
#[derive(Clone, Debug)]
pub struct Extract {
    setup: Setup,
    up: SignedAxis,
    output: Skeleton,
    /// The old top root's first channel, and the old channel count.
    root_first: usize,
    nc_old: usize,
    /// The joints rewritten (input indices), their channels in the output
    /// skeleton, their names and input parents.
    rewrite: Vec<usize>,
    channels: Vec<JointChannels>,
    names: Vec<String>,
    parents: Vec<Option<usize>>,
    world: Vec<DAffine3>,
    /// The previous output frame's heading and rewritten joints' angles
    /// (`None` before the first frame).
    prev: Option<(f64, Vec<[f64; 3]>)>,
    failed: bool,
}

impl Extract {
    /// The map for clips of `skeleton` whose carrier is `carrier` and whose
    /// first frame is `first` (`None`: a clip without frames); the new root
    /// is called `name`.
    ///
    /// # Errors
    /// When `name` is not a valid joint name, a joint is already called
    /// `name`, or `first` does not fit.
    pub fn new(
        skeleton: &Skeleton,
        carrier: JointId,
        first: Option<&[f64]>,
        up: SignedAxis,
        name: &str,
    ) -> Result<Extract> {
        super::joints::check_name(name)?;
        let setup = Setup::for_stream(skeleton, carrier, first)?;
        let s = skeleton;
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
        let output: Skeleton = build(&specs)?;
        let channels = rewrite
            .iter()
            .map(|&r| JointChannels::of(output.joint(JointId::new(shift(r)))))
            .collect();
        Ok(Extract {
            up,
            root_first: top_joint.first_channel(),
            nc_old: s.n_channels(),
            channels,
            names: rewrite.iter().map(|&r| s.joint(JointId::new(r)).name().to_string()).collect(),
            parents: rewrite
                .iter()
                .map(|&r| s.joint(JointId::new(r)).parent().map(|p| p.index()))
                .collect(),
            rewrite,
            output,
            world: vec![DAffine3::IDENTITY; s.len()],
            setup,
            prev: None,
            failed: false,
        })
    }

    /// Whether a frame's rewritten joints could not hold their transforms.
    pub fn failed(&self) -> bool {
        self.failed
    }

    fn apply(&mut self, src: &[f64], dst: &mut [f64]) -> Result<()> {
        let (root_first, up) = (self.root_first, self.up);
        let c = self.setup.carrier;
        dst[..root_first].copy_from_slice(&src[..root_first]);
        dst[root_first + 4..].copy_from_slice(&src[root_first..self.nc_old]);
        self.setup.fk.world(src, &mut self.world);
        let world = &self.world;
        let ground = horizontal(world[c].translation, up);
        let yaw_prev = self.prev.as_ref().map_or(0.0, |p| p.0);
        let mut yaw =
            yaw_between(target_forward(up), self.setup.facing(world, up), up.vector()).to_degrees();
        yaw += 360.0 * ((yaw_prev - yaw) / 360.0).round();
        dst[root_first..root_first + 3].copy_from_slice(&ground.to_array());
        // A rotation channel turns about the positive axis.
        dst[root_first + 3] = yaw * up.sign();
        let n_world = DAffine3::from_translation(ground)
            * DAffine3::from_quat(DQuat::from_axis_angle(up.vector(), yaw.to_radians()));
        let tolerance = 1e-9 * self.setup.height.max(1.0);
        let mut angles = match self.prev.take() {
            Some((_, a)) => a,
            None => self.channels.iter().map(|jc| jc.angles(dst)).collect(),
        };
        let mut done = Ok(());
        for (k, &r) in self.rewrite.iter().enumerate() {
            let jc = &self.channels[k];
            let parent = match self.parents[k] {
                Some(p) => n_world * world[p],
                None => n_world,
            };
            if let Err(e) =
                put_world(jc, &self.names[k], parent, world[r], angles[k], dst, tolerance)
            {
                done = Err(e);
                break;
            }
        }
        for (a, jc) in angles.iter_mut().zip(&self.channels) {
            *a = jc.angles(dst);
        }
        self.prev = Some((yaw, angles));
        done
    }
}

carrier_map!(Extract, apply);
