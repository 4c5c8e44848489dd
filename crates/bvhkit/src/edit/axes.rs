//! Axis conventions: convert between up/forward conventions, and detect a
//! file's up axis.
//!
//! A convention is a forward and an up axis ([`Axes`]), as in Blender's BVH
//! import options `axis_forward` and `axis_up`; the third axis completes a
//! right-handed frame. Converting from one convention to another is the
//! rotation `C` that takes the source forward and up axes to the target's
//! (Blender's `axis_conversion`): a signed permutation of X, Y, Z with
//! determinant +1. It is applied to everything that is a length or a
//! rotation: offsets `o' = C·o`, position channels `t' = C·t`, and every
//! local rotation by conjugation `R' = C·R·Cᵀ`, so every world position is
//! `C·p` and every world rotation `C·W·Cᵀ`.
//!
//! The channel layout is kept where the rotation allows:
//! - position channels: when the joint's position axes map onto the same
//!   set, the values move between them (with the sign of `C`), exactly;
//!   otherwise each channel is renamed to the axis it maps to;
//! - three rotation channels keep their order: when `C` maps each of their
//!   axes to itself (up to sign) the angles just change sign, exactly;
//!   otherwise the rotation `C·R·Cᵀ` is written back as Euler angles in the
//!   joint's order, closest to the previous output frame (the first frame:
//!   the principal solution), continuous and within rounding. Since `C`
//!   permutes the axes, `C·Ra(θ)·Cᵀ = Rb(±θ)` with `b` the image of `a`: the
//!   conjugated rotation is exactly the product of the same angles, signed,
//!   about the image axes (an Euler product in another order), so only its
//!   extraction in the joint's order rounds;
//! - one or two rotation channels are renamed to the axes they map to, with
//!   the sign of `C` (exact), unless `C` maps each to itself.
//!
//! [`detect_up`] finds a file's up axis from its skeleton: the head above
//! the hips above the feet, in the rest pose or else in the first frame.
//!
//! # Implementation notes
//!
//! (Blender's axis conversion as a signed permutation, `detect_up` with its
//! evidence (`detect_up_sampled` from the sampled frames alone,
//! `sampled_frames(n)`, for a stream); conjugated joints as their signed angles
//! about the image axes, exact, then an order change through `Rewrite`).

use std::fmt;

use glam::{DMat3, DVec3};

use super::pose::JointChannels;
use super::{FrameMap, rebuild_skeleton, rest_positions};
use crate::bvh::Bvh;
use crate::channel::Channel;
use crate::error::{Error, Result};
use crate::kinematics::{Kinematics, PositionChannels};
use crate::rotation::Axis;
use crate::skeleton::Skeleton;

/// An axis with a direction: `+X`, `-X`, ... `-Z`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SignedAxis {
    /// +X.
    PosX,
    /// -X.
    NegX,
    /// +Y.
    PosY,
    /// -Y.
    NegY,
    /// +Z.
    PosZ,
    /// -Z.
    NegZ,
}

impl SignedAxis {
    /// All six.
    pub const ALL: [SignedAxis; 6] = [
        SignedAxis::PosX,
        SignedAxis::NegX,
        SignedAxis::PosY,
        SignedAxis::NegY,
        SignedAxis::PosZ,
        SignedAxis::NegZ,
    ];

    /// The signed axis of `axis` and `sign` (negative when `sign < 0`).
    pub fn new(axis: Axis, sign: f64) -> SignedAxis {
        match (axis, sign < 0.0) {
            (Axis::X, false) => SignedAxis::PosX,
            (Axis::X, true) => SignedAxis::NegX,
            (Axis::Y, false) => SignedAxis::PosY,
            (Axis::Y, true) => SignedAxis::NegY,
            (Axis::Z, false) => SignedAxis::PosZ,
            (Axis::Z, true) => SignedAxis::NegZ,
        }
    }

    /// The axis without its sign.
    pub fn axis(self) -> Axis {
        match self {
            SignedAxis::PosX | SignedAxis::NegX => Axis::X,
            SignedAxis::PosY | SignedAxis::NegY => Axis::Y,
            SignedAxis::PosZ | SignedAxis::NegZ => Axis::Z,
        }
    }

    /// `1.0` or `-1.0`.
    pub fn sign(self) -> f64 {
        match self {
            SignedAxis::PosX | SignedAxis::PosY | SignedAxis::PosZ => 1.0,
            _ => -1.0,
        }
    }

