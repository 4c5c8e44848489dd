//! Guessing a file's length unit from the size of its figure.
//!
//! BVH files do not say which unit their offsets and positions are in. A
//! person is about 1.7 m tall (or wide with the arms out), so the size of
//! the figure tells metres, inches, centimetres, millimetres and the CMU
//! scale apart; anything too far from all of them is [`Units::Unknown`].
//!
//! This is the one guess in bvhkit: the renderer, both players and the
//! browser page (which gets it from the server) all call
//! [`UnitGuess::of_positions`] (or [`UnitGuess::of_bvh`], the same guess
//! from a parsed file) with the world positions they draw. Its input is the
//! *median* size of the frames: the size of one frame depends on the pose
//! (a crouch, a bind pose whose position channels are all 0), a median
//! over the whole motion does not, and a glitch frame (the whole figure
//! thrown kilometres away) keeps its size, so it cannot sway it. A file
//! without motion is measured in its rest pose.
//!
//! The size is checked against what the joint names tell ([`Limbs`],
//! [`UnitGuess::named`]): a named leg (hip joint to ankle) must be 0.5 to
//! 1.2 m long in the guessed unit, a hand-only rig's hand 0.1 to 0.3 m.
//! When the size's unit fails that and another unit passes, the other
//! unit wins (a crumpled Kinect capture 82 cm across is not 2.07 m of
//! inches: its legs are 81 cm); when none passes the answer is
//! [`Units::Unknown`] with the reason ([`Basis`]), not a wrong unit.
//!
//! The guess assumes a person: it only labels and scales drawings, and no
//! data is ever rescaled by it.
//!
//! # Example
//! ```
//! use bvhkit::{Bvh, PositionChannels};
//! use bvhkit::units::{UnitGuess, Units};
//!
//! // A figure 172 units tall: centimetres.
//! let bvh = Bvh::parse("HIERARCHY
//! ROOT Hips
//! {
//!     OFFSET 0 0 0
//!     CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
//!     JOINT Chest
//!     {
//!         OFFSET 0 30 0
//!         CHANNELS 3 Zrotation Xrotation Yrotation
//!         End Site
//!         {
//!             OFFSET 0 50 0
//!         }
//!     }
//!     JOINT LeftUpLeg
//!     {
//!         OFFSET 10 0 0
//!         CHANNELS 3 Zrotation Xrotation Yrotation
//!         End Site
//!         {
//!             OFFSET 0 -92 0
//!         }
//!     }
//! }
//! MOTION
//! Frames: 1
//! Frame Time: 0.04
//! 0 92 0 0 0 0 0 0 0 0 0 0
//! ")?;
//! let guess = UnitGuess::of_bvh(&bvh, PositionChannels::Replace);
//! assert_eq!(guess.units, Units::Centimetres);
//! assert_eq!(guess.size, 172.0);
//! assert_eq!(guess.metres_per_unit(), 0.01);
//! assert_eq!(guess.label(), "centimetres (size 172.0000 ≈ 1.72 m)");
//! # Ok::<(), bvhkit::Error>(())
//! ```
//!
//! # Implementation notes
//!
//! The one guess of a file's length unit (metres, centimetres, millimetres,
//! inches, the CMU scale of 1/0.45 inch, else unknown and shown human-sized)
//! from the median size of the frames drawn (the rest pose for a file without
//! motion), so neither the pose of one frame nor a glitch frame sways it. `bvh
//! render`, `bvh serve` (which sends it to the browser page in `clips.json`;
//! the page guesses nothing itself) and the desktop player all use it
//! (`UnitGuess::of_positions`, `of_bvh` (the frames' sizes on the pool, runs of
//! frames through `positions_many`), `FrameSizes` for frames met one at a time
//! or in runs (`push_many`: `Kinematics::positions_many`, eight frames per SIMD
//! lane, in pieces on the pool as `of_bvh` measures them, `measure_all`; the
//! same sizes), `bvhkit_render::units::of_clip`, which agree) to draw files
//! side by side at one scale.

use std::fmt;

use glam::DVec3;

use crate::{Bvh, Kinematics, PositionChannels, Skeleton};

/// A length unit a figure seems to be measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Units {
    /// Metres.
    Metres,
    /// Centimetres.
    Centimetres,
    /// Millimetres.
    Millimetres,
    /// Inches.
    Inches,
    /// The CMU scale: 1/0.45 inch (about 5.64 cm), the length unit of the
    /// CMU motion-capture database's ASF skeletons, which the widely used
    /// BVH conversions of it (cgspeed and others) keep, so that a person
    /// is about 30 units tall.
    CmuScale,
    /// No unit fits a human-sized figure.
    Unknown,
}

/// The human size (metres) the guess assumes.
pub const HUMAN_SIZE_M: f64 = 1.7;

/// Metres per unit of the CMU scale: 1/0.45 inch.
pub const CMU_UNIT_M: f64 = 0.0254 / 0.45;

/// How far (as a factor) a figure may be from human size in the guessed
/// unit and still get that unit.
pub const TOLERANCE: f64 = 1.8;

/// Sizes at or below this are a point, not a figure.
const NO_SIZE: f64 = 1e-9;

impl Units {
    /// Every unit but [`Units::Unknown`].
    pub const KNOWN: [Units; 5] =
        [Units::Metres, Units::Centimetres, Units::Millimetres, Units::Inches, Units::CmuScale];

