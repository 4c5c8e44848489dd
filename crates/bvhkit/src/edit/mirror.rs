//! Mirror a clip left for right.
//!
//! Two kinds of coordinate reflection through the origin are involved:
//! - `Sw`, the world mirror: the character's lateral plane, always vertical
//!   (`X = 0` for a character facing +Z): the horizontal axis along which
//!   the pairs lie furthest apart in the rest pose, or in the first frame
//!   when the rest pose does not stand (its pairs lie furthest apart along
//!   the up axis, as in Rokoko's);
//! - `S(j)`, the reflection of joint `j`'s own frame: its parent's (`Sw`
//!   for a root), unless another coordinate reflection takes the joint's
//!   paired children clearly closer to their partners (Bandai Namco's rest
//!   pose keeps bones along X: its hips reflect Y, its chest Z).
//!
//! Joint `j` of the mirrored clip takes the motion of its partner `p(j)`
//! (itself without a partner): its world position is `Sw·pos(p(j))`
//! exactly, its world rotation `Sw·W(p(j))·S(j)`, its `OFFSET`
//! `S(parent)·OFFSET(p(j))`, its local rotation `S(parent)·L(p(j))·S(j)`.
//! Because a pair's parents are a pair (or the same joint), this goes joint
//! by joint without forward kinematics. Conjugating by a coordinate
//! reflection keeps the rotation about that axis and negates the two
//! others, and the reflected position component changes sign: so when a
//! joint's two reflections agree and its pair lists the same channels, its
//! mirrored channels are its partner's with some signs flipped, bit-exact,
//! and mirroring twice gives back the same bits ([`Mirror::is_sign_flip`]).
//! Other joints go through the rotation matrix and back into their own
//! order, closest to the previous frame.
//!
//! Pairs are found by name ([`side_swaps`]) and confirmed by the rest
//! pose: at the top of a chain (the pair's parents are not themselves a
//! pair) the partner's `OFFSET` must be the reflected `OFFSET` within a
//! tolerance relative to the longer of the two (15% by default, which real
//! captured skeletons meet); below a confirmed pair the names and the
//! hierarchy confirm it (captured skeletons are not exactly symmetric: SFU's
//! wrist ends differ by 27%). The Kinect writers store a captured pose as
//! the rest pose, so a pair's offsets point different ways: at the top of a
//! chain, offsets of the same length within the tolerance confirm the pair
//! too ([`Mirror::confirmed_by_length`], [`MirrorOptions::by_length`]), the
//! distinct unpaired parents of a name pair under one joint pair through it
//! (OpenNI's `TLS`/`TRS`), and the world plane is then the first frame's
//! (the rest pose tells nothing of it); the model above is exact whatever
//! the rest pose. A pair must also sit in the same place of the
//! hierarchy (parents paired or shared, End Sites matched in order) and
//! list compatible channels (the same position axes; the same rotation
//! axes, or three on both sides); pairs that fail are dropped and reported
//! by [`Mirror::rejected`]. Names, channel layout and frame time are kept.
//!
//! # Implementation notes
//!
//! (left/right pairs by name confirmed by the rest pose, per-joint frame
//! reflections, a per-channel gather-and-sign plan so that most mirrors are
//! bit-exact sign flips; the other joints' rotations on `order::Lanes` (the
//! partner's angles signed by `S(left)`, the half turn `S(left)·S(right)` an
//! exact permutation of the quaternion, the extraction in the joint's order),
//! within 2.3e-13 degrees of the matrix path `Mirror::apply_frame` kept as the
//! reference; `rest_pose_decides` says when the mirror can be made before a
//! stream's frames).

use std::collections::HashMap;

use glam::{DMat3, DVec3};

use crate::bvh::Bvh;
use crate::channel::Channel;
use crate::edit::FrameMap;
use crate::edit::local::{JointSpec, build};
use crate::edit::order::{Changed, Lanes};
use crate::edit::rest_positions;
use crate::error::{Error, Result};
use crate::motion::Motion;
use crate::rotation::{Axis, RotationOrder, euler_to_mat3, mat3_to_euler, mat3_to_euler_near};
use crate::skeleton::{JointId, Skeleton};

/// Which side of the body a name marker denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// `Left`, `L`, `l`, `left`, `LEFT`.
    Left,
    /// `Right`, `R`, `r`, `right`, `RIGHT`.
    Right,
}

fn boundary_before(b: &[u8], i: usize) -> bool {
    i == 0
        || !b[i - 1].is_ascii_alphabetic()
        || (b[i].is_ascii_uppercase() && b[i - 1].is_ascii_lowercase())
}

fn boundary_after(b: &[u8], end: usize) -> bool {
    end == b.len() || !b[end].is_ascii_alphabetic() || b[end].is_ascii_uppercase()
}