    /// The unit vector.
    pub fn vector(self) -> DVec3 {
        self.axis().unit_vector() * self.sign()
    }

    /// The opposite direction.
    pub fn negate(self) -> SignedAxis {
        SignedAxis::new(self.axis(), -self.sign())
    }

    /// Lower-case name: `"x"`, `"-x"`, `"y"`, ... (as `bvh info --json`
    /// gives it).
    pub fn name(self) -> &'static str {
        match self {
            SignedAxis::PosX => "x",
            SignedAxis::NegX => "-x",
            SignedAxis::PosY => "y",
            SignedAxis::NegY => "-y",
            SignedAxis::PosZ => "z",
            SignedAxis::NegZ => "-z",
        }
    }

    /// Reads `x`, `+x`, `-x`, ... (case-insensitive; Blender's `NEG_X`
    /// spelling too).
    ///
    /// # Example
    /// ```
    /// use bvhkit::edit::axes::SignedAxis;
    /// assert_eq!(SignedAxis::from_name("-Z"), Some(SignedAxis::NegZ));
    /// assert_eq!(SignedAxis::from_name("NEG_Y"), Some(SignedAxis::NegY));
    /// assert_eq!(SignedAxis::from_name("up"), None);
    /// ```
    pub fn from_name(s: &str) -> Option<SignedAxis> {
        let s = s.trim();
        let (neg, rest) = if let Some(r) = s.strip_prefix('-') {
            (true, r)
        } else if let Some(r) = s.strip_prefix('+') {
            (false, r)
        } else if s.len() > 4 && s[..4].eq_ignore_ascii_case("NEG_") {
            (true, &s[4..])
        } else {
            (false, s)
        };
        let mut chars = rest.chars();
        let axis = Axis::from_letter(chars.next()?)?;
        if chars.next().is_some() {
            return None;
        }
        Some(SignedAxis::new(axis, if neg { -1.0 } else { 1.0 }))
    }

    /// The forward axis bvhkit assumes for a file with this up axis when
    /// none is given: Blender's BVH default for Y up (`-Z`), and for every
    /// other up axis that direction turned by the smallest rotation that
    /// takes +Y to it (so +Z up gives +Y forward, Blender's own convention).
    pub fn default_forward(self) -> SignedAxis {
        match self {
            SignedAxis::PosY | SignedAxis::PosX | SignedAxis::NegX => SignedAxis::NegZ,
            SignedAxis::NegY => SignedAxis::PosZ,
            SignedAxis::PosZ => SignedAxis::PosY,
            SignedAxis::NegZ => SignedAxis::NegY,
        }
    }
}

impl fmt::Display for SignedAxis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An axis convention: which way is forward and which is up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Axes {
    forward: SignedAxis,
    up: SignedAxis,
}

impl Axes {
    /// The BVH convention (and Blender's import default): forward -Z, up Y.
    pub const BVH: Axes = Axes { forward: SignedAxis::NegZ, up: SignedAxis::PosY };

    /// Forward `forward`, up `up`.
    ///
    /// # Errors
    /// When both are along the same axis.
    pub fn new(forward: SignedAxis, up: SignedAxis) -> Result<Axes> {
        if forward.axis() == up.axis() {
            return Err(Error::invalid(format!(
                "forward ({forward}) and up ({up}) must be different axes"
            )));
        }
        Ok(Axes { forward, up })
    }

    /// Up `up` with its default forward ([`SignedAxis::default_forward`]).
    pub fn with_up(up: SignedAxis) -> Axes {
        Axes { forward: up.default_forward(), up }
    }

    /// The forward axis.
    pub fn forward(self) -> SignedAxis {
        self.forward
    }

    /// The up axis.
    pub fn up(self) -> SignedAxis {
        self.up
    }

    /// The basis `[forward × up, forward, up]` as columns: Blender's X, Y,
    /// Z (right, forward, up) written in this convention.
    fn basis(self) -> DMat3 {
        let (f, u) = (self.forward.vector(), self.up.vector());
        DMat3::from_cols(f.cross(u), f, u)
    }