    /// The unit of a symbol or the first word of its name, any case
    /// (`m`, `cm`, `mm`, `in`, `cmu`, `metres`, ...), as the commands take
    /// it; `None` for anything else (and for [`Units::Unknown`]).
    ///
    /// ```
    /// use bvhkit::units::Units;
    /// assert_eq!(Units::from_name("CM"), Some(Units::Centimetres));
    /// assert_eq!(Units::from_name("inches"), Some(Units::Inches));
    /// assert_eq!(Units::from_name("furlong"), None);
    /// ```
    pub fn from_name(s: &str) -> Option<Units> {
        [Units::Metres, Units::Centimetres, Units::Millimetres, Units::Inches, Units::CmuScale]
            .into_iter()
            .find(|u| {
                u.symbol().eq_ignore_ascii_case(s)
                    || u.to_string().split(' ').next().is_some_and(|w| w.eq_ignore_ascii_case(s))
            })
    }

    /// Metres per unit, `None` for [`Units::Unknown`].
    #[must_use]
    pub fn metres_per_unit(self) -> Option<f64> {
        match self {
            Units::Metres => Some(1.0),
            Units::Centimetres => Some(0.01),
            Units::Millimetres => Some(0.001),
            Units::Inches => Some(0.0254),
            Units::CmuScale => Some(CMU_UNIT_M),
            Units::Unknown => None,
        }
    }

    /// Short symbol: `m`, `cm`, `mm`, `in`, `cmu`, or `?`.
    #[must_use]
    pub fn symbol(self) -> &'static str {
        match self {
            Units::Metres => "m",
            Units::Centimetres => "cm",
            Units::Millimetres => "mm",
            Units::Inches => "in",
            Units::CmuScale => "cmu",
            Units::Unknown => "?",
        }
    }

    /// The unit in which a person of size `size` (in file units) is
    /// closest to [`HUMAN_SIZE_M`], or [`Units::Unknown`] when even the
    /// closest is more than [`TOLERANCE`] times off (or `size` is not a
    /// positive number).
    #[must_use]
    pub fn of_size(size: f64) -> Units {
        if !(size.is_finite() && size > 0.0) {
            return Units::Unknown;
        }
        let mut best = (f64::INFINITY, Units::Unknown);
        for u in Units::KNOWN {
            let metres = size * u.metres_per_unit().unwrap_or(1.0);
            let off = (metres / HUMAN_SIZE_M).ln().abs();
            if off < best.0 {
                best = (off, u);
            }
        }
        if best.0 <= TOLERANCE.ln() { best.1 } else { Units::Unknown }
    }
}

impl fmt::Display for Units {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Units::Metres => "metres",
            Units::Centimetres => "centimetres",
            Units::Millimetres => "millimetres",
            Units::Inches => "inches",
            Units::CmuScale => "CMU units (1/0.45 in)",
            Units::Unknown => "unknown units",
        })
    }
}

/// The size of a pose: the largest extent of its bounding box along any
/// axis (height when standing, arm span in a T-pose), ignoring non-finite
/// points; 0 for no points.
#[must_use]
pub fn pose_size(points: &[DVec3]) -> f64 {
    finite_pose_size(points).unwrap_or_else(|| pose_size_of_finite(points))
}

/// [`pose_size`] when every point is finite (`None` otherwise, and for
/// rare finite points whose sum overflows): the bounding box from two
/// points at a time, six coordinates of running minima and maxima that the
/// compiler keeps in SIMD registers, and a running sum that a non-finite
/// coordinate turns non-finite. The same minima and maxima as point by
/// point, so the same size.
fn finite_pose_size(points: &[DVec3]) -> Option<f64> {
    if points.is_empty() {
        return Some(0.0);
    }
    let mut lo = [f64::INFINITY; 6];
    let mut hi = [f64::NEG_INFINITY; 6];
    let mut sum = [0.0f64; 6];
    let mut step = |v: [f64; 6]| {
        for i in 0..6 {
            lo[i] = if v[i] < lo[i] { v[i] } else { lo[i] };
            hi[i] = if v[i] > hi[i] { v[i] } else { hi[i] };
            sum[i] += v[i];
        }
    };
    let mut pairs = points.chunks_exact(2);
    for c in &mut pairs {
        step([c[0].x, c[0].y, c[0].z, c[1].x, c[1].y, c[1].z]);
    }
    if let [p] = pairs.remainder() {
        // The last point twice: the same box.
        step([p.x, p.y, p.z, p.x, p.y, p.z]);
    }
    if !sum.iter().all(|s| s.is_finite()) {
        return None;
    }
    // Coordinate i of the six is axis i % 3.
    let extent = |axis: usize| hi[axis].max(hi[axis + 3]) - lo[axis].min(lo[axis + 3]);
    Some(extent(0).max(extent(1)).max(extent(2)))
}