/// Every way to turn `name` into the name of its other side, by swapping
/// one side marker, with the side the marker names.
///
/// Markers are whole words `Left`/`Right` (also `left`, `LEFT`), or the
/// single letters `L`/`R`/`l`/`r`, at word boundaries: the start or end of
/// the name, a separator (anything but a letter: `_`, `.`, `:`, `-`, digits,
/// spaces), or a case change (`LeftUpLeg`, `ShoulderLeft`, `LHipJoint`,
/// `lThigh`, `HandL`). A lowercase `l`/`r` also counts at the start of a
/// word (`lhumerus`, `rfemur` as in the CMU ASF names, `lthumbBase`); a
/// pair is only made when the swapped name exists, so `lowerback` costs
/// nothing.
///
/// # Example
/// ```
/// use bvhkit::edit::mirror::{side_swaps, Side};
/// let swaps = |n: &str| side_swaps(n).into_iter().map(|(_, s)| s).collect::<Vec<_>>();
/// assert_eq!(swaps("LeftUpLeg"), ["RightUpLeg"]);
/// assert_eq!(swaps("UpperLeg_L"), ["UpperLeg_R"]);
/// assert_eq!(swaps("lhumerus"), ["rhumerus"]);
/// assert_eq!(swaps("mixamorig:LeftHand"), ["mixamorig:RightHand"]);
/// assert_eq!(swaps("SHOULDER_LEFT"), ["SHOULDER_RIGHT"]);
/// assert_eq!(swaps("breast.R"), ["breast.L"]);
/// assert_eq!(side_swaps("RightHandIndex1")[0].0, Side::Right);
/// assert!(side_swaps("Spine").is_empty());
/// ```
pub fn side_swaps(name: &str) -> Vec<(Side, String)> {
    let b = name.as_bytes();
    let mut out = Vec::new();
    let mut push = |side: Side, start: usize, end: usize, with: &str| {
        let s = format!("{}{}{}", &name[..start], with, &name[end..]);
        if !out.iter().any(|(_, o)| o == &s) {
            out.push((side, s));
        }
    };
    for i in 0..b.len() {
        if !boundary_before(b, i) {
            continue;
        }
        let mut word_here = false;
        for (word, side, other) in [
            ("Left", Side::Left, "Right"),
            ("left", Side::Left, "right"),
            ("LEFT", Side::Left, "RIGHT"),
            ("Right", Side::Right, "Left"),
            ("right", Side::Right, "left"),
            ("RIGHT", Side::Right, "LEFT"),
        ] {
            let end = i + word.len();
            word_here |= b[i..].starts_with(word.as_bytes());
            if b[i..].starts_with(word.as_bytes()) && boundary_after(b, end) {
                // `LEFTHAND` would pass the case test inside an upper-case
                // word; only accept an upper-case word at a real separator.
                let upper = word.bytes().all(|c| c.is_ascii_uppercase());
                if !upper || end == b.len() || !b[end].is_ascii_alphabetic() {
                    push(side, i, end, other);
                }
            }
        }
        if word_here {
            continue;
        }
        let (side, other) = match b[i] {
            b'L' => (Side::Left, "R"),
            b'R' => (Side::Right, "L"),
            b'l' => (Side::Left, "r"),
            b'r' => (Side::Right, "l"),
            _ => continue,
        };
        let end = i + 1;
        let lower = b[i].is_ascii_lowercase();
        // An upper-case letter after an upper-case marker starts a word only
        // when a lower-case one follows (`LHipJoint`, not `LEFT`).
        let camel =
            b[end..].len() >= 2 && b[end].is_ascii_uppercase() && b[end + 1].is_ascii_lowercase();
        let after = end == b.len()
            || !b[end].is_ascii_alphabetic()
            || (b[end].is_ascii_uppercase() && (lower || camel))
            || (lower && (i == 0 || !b[i - 1].is_ascii_alphabetic()));
        // A single letter after a case change must end the word (`HandL`),
        // otherwise `ShoulderRoll` would be a marker.
        let after = if i > 0 && b[i - 1].is_ascii_alphabetic() {
            end == b.len() || !b[end].is_ascii_alphabetic()
        } else {
            after
        };
        if after {
            push(side, i, end, other);
        }
    }
    out
}

/// How [`Mirror`] finds and checks pairs.
#[derive(Clone, Debug)]
pub struct MirrorOptions {
    /// Explicit `(left, right)` pairs of joint names. When set, names are
    /// not searched, the tolerance is not applied, and a pair that cannot
    /// be mirrored (unknown name, hierarchy or channels that differ) is an
    /// error instead of being dropped.
    pub pairs: Option<Vec<(String, String)>>,
    /// Largest difference between a partner's `OFFSET` and the reflected
    /// `OFFSET`, relative to the longer of the two. Default 0.15.
    pub tolerance: f64,
    /// Also confirm a pair at the top of a chain whose offsets are not
    /// mirror images but have the same length within the tolerance (a
    /// captured pose written as the rest pose, as the Kinect writers do),
    /// and pair the distinct unpaired parents of a name pair through it; the
    /// world plane is then the first frame's. Default `true`; `false` keeps
    /// only the pairs the rest pose confirms by direction.
    pub by_length: bool,
    /// The normal of the plane that reflects every joint's own frame
    /// (`S(j)` for all joints). Default: found per joint from its paired
    /// children (see the module documentation).
    pub rest_axis: Option<Axis>,
    /// The normal of the world mirror `Sw`. Default: the rest axis when it
    /// is not the up axis, otherwise the horizontal axis along which the
    /// pairs are furthest apart in the first frame.
    pub world_axis: Option<Axis>,
    /// The up axis: the world mirror plane contains it. Default `None`:
    /// detected ([`detect_up`](crate::edit::axes::detect_up): the motion
    /// first, else the rest pose), Y when nothing is found. The plane's
    /// normal is the left/right axis of the skeleton (where its pairs lie
    /// apart), never the up axis, so a Z-up file whose lateral axis is Y
    /// is mirrored across its vertical plane, not turned upside down.
    pub up: Option<Axis>,
}

impl Default for MirrorOptions {
    fn default() -> MirrorOptions {
        MirrorOptions {
            pairs: None,
            tolerance: 0.15,
            by_length: true,
            rest_axis: None,
            world_axis: None,
            up: None,
        }
    }
}

/// A joint whose partner lists its rotation channels in another order.
#[derive(Clone, Debug)]
struct Slow {
    left: Axis,
    right: Axis,
    rot_slots: [usize; 3],
    order: RotationOrder,
    partner_axes: [Axis; 3],
    partner_slots: [usize; 3],
}

