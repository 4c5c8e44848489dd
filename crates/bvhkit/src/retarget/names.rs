//! Canonical bones and the built-in name families.
//!
//! Every joint of a skeleton is given at most one canonical bone
//! ([`Bone`]) by [`classify`]: by name for the limbs, the hips, the neck and
//! the head, and by the hierarchy for the spine (the joints between the
//! hips and the neck: the first is [`Bone::Spine`], the last
//! [`Bone::Chest`]), since spine chains differ in length from one rig to
//! the next (CMU's `LowerBack Spine Spine1`, Rokoko's `Spine Spine1
//! Spine2`, Perception Neuron's `Spine` to `Spine3`, Xsens' `L5 L3 T12
//! T8`).
//!
//! A name is matched after normalising it: everything up to the last `:`
//! is dropped (`mixamorig:`, `mixamorig1:`, namespaces), so is a leading
//! `Bip01`/`Bip001` (3ds Max biped), then the name is lowercased and every
//! character that is not a letter or digit removed (`Shoulder_L`,
//! `SHOULDER_LEFT`, `toe1-1.R`). A side is a `left`/`right` or `l`/`r`
//! prefix or suffix of what remains (`LeftUpLeg`, `HipLeft`, `lThigh`,
//! `UpperLeg_L`, `Bip01_L_Thigh`), and the rest must be one of the limb
//! names below; the first split that gives a known name wins.
//!
//! | bone | names (after the side is removed) |
//! |---|---|
//! | hips | `hips`, `hip`, `pelvis` (no side); else a joint named `root`; else the skeleton's root |
//! | neck | `neck`, `neck1`, `neck01`, `lowerneck`, `upperneck`, `neckdummy`, `shouldercenter` (no side) |
//! | head | `head` (no side) |
//! | clavicle | `collar`, `clavicle`, and `shoulder` when a child is an upper arm |
//! | upper arm | `arm`, `uparm`, `upperarm`, `upperarm01`, `humerus`, `shldr`, and `shoulder` otherwise |
//! | lower arm | `forearm`, `lowarm`, `lowerarm`, `lowerarm01`, `radius`, `elbow` |
//! | hand | `hand`, `wrist` |
//! | upper leg | `upleg`, `upperleg`, `upperleg01`, `thigh`, `femur`, `hip` |
//! | lower leg | `leg`, `lowleg`, `lowerleg`, `lowerleg01`, `shin`, `calf`, `tibia`, `knee` |
//! | foot | `foot`, `ankle` (a foot under a foot is a toe: Kinect's `FootLeft` under `AnkleLeft`) |
//! | toe | `toe`, `toes`, `toebase`, `toe0`, `ball` |
//!
//! These cover CMU (cgspeed's `LeftUpLeg LeftLeg`, the ASF names `lfemur
//! ltibia lhumerus lradius`, the 3ds Max conversion's `LeftHip LeftKnee`),
//! Mixamo (`mixamorig:LeftArm`), Bandai Namco (`UpperArm_L`), Perception
//! Neuron and Rokoko (`LeftShoulder LeftArm LeftForeArm`), Xsens MVN
//! (`RightUpperArm`, `RightCollar RightShoulder RightElbow`), Daz/Poser and
//! Second Life (`lCollar lShldr lForeArm lThigh lShin`), 3ds Max biped
//! (`Bip01_L_Calf`), Unity humanoid (`LeftUpperLeg`), Kinect and Azure
//! Kinect (`ShoulderLeft`, `ELBOW_LEFT`), MediaPipe, iPi and MakeHuman
//! (`upperarm01.L upperarm02.L lowerarm01.L`: the first of each pair is the
//! bone, the second a twist joint left unmapped, which the bone's swing
//! spans).
//! When two joints get the same bone, the one nearest the root keeps it
//! (Azure Kinect's `WRIST_LEFT` is the hand, `HAND_LEFT` below it is not).

use std::fmt;

use crate::skeleton::{JointId, Skeleton};

/// A side of the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The character's left.
    Left,
    /// The character's right.
    Right,
}

/// A limb bone, on either side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Limb {
    /// Clavicle (collar bone, Mixamo's `LeftShoulder`).
    Clavicle,
    /// Upper arm.
    UpperArm,
    /// Lower arm (forearm).
    LowerArm,
    /// Hand (wrist).
    Hand,
    /// Upper leg (thigh).
    UpperLeg,
    /// Lower leg (shin).
    LowerLeg,
    /// Foot (ankle).
    Foot,
    /// Toe (ball of the foot).
    Toe,
}