/// [`pose_size`] of the finite points among `points`.
fn pose_size_of_finite(points: &[DVec3]) -> f64 {
    let mut it = points.iter().filter(|p| p.is_finite());
    let Some(first) = it.next() else { return 0.0 };
    let (lo, hi) = it.fold((*first, *first), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
    (hi - lo).max_element()
}

/// [`UnitGuess::of_bvh`] of frames met one at a time, for a caller that
/// streams them: each frame's world positions are computed and only its
/// [`pose_size`] is kept (one number per frame).
#[derive(Clone, Debug)]
pub struct FrameSizes {
    fk: Kinematics,
    scratch: crate::FkScratch,
    pose: Vec<DVec3>,
    sizes: Vec<f64>,
    /// The rest pose, for a motion without frames.
    rest: Vec<DVec3>,
    /// What the skeleton's names tell ([`UnitGuess::named`]).
    limbs: Limbs,
    /// Values per frame.
    channels: usize,
}

impl FrameSizes {
    /// For frames of `skeleton` (its channels), position channels read as `mode`.
    #[must_use]
    pub fn new(skeleton: &Skeleton, mode: PositionChannels) -> FrameSizes {
        let fk = Kinematics::new(skeleton, mode);
        let scratch = fk.scratch();
        let pose = vec![DVec3::ZERO; skeleton.len()];
        let rest = rest_pose(skeleton, mode);
        let channels = skeleton.n_channels();
        let limbs = Limbs::of(skeleton);
        FrameSizes { fk, scratch, pose, sizes: Vec::new(), rest, limbs, channels }
    }

    /// Adds a frame.
    pub fn push(&mut self, frame: &[f64]) {
        self.fk.positions_with(frame, &mut self.scratch, &mut self.pose);
        self.sizes.push(pose_size(&self.pose));
    }

    /// Adds `n` frames, which `frames` holds one after the other: the
    /// sizes [`FrameSizes::push`] keeps frame by frame, the positions
    /// computed eight frames at a time ([`Kinematics::positions_many`], the
    /// same bits in about half the instructions), in pieces of frames on
    /// rayon's pool (with the `parallel` feature).
    ///
    /// # Panics
    /// When `frames` does not hold `n` frames of the skeleton's channels.
    pub fn push_many(&mut self, n: usize, frames: &[f64]) {
        let (w, joints) = (self.channels, self.fk.len());
        assert_eq!(frames.len(), n * w, "frames must hold n frames");
        if w == 0 || joints == 0 {
            for _ in 0..n {
                self.push(&[]);
            }
            return;
        }
        let at = self.sizes.len();
        self.sizes.resize(at + n, 0.0);
        measure_all(&self.fk, frames, w, &mut self.sizes[at..]);
    }

    /// The frames added so far.
    #[must_use]
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Whether no frame was added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// The guess: of the frames' sizes, or of the rest pose when there
    /// were none.
    #[must_use]
    pub fn guess(&self) -> UnitGuess {
        if self.sizes.is_empty() {
            return UnitGuess::of_positions(self.rest.len(), &self.rest).named(&self.limbs);
        }
        UnitGuess::of_size(median_size(self.sizes.clone())).named(&self.limbs)
    }
}

/// Frames per call of [`Kinematics::positions_many`] in [`measure`]
/// (their positions stay in the cache until they are measured).
const SIZES_RUN: usize = 64;

/// Frames per piece of work of [`measure_all`]: four runs of [`measure`].
const SIZES_PIECE: usize = 4 * SIZES_RUN;

/// [`measure`] of every frame of `frames` (`width` values each, as many
/// frames as `sizes` has room for), in pieces of [`SIZES_PIECE`] frames on
/// rayon's pool (with the `parallel` feature), each worker with lanes of
/// its own: the sizes of one frame at a time, whatever the cutting.
fn measure_all(fk: &Kinematics, frames: &[f64], width: usize, sizes: &mut [f64]) {
    let work = |k: usize, out: &mut [f64], (lanes, run): &mut (crate::FkLanes, Vec<DVec3>)| {
        let f = k * SIZES_PIECE;
        measure(fk, lanes, run, &frames[f * width..(f + out.len()) * width], width, out);
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        sizes
            .par_chunks_mut(SIZES_PIECE)
            .enumerate()
            .for_each_init(|| (fk.lanes_scratch(), Vec::new()), |st, (k, out)| work(k, out, st));
    }
    #[cfg(not(feature = "parallel"))]
    {
        let mut st = (fk.lanes_scratch(), Vec::new());
        for (k, out) in sizes.chunks_mut(SIZES_PIECE).enumerate() {
            work(k, out, &mut st);
        }
    }
}

/// The [`pose_size`] of each frame of `frames` (`width` values each, as
/// many frames as `sizes` has room for) into `sizes`, the positions
/// computed [`SIZES_RUN`] frames at a time on SIMD lanes into `run`:
/// [`FrameSizes::push_many`] and [`UnitGuess::of_bvh`]. `width` and the
/// skeleton's joints are not zero.
fn measure(
    fk: &Kinematics,
    lanes: &mut crate::FkLanes,
    run: &mut Vec<DVec3>,
    frames: &[f64],
    width: usize,
    sizes: &mut [f64],
) {
    let joints = fk.len();
    for (frames, out) in frames.chunks(SIZES_RUN * width).zip(sizes.chunks_mut(SIZES_RUN)) {
        run.resize(out.len() * joints, DVec3::ZERO);
        fk.positions_many(frames, lanes, run);
        for (s, p) in out.iter_mut().zip(run.chunks_exact(joints)) {
            *s = pose_size(p);
        }
    }
}

/// The size of a motion: the median [`pose_size`] of its frames (the lower
/// middle one for an even count), frames that are a single point left
/// out; 0 when every frame is a point or there are none.
///
/// `positions` holds `n_joints` positions per frame, frame-major (an
/// incomplete last frame is ignored).
#[must_use]
pub fn motion_size(n_joints: usize, positions: &[DVec3]) -> f64 {
    if n_joints == 0 {
        return 0.0;
    }
    median_size(positions.chunks_exact(n_joints).map(pose_size).collect())
}

/// The lower middle of the sizes above a point's (0 when none): the
/// figure's size of [`motion_size`] and [`UnitGuess::of_bvh`].
pub(crate) fn median_size(mut sizes: Vec<f64>) -> f64 {
    sizes.retain(|s| *s > NO_SIZE);
    if sizes.is_empty() {
        return 0.0;
    }
    let mid = (sizes.len() - 1) / 2;
    *sizes.select_nth_unstable_by(mid, f64::total_cmp).1
}

/// The rest pose of `skeleton`: world positions with every channel 0.
#[must_use]
pub fn rest_pose(skeleton: &Skeleton, mode: PositionChannels) -> Vec<DVec3> {
    let mut out = vec![DVec3::ZERO; skeleton.len()];
    Kinematics::new(skeleton, mode).positions(&vec![0.0; skeleton.n_channels()], &mut out);
    out
}

/// A unit guess with the size it was made from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitGuess {
    /// The guessed unit.
    pub units: Units,
    /// The figure's size in file units ([`motion_size`]).
    pub size: f64,
    /// What decided the unit: the size, or the skeleton's named limbs.
    pub basis: Basis,
}