/// A mirror compiled for one skeleton: the pairs, the plane, the mirrored
/// skeleton, and a per-channel plan (source channel and sign) that mirrors
/// a frame without allocating.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::mirror::{Mirror, MirrorOptions};
///
/// let bvh = Bvh::parse("HIERARCHY
/// ROOT Hips { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
///   JOINT LeftLeg { OFFSET 1 0 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 -4 0 } }
///   JOINT RightLeg { OFFSET -1 0 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 -4 0 } } }
/// MOTION Frames: 1 Frame Time: 0.1
/// 5 4 3 10 20 30 1 2 3 4 5 6
/// ")?;
/// let m = Mirror::new(&bvh, &MirrorOptions::default())?;
/// assert_eq!(m.pairs().len(), 2); // the legs and their End Sites
/// let out = m.apply(&bvh)?;
/// // X position negated; Z and Y rotations negated, X rotation kept; legs swapped.
/// assert_eq!(out.motion().frame(0), [-5.0, 4.0, 3.0, -10.0, 20.0, -30.0, -4.0, 5.0, -6.0, -1.0, 2.0, -3.0]);
/// assert_eq!(m.apply(&out)?, bvh);
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Mirror {
    rest_axis: Axis,
    axes: Vec<Axis>,
    world_axis: Axis,
    partner: Vec<usize>,
    rejected: Vec<(JointId, JointId, String)>,
    /// Pairs at the top of a chain confirmed by their offsets' lengths only.
    by_length: Vec<(JointId, JointId)>,
    skeleton: Skeleton,
    source: Skeleton,
    /// Per output channel: source channel index and sign (0 for channels of
    /// slow joints, which are written separately).
    src: Vec<u32>,
    sign: Vec<f64>,
    slow: Vec<Slow>,
    /// The slow joints as lanes of the rotation kernel.
    lanes: Vec<Changed>,
    /// The previous output frame of [`FrameMap::map`], empty before the first.
    last: Vec<f64>,
    /// The batches of [`FrameMap::map`]'s slow joints.
    scratch: SlowScratch,
    /// Whether the world axis came from the options or the rest pose.
    rest_decides: bool,
}

/// Per frame, for the joints that go through rotations: one lane each of
/// [`super::order`]'s rotation kernel (the partner's angles signed by the
/// reflection `S(left)`, their product in closed form, the half turn
/// `S(left)·S(right)` after it, the extraction in the joint's own order
/// next to the previous frame's angles).
#[derive(Clone, Debug, Default)]
struct SlowScratch {
    lanes: Option<Lanes>,
}

impl Slow {
    /// The joint as a lane of the rotation kernel: `S(l)·R·S(r) =
    /// (S(l)·R·S(l))·(S(l)·S(r))`; conjugating by `S(l)` keeps a rotation
    /// about `l` and negates the others, and `S(l)·S(r)` is the half turn
    /// about the third axis when `l ≠ r`.
    fn lane(&self) -> Changed {
        let axes = self.partner_axes;
        let sign = axes.map(|a| if a == self.left { 1.0 } else { -1.0 });
        let third = Axis::ALL.into_iter().find(|&a| a != self.left && a != self.right);
        Changed {
            from: RotationOrder::from_axes(&axes).expect("three rotation axes"),
            src: self.partner_slots.map(Some),
            sign,
            to: self.order,
            out: self.rot_slots,
            post: if self.left == self.right { None } else { third },
        }
    }
}

fn reflect(v: DVec3, axis: Axis) -> DVec3 {
    let mut v = v;
    v[axis.index()] = -v[axis.index()];
    v
}

fn reflection(axis: Axis) -> DMat3 {
    DMat3::from_diagonal(reflect(DVec3::ONE, axis))
}

fn channel_sign(c: Channel, axis: Axis) -> f64 {
    let on_axis = c.axis() == axis;
    if c.is_position() == on_axis { -1.0 } else { 1.0 }
}

fn position_axes(j: &crate::skeleton::Joint) -> Vec<Axis> {
    let mut v: Vec<Axis> =
        j.channels().iter().filter(|c| c.is_position()).map(|c| c.axis()).collect();
    v.sort_by_key(|a| a.index());
    v
}

/// Why two joints' channels cannot be mirrored into each other, if so.
fn channels_incompatible(a: &crate::skeleton::Joint, b: &crate::skeleton::Joint) -> Option<String> {
    if position_axes(a) != position_axes(b) {
        return Some("their position channels differ".into());
    }
    let (ra, rb): (Vec<Axis>, Vec<Axis>) =
        (a.rotation_axes().collect(), b.rotation_axes().collect());
    if ra != rb && !(ra.len() == 3 && rb.len() == 3) {
        return Some("their rotation channels differ".into());
    }
    None
}

/// Pairs every End Site with the End Site in the same place under its
/// parent's partner (itself when there is none).
fn end_site_partners(skeleton: &Skeleton, partner: &mut [usize]) {
    for (i, j) in skeleton.joints().iter().enumerate() {
        if !j.is_end_site() {
            continue;
        }
        let par = j.parent().expect("End Sites have parents");
        let ends = |p: JointId| skeleton.children(p).filter(|&c| skeleton.joint(c).is_end_site());
        let k = ends(par).position(|c| c.index() == i).expect("a child of its parent");
        let q = JointId::new(partner[par.index()]);
        partner[i] = ends(q).nth(k).map_or(i, |c| c.index());
    }
}