impl Limb {
    /// All eight, from the body out.
    pub const ALL: [Limb; 8] = [
        Limb::Clavicle,
        Limb::UpperArm,
        Limb::LowerArm,
        Limb::Hand,
        Limb::UpperLeg,
        Limb::LowerLeg,
        Limb::Foot,
        Limb::Toe,
    ];

    fn name(self) -> &'static str {
        match self {
            Limb::Clavicle => "clavicle",
            Limb::UpperArm => "upper arm",
            Limb::LowerArm => "lower arm",
            Limb::Hand => "hand",
            Limb::UpperLeg => "upper leg",
            Limb::LowerLeg => "lower leg",
            Limb::Foot => "foot",
            Limb::Toe => "toe",
        }
    }
}

/// A canonical bone: the role a joint plays in a human skeleton.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bone {
    /// The hips (pelvis): carries the root motion.
    Hips,
    /// The first joint of the spine above the hips.
    Spine,
    /// The last joint of the spine below the neck (when the spine has two
    /// joints or more).
    Chest,
    /// The neck.
    Neck,
    /// The head.
    Head,
    /// A limb bone on one side.
    Limb(Side, Limb),
}

impl Bone {
    /// Every canonical bone, in a fixed order.
    pub fn all() -> Vec<Bone> {
        let mut v = vec![Bone::Hips, Bone::Spine, Bone::Chest, Bone::Neck, Bone::Head];
        for side in [Side::Left, Side::Right] {
            v.extend(Limb::ALL.iter().map(|&l| Bone::Limb(side, l)));
        }
        v
    }
}

impl fmt::Display for Bone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bone::Hips => f.write_str("hips"),
            Bone::Spine => f.write_str("spine"),
            Bone::Chest => f.write_str("chest"),
            Bone::Neck => f.write_str("neck"),
            Bone::Head => f.write_str("head"),
            Bone::Limb(Side::Left, l) => write!(f, "left {}", l.name()),
            Bone::Limb(Side::Right, l) => write!(f, "right {}", l.name()),
        }
    }
}

/// A name with namespaces, biped prefixes, case and separators removed
/// (see the module documentation).
pub fn normalize(name: &str) -> String {
    let name = name.rsplit(':').next().unwrap_or(name);
    let lower: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    for prefix in ["bip001", "bip01"] {
        if let Some(rest) = lower.strip_prefix(prefix)
            && !rest.is_empty()
        {
            return rest.to_string();
        }
    }
    lower
}

/// What a name says before the hierarchy is looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Guess {
    Hips,
    RootName,
    Neck,
    Head,
    /// `shoulder`: clavicle or upper arm, decided by the children.
    Shoulder(Side),
    Limb(Side, Limb),
}

fn central(n: &str) -> Option<Guess> {
    match n {
        "hips" | "hip" | "pelvis" => Some(Guess::Hips),
        "root" => Some(Guess::RootName),
        "neck" | "neck1" | "neck01" | "lowerneck" | "upperneck" | "neckdummy"
        | "shouldercenter" => Some(Guess::Neck),
        "head" => Some(Guess::Head),
        _ => None,
    }
}

fn limb(n: &str) -> Option<Option<Limb>> {
    Some(Some(match n {
        "shoulder" => return Some(None),
        "collar" | "clavicle" => Limb::Clavicle,
        "arm" | "uparm" | "upperarm" | "upperarm01" | "humerus" | "shldr" => Limb::UpperArm,
        "forearm" | "lowarm" | "lowerarm" | "lowerarm01" | "radius" | "elbow" => Limb::LowerArm,
        "hand" | "wrist" => Limb::Hand,
        "upleg" | "upperleg" | "upperleg01" | "thigh" | "femur" | "hip" => Limb::UpperLeg,
        "leg" | "lowleg" | "lowerleg" | "lowerleg01" | "shin" | "calf" | "tibia" | "knee" => {
            Limb::LowerLeg
        }
        "foot" | "ankle" => Limb::Foot,
        "toe" | "toes" | "toebase" | "toe0" | "ball" => Limb::Toe,
        _ => return None,
    }))
}