/// What decided a [`UnitGuess`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    /// The figure's size alone ([`Units::of_size`]): the skeleton's names
    /// tell no limb, or the size's unit gives its limbs human lengths.
    Size,
    /// The named limb's length ([`Limbs`], in file units), because the
    /// size's unit would give it a length no person has and this unit
    /// gives it a human one.
    Limb(Limb, f64),
    /// No unit gives the named limb (its length in file units) a human
    /// length: not a person, or an unusual unit (MakeHuman's decimetres).
    NoHumanLimb(Limb, f64),
}

/// A limb whose length [`Limbs`] measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limb {
    /// Hip to ankle (thigh and shin), [`LEG_M`] on a person.
    Leg,
    /// Wrist to the longest finger's tip, [`HAND_M`] on a person; measured
    /// only on a hand-only rig (see [`Limbs::hand`]).
    Hand,
}

impl Limb {
    /// The lengths (metres) the limb has on a person, child to tall adult.
    #[must_use]
    pub fn human_range(self) -> std::ops::RangeInclusive<f64> {
        match self {
            Limb::Leg => LEG_M,
            Limb::Hand => HAND_M,
        }
    }
}

impl fmt::Display for Limb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limb::Leg => "leg",
            Limb::Hand => "hand",
        })
    }
}

/// A person's leg, hip joint to ankle, in metres (a child's to a tall
/// adult's: thigh and shin are each about a quarter of the height).
pub const LEG_M: std::ops::RangeInclusive<f64> = 0.5..=1.2;

/// A person's hand, wrist to the longest fingertip, in metres.
pub const HAND_M: std::ops::RangeInclusive<f64> = 0.1..=0.3;

/// Joints (End Sites included) a hand-only rig's hand has below it at
/// least: five fingers of two joints each; a VR tracker named `hand` has
/// one.
const HAND_JOINTS: usize = 10;

/// What a skeleton's joint names tell of its size: the length (file
/// units) of a leg, or of a hand-only rig's hand, found by the name
/// families retargeting knows ([`crate::retarget::names::classify`]).
///
/// A bone's length is its child's OFFSET: the rest skeleton's, which
/// no pose changes, so the motion cannot sway it (a crumpled capture, a
/// static top joint the figure walks away from).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limbs {
    /// Hip joint to ankle along the skeleton (every joint between),
    /// averaged over the sides that have both.
    pub leg: Option<f64>,
    /// A hand-only rig's hand: wrist to the farthest joint below it along
    /// the skeleton. `None` without one (a joint named hand or wrist at
    /// the top, or under a top joint, with fingers below it) or with legs.
    pub hand: Option<f64>,
}

impl Limbs {
    /// The limbs of `skeleton` that its names tell.
    #[must_use]
    pub fn of(skeleton: &Skeleton) -> Limbs {
        use crate::retarget::names::{Bone, Limb as L, Side, classify, normalize};
        let bones = classify(skeleton);
        let find = |side, limb| bones.iter().position(|b| *b == Some(Bone::Limb(side, limb)));
        // Length of the path from `below` up to (not including) `above`,
        // when `above` is an ancestor of `below`.
        let path = |below: usize, above: usize| {
            let mut len = 0.0;
            let mut j = crate::skeleton::JointId::new(below);
            while j.index() != above {
                let joint = skeleton.joint(j);
                len += joint.offset().length();
                j = joint.parent()?;
            }
            Some(len)
        };
        let legs: Vec<f64> = [Side::Left, Side::Right]
            .into_iter()
            .filter_map(|s| path(find(s, L::Foot)?, find(s, L::UpperLeg)?))
            .filter(|l| l.is_finite() && *l > NO_SIZE)
            .collect();
        let leg = (!legs.is_empty()).then(|| legs.iter().sum::<f64>() / legs.len() as f64);
        // A hand-only rig: a joint named hand or wrist at the top (or just
        // under a tracking origin) with fingers below it.
        let hand = leg
            .is_none()
            .then(|| {
                let h = skeleton.ids().find(|&id| {
                    let j = skeleton.joint(id);
                    let n = normalize(j.name());
                    !j.is_end_site()
                        && j.depth() <= 1
                        && (n.contains("hand") || n.contains("wrist"))
                        && skeleton.subtree_end(id) - id.index() > HAND_JOINTS
                })?;
                let end = skeleton.subtree_end(h);
                (h.index() + 1..end).filter_map(|j| path(j, h.index())).reduce(f64::max)
            })
            .flatten()
            .filter(|l| l.is_finite() && *l > NO_SIZE);
        Limbs { leg, hand }
    }