/// The reflection of every joint's own frame: the axis whose reflection
/// takes the offsets of its paired children closest to their partners'
/// (children of a paired joint are compared with the partner's children),
/// unless the parent's (for a root the world's, or `rest`) does nearly as
/// well (within 15% of the children's mean length), and
/// always the parent's for a joint with fewer than three rotation channels,
/// whose rotation could not absorb a change of frame.
fn lateral_axes(
    skeleton: &Skeleton,
    partner: &[usize],
    world: Axis,
    rest: Option<Axis>,
) -> Vec<Axis> {
    let mut partner = partner.to_vec();
    end_site_partners(skeleton, &mut partner);
    let joints = skeleton.joints();
    let mut axes: Vec<Axis> = Vec::with_capacity(joints.len());
    for (i, j) in joints.iter().enumerate() {
        let inherited = j.parent().map_or(rest.unwrap_or(world), |p| axes[p.index()]);
        if j.rotation_axes().count() < 3 {
            // Its rotation could not absorb a change of frame.
            axes.push(j.parent().map_or(world, |p| axes[p.index()]));
            continue;
        }
        if j.parent().is_some() && rest.is_some() {
            axes.push(inherited);
            continue;
        }
        // How far the reflected children land from their partners, per axis.
        let mut miss = [0.0f64; 3];
        let mut size = 0.0;
        for c in skeleton.children(JointId::new(i)) {
            let q = partner[c.index()];
            if q != c.index() {
                let (oc, oq) = (joints[c.index()].offset(), joints[q].offset());
                size += oc.length() + oq.length();
                for a in Axis::ALL {
                    miss[a.index()] += (reflect(oc, a) - oq).length();
                }
            }
        }
        // The parent's reflection unless another one is clearly better
        // (captured skeletons are not exactly symmetric).
        let best = Axis::ALL
            .into_iter()
            .min_by(|a, b| miss[a.index()].total_cmp(&miss[b.index()]))
            .expect("three axes");
        let axis = if miss[inherited.index()] <= miss[best.index()] + 0.15 * size * 0.5 {
            inherited
        } else {
            best
        };
        axes.push(axis);
    }
    axes
}