fn guess(name: &str) -> Option<Guess> {
    let n = normalize(name);
    if let Some(g) = central(&n) {
        return Some(g);
    }
    let splits: [(&str, Side, bool); 6] = [
        ("left", Side::Left, true),
        ("right", Side::Right, true),
        ("left", Side::Left, false),
        ("right", Side::Right, false),
        ("l", Side::Left, true),
        ("r", Side::Right, true),
    ];
    let mut tries: Vec<(Side, &str)> = Vec::new();
    for (word, side, prefix) in splits {
        let rest = if prefix { n.strip_prefix(word) } else { n.strip_suffix(word) };
        if let Some(rest) = rest {
            tries.push((side, rest));
        }
    }
    for (suffix, side) in [("l", Side::Left), ("r", Side::Right)] {
        if let Some(rest) = n.strip_suffix(suffix) {
            tries.push((side, rest));
        }
    }
    tries.into_iter().find_map(|(side, rest)| match limb(rest)? {
        Some(l) => Some(Guess::Limb(side, l)),
        None => Some(Guess::Shoulder(side)),
    })
}

/// The canonical bone of every joint of `skeleton` (End Sites get none),
/// in file order; see the module documentation for the rules.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::retarget::names::{classify, Bone, Limb, Side};
/// let bvh = Bvh::parse("HIERARCHY ROOT mixamorig:Hips { OFFSET 0 0 0 CHANNELS 0
///     JOINT mixamorig:Spine { OFFSET 0 10 0 CHANNELS 0
///       JOINT mixamorig:Spine1 { OFFSET 0 10 0 CHANNELS 0
///         JOINT mixamorig:Neck { OFFSET 0 10 0 CHANNELS 0 End Site { OFFSET 0 5 0 } }
///         JOINT mixamorig:LeftShoulder { OFFSET 3 8 0 CHANNELS 0
///           JOINT mixamorig:LeftArm { OFFSET 5 0 0 CHANNELS 0 End Site { OFFSET 20 0 0 } } } } } }
///     MOTION Frames: 0 Frame Time: 0.1")?;
/// let bones = classify(bvh.skeleton());
/// assert_eq!(bones[0], Some(Bone::Hips));
/// assert_eq!(bones[1], Some(Bone::Spine));
/// assert_eq!(bones[2], Some(Bone::Chest));
/// assert_eq!(bones[3], Some(Bone::Neck));
/// assert_eq!(bones[5], Some(Bone::Limb(Side::Left, Limb::Clavicle)));
/// assert_eq!(bones[6], Some(Bone::Limb(Side::Left, Limb::UpperArm)));
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn classify(skeleton: &Skeleton) -> Vec<Option<Bone>> {
    let joints = skeleton.joints();
    let guesses: Vec<Option<Guess>> =
        joints.iter().map(|j| if j.is_end_site() { None } else { guess(j.name()) }).collect();
    let mut bones: Vec<Option<Bone>> = vec![None; joints.len()];
    for (i, g) in guesses.iter().enumerate() {
        bones[i] = match *g {
            Some(Guess::Hips) => Some(Bone::Hips),
            Some(Guess::Neck) => Some(Bone::Neck),
            Some(Guess::Head) => Some(Bone::Head),
            Some(Guess::Limb(s, l)) => Some(Bone::Limb(s, l)),
            Some(Guess::Shoulder(s)) => {
                let arm_below = skeleton
                    .children(JointId::new(i))
                    .any(|c| matches!(guesses[c.index()], Some(Guess::Limb(_, Limb::UpperArm))));
                Some(Bone::Limb(s, if arm_below { Limb::Clavicle } else { Limb::UpperArm }))
            }
            Some(Guess::RootName) | None => None,
        };
    }
    // A foot under a foot is a toe.
    for i in 0..joints.len() {
        if let (Some(Bone::Limb(s, Limb::Foot)), Some(p)) = (bones[i], joints[i].parent())
            && bones[p.index()] == Some(Bone::Limb(s, Limb::Foot))
        {
            bones[i] = Some(Bone::Limb(s, Limb::Toe));
        }
    }
    // The hips: by name, else a joint named root, else the first root.
    if !bones.contains(&Some(Bone::Hips)) {
        let hips = guesses
            .iter()
            .position(|g| *g == Some(Guess::RootName))
            .or_else(|| (!joints.is_empty()).then_some(0));
        if let Some(h) = hips {
            bones[h] = Some(Bone::Hips);
        }
    }
    keep_topmost(skeleton, &mut bones);
    spine(skeleton, &mut bones);
    bones
}