    /// The limbs of a figure given as it is drawn: each joint's name,
    /// parent (a smaller index) and whether it is an End Site, and the
    /// world positions of one pose (bone lengths are the distances
    /// between joints, which no rotation changes). [`Limbs::default`]
    /// when these do not make a skeleton (a parent out of order).
    ///
    /// For the positions of a skeleton's pose this is [`Limbs::of`] the
    /// skeleton, within rounding.
    #[must_use]
    pub fn of_pose(
        names: &[String],
        parents: &[Option<usize>],
        is_end_site: &[bool],
        pose: &[DVec3],
    ) -> Limbs {
        let mut b = crate::skeleton::SkeletonBuilder::new();
        let mut ids = Vec::with_capacity(parents.len());
        for (j, parent) in parents.iter().enumerate() {
            let (Some(name), Some(&end), Some(&at)) =
                (names.get(j), is_end_site.get(j), pose.get(j))
            else {
                return Limbs::default();
            };
            let id = match parent {
                None => b.root(name, at, &[]),
                Some(p) if *p < j => {
                    let (pid, from) = (ids[*p], pose[*p]);
                    if end {
                        b.end_site(pid, at - from)
                    } else {
                        b.joint(pid, name, at - from, &[])
                    }
                }
                Some(_) => return Limbs::default(),
            };
            let Ok(id) = id else { return Limbs::default() };
            ids.push(id);
        }
        Limbs::of(&b.build())
    }

    /// The limb measured and its length in file units (the leg first).
    #[must_use]
    pub fn measured(&self) -> Option<(Limb, f64)> {
        self.leg.map(|l| (Limb::Leg, l)).or(self.hand.map(|h| (Limb::Hand, h)))
    }
}

impl UnitGuess {
    /// The guess for a figure of size `size` (file units).
    #[must_use]
    pub fn of_size(size: f64) -> UnitGuess {
        UnitGuess { units: Units::of_size(size), size, basis: Basis::Size }
    }

    /// This size's guess checked against the limbs the skeleton's names
    /// tell ([`Limbs`]): the size's unit when it gives the limb a human
    /// length ([`Limb::human_range`]) or no limb is named; else the unit
    /// that does (of several, the one nearest human size for the figure);
    /// else [`Units::Unknown`], because no unit makes the limb a
    /// person's. Every guess of a file with a skeleton goes through it
    /// ([`UnitGuess::of_bvh`], [`FrameSizes::guess`]).
    ///
    /// ```
    /// use bvhkit::units::{Basis, Limb, Limbs, UnitGuess, Units};
    /// // A crumpled capture 82 units across whose legs are 81 units long:
    /// // inches by the size (2.07 m), centimetres by the legs.
    /// let legs = Limbs { leg: Some(80.8), hand: None };
    /// let guess = UnitGuess::of_size(81.5).named(&legs);
    /// assert_eq!(guess.units, Units::Centimetres);
    /// assert_eq!(guess.basis, Basis::Limb(Limb::Leg, 80.8));
    /// ```
    #[must_use]
    pub fn named(self, limbs: &Limbs) -> UnitGuess {
        let Some((limb, len)) = limbs.measured() else { return self };
        let range = limb.human_range();
        let fits = |u: Units| u.metres_per_unit().is_some_and(|m| range.contains(&(len * m)));
        if fits(self.units) {
            return UnitGuess { basis: Basis::Size, ..self };
        }
        let near_human = |u: &Units| {
            let m = self.size * u.metres_per_unit().unwrap_or(1.0);
            if m > NO_SIZE { (m / HUMAN_SIZE_M).ln().abs() } else { f64::INFINITY }
        };
        let best = Units::KNOWN
            .into_iter()
            .filter(|u| fits(*u))
            .min_by(|a, b| near_human(a).total_cmp(&near_human(b)));
        match best {
            Some(units) => UnitGuess { units, size: self.size, basis: Basis::Limb(limb, len) },
            None => UnitGuess {
                units: Units::Unknown,
                size: self.size,
                basis: Basis::NoHumanLimb(limb, len),
            },
        }
    }

    /// The guess from the size alone: the [`motion_size`] of world
    /// positions, `n_joints` per frame, frame-major. For a file without
    /// motion, pass its [`rest_pose`] as the one frame. A caller that has
    /// the skeleton checks it against the names with
    /// [`UnitGuess::named`], as [`UnitGuess::of_bvh`] does.
    #[must_use]
    pub fn of_positions(n_joints: usize, positions: &[DVec3]) -> UnitGuess {
        UnitGuess::of_size(motion_size(n_joints, positions))
    }

    /// The guess from the [`pose_size`] of each frame, for callers that
    /// stream a motion and keep one number per frame instead of its
    /// positions: the same guess as [`UnitGuess::of_positions`] (the size
    /// alone; add [`UnitGuess::named`]).
    #[must_use]
    pub fn of_pose_sizes(sizes: Vec<f64>) -> UnitGuess {
        UnitGuess::of_size(median_size(sizes))
    }