    /// The rotation that takes this convention to `to`: forward to forward,
    /// up to up (Blender's `axis_conversion`).
    ///
    /// # Example
    /// ```
    /// use bvhkit::edit::axes::{Axes, SignedAxis};
    /// use bvhkit::glam::DVec3;
    /// // BVH's -Z forward, Y up to Blender's Y forward, Z up.
    /// let blender = Axes::new(SignedAxis::PosY, SignedAxis::PosZ)?;
    /// let c = Axes::BVH.conversion(blender);
    /// assert_eq!(c * DVec3::Y, DVec3::Z);
    /// assert_eq!(c * DVec3::NEG_Z, DVec3::Y);
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn conversion(self, to: Axes) -> DMat3 {
        to.basis() * self.basis().transpose()
    }
}

impl fmt::Display for Axes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "forward {}, up {}", self.forward, self.up)
    }
}

/// Where `C` sends axis `a`: the target axis and the sign.
fn image(c: &DMat3, a: Axis) -> (Axis, f64) {
    let v = *c * a.unit_vector();
    let b =
        Axis::ALL.into_iter().max_by(|&x, &y| v[x.index()].abs().total_cmp(&v[y.index()].abs()));
    let b = b.unwrap_or(a);
    (b, v[b.index()].signum())
}

#[derive(Clone, Debug)]
struct JointPlan {
    /// (output channel, input channel, sign) for channels that move exactly.
    moves: Vec<(usize, usize, f64)>,
    /// Three rotation channels whose axes `C` permutes: `C·R·Cᵀ` is
    /// re-extracted in the joint's order.
    conjugate: Option<JointChannels>,
}

/// A [`FrameMap`] that converts between axis conventions (see the module
/// docs).
///
/// # Example
/// ```
/// use bvhkit::{Bvh, Kinematics, PositionChannels};
/// use bvhkit::edit::{map_frames, axes::{Axes, AxesMap, SignedAxis}};
/// use bvhkit::glam::DVec3;
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
///     End Site { OFFSET 0 0 10 } }
///     MOTION Frames: 1 Frame Time: 0.1 1 2 3 0 0 0")?;
/// // A Z-up file to Y up.
/// let mut map = AxesMap::new(bvh.skeleton(), Axes::with_up(SignedAxis::PosZ), Axes::BVH);
/// let out = map_frames(&bvh, &mut map)?;
/// let fk = Kinematics::new(out.skeleton(), PositionChannels::Replace);
/// let mut p = vec![DVec3::ZERO; 2];
/// fk.positions(out.motion().frame(0), &mut p);
/// assert!((p[1] - p[0]).abs_diff_eq(DVec3::new(0.0, 10.0, 0.0), 1e-12));
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct AxesMap {
    skeleton: Skeleton,
    c: DMat3,
    /// Every joint's moves (see [`JointPlan`]), by output channel.
    moves: Vec<(usize, usize, f64)>,
    /// The joints whose rotation `C·R·Cᵀ` is extracted again.
    rewrite: super::order::Rewrite,
}

impl AxesMap {
    /// Converts from convention `from` to `to`.
    pub fn new(skeleton: &Skeleton, from: Axes, to: Axes) -> AxesMap {
        AxesMap::with_matrix(skeleton, from.conversion(to))
    }

    fn with_matrix(skeleton: &Skeleton, c: DMat3) -> AxesMap {
        let map_axis = |a: Axis| image(&c, a);
        let mut plans = Vec::with_capacity(skeleton.len());
        let out = rebuild_skeleton(skeleton, |_, j| {
            let offset = c * j.offset();
            let channels = j.channels();
            let pos_axes: Vec<Axis> =
                channels.iter().filter(|x| x.is_position()).map(|x| x.axis()).collect();
            let rot_axes: Vec<Axis> =
                channels.iter().filter(|x| x.is_rotation()).map(|x| x.axis()).collect();
            let pos_invariant = pos_axes.iter().all(|&a| pos_axes.contains(&map_axis(a).0));
            let rot_fixed = rot_axes.iter().all(|&a| map_axis(a).0 == a);
            let mut out_ch = Vec::with_capacity(channels.len());
            let mut moves = Vec::new();
            let first = j.first_channel();
            for (k, &ch) in channels.iter().enumerate() {
                let a = ch.axis();
                if ch.is_position() {
                    if pos_invariant {
                        // This slot keeps axis `a`; its value comes from the
                        // input axis that maps onto `a`.
                        let (src_k, sign) = channels
                            .iter()
                            .enumerate()
                            .filter(|(_, x)| x.is_position())
                            .find_map(|(kk, x)| {
                                let (b, s) = map_axis(x.axis());
                                (b == a).then_some((kk, s))
                            })
                            .unwrap_or((k, 1.0));
                        out_ch.push(ch);
                        moves.push((first + k, first + src_k, sign));
                    } else {
                        let (b, s) = map_axis(a);
                        out_ch.push(position_channel(b));
                        moves.push((first + k, first + k, s));
                    }
                } else {
                    let (b, s) = map_axis(a);
                    if rot_fixed {
                        // R_a(θ) conjugated is R_a(±θ): only the sign changes.
                        out_ch.push(ch);
                        moves.push((first + k, first + k, s));
                    } else if rot_axes.len() < 3 {
                        // R_a(θ) conjugated is R_b(±θ): renamed, exact.
                        out_ch.push(super::order::rotation_channel(b));
                        moves.push((first + k, first + k, s));
                    } else {
                        out_ch.push(ch);
                    }
                }
            }
            let conjugate = (rot_axes.len() == 3 && !rot_fixed).then(|| JointChannels::of(j));
            plans.push(JointPlan { moves, conjugate });
            Ok((offset, out_ch))
        })
        .expect("an axis change keeps every joint's channel count and kinds");
        let changed = plans
            .iter()
            .filter_map(|p| p.conjugate.as_ref())
            .map(|j| super::order::Changed::conjugated(j, map_axis))
            .collect();
        let mut moves: Vec<_> = plans.into_iter().flat_map(|p| p.moves).collect();
        moves.sort_by_key(|m| m.0);
        AxesMap { skeleton: out, c, moves, rewrite: super::order::Rewrite::new(changed) }
    }