/// When several joints have one bone, the one nearest the root (then the
/// first in file order) keeps it.
fn keep_topmost(skeleton: &Skeleton, bones: &mut [Option<Bone>]) {
    for bone in Bone::all() {
        let best = (0..bones.len())
            .filter(|&i| bones[i] == Some(bone))
            .min_by_key(|&i| (skeleton.joints()[i].depth(), i));
        for (i, b) in bones.iter_mut().enumerate() {
            if *b == Some(bone) && Some(i) != best {
                *b = None;
            }
        }
    }
}

/// The spine: the joints strictly between the hips and the neck (else the
/// head); the first is the spine, the last the chest. A neck or head that
/// is not below the hips is dropped.
fn spine(skeleton: &Skeleton, bones: &mut [Option<Bone>]) {
    let find = |bones: &[Option<Bone>], b: Bone| bones.iter().position(|x| *x == Some(b));
    let Some(hips) = find(bones, Bone::Hips) else { return };
    let top = find(bones, Bone::Neck).or_else(|| find(bones, Bone::Head));
    let Some(top) = top else { return };
    let mut path = Vec::new();
    let mut j = skeleton.joints()[top].parent();
    while let Some(p) = j {
        if p.index() == hips {
            break;
        }
        path.push(p.index());
        j = skeleton.joints()[p.index()].parent();
    }
    if j.is_none() {
        // Not below the hips: not a neck or head of this body.
        bones[top] = None;
        return;
    }
    path.reverse();
    if let Some(&first) = path.first() {
        if bones[first].is_none() {
            bones[first] = Some(Bone::Spine);
        }
        if path.len() >= 2 {
            let last = path[path.len() - 1];
            if bones[last].is_none() {
                bones[last] = Some(Bone::Chest);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_every_family() {
        let cases: &[(&str, Option<Guess>)] = &[
            ("mixamorig:LeftForeArm", Some(Guess::Limb(Side::Left, Limb::LowerArm))),
            ("mixamorig1:RightUpLeg", Some(Guess::Limb(Side::Right, Limb::UpperLeg))),
            ("UpperArm_L", Some(Guess::Limb(Side::Left, Limb::UpperArm))),
            ("LowerLeg_R", Some(Guess::Limb(Side::Right, Limb::LowerLeg))),
            ("Toes_L", Some(Guess::Limb(Side::Left, Limb::Toe))),
            ("lShldr", Some(Guess::Limb(Side::Left, Limb::UpperArm))),
            ("rCollar", Some(Guess::Limb(Side::Right, Limb::Clavicle))),
            ("rShin", Some(Guess::Limb(Side::Right, Limb::LowerLeg))),
            ("lhumerus", Some(Guess::Limb(Side::Left, Limb::UpperArm))),
            ("rtibia", Some(Guess::Limb(Side::Right, Limb::LowerLeg))),
            ("Bip01_L_Calf", Some(Guess::Limb(Side::Left, Limb::LowerLeg))),
            ("Bip01_R_Toe0", Some(Guess::Limb(Side::Right, Limb::Toe))),
            ("SHOULDER_LEFT", Some(Guess::Shoulder(Side::Left))),
            ("KneeRight", Some(Guess::Limb(Side::Right, Limb::LowerLeg))),
            ("RightHip", Some(Guess::Limb(Side::Right, Limb::UpperLeg))),
            ("LeftUpperLeg", Some(Guess::Limb(Side::Left, Limb::UpperLeg))),
            ("RightToeBase", Some(Guess::Limb(Side::Right, Limb::Toe))),
            ("LThigh", Some(Guess::Limb(Side::Left, Limb::UpperLeg))),
            ("Hips", Some(Guess::Hips)),
            ("hip", Some(Guess::Hips)),
            ("PELVIS", Some(Guess::Hips)),
            ("Neck1", Some(Guess::Neck)),
            ("LHipJoint", None),
            ("LowerBack", None),
            ("LThumb", None),
            ("Spine1", None),
            ("LeftHandIndex1", None),
            ("toe1-1.R", None),
            ("upperarm01.L", Some(Guess::Limb(Side::Left, Limb::UpperArm))),
            ("lowerleg01.R", Some(Guess::Limb(Side::Right, Limb::LowerLeg))),
            ("upperarm02.L", None),
        ];
        for (name, want) in cases {
            assert_eq!(guess(name), *want, "{name}");
        }
    }
}