    /// The guess for `bvh`: [`UnitGuess::of_positions`] of the world
    /// positions of its frames (not kept: one size per frame), or of its
    /// [`rest_pose`] when it has no frames, checked against the limbs its
    /// names tell ([`UnitGuess::named`] of [`Limbs::of`] its skeleton).
    ///
    /// The frames' sizes are computed on rayon's pool (with the `parallel`
    /// feature), runs of frames on SIMD lanes as [`FrameSizes::push_many`]
    /// measures them (`Kinematics::positions_many`, the bits of
    /// `positions_with`): the sizes, so the guess, are those of one frame
    /// at a time.
    #[must_use]
    pub fn of_bvh(bvh: &Bvh, mode: PositionChannels) -> UnitGuess {
        let m = bvh.motion();
        let (n, width) = (m.n_frames(), m.n_channels());
        let fk = Kinematics::new(bvh.skeleton(), mode);
        if n == 0 || width == 0 || fk.is_empty() {
            let mut sizes = FrameSizes::new(bvh.skeleton(), mode);
            for f in 0..n {
                sizes.push(m.frame(f));
            }
            return sizes.guess();
        }
        let mut sizes = vec![0.0; n];
        measure_all(&fk, &m.values()[..n * width], width, &mut sizes);
        UnitGuess::of_size(median_size(sizes)).named(&Limbs::of(bvh.skeleton()))
    }

    /// Metres per file unit for display: the guessed unit's size when it
    /// is known, else the factor that makes the figure [`HUMAN_SIZE_M`] in
    /// size (1 when it has no size), so that files in different units
    /// stand side by side at one scale.
    #[must_use]
    pub fn metres_per_unit(&self) -> f64 {
        match self.units.metres_per_unit() {
            Some(m) => m,
            None if self.size.is_finite() && self.size > NO_SIZE => HUMAN_SIZE_M / self.size,
            None => 1.0,
        }
    }

    /// The figure's size as drawn, in metres: `size * metres_per_unit()`.
    #[must_use]
    pub fn drawn_size_m(&self) -> f64 {
        self.size * self.metres_per_unit()
    }

    /// A label such as `centimetres (size 172.4000 ≈ 1.72 m)`.
    #[must_use]
    pub fn label(&self) -> String {
        let why = match self.basis {
            Basis::Size => String::new(),
            Basis::Limb(limb, len) => {
                let m = len * self.units.metres_per_unit().unwrap_or(1.0);
                format!("; by the {limb}, {len:.4} units ≈ {m:.2} m")
            }
            Basis::NoHumanLimb(limb, len) => {
                let (lo, hi) = limb.human_range().into_inner();
                format!("; the {limb}, {len:.4} units, is {lo}-{hi} m long in no unit")
            }
        };
        match self.units.metres_per_unit() {
            Some(m) => {
                format!("{} (size {:.4} ≈ {:.2} m{why})", self.units, self.size, self.size * m)
            }
            None => format!("{} (size {:.4}{why})", self.units, self.size),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes_in_each_unit() {
        assert_eq!(Units::of_size(1.75), Units::Metres);
        assert_eq!(Units::of_size(1.2), Units::Metres);
        assert_eq!(Units::of_size(68.0), Units::Inches);
        assert_eq!(Units::of_size(172.0), Units::Centimetres);
        assert_eq!(Units::of_size(150.0), Units::Centimetres);
        assert_eq!(Units::of_size(1800.0), Units::Millimetres);
        // CMU's converted files: a walker is 24 to 26 units tall.
        assert_eq!(Units::of_size(30.0), Units::CmuScale);
        assert_eq!(Units::of_size(25.0), Units::CmuScale);
        assert_eq!(Units::CmuScale.symbol(), "cmu");
        // Between the CMU scale and inches, the nearer wins.
        assert_eq!(Units::of_size(45.0), Units::Inches);
        assert_eq!(Units::of_size(38.0), Units::CmuScale);
        for u in Units::KNOWN {
            let m = u.metres_per_unit().unwrap();
            assert_eq!(Units::of_size(HUMAN_SIZE_M / m), u, "{u}");
        }
    }

    /// A standing figure whose legs are `thigh` + `shin` long and whose
    /// size (head End Site to the floor) is `size`.
    fn legs(thigh: f64, shin: f64, size: f64) -> Bvh {
        let top = size - thigh - shin;
        Bvh::parse(format!(
            "HIERARCHY ROOT Hips {{ OFFSET 0 0 0 CHANNELS 3 Xposition Yposition Zposition
             JOINT Spine {{ OFFSET 0 1 0 CHANNELS 0 End Site {{ OFFSET 0 {} 0 }} }}
             JOINT LeftUpLeg {{ OFFSET 1 0 0 CHANNELS 0
               JOINT LeftLeg {{ OFFSET 0 -{thigh} 0 CHANNELS 0
                 JOINT LeftFoot {{ OFFSET 0 -{shin} 0 CHANNELS 0 End Site {{ OFFSET 0 0 1 }} }} }} }} }}
             MOTION Frames: 1 Frame Time: 0.1 0 {} 0",
            top - 1.0,
            thigh + shin
        ))
        .unwrap()
    }