    /// The rotation applied to the world (`C`).
    pub fn matrix(&self) -> DMat3 {
        self.c
    }
}

fn position_channel(a: Axis) -> Channel {
    match a {
        Axis::X => Channel::Xposition,
        Axis::Y => Channel::Yposition,
        Axis::Z => Channel::Zposition,
    }
}

impl FrameMap for AxesMap {
    fn output_skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// The exact moves, then the conjugated joints' rotations
    /// `C·R·Cᵀ` (the product of their signed angles about the image axes)
    /// written in their order as
    /// [`JointChannels::write_rotation`] writes three channels (within 1e-9
    /// degrees), the extractions of the frame in one batch.
    fn map(&mut self, input: &[f64], output: &mut [f64]) {
        moves(&self.moves, input, output);
        // Same channel indices in and out: the layout is kept.
        self.rewrite.map(input, output);
    }
}

/// The exact moves of one frame (every channel but the conjugated joints'
/// rotations) into `output`, which holds the output channels `columns` of
/// the frame (`moves` by output channel).
fn moves_in(
    moves: &[(usize, usize, f64)],
    columns: std::ops::Range<usize>,
    input: &[f64],
    output: &mut [f64],
) {
    let from = moves.partition_point(|m| m.0 < columns.start);
    for &(o, i, s) in moves[from..].iter().take_while(|m| m.0 < columns.end) {
        output[o - columns.start] = s * input[i];
    }
}

/// [`moves_in`] of a whole frame.
fn moves(moves: &[(usize, usize, f64)], input: &[f64], output: &mut [f64]) {
    for &(o, i, s) in moves {
        output[o] = s * input[i];
    }
}

impl super::SplitFrameMap for AxesMap {
    /// The conjugated joints in groups on rayon's pool, each group through
    /// every frame in order (no guesses; the same bits as one frame at a
    /// time), making the exact moves of its block of columns of each frame
    /// and putting its angles in place.
    fn map_many(&mut self, frames: usize, input: &[f64], output: &mut [f64]) -> bool {
        if !self.rewrite.many_pays(frames) {
            return false;
        }
        let n_out = self.skeleton.n_channels();
        let moves = &self.moves;
        self.rewrite.map_many(frames, input, output, n_out, |c, i, o| moves_in(moves, c, i, o));
        true
    }
}

/// How many frames [`detect_up`] looks at, spread over the clip.
pub const FRAMES_SAMPLED: usize = 15;

/// The cosine of the largest angle (30°) between the up axis and the
/// standing direction (head and hips above the feet) of a clip's only
/// frame for that frame to decide alone ([`detect_up`]): a retarget of a
/// one-frame take onto a rig whose rest pose lies along X stands in its
/// frame, a test rig tilted 45° about three axes does not.
const SINGLE_FRAME_COS: f64 = 0.866_025_403_784_438_6;