impl Mirror {
    /// Finds the pairs of `skeleton` and compiles the mirror.
    ///
    /// # Errors
    /// With explicit pairs ([`MirrorOptions::pairs`]): a name that is not a
    /// joint, a joint in two pairs, or a pair that cannot be mirrored.
    pub fn new(bvh: &Bvh, options: &MirrorOptions) -> Result<Mirror> {
        let skeleton = bvh.skeleton();
        let joints = skeleton.joints();
        let n = joints.len();
        let mut by_name: HashMap<&str, usize> = HashMap::new();
        for (i, j) in joints.iter().enumerate() {
            if !j.is_end_site() {
                by_name.entry(j.name()).or_insert(i);
            }
        }
        // Candidate pairs, (left, right).
        let mut candidates: Vec<(usize, usize)> = Vec::new();
        let explicit = options.pairs.is_some();
        let mut through_children = vec![false; n];
        if let Some(pairs) = &options.pairs {
            for (l, r) in pairs {
                let find = |name: &str| {
                    by_name.get(name).copied().ok_or_else(|| {
                        Error::invalid(format!("mirror pair: no joint named {name:?}"))
                    })
                };
                let (l, r) = (find(l)?, find(r)?);
                if l == r
                    || candidates.iter().any(|&(a, b)| [a, b].contains(&l) || [a, b].contains(&r))
                {
                    return Err(Error::invalid(format!(
                        "mirror pair: {:?} is paired twice",
                        joints[l].name()
                    )));
                }
                candidates.push((l, r));
            }
        } else {
            for (i, j) in joints.iter().enumerate() {
                if j.is_end_site() {
                    continue;
                }
                for (side, other) in side_swaps(j.name()) {
                    if let Some(&k) = by_name.get(other.as_str()) {
                        let pair = if side == Side::Left { (i, k) } else { (k, i) };
                        if k != i && !candidates.contains(&pair) {
                            candidates.push(pair);
                        }
                        break;
                    }
                }
            }
            // A joint in two candidate pairs keeps the first.
            let mut used = vec![false; n];
            candidates.retain(|&(l, r)| {
                let ok = !used[l] && !used[r];
                if ok {
                    used[l] = true;
                    used[r] = true;
                }
                ok
            });
            // Joints paired through their children (with `by_length`): the distinct, unpaired
            // parents of a pair, under the same joint and with as many
            // children (OpenNI's `TLS`/`TRS` above `LEFT_SHOULDER#` and
            // `RIGHT_SHOULDER#`).
            let mut k = if options.by_length { 0 } else { candidates.len() };
            while k < candidates.len() {
                let (l, r) = candidates[k];
                k += 1;
                let (Some(pl), Some(pr)) = (joints[l].parent(), joints[r].parent()) else {
                    continue;
                };
                let count = |p: JointId| skeleton.children(p).count();
                if pl == pr
                    || used[pl.index()]
                    || used[pr.index()]
                    || joints[pl.index()].parent() != joints[pr.index()].parent()
                    || count(pl) != count(pr)
                {
                    continue;
                }
                used[pl.index()] = true;
                used[pr.index()] = true;
                through_children[pl.index()] = true;
                through_children[pr.index()] = true;
                candidates.push((pl.index(), pr.index()));
            }
        }
        candidates.sort_by_key(|&(l, r)| l.min(r));
        let rest = rest_positions(skeleton);
        let spread = |pos: &[DVec3], allowed: &[Axis]| -> Axis {
            let d: DVec3 = candidates.iter().map(|&(l, r)| (pos[l] - pos[r]).abs()).sum();
            let mut best = allowed[0];
            for &a in allowed {
                if d[a.index()] > d[best.index()] {
                    best = a;
                }
            }
            best
        };
        let up = options.up.unwrap_or_else(|| {
            crate::edit::axes::detect_up(bvh).axis.map_or(Axis::Y, |a| a.axis())
        });
        let horizontal: Vec<Axis> = Axis::ALL.into_iter().filter(|&a| a != up).collect();
        // The rest pose decides alone when its pairs lie furthest apart
        // along a horizontal axis, and not along Y either unless Y was given
        // as the up axis: a rest pose that lies down (Rokoko's) is told by
        // the first frame, and a clip without frames (a stream's skeleton)
        // says so rather than guess (the up axis detected from the rest pose
        // may not be the motion's).
        let rest_spread = spread(&rest, &Axis::ALL);
        let mut rest_decides = options.world_axis.is_some()
            || (rest_spread != up && (options.up.is_some() || rest_spread != Axis::Y));
        let first_frame_spread = || {
            let fk = crate::Kinematics::new(skeleton, crate::PositionChannels::Replace);
            let mut pos = vec![DVec3::ZERO; n];
            fk.positions(bvh.motion().frame(0), &mut pos);
            spread(&pos, &horizontal)
        };
        let mut world_axis = options.world_axis.unwrap_or_else(|| {
            if rest_decides || bvh.motion().n_frames() == 0 {
                spread(&rest, &horizontal)
            } else {
                first_frame_spread()
            }
        });
        let mut partner: Vec<usize> = (0..n).collect();
        for &(l, r) in &candidates {
            partner[l] = r;
            partner[r] = l;
        }
        let candidate_axes = lateral_axes(skeleton, &partner, world_axis, options.rest_axis);
        let mut rejected: Vec<(JointId, JointId, String)> = Vec::new();
        let mut reject = |l: usize, r: usize, why: String| -> Result<()> {
            if explicit {
                return Err(Error::invalid(format!(
                    "cannot mirror {:?} and {:?}: {why}",
                    joints[l].name(),
                    joints[r].name()
                )));
            }
            rejected.push((JointId::new(l), JointId::new(r), why));
            Ok(())
        };
        let mut partner: Vec<usize> = (0..n).collect();
        let mut by_length: Vec<(usize, usize)> = Vec::new();
        for &(l, r) in &candidates {
            let (ol, or) = (joints[l].offset(), joints[r].offset());
            let parents = (joints[l].parent(), joints[r].parent());
            let a = parents.0.map_or(world_axis, |p| candidate_axes[p.index()]);
            let miss = (reflect(ol, a) - or).length();
            let scale = ol.length().max(or.length());
            let below_pair = match parents {
                (Some(pl), Some(pr)) => {
                    pl != pr && partner[pl.index()] == pr.index() && !through_children[pl.index()]
                }
                _ => false,
            };
            let by_direction = explicit || below_pair || miss <= options.tolerance * scale;
            // A captured pose written as the rest pose (Kinect writers): the
            // bones have the same length but point different ways.
            let same_length = (ol.length() - or.length()).abs() <= options.tolerance * scale;
            let confirmed = by_direction || (same_length && options.by_length);
            if !confirmed {
                reject(
                    l,
                    r,
                    format!(
                        "their offsets are not mirror images ({:.1}% apart, tolerance {:.1}%)",
                        100.0 * miss / scale,
                        100.0 * options.tolerance
                    ),
                )?;
                continue;
            }
            if let Some(why) = channels_incompatible(&joints[l], &joints[r]) {
                reject(l, r, why)?;
                continue;
            }
            if !by_direction {
                by_length.push((l, r));
            }
            partner[l] = r;
            partner[r] = l;
        }
        // The hierarchy must map onto itself: p(parent(j)) = parent(p(j)).
        // End Sites pair in order under paired parents. Drop pairs until it does.
        loop {
            end_site_partners(skeleton, &mut partner);
            let mut broken: Option<usize> = None;
            for (i, j) in joints.iter().enumerate() {
                let p = partner[i];
                let expected = j.parent().map(|q| partner[q.index()]);
                if joints[p].parent().map(|q| q.index()) != expected {
                    let mut b =
                        if p != i { i } else { j.parent().expect("a root matches").index() };
                    while joints[b].is_end_site() {
                        b = joints[b].parent().expect("End Sites have parents").index();
                    }
                    broken = Some(b);
                    break;
                }
            }
            let Some(b) = broken else { break };
            let other = partner[b];
            let (l, r) =
                if candidates.iter().any(|&(l, _)| l == b) { (b, other) } else { (other, b) };
            reject(l, r, "they do not sit in mirrored places of the hierarchy".into())?;
            partner[b] = b;
            partner[other] = other;
            for (i, j) in joints.iter().enumerate() {
                if j.is_end_site() {
                    partner[i] = i;
                }
            }
        }
        by_length.retain(|&(l, r)| partner[l] == r);
        if !by_length.is_empty() && options.world_axis.is_none() {
            // The rest pose is a captured pose, not a symmetric stance: it
            // tells neither the lateral plane nor, for a stream, anything
            // before the first frame.
            // (Taken from the first frame already unless the rest pose decided.)
            if rest_decides && bvh.motion().n_frames() > 0 {
                world_axis = first_frame_spread();
            }
            rest_decides = false;
        }
        let axes = lateral_axes(skeleton, &partner, world_axis, options.rest_axis);
        // Joint j's frame is reflected by axes[j]; its translation lives in
        // its parent's frame (the world's for a root).
        let outer = |j: &crate::skeleton::Joint| j.parent().map_or(world_axis, |p| axes[p.index()]);
        // The mirrored skeleton and the channel plan.
        let specs: Vec<JointSpec> = joints
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let mut s = JointSpec::of(j);
                s.offset = reflect(joints[partner[i]].offset(), outer(j));
                s
            })
            .collect();
        let mirrored = build(&specs)?;
        let mut src = vec![0u32; skeleton.n_channels()];
        let mut sign = vec![0.0; skeleton.n_channels()];
        let mut slow = Vec::new();
        for (i, j) in joints.iter().enumerate() {
            let q = &joints[partner[i]];
            let (left, right) = (outer(j), axes[i]);
            if left == right && j.rotation_axes().eq(q.rotation_axes()) {
                // Every channel is the partner's channel of the same name,
                // with its sign (the positions may be listed in another order).
                for (k, &c) in j.channels().iter().enumerate() {
                    let kq =
                        q.channels().iter().position(|&d| d == c).expect("compatible channels");
                    src[j.first_channel() + k] = (q.first_channel() + kq) as u32;
                    sign[j.first_channel() + k] = channel_sign(c, left);
                }
                continue;
            }
            // Both have three rotation channels here: a joint with fewer keeps
            // its parent's reflection, and pairs list the same rotation axes
            // or three each.
            let mut rot_slots = [0; 3];
            let mut n_rot = 0;
            for (k, &c) in j.channels().iter().enumerate() {
                if c.is_rotation() {
                    rot_slots[n_rot] = j.first_channel() + k;
                    n_rot += 1;
                } else {
                    let kq = q.channels().iter().position(|&d| d == c).expect("same position axes");
                    src[j.first_channel() + k] = (q.first_channel() + kq) as u32;
                    sign[j.first_channel() + k] = channel_sign(c, left);
                }
            }
            let axes: Vec<Axis> = j.rotation_axes().collect();
            slow.push(Slow {
                left,
                right,
                rot_slots,
                order: RotationOrder::from_axes(&axes).expect("three rotation axes"),
                partner_axes: RotationOrder::from_axes(&q.rotation_axes().collect::<Vec<_>>())
                    .expect("three rotation axes")
                    .axes(),
                partner_slots: {
                    let mut slots = [0; 3];
                    let rot = q.channels().iter().enumerate().filter(|(_, c)| c.is_rotation());
                    for (slot, (k, _)) in slots.iter_mut().zip(rot) {
                        *slot = q.first_channel() + k;
                    }
                    slots
                },
            });
        }
        let axis = axes.first().copied().unwrap_or(world_axis);
        Ok(Mirror {
            rest_axis: axis,
            axes,
            world_axis,
            partner,
            rejected,
            by_length: by_length
                .into_iter()
                .map(|(l, r)| (JointId::new(l), JointId::new(r)))
                .collect(),
            skeleton: mirrored,
            source: skeleton.clone(),
            src,
            sign,
            lanes: slow.iter().map(Slow::lane).collect(),
            slow,
            last: Vec::new(),
            scratch: SlowScratch::default(),
            rest_decides,
        })
    }

    /// The normal of the world mirror plane `Sw` (through the origin).
    pub fn world_axis(&self) -> Axis {
        self.world_axis
    }

    /// Whether the world mirror plane came from the options or from the
    /// rest pose alone, not from the clip's first frame (which decides
    /// only when the rest pose's pairs lie furthest apart along the up
    /// axis). Then the mirror made for the skeleton alone (a clip without
    /// frames) is the one made for every clip of it, so a stream can be
    /// mirrored before its frames are read.
    pub fn rest_pose_decides(&self) -> bool {
        self.rest_decides
    }

    /// The normal of the rest mirror plane of the first root's frame.
    pub fn rest_axis(&self) -> Axis {
        self.rest_axis
    }

    /// The normal of the plane that reflects each joint's own frame, in
    /// file order (see the module documentation).
    pub fn joint_axes(&self) -> &[Axis] {
        &self.axes
    }

    /// The confirmed pairs, `(left, right)`, in file order of the left joint
    /// (End Sites under paired joints included).
    pub fn pairs(&self) -> Vec<(JointId, JointId)> {
        let joints = self.source.joints();
        let mut out = Vec::new();
        for (i, &p) in self.partner.iter().enumerate() {
            if p > i {
                // The left one is the one whose name says so; End Sites follow their parents.
                let mut a = i;
                while joints[a].is_end_site() {
                    a = joints[a].parent().expect("End Sites have parents").index();
                }
                let left =
                    side_swaps(joints[a].name()).first().is_none_or(|(s, _)| *s == Side::Left);
                out.push(if left {
                    (JointId::new(i), JointId::new(p))
                } else {
                    (JointId::new(p), JointId::new(i))
                });
            }
        }
        out
    }

    /// The partner of every joint (itself when unpaired), in file order.
    pub fn partners(&self) -> impl ExactSizeIterator<Item = JointId> + '_ {
        self.partner.iter().map(|&p| JointId::new(p))
    }

    /// Whether every joint is mirrored by sign flips alone, so that the
    /// mirror is bit-exact and mirroring twice gives back the same bits
    /// (otherwise some joints go through rotation matrices).
    pub fn is_sign_flip(&self) -> bool {
        self.slow.is_empty()
    }

    /// How many joints go through rotations (a partner listing its
    /// rotation channels in another order, or a joint whose own frame
    /// reflects another axis than its parent's) rather than sign flips.
    pub fn rotated_joints(&self) -> usize {
        self.slow.len()
    }

    /// Candidate pairs that were dropped, with the reason.
    pub fn rejected(&self) -> &[(JointId, JointId, String)] {
        &self.rejected
    }

    /// Pairs at the top of a chain, `(left, right)`, whose offsets are not
    /// mirror images within the tolerance but have the same length within
    /// it (a captured pose written as the rest pose), confirmed all the same
    /// (the pairs below them then confirm by names and hierarchy).
    pub fn confirmed_by_length(&self) -> &[(JointId, JointId)] {
        &self.by_length
    }

    /// The mirrored skeleton: the same joints, names and channels, each
    /// joint with its partner's reflected `OFFSET`.
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// Mirrors one frame of the source skeleton into `dst`, one joint at
    /// a time through rotation matrices (the plain form of what
    /// [`FrameMap::map`] and [`Mirror::apply`] do with the frame's sines in
    /// one batch and the rotations as quaternions; they agree within
    /// 1e-9 degrees).
    ///
    /// `previous` is the previous *mirrored* frame, used only by pairs whose
    /// rotation orders differ, to pick the Euler angles closest to it (no
    /// ±360° jumps); `None` for the first frame.
    ///
    /// # Panics
    /// When `src`, `dst` or `previous` do not hold one value per channel.
    pub fn apply_frame(&self, src: &[f64], previous: Option<&[f64]>, dst: &mut [f64]) {
        assert!(
            src.len() == self.src.len() && dst.len() == self.src.len(),
            "frames must hold one value per channel"
        );
        for ((d, &s), &k) in dst.iter_mut().zip(&self.src).zip(&self.sign) {
            *d = k * src[s as usize];
        }
        for s in &self.slow {
            let angles = s.partner_slots.map(|c| src[c]);
            let m =
                reflection(s.left) * euler_to_mat3(&s.partner_axes, &angles) * reflection(s.right);
            let e = match previous {
                Some(p) => mat3_to_euler_near(m, s.order, s.rot_slots.map(|c| p[c])),
                None => mat3_to_euler(m, s.order),
            };
            for (slot, v) in s.rot_slots.iter().zip(e) {
                dst[*slot] = v;
            }
        }
    }

    /// [`Mirror::apply_frame`] with the slow joints in one pass of the
    /// rotation lanes ([`Slow::lane`]): exact sign flips and permutations
    /// of their partners' quaternions, their Euler angles extracted as
    /// [`crate::rotation::EulerBatch`] does.
    fn mirror_frame(
        &self,
        s: &mut SlowScratch,
        src: &[f64],
        previous: Option<&[f64]>,
        dst: &mut [f64],
    ) {
        assert!(
            src.len() == self.src.len() && dst.len() == self.src.len(),
            "frames must hold one value per channel"
        );
        for ((d, &i), &k) in dst.iter_mut().zip(&self.src).zip(&self.sign) {
            *d = k * src[i as usize];
        }
        if self.slow.is_empty() {
            return;
        }
        let lanes = s.lanes.get_or_insert_with(|| Lanes::new(&self.lanes));
        lanes.load(src);
        if let Some(p) = previous {
            for (k, j) in self.lanes.iter().enumerate() {
                lanes.set_near(k, j.out.map(|c| p[c]));
            }
        }
        lanes.solve(previous.is_none());
        for (k, j) in self.lanes.iter().enumerate() {
            for (&slot, v) in j.out.iter().zip(lanes.near(k)) {
                dst[slot] = v;
            }
        }
    }

    /// Mirrors a whole clip of the source skeleton.
    ///
    /// # Errors
    /// When `bvh` does not have the skeleton this mirror was made for.
    pub fn apply(&self, bvh: &Bvh) -> Result<Bvh> {
        if bvh.skeleton() != &self.source {
            return Err(Error::invalid(
                "the clip's skeleton is not the one the mirror was made for",
            ));
        }
        let m = bvh.motion();
        let nc = m.n_channels();
        let mut values = vec![0.0; m.values().len()];
        let mut scratch = SlowScratch::default();
        for f in 0..m.n_frames() {
            let (done, rest) = values.split_at_mut(f * nc);
            let previous = if f == 0 { None } else { Some(&done[(f - 1) * nc..]) };
            self.mirror_frame(&mut scratch, m.frame(f), previous, &mut rest[..nc]);
        }
        Bvh::new(
            self.skeleton.clone(),
            Motion::with_frames(m.frame_time(), m.n_frames(), nc, values)?,
        )
    }
}