    #[test]
    fn named_legs_overrule_a_size_that_would_make_them_inhuman() {
        // A person in centimetres: the size decides and the legs agree.
        let g = UnitGuess::of_bvh(&legs(42.0, 41.0, 170.0), PositionChannels::Replace);
        assert_eq!((g.units, g.basis), (Units::Centimetres, Basis::Size));
        assert_eq!(Limbs::of(legs(42.0, 41.0, 170.0).skeleton()).leg, Some(83.0));
        // Crouched to 80 units: inches by the size, centimetres by the legs.
        let g = UnitGuess::of_bvh(&legs(42.0, 41.0, 84.0), PositionChannels::Replace);
        assert_eq!((g.units, g.basis), (Units::Centimetres, Basis::Limb(Limb::Leg, 83.0)));
        assert!(g.label().contains("by the leg, 83.0000 units ≈ 0.83 m"), "{}", g.label());
        // Legs of 1.25 m in metres, 1.25 cm in centimetres: no unit.
        let g = UnitGuess::of_bvh(&legs(0.75, 0.5, 2.8), PositionChannels::Replace);
        assert_eq!((g.units, g.basis), (Units::Unknown, Basis::NoHumanLimb(Limb::Leg, 1.25)));
        assert!(g.label().contains("is 0.5-1.2 m long in no unit"), "{}", g.label());
        // No names: the size alone.
        assert_eq!(UnitGuess::of_size(84.0).named(&Limbs::default()).units, Units::Inches);
    }