/// Which poses showed the up axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// The rest pose (offsets only).
    RestPose,
    /// Most of the frames sampled over the motion.
    Frames {
        /// How many sampled frames showed this axis.
        agreeing: usize,
        /// How many frames were sampled.
        sampled: usize,
    },
    /// Neither: no head and feet were found, or they were not stacked
    /// along one axis.
    None,
}

/// The detected up axis of a file, with the evidence.
#[derive(Clone, Debug, PartialEq)]
pub struct UpAxis {
    /// The up axis, when one was found.
    pub axis: Option<SignedAxis>,
    /// Which pose showed it.
    pub source: Evidence,
    /// The joint taken as the head (a name containing "head", else "neck").
    pub head: Option<String>,
    /// The joint taken as the hips (named hips, hip or pelvis, any case,
    /// else the head's root).
    pub hips: Option<String>,
    /// The joints taken as the feet (names containing "foot", "toe" or
    /// "ankle").
    pub feet: Vec<String>,
    /// Head minus mean of the feet, in the pose that decided (the first
    /// sampled frame when the motion decided).
    pub head_minus_feet: DVec3,
}

impl fmt::Display for UpAxis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.axis, &self.head, &self.hips) {
            (Some(axis), Some(head), Some(hips)) => {
                let feet = if self.feet.len() > 4 {
                    format!("{}, ... ({} joints)", self.feet[..4].join(", "), self.feet.len())
                } else {
                    self.feet.join(", ")
                };
                match self.source {
                    Evidence::Frames { agreeing, sampled } => write!(
                        f,
                        "{axis} ({head} above {hips} above {feet} in {agreeing} of {sampled} frames)"
                    ),
                    _ => write!(f, "{axis} ({head} above {hips} above {feet} in the rest pose)"),
                }
            }
            (_, None, _) => f.write_str("unknown (no joint named head or neck)"),
            _ if self.feet.is_empty() => f.write_str("unknown (no joint named foot, toe or ankle)"),
            _ => f.write_str("unknown (head, hips and feet are not stacked along one axis)"),
        }
    }
}

/// Detects the up axis of `bvh`: the axis along which the head is above
/// the hips and the hips above the feet.
///
/// The head is the first joint whose name contains "head" (any case), else
/// "neck"; the hips are the root of the head's skeleton; the feet are the
/// joints whose names contain "foot", "toe" or "ankle", averaged. In a
/// pose, the axis is the largest component of (head - feet) + (hips -
/// feet), taken when it holds more than half of that vector's length and
/// both the head and the hips are above the feet along it (the sum stays
/// upright for a person standing, sitting or leaning, and for four legs). The motion decides first, as it is what is
/// drawn: [`FRAMES_SAMPLED`] frames spread over the clip (position channels
/// read as [`PositionChannels::Replace`]), when at least two and at least
/// 60% of them agree, or, in a clip of a single frame, when that frame
/// stands within 30° of the axis (`SINGLE_FRAME_COS`). Otherwise (a single
/// frame that leans farther, or a motion that lies down) the rest pose
/// (offsets only) decides. Rest poses do not always stand
/// upright (some files keep every bone along X and let the motion turn
/// them), hence the motion first.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::axes::{detect_up, Evidence, SignedAxis};
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 0
///     JOINT Head { OFFSET 0 0 50 CHANNELS 0 End Site { OFFSET 0 0 10 } }
///     JOINT LeftFoot { OFFSET 10 0 -90 CHANNELS 0 End Site { OFFSET 0 5 0 } } }
///     MOTION Frames: 0 Frame Time: 0.1")?;
/// let up = detect_up(&bvh);
/// assert_eq!(up.axis, Some(SignedAxis::PosZ));
/// assert_eq!(up.source, Evidence::RestPose);
/// assert_eq!(up.to_string(), "z (Head above Hips above LeftFoot in the rest pose)");
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn detect_up(bvh: &Bvh) -> UpAxis {
    let motion = bvh.motion();
    let frames: Vec<&[f64]> =
        sampled_frames(motion.n_frames()).into_iter().map(|f| motion.frame(f)).collect();
    detect_up_sampled(bvh.skeleton(), &frames)
}

/// The frames [`detect_up`] looks at in a clip of `n` frames: all of them
/// up to [`FRAMES_SAMPLED`], else that many spread evenly from the first to
/// the last.
pub fn sampled_frames(n: usize) -> Vec<usize> {
    if n <= FRAMES_SAMPLED {
        (0..n).collect()
    } else {
        (0..FRAMES_SAMPLED).map(|k| k * (n - 1) / (FRAMES_SAMPLED - 1)).collect()
    }
}