/// Streaming form: frames must come in order; the previous output frame is
/// kept for Euler continuity.
impl FrameMap for Mirror {
    fn output_skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    fn map(&mut self, input: &[f64], output: &mut [f64]) {
        let mut s = std::mem::take(&mut self.scratch);
        self.mirror_frame(&mut s, input, (!self.last.is_empty()).then_some(&self.last[..]), output);
        self.scratch = s;
        if !self.slow.is_empty() {
            // Only the slow joints read the previous frame: after the first
            // frame, only their channels are kept up to date.
            if self.last.len() == output.len() {
                for &c in self.lanes.iter().flat_map(|j| &j.out) {
                    self.last[c] = output[c];
                }
            } else {
                self.last.clear();
                self.last.extend_from_slice(output);
            }
        }
    }
}

/// The state carried from frame to frame is the previous output frame
/// (of the joints that go through rotations), so [`super::ChunkedMap`]
/// can map runs of frames on several threads.
impl super::SplitFrameMap for Mirror {}

/// Mirrors `bvh` with [`MirrorOptions::default`] (pairs found by name and
/// confirmed by the rest pose); see [`Mirror`].
///
/// # Errors
/// See [`Mirror::new`].
pub fn mirror(bvh: &Bvh) -> Result<Bvh> {
    Mirror::new(bvh, &MirrorOptions::default())?.apply(bvh)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swaps(n: &str) -> Vec<String> {
        side_swaps(n).into_iter().map(|(_, s)| s).collect()
    }

    /// A captured pose as the rest pose, as the Kinect writers store it:
    /// the arms' offsets have the same length but point different ways,
    /// under unnamed parents (`TLS`/`TRS`, OpenNI's) paired through them.
    /// The rest pose's pairs lie apart along X; in the first frame (the
    /// left arm turned by its parent) along Z, which is the plane.
    fn captured_rest_pose(right: &str, frames: &str) -> Bvh {
        Bvh::parse(format!(
            "HIERARCHY
ROOT Hips {{ OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT TLS {{ OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT LeftArm {{ OFFSET 4 3 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site {{ OFFSET 0 -2 0 }} }} }}
  JOINT TRS {{ OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT RightArm {{ OFFSET {right} CHANNELS 3 Zrotation Xrotation Yrotation End Site {{ OFFSET 0 -2 0 }} }} }} }}
MOTION
{frames}"
        ))
        .unwrap()
    }

    #[test]
    fn pairs_confirmed_by_length_mirror_across_the_first_frame() {
        let bvh = captured_rest_pose(
            "0 3 -4",
            "Frames: 2 Frame Time: 0.1
1 2 3 4 5 6 0 0 -90 10 20 30 1 2 3 5 6 7
2 2 3 4 5 6 0 0 -80 11 20 30 1 2 3 5 6 8
",
        );
        let m = Mirror::new(&bvh, &MirrorOptions::default()).unwrap();
        let names: Vec<&str> = m
            .pairs()
            .iter()
            .filter(|&&(l, _)| !bvh.skeleton().joint(l).is_end_site())
            .map(|&(l, _)| bvh.skeleton().joint(l).name())
            .collect();
        assert!(m.rejected().is_empty(), "{:?}", m.rejected());
        assert_eq!(names, ["TLS", "LeftArm"]);
        let by_length: Vec<_> =
            m.confirmed_by_length().iter().map(|&(l, r)| (l.index(), r.index())).collect();
        assert_eq!(by_length, [(2, 5)]);
        assert_eq!(
            m.world_axis(),
            Axis::Z,
            "the first frame's lateral axis, not the rest pose's X"
        );
        assert!(!m.rest_pose_decides());
        // Every joint lands on its partner's reflection across Z = 0, and
        // mirroring twice gives the clip back.
        let out = m.apply(&bvh).unwrap();
        let fk = |b: &Bvh, f: usize| {
            let k = crate::Kinematics::new(b.skeleton(), crate::PositionChannels::Replace);
            let mut pos = vec![DVec3::ZERO; b.skeleton().joints().len()];
            k.positions(b.motion().frame(f), &mut pos);
            pos
        };
        let partner: Vec<usize> = m.partners().map(|p| p.index()).collect();
        for f in 0..2 {
            let (a, b) = (fk(&bvh, f), fk(&out, f));
            for j in 0..a.len() {
                let want = reflect(a[partner[j]], Axis::Z);
                assert!((b[j] - want).length() < 1e-12, "frame {f} joint {j}: {} vs {want}", b[j]);
            }
        }
        let back = Mirror::new(&out, &MirrorOptions::default()).unwrap();
        assert_eq!(back.world_axis(), Axis::Z);
        let twice = back.apply(&out).unwrap();
        assert_eq!(twice.skeleton(), bvh.skeleton());
        for (x, y) in twice.motion().values().iter().zip(bvh.motion().values()) {
            assert!((x - y).abs() < 1e-9, "mirrored twice: {x} vs {y}");
        }
        // Without the option, as before: no pair (the arms rejected, their
        // parents with them).
        let old = MirrorOptions { by_length: false, ..MirrorOptions::default() };
        let m = Mirror::new(&bvh, &old).unwrap();
        assert!(m.pairs().is_empty() && m.confirmed_by_length().is_empty());
        assert_eq!(m.rejected().len(), 1, "{:?}", m.rejected());
        // Without frames nothing tells the plane: a stream must wait for them.
        let rest = captured_rest_pose("0 3 -4", "Frames: 0 Frame Time: 0.1\n");
        let m = Mirror::new(&rest, &MirrorOptions::default()).unwrap();
        assert!(!m.rest_pose_decides());
        assert_eq!(m.confirmed_by_length().len(), 1);
        // Longer on one side than the tolerance allows: not a pair.
        let uneven = captured_rest_pose("0 3 -6", "Frames: 0 Frame Time: 0.1\n");
        let m = Mirror::new(&uneven, &MirrorOptions::default()).unwrap();
        assert!(m.confirmed_by_length().is_empty());
        assert!(m.rejected()[0].2.contains("not mirror images"), "{:?}", m.rejected());
    }

    #[test]
    fn markers() {
        assert_eq!(swaps("LeftUpLeg"), ["RightUpLeg"]);
        assert_eq!(swaps("RightHandIndex1"), ["LeftHandIndex1"]);
        assert_eq!(swaps("UpperLeg_L"), ["UpperLeg_R"]);
        assert_eq!(swaps("lhumerus"), ["rhumerus"]);
        assert_eq!(swaps("lThigh"), ["rThigh"]);
        assert_eq!(swaps("LHipJoint"), ["RHipJoint"]);
        assert_eq!(swaps("mixamorig:LeftHand"), ["mixamorig:RightHand"]);
        assert_eq!(swaps("oris06.l"), ["oris06.r"]);
        assert_eq!(swaps("Bip01_R_Thigh"), ["Bip01_L_Thigh"]);
        assert_eq!(swaps("ShoulderLeft"), ["ShoulderRight"]);
        assert_eq!(swaps("LEFT_SHOULDER#"), ["RIGHT_SHOULDER#"]);
        assert_eq!(swaps("HandL"), ["HandR"]);
        assert_eq!(swaps("hand_l "), ["hand_r "]);
        assert_eq!(swaps("L_Wrist_End"), ["R_Wrist_End"]);
        assert_eq!(swaps("leftEye"), ["rightEye"]);
        for none in ["Spine", "ShoulderRoll", "Cleft", "TLS", "Leap_Root", "Root", "LEFTHAND"] {
            assert!(swaps(none).is_empty(), "{none}: {:?}", swaps(none));
        }
    }
}