    #[test]
    fn a_hand_only_rig_is_measured_by_its_hand() {
        // A hand 190 units long with five two-joint fingers, under a
        // tracking origin: millimetres, though 190 is a person in cm.
        let fingers: String = (0..5)
            .map(|i| format!("JOINT F{i}a {{ OFFSET 0 100 0 CHANNELS 0 JOINT F{i}b {{ OFFSET 0 50 0 CHANNELS 0 End Site {{ OFFSET 0 40 0 }} }} }}"))
            .collect();
        let bvh = Bvh::parse(format!(
            "HIERARCHY ROOT Origin {{ OFFSET 0 0 0 CHANNELS 0
             JOINT RightHand {{ OFFSET 0 0 0 CHANNELS 0 {fingers} }} }}
             MOTION Frames: 0 Frame Time: 0.1"
        ))
        .unwrap();
        let limbs = Limbs::of(bvh.skeleton());
        assert_eq!(limbs, Limbs { leg: None, hand: Some(190.0) });
        let g = UnitGuess::of_bvh(&bvh, PositionChannels::Replace);
        assert_eq!((g.units, g.basis), (Units::Millimetres, Basis::Limb(Limb::Hand, 190.0)));
    }

    #[test]
    fn frame_sizes_in_runs_are_the_sizes_frame_by_frame_on_the_corpus() {
        let Some(clips) = crate::test_corpus::clips("frame_sizes_in_runs") else { return };
        let mut files = 0;
        for (name, bvh) in clips {
            let (skel, m) = (bvh.skeleton(), bvh.motion());
            for mode in [PositionChannels::Replace, PositionChannels::Add] {
                let mut one = FrameSizes::new(skel, mode);
                for f in m.frames() {
                    one.push(f);
                }
                // Runs of uneven lengths, some over several pieces.
                let mut many = FrameSizes::new(skel, mode);
                let (w, mut at, mut run) = (m.n_channels(), 0, 1);
                while at < m.n_frames() {
                    let k = run.min(m.n_frames() - at);
                    many.push_many(k, &m.values()[at * w..(at + k) * w]);
                    at += k;
                    run = run * 3 + 1;
                    // And a frame alone between runs.
                    if at < m.n_frames() {
                        many.push(m.frame(at));
                        at += 1;
                    }
                }
                let bits = |s: &FrameSizes| s.sizes.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&one), bits(&many), "{name} {mode:?}");
                assert_eq!(one.guess(), many.guess(), "{name}");
            }
            files += 1;
        }
        assert!(files > 30, "{files} files");
        // No channels: every frame is the rest pose.
        let bvh = Bvh::parse(
            "HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 0 End Site { OFFSET 0 170 0 } } MOTION Frames: 3 Frame Time: 0.1\n\n\n\n",
        )
        .unwrap();
        let mut s = FrameSizes::new(bvh.skeleton(), PositionChannels::Replace);
        s.push_many(3, &[]);
        assert_eq!(s.sizes, [170.0; 3]);
    }

    #[test]
    fn far_from_human_is_unknown() {
        assert_eq!(Units::of_size(0.0), Units::Unknown);
        assert_eq!(Units::of_size(-3.0), Units::Unknown);
        assert_eq!(Units::of_size(f64::NAN), Units::Unknown);
        assert_eq!(Units::of_size(1e6), Units::Unknown);
        assert_eq!(Units::of_size(0.05), Units::Unknown);
        assert_eq!(Units::of_size(8.0), Units::Unknown);
        assert_eq!(Units::Unknown.metres_per_unit(), None);
        assert_eq!(Units::Centimetres.symbol(), "cm");
        assert_eq!(Units::Unknown.to_string(), "unknown units");
    }

    #[test]
    fn pose_and_motion_sizes() {
        let pts = [DVec3::ZERO, DVec3::new(0.2, 1.6, 0.1), DVec3::new(-0.8, 1.4, 0.0), DVec3::NAN];
        assert!((pose_size(&pts) - 1.6).abs() < 1e-12);
        assert_eq!(pose_size(&[]), 0.0);
        // Two points at a time (the last one repeated when the count is
        // odd) give the box of all points, the point-by-point answer; a
        // non-finite point is skipped.
        let many: Vec<DVec3> = (0..11)
            .map(|k| {
                let k = f64::from(k);
                DVec3::new((k * 1.7).sin() * 3.0, k * 0.25 - 1.0, (k * 0.9).cos())
            })
            .collect();
        for n in 0..=many.len() {
            let pts = &many[..n];
            assert_eq!(pose_size(pts).to_bits(), pose_size_of_finite(pts).to_bits(), "{n} points");
            let mut with_nan = pts.to_vec();
            with_nan.insert(n / 2, DVec3::new(f64::NAN, 1e9, 0.0));
            with_nan.push(DVec3::new(f64::INFINITY, 0.0, -1e9));
            assert_eq!(pose_size(&with_nan).to_bits(), pose_size_of_finite(pts).to_bits());
        }
        assert_eq!(pose_size(&[DVec3::NAN]), 0.0);
        // Two joints per frame: heights 170, 100 (a crouch), 0 (a point),
        // 180, and one far-away frame of height 175: the median of
        // 100, 170, 175, 180 (the point left out) is the lower middle, 170.
        let frames = [170.0, 100.0, 0.0, 180.0, 175.0];
        let far = DVec3::splat(1e7);
        let positions: Vec<DVec3> = frames
            .iter()
            .enumerate()
            .flat_map(|(f, h)| {
                let base = if f == 4 { far } else { DVec3::X * f as f64 };
                [base, base + DVec3::Y * *h]
            })
            .collect();
        assert_eq!(motion_size(2, &positions), 170.0);
        assert_eq!(motion_size(2, &positions[..4]), 100.0, "lower middle of 170 and 100");
        assert_eq!(motion_size(2, &positions[..5]), 100.0, "an incomplete frame is ignored");
        assert_eq!(motion_size(0, &positions), 0.0);
        assert_eq!(motion_size(2, &[DVec3::ZERO; 4]), 0.0);
        let g = UnitGuess::of_positions(2, &positions);
        assert_eq!((g.units, g.size), (Units::Centimetres, 170.0));
        assert!((g.drawn_size_m() - 1.7).abs() < 1e-12);
        assert!(g.label().starts_with("centimetres (size 170.0000 ≈ 1.70 m"), "{}", g.label());
    }

    #[test]
    fn unknown_units_are_shown_human_sized() {
        let g = UnitGuess::of_size(8.0);
        assert_eq!(g.units, Units::Unknown);
        assert!((g.metres_per_unit() * 8.0 - HUMAN_SIZE_M).abs() < 1e-12);
        assert!((g.drawn_size_m() - HUMAN_SIZE_M).abs() < 1e-12);
        assert_eq!(g.label(), "unknown units (size 8.0000)");
        assert_eq!(UnitGuess::of_size(0.0).metres_per_unit(), 1.0);
        assert_eq!(UnitGuess::of_size(60.0).metres_per_unit(), 0.0254);
    }

    /// A figure whose hips are `hips` units up, with a chest, a head End
    /// Site and a leg whose End Site reaches the ground in the rest pose.
    fn figure(frames: &[(f64, f64)]) -> Bvh {
        let mut text = String::from(
            "HIERARCHY\nROOT Hips\n{\n OFFSET 0 90 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n JOINT Chest\n {\n  OFFSET 0 40 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 40 0\n  }\n }\n JOINT LeftUpLeg\n {\n  OFFSET 10 0 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 -90 0\n  }\n }\n}\nMOTION\n",
        );
        text += &format!("Frames: {}\nFrame Time: 0.04\n", frames.len());
        for (hips, chest) in frames {
            text += &format!("0 {hips} 0 0 0 0 {chest} 0 0 0 0 0\n");
        }
        Bvh::parse(text).unwrap()
    }

    #[test]
    fn a_file_is_guessed_from_its_frames_or_its_rest_pose() {
        // In the rest pose every channel is 0, so Replace puts the hips on
        // the floor: 80 + 40 units above it and 90 below. The frames stand
        // (hips 90 up: 170 tall), bend the chest 90 degrees (130 tall) or
        // stand again.
        let bvh = figure(&[(90.0, 0.0), (90.0, 90.0), (90.0, 90.0), (90.0, 0.0), (90.0, 0.0)]);
        let mode = PositionChannels::Replace;
        let rest = rest_pose(bvh.skeleton(), mode);
        assert!((pose_size(&rest) - 170.0).abs() < 1e-9, "{}", pose_size(&rest));
        assert!((rest[0] - DVec3::ZERO).length() < 1e-12, "hips on the floor at rest");
        let g = UnitGuess::of_bvh(&bvh, mode);
        assert_eq!(g.units, Units::Centimetres);
        assert!((g.size - 170.0).abs() < 1e-9, "{}", g.size);
        // The same as the guess from all positions.
        let all = Kinematics::new(bvh.skeleton(), mode).positions_all(bvh.motion());
        assert_eq!(UnitGuess::of_positions(bvh.skeleton().len(), &all), g);
        // Mostly bent: the median frame is a bent one.
        let bent = figure(&[(90.0, 90.0), (90.0, 90.0), (90.0, 0.0)]);
        assert!((UnitGuess::of_bvh(&bent, mode).size - 130.0).abs() < 1e-9);
        // No frames: the rest pose.
        let still = figure(&[]);
        assert_eq!(still.motion().n_frames(), 0);
        let g = UnitGuess::of_bvh(&still, mode);
        assert_eq!(g, UnitGuess::of_positions(still.skeleton().len(), &rest));
        assert_eq!(g.units, Units::Centimetres);
    }
}