/// [`detect_up`] from the sampled frames alone, `frames[k]` being frame
/// `sampled_frames(n)[k]` of a clip of `n` frames on `skel`: the same
/// answer, for a caller that streams the clip (it reads the frames once,
/// keeping those, and needs `n`).
pub fn detect_up_sampled(skel: &Skeleton, frames: &[&[f64]]) -> UpAxis {
    let named = |needle: &str| {
        skel.joints()
            .iter()
            .position(|j| !j.is_end_site() && j.name().to_ascii_lowercase().contains(needle))
    };
    let head = named("head").or_else(|| named("neck"));
    let exact = |names: &[&str]| {
        skel.joints().iter().position(|j| {
            !j.is_end_site() && names.iter().any(|n| j.name().eq_ignore_ascii_case(n))
        })
    };
    let hips = exact(&["hips", "hip", "pelvis"]).or_else(|| {
        head.map(|h| {
            let mut r = h;
            while let Some(p) = skel.joints()[r].parent() {
                r = p.index();
            }
            r
        })
    });
    let feet: Vec<usize> = skel
        .joints()
        .iter()
        .enumerate()
        .filter(|(_, j)| {
            let n = j.name().to_ascii_lowercase();
            !j.is_end_site() && (n.contains("foot") || n.contains("toe") || n.contains("ankle"))
        })
        .map(|(i, _)| i)
        .collect();
    let mut result = UpAxis {
        axis: None,
        source: Evidence::None,
        head: head.map(|h| skel.joints()[h].name().to_string()),
        hips: hips.map(|h| skel.joints()[h].name().to_string()),
        feet: feet.iter().map(|&i| skel.joints()[i].name().to_string()).collect(),
        head_minus_feet: DVec3::ZERO,
    };
    let (Some(head), Some(hips)) = (head, hips) else { return result };
    if feet.is_empty() {
        return result;
    }
    // The axis of a pose, the head minus the feet, and whether the pose
    // stands within 30° of that axis (the sum below).
    let decide = |p: &[DVec3]| -> (Option<SignedAxis>, DVec3, bool) {
        let foot = feet.iter().map(|&i| p[i]).sum::<DVec3>() / feet.len() as f64;
        let (body, legs) = (p[head] - foot, p[hips] - foot);
        // Standing, sitting or on four legs, head and hips are both above the
        // feet; their sum points up even when one of them leans.
        let v = body + legs;
        let a = Axis::ALL
            .into_iter()
            .max_by(|&x, &y| v[x.index()].abs().total_cmp(&v[y.index()].abs()))
            .unwrap_or(Axis::Y);
        let up = SignedAxis::new(a, v[a.index()]);
        let d = up.vector();
        let ok = v.dot(d) > 0.5 * v.length() && body.dot(d) > 0.0 && legs.dot(d) > 0.0;
        (ok.then_some(up), body, ok && v.dot(d) >= SINGLE_FRAME_COS * v.length())
    };
    // The motion decides when most sampled frames agree, or when a clip of
    // one frame stands upright in it; else the rest pose.
    let mut votes = [0usize; 6];
    let mut upright = false;
    let fk = Kinematics::new(skel, PositionChannels::Replace);
    let mut p = vec![DVec3::ZERO; skel.len()];
    let mut scratch = fk.scratch();
    for (k, frame) in frames.iter().enumerate() {
        fk.positions_with(frame, &mut scratch, &mut p);
        let (axis, v, strong) = decide(&p);
        if k == 0 {
            result.head_minus_feet = v;
            upright = strong;
        }
        if let Some(a) = axis {
            votes[SignedAxis::ALL.iter().position(|&x| x == a).unwrap_or(0)] += 1;
        }
    }
    let (best, &count) = votes.iter().enumerate().max_by_key(|&(_, c)| *c).unwrap_or((0, &0));
    let single = frames.len() == 1 && count == 1 && upright;
    if single || (count >= 2 && count * 5 >= frames.len() * 3) {
        result.axis = Some(SignedAxis::ALL[best]);
        result.source = Evidence::Frames { agreeing: count, sampled: frames.len() };
        return result;
    }
    let (axis, v, _) = decide(&rest_positions(skel));
    if axis.is_some() {
        result.axis = axis;
        result.source = Evidence::RestPose;
        result.head_minus_feet = v;
    }
    result
}
