//! Foot locking: each foot in contact pinned to one point per contact span
//! by analytic two-bone IK of its leg.
//!
//! **Contacts.** The feet and their contact spans are
//! [`crate::quality::lint`]'s (the foot joint and its toes by the name
//! families, in contact when low and slow), or spans the caller gives
//! ([`ContactSpan`], `--contacts FILE`, [`parse_contacts`]). Spans of one
//! frame are left alone. With lint's default ground the lock measures
//! against [`quality::Ground::Pooled`] (lint's default until 2026-11-30),
//! not lint's densest band: on a clip standing at two levels the band may
//! be the raised one, and a foot landing from it counts as in contact on
//! its way down (Rokoko's dance: the left sole at frames 939-943 coming
//! down from 13.6 to 6.2 cm, the band at 10.4 cm, at 0.48 to 0.18 m/s
//! across the floor), which
//! the lock pinned in the air and then turned the knee 0.60 rad in one frame
//! to reach the next pin at 953 (4.6 times the clip's fastest; 1.4 with
//! the pooled ground, whose span there is 941-943). A ground or spans
//! given are used as they are.
//!
//! **Pins.** Each span of a foot is pinned to one point: the position of the
//! foot's contact point (its toe joint when it has one, else the foot joint:
//! the point GMD's skating ratio measures) at the span's most still frame
//! (the slowest horizontal speed of that point).
//!
//! **Corrections.** Inside a span the contact point is moved onto the pin,
//! `Δ = P − p`; around it the correction at the span's edge fades in over
//! `ramp_in` frames before and out over `ramp_out` frames after with a
//! smoothstep weight `w` (each ramp inside the gap to the next span), and
//! where ramps of several spans overlap the corrections blend as
//! `Σ wᵢ Δᵢ / max(1, Σ wᵢ)`, so the leg never jumps. The foot moves
//! with its contact point, its world orientation kept, except that a foot
//! whose ankle would then sink below the height it has at the pin's frame
//! (a heel strike: the toe still up while the heel lands, the toe pinned
//! down) is pitched about the pinned toe until the ankle is back at that
//! height: the toe stays put and the heel does not go through the floor.
//!
//! **Lift.** GMD's skating ratio counts a foot as skating when its contact
//! point is below 5 cm on two consecutive frames and moves faster than
//! 0.5 m/s; a foot low is by that measure a foot that must be still. Spans
//! are pinned, so still; outside them (between spans, in the ramps) a
//! step of the contact point below GMD's height (plus 1 mm) on the file's
//! floor that moves faster than 0.9 times GMD's speed raises that point to
//! 4 mm above GMD's height, spread with a smoothstep bump of 0.1 s that
//! never enters a span (the foot clears the floor where it must move fast,
//! as a mocap artist lifts a skimming toe). The floor is the height given
//! as lint's ground, else 0 when lint's contact ground is within 10 cm of
//! 0 (floor-normalised data, GMD's), else lint's ground.
//!
//! **Guided** (crate-internal, `Guide`: a retarget's lock, which knows
//! where the source's feet are): inside a span the foot's sole (the lowest
//! of its points, each less its planted height, as [`quality`] measures a
//! foot) stands on the guide's floor, whatever the clip's own height there
//! (no rise is kept, no pitch for the ankle's height), and across the up
//! axis the contact point stands where the guide's path puts it in each
//! frame (a retarget's stance: still where the leg reaches). The lift
//! (above) fades to nothing towards a span's edges over its ramp (`wall_fade`): cut off at the edge, a foot lifted in the
//! frame before a span and on the floor in its first snapped the knee
//! (4-8 cm in one frame, `bvh lint`'s pops, on CMU 12_01's retargets).
//! Also with a guide: the knee's bend is eased as with lint's contacts
//! (**Knee speed**, below); the leg is never solved straighter than
//! [`STRAIGHT_DEGREES`] of knee bend (the hips go down instead: at full
//! stretch a one-frame bump of CMU 01_01's hips, 3.6 mm at frame 1189,
//! moved the knee 4 cm); and a toe-off's turn of the foot about its pinned
//! toe where the pin is out of reach changes by at most [`TOE_OFF_DEGREES_PER_SECOND`],
//! spread to the frames around (it snapped by about 40° in one frame at the
//! end of a span, the ankle 7 cm, on Rokoko's dance onto Kinect v1 and
//! Bandai Namco).
//! And with a guide each leg's target distance from the hip is smoothed
//! over a few frames before the solve, the target moved along the up axis
//! only (`smooth_reach`): near straight, the knee turned the hips' 2-3 mm
//! frame-to-frame shake under a pinned foot, and a target's speed changing
//! in one frame at a span's edge, into three times as much at the knee
//! (`bvh lint`'s acceleration spikes, issue #27); and a leg captured folded
//! (past [`FOLD_DEGREES`] of knee bend, a crouch) is left as captured, by
//! how folded it is: there the knee turned by centimetres for the pin's
//! millimetres (pops on the crouching Kinect v1 take).
//!
//! **The leg** (thigh joint = hip, knee, ankle; the knee and hip the
//! nearest joints above the foot named as lower and upper leg, past at most
//! `LEG_JOINTS_BETWEEN` (2) twist or split joints, else its parent and
//! grandparent: `leg_joints`) is solved analytically: the
//! knee bends about the normal of its own bend plane to the angle the law
//! of cosines gives for the hip-to-target distance, the thigh swings by the
//! shortest arc onto the target, then twists about the hip-target axis so
//! the knee points where it pointed in the capture (the bend plane is kept
//! from the motion). The ankle's local rotation is what keeps the foot's
//! world orientation (or the pitched one).
//!
//! **Reach.** A target farther from the hip than the leg reaches in the
//! capture (its longest hip-to-ankle distance over the clip) lowers the
//! hips along the up axis by what makes it reachable; the lowering is
//! spread over the frames around with a smoothstep bump, so the hips never
//! jump, and every leg is solved again under the lowered hips (its foot
//! stays where it was). The lowering is reported in the notes.
//!
//! **Ramps from the motion.** Ramps start at 0.1 s; after each solve the
//! knee's angular speed (angle between its local rotations on consecutive
//! frames) is compared with its fastest in the capture, and the ramp of the
//! span edge nearest a frame where it turns faster than 1.45 times that is
//! lengthened by half (a lift's bump, when the frame is away from every
//! span's ramps), until no such frame is left or the ramps reach 1 s.
//!
//! **Knee speed.** With lint's contacts or a guide (not with spans the
//! caller gives alone),
//! the change the IK makes to the knee's bend moves by at most
//! [`KNEE_BEND_FACTOR`] times the knee's fastest step before, less the
//! captured step, from frame to frame: outside the spans the target moves
//! to the distance from the hip that bend gives, at its height; inside a
//! span the foot pitches about its pinned toe by up to [`PITCH_DEGREES`]
//! (`limit_bend`). A leg captured within [`STRAIGHT_DEGREES`] of straight
//! or bent backwards is first bent about its knee's hinge (the mean axis of
//! the knee's captured local rotations), so the IK's bend plane is not
//! noise (`prebend`).
//!
//! **Flattening** (`flatten_feet`, off by default): after the IK, the
//! foot's world rotation is turned about the ankle, which never moves, by
//! the span's weight `w` (1 inside, its ramps' smoothstep around)
//! (`flatten`), towards the foot as it stands planted in the capture: its
//! *planted* pitch and roll (`pitch_roll`: the toe line's elevation, and
//! the angle about the toe line of the rest pose's side axis `up × toe`
//! from the horizontal), the medians over its spans' frames (most of a
//! contact span is the foot standing flat; heel strikes lie above, toe-offs
//! below), at the captured heading:
//!
//! - **roll** about the ankle-to-toe line to the planted roll: the toe is on
//!   that line and does not move. Weighted down where the toe line is more
//!   than [`FLAT_ROLL_DEGREES`] (20°) off the planted pitch, none past 40°:
//!   on tiptoe the roll about a steep toe line is the foot's twist about
//!   the shin (100°–150° on CMU 131_01 and PyMO), not a bank to undo;
//! - **pitch** about the horizontal across the toe line to the planted
//!   pitch. About the ankle a pitch moves the toe, which the lock has
//!   pinned, so it is weighted by `1 − smoothstep` of how far it would move
//!   the toe (up or down, or twice across the up axis), from
//!   [`FLAT_RISE_METRES`] (0.5 mm: in full) to [`FLAT_RISE_MAX_METRES`]
//!   (3 mm: none): a foot captured within a fraction of a degree of its
//!   planted pitch is laid at it exactly, a foot on its ball or heel keeps
//!   its pitch, and the toe moves by at most about 1 mm. (A weight that let
//!   a toe held up at a heel strike come down to the ground, 2 cm, moved
//!   the pinned toe by 6 mm and switched off at the span's start: knee
//!   spikes on CMU 12_01.)
//!
//! Why not the rest pose (the first version): it is not the foot standing
//! flat on most rigs. The planted pitch is 3°–8° below the rest pose's on
//! CMU 01_01, 40° below on Bandai Namco's, about 50° above on CMU 16_15's;
//! the planted roll is 14°–50° off level on five of seven corpus clips
//! (CMU 01_01: ±15°, mirrored between the feet); turned to the rest pose
//! about the pinned ankle, tiptoe feet had their toes lifted by up to 14 cm.
//! Why not pitch about the toe and solve the leg again for the moved ankle
//! (tried: the ankle moved across the up axis to keep the toe on its pin):
//! the moved ankles fell out of the leg's reach (68 foot-frames on CMU
//! 12_01) and made knee pops that lengthened ramps (PyMO); and a heel-up
//! foot turned flat about its ball plants its heel through the toe-off.
//! With the toe pinned and the ankle kept, a foot's pitch is what the
//! capture gives it, so the flattening is mostly its roll.
//!
//! Rotations go back to each joint's own channels in its own Euler order,
//! closest to the output's previous frame (continuous). Only the thigh,
//! knee and ankle rotation channels of the legs change, and the root's
//! position channels when the hips are lowered; everything else stays bit
//! for bit, and a frame no span nor lowering reaches is not touched.
//! [`lock_feet_in`] locks over a range of frames only (the corrections fade
//! to nothing at the range's ends), for a caller that edits part of a clip
//! (a crossfade).
//!
//! **Work.** The captured world motion of the legs comes from one FK pass
//! over the legs and the joints above them alone ([`Kinematics::subset`],
//! the same bits as the whole skeleton's FK); the contacts, the up axis and
//! the units from one [`quality::contacts`] of the clip (lint's feet alone);
//! both in one `Capture`, which a retarget's stance reads before its lock
//! (`Capture::guided`, handed to `lock_feet_guided`) instead of measuring
//! the same clip again. The write-back copies the clip's first frame alone
//! (each later frame's angles are chosen near the frame written before).

use std::ops::Range;

use glam::{DAffine3, DQuat, DVec3};

use crate::Bvh;
use crate::Kinematics;
use crate::edit::JointChannels;
use crate::ik::two_bone;
use crate::quality::{self, Foot, runs};
use crate::{Error, Result};

/// First length of the blend ramps before and after a span (seconds).
pub const RAMP_SECONDS: f64 = 0.1;
/// Longest ramp the adaptation grows to (seconds).
pub const MAX_RAMP_SECONDS: f64 = 1.0;
/// Knee angular speed allowed after locking, times its fastest before.
pub const KNEE_SPEED_FACTOR: f64 = 1.45;
/// Outside the spans, the knee's bend changes per frame by at most this
/// times the knee's fastest step before, less the captured step.
pub const KNEE_BEND_FACTOR: f64 = 1.4;
/// A contact point captured this far above its pin (metres) or less is put
/// on it; higher, it keeps what it rises beyond this.
pub const LIFT_METRES: f64 = 0.01;
/// Inside a span the foot pitches about its pinned toe by at most about
/// this (degrees) to ease the knee (see `limit_bend`).
pub const PITCH_DEGREES: f64 = 30.0;
/// A leg captured bent backwards about its hinge by more than this
/// (degrees) keeps its captured bend plane (see `prebend`).
pub const BACKWARDS_DEGREES: f64 = 30.0;
/// A leg captured within this of straight (degrees) is first bent about its
/// knee's hinge to this short of straight (see `prebend`).
pub const STRAIGHT_DEGREES: f64 = 10.0;
/// With a guide (a retarget's lock): the fastest a toe-off turns the foot
/// about its pinned toe (degrees per second).
pub const TOE_OFF_DEGREES_PER_SECOND: f64 = 360.0;
/// With a guide: a leg captured bent more than this (degrees) at the knee
/// is folded (a squat, a kneel), in full from 20° more: the lock leaves it
/// as captured, by that weight (see `smooth_reach`).
pub const FOLD_DEGREES: f64 = 140.0;
/// Half-width of the bump that spreads a lowering of the hips (seconds).
pub const HIPS_RAMP_SECONDS: f64 = 0.25;
/// Lint's contact ground within this of height 0 (metres): the file's
/// floor is 0 (floor-normalised data), else it is lint's ground.
pub const FLOOR_METRES: f64 = 0.1;
/// A foot that must move fast near the floor is lifted this far above
/// GMD's contact height (metres).
pub const CLEAR_METRES: f64 = 0.004;
/// Near the floor a foot outside its spans moves at most this fraction of
/// GMD's skating speed, else it is lifted.
pub const SKIM_SPEED: f64 = 0.9;
/// Half-width of the bump that spreads a lift of the foot (seconds).
pub const LIFT_RAMP_SECONDS: f64 = 0.1;
/// With `flatten_feet`: a foot whose pitch to the planted one would move
/// its toe by up to this (metres) is pitched in full...
pub const FLAT_RISE_METRES: f64 = 0.0005;
/// ...and one whose toe it would move by this or more (a foot on its ball,
/// or on its heel) keeps its captured pitch (only its roll is flattened).
pub const FLAT_RISE_MAX_METRES: f64 = 0.003;
/// With `flatten_feet`: a foot whose toe line is within this of its
/// planted pitch (degrees) is rolled in full, one past twice this not at
/// all (a smoothstep between).
pub const FLAT_ROLL_DEGREES: f64 = 20.0;

/// A contact span given by the caller: a foot joint (or a joint of a foot,
/// e.g. its toe) in contact from frame `start` to frame `end`, both
/// included, frames numbered from 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContactSpan {
    /// The joint, by name.
    pub joint: String,
    /// First frame of the contact.
    pub start: usize,
    /// Last frame of the contact (included).
    pub end: usize,
}

/// Reads contact spans from CSV text: one span a line, `joint,start,end`
/// (frames from 0, `end` included); blank lines, lines starting with `#`
/// and a first line `joint,start,end` are skipped; fields are trimmed.
///
/// ```
/// let spans = bvhkit::clean::parse_contacts("joint,start,end\nLeftFoot,10,42\n# note\nRightFoot, 50, 80\n")?;
/// assert_eq!(spans.len(), 2);
/// assert_eq!((spans[1].joint.as_str(), spans[1].start, spans[1].end), ("RightFoot", 50, 80));
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn parse_contacts(text: &str) -> Result<Vec<ContactSpan>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if i == 0 && fields == ["joint", "start", "end"] {
            continue;
        }
        let bad = |why: &str| {
            Error::invalid(format!(
                "contacts line {}: {why} (expected joint,start,end, got {line:?})",
                i + 1
            ))
        };
        if fields.len() != 3 || fields[0].is_empty() {
            return Err(bad("three fields needed"));
        }
        let frame = |s: &str| s.parse::<usize>().map_err(|_| bad("frames are whole numbers"));
        let (start, end) = (frame(fields[1])?, frame(fields[2])?);
        if end < start {
            return Err(bad("end before start"));
        }
        out.push(ContactSpan { joint: fields[0].to_string(), start, end });
    }
    Ok(out)
}

/// One contact span [`lock_feet_in`] locked.
#[derive(Clone, Debug, PartialEq)]
pub struct LockedSpan {
    /// The foot joint (the ankle whose leg was solved).
    pub foot: usize,
    /// The joint pinned (the toe, else the foot joint).
    pub point: usize,
    /// First and last frame of the span (included).
    pub frames: (usize, usize),
    /// The frame whose position of `point` is the pin.
    pub pin_frame: usize,
    /// The pin, world position in file units.
    pub pin: DVec3,
    /// Frames of the blend ramp before and after the span.
    pub ramps: (usize, usize),
}

/// What [`lock_feet_in`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Locked {
    /// The spans locked, foot by foot, in frame order.
    pub spans: Vec<LockedSpan>,
    /// The largest lowering of the hips (file units; 0: not lowered).
    pub hips_lowered: f64,
    /// Frames whose hips were lowered.
    pub hips_frames: usize,
    /// Foot-frames whose target stayed out of reach (or whose leg was
    /// straight: no bend plane to keep).
    pub unsolved: usize,
    /// Remarks (feet not locked and why, the lowering, ramps).
    pub notes: Vec<String>,
}

/// `3x² - 2x³` of `x` clamped to `[0, 1]`: a fade from 0 to 1 with no
/// step of its slope at either end.
pub(crate) fn smoothstep(x: f64) -> f64 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// Checks contact spans against `bvh`: every joint named, every frame in
/// the clip.
pub(crate) fn check_contacts(bvh: &Bvh, spans: &[ContactSpan]) -> Result<()> {
    let n = bvh.motion().n_frames();
    for s in spans {
        if bvh.skeleton().find(&s.joint).is_none() {
            return Err(Error::invalid(format!("no joint named {:?} (--contacts)", s.joint)));
        }
        if s.end >= n {
            return Err(Error::invalid(format!(
                "contact span {},{},{} ends past the clip's last frame {} (--contacts)",
                s.joint,
                s.start,
                s.end,
                n.saturating_sub(1)
            )));
        }
    }
    Ok(())
}

/// Refuses a contact span on a joint in no leg: neither in a foot (the
/// foot joint or a joint under it, as `quality` finds the feet, or under
/// the joints `--feet` names) nor a leg's joint by name or under one: the lock would solve the two joints above it
/// as a hip and a knee (a span on `Head` bent the neck and the spine). The
/// error names the joint and the feet found.
pub(crate) fn check_contact_feet(
    bvh: &Bvh,
    spans: &[ContactSpan],
    options: &quality::Options,
) -> Result<()> {
    use crate::retarget::names::{Bone, Limb};
    let skel = bvh.skeleton();
    let bones = crate::retarget::names::classify(skel);
    let names = skel.display_names();
    let feet = quality::feet::find(skel, &bones, &names, options.feet.as_deref(), &mut Vec::new());
    for s in spans {
        let Some(j) = skel.find(&s.joint).map(|id| id.index()) else { continue };
        let in_leg = |mut k: usize| loop {
            if matches!(
                bones[k],
                Some(Bone::Limb(_, Limb::UpperLeg | Limb::LowerLeg | Limb::Foot | Limb::Toe))
            ) {
                break true;
            }
            match skel.joints()[k].parent() {
                Some(p) => k = p.index(),
                None => break false,
            }
        };
        if !feet.iter().any(|f| f.points.contains(&j)) && !in_leg(j) {
            let found: Vec<&str> =
                feet.iter().filter_map(|f| f.points.first()).map(|&k| names[k].as_str()).collect();
            let found = if found.is_empty() { "none".to_string() } else { found.join(", ") };
            return Err(Error::invalid(format!(
                "{:?} is in no leg (not a foot, a toe or a leg's joint), so it cannot be \
                 locked (feet found: {found}; --feet names them) (--contacts)",
                s.joint
            )));
        }
    }
    Ok(())
}

/// Locks the feet of `bvh` in contact over the frames `frames` only (see
/// the module documentation): spans are cut to the range and the
/// corrections fade in from its first frame and out to its last, so frames
/// outside it stay bit for bit and the edges do not jump. `options.quality`
/// says how the feet, the contacts, the units and the up axis are found,
/// `options.contacts` gives spans instead of the detected ones. Fails on a
/// range outside the clip and on contact spans that name no joint or frames
/// past the clip.
pub fn lock_feet_in(
    bvh: &mut Bvh,
    frames: Range<usize>,
    options: &super::Options,
) -> Result<Locked> {
    checked_lock(bvh, frames, options, None, None)
}

/// [`lock_feet_in`]'s checks of the range and the spans, then the lock.
fn checked_lock(
    bvh: &mut Bvh,
    frames: Range<usize>,
    options: &super::Options,
    guide: Option<&Guide>,
    capture: Option<Capture>,
) -> Result<Locked> {
    let n = bvh.motion().n_frames();
    if frames.start >= frames.end || frames.end > n {
        return Err(Error::invalid(format!(
            "frames {}..{} are not a range inside the clip's {n} frames",
            frames.start, frames.end
        )));
    }
    if let Some(c) = &options.contacts {
        check_contacts(bvh, c)?;
    }
    let layouts: Vec<JointChannels> =
        bvh.skeleton().joints().iter().map(JointChannels::of).collect();
    Ok(lock(bvh, &layouts, options, frames, guide, capture))
}

/// What a caller that knows where the feet belong tells the lock (a
/// retarget: the source's feet, scaled): the floor the soles of the feet
/// in contact stand on, and the horizontal path each pin follows.
#[derive(Clone, Debug, Default)]
pub(crate) struct Guide {
    /// Inside a span the foot's sole (the lowest of its points, each less
    /// its planted height, as [`quality`] measures a foot) stands at this
    /// height along the up axis (file units), whatever the clip's own
    /// height there: the pin's height and the rise above it are not used.
    pub floor: f64,
    /// Per foot joint (index): per frame, where its contact point stands
    /// across the up axis inside a span (file units; a retarget's
    /// `stance`: still where the leg reaches it).
    pub paths: Vec<(usize, Vec<DVec3>)>,
}

/// [`lock_feet_in`] with a [`Guide`]: spans given (`options.contacts`),
/// the soles put on the guide's floor and the pins moved along its paths.
/// `capture` is [`Capture::guided`] of this same `bvh` with these same
/// `options` (the guide's maker read it; the lock does not measure the
/// clip again).
pub(crate) fn lock_feet_guided(
    bvh: &mut Bvh,
    frames: Range<usize>,
    options: &super::Options,
    guide: &Guide,
    capture: Capture,
) -> Result<Locked> {
    checked_lock(bvh, frames, options, Some(guide), Some(capture))
}

/// One leg's joints.
struct Leg {
    foot: usize,
    knee: usize,
    hip: usize,
    hip_parent: Option<usize>,
    /// The knee's parent: the hip, or a joint between (a twist joint of
    /// the thigh) that turns with the thigh.
    knee_parent: usize,
    /// The foot's parent: the knee, or a joint of the shin between.
    foot_parent: usize,
    point: usize,
    /// Every point of the foot (the foot joint first).
    points: Vec<usize>,
}

/// One leg's captured world motion, frame by frame.
struct Track {
    h: Vec<DVec3>,
    k: Vec<DVec3>,
    a: Vec<DVec3>,
    p: Vec<DVec3>,
    qp: Vec<DQuat>,
    qh: Vec<DQuat>,
    qk: Vec<DQuat>,
    qa: Vec<DQuat>,
    /// World rotations of the knee's and the foot's parents (the hip's and
    /// the knee's but on legs with joints between).
    qkp: Vec<DQuat>,
    qap: Vec<DQuat>,
    /// The knee's local rotation as captured.
    lk: Vec<DQuat>,
    /// With a [`Guide`]: the foot's sole height as captured (the lowest of
    /// its points, each less its planted height); else empty.
    sole: Vec<f64>,
    /// With a [`Guide`]'s path for this foot: where the pin has slid to;
    /// else empty.
    path: Vec<DVec3>,
}

/// A span being locked.
struct Span {
    leg: usize,
    s: usize,
    e: usize,
    m: usize,
    pin: DVec3,
    ankle_h: f64,
    ramp_in: usize,
    ramp_out: usize,
}

/// One frame of a solved leg: local rotations of hip, knee and ankle.
type Solved = Option<(DQuat, DQuat, DQuat)>;

/// The quality options the lock measures its contacts with: `q`, its
/// default ground ([`quality::Ground::Contacts`]) taken as
/// [`quality::Ground::Pooled`] (see the module's **Contacts**).
pub(crate) fn lock_quality(q: &quality::Options) -> quality::Options {
    let mut q = q.clone();
    if q.ground == quality::Ground::Contacts {
        q.ground = quality::Ground::Pooled;
    }
    q
}

/// The legs a lock solves and their captured world motion, measured once:
/// the contacts of the clip ([`quality::contacts`]), each leg's joints and
/// spans, and one FK pass over the legs and the joints above them. A
/// retarget's stance reads it before the lock ([`Capture::guided`]), which
/// then solves from it instead of measuring the same clip again.
pub(crate) struct Capture {
    /// [`quality::contacts`] of the clip with the lock's quality options.
    pub report: quality::Report,
    legs: Vec<Leg>,
    leg_spans: Vec<Vec<(usize, usize)>>,
    tracks: Vec<Track>,
    notes: Vec<String>,
}

/// One leg of a [`Capture`] as a guide's maker reads it.
pub(crate) struct CapturedLeg<'a> {
    /// The foot joint (the lock's key of a guide's path).
    pub foot: usize,
    /// The contact spans given for it, as given.
    pub spans: &'a [(usize, usize)],
    /// Per frame the world positions of the hip, knee, ankle (foot joint)
    /// and contact point, and the sole's height (see [`Guide`]).
    pub hip: &'a [DVec3],
    pub knee: &'a [DVec3],
    pub ankle: &'a [DVec3],
    pub point: &'a [DVec3],
    pub sole: &'a [f64],
}

impl Capture {
    /// The capture [`lock_feet_guided`] makes of `bvh` itself: the spans
    /// given (`options.contacts`) checked, and each foot's sole measured.
    /// Valid for that call only while `bvh` and `options` are unchanged.
    pub(crate) fn guided(bvh: &Bvh, options: &super::Options) -> Result<Capture> {
        if let Some(c) = &options.contacts {
            check_contacts(bvh, c)?;
        }
        let layouts: Vec<JointChannels> =
            bvh.skeleton().joints().iter().map(JointChannels::of).collect();
        Ok(Capture::new(bvh, &layouts, options, true))
    }

    /// The legs whose hip and knee the lock can turn, with their tracks.
    pub(crate) fn legs(&self) -> impl Iterator<Item = CapturedLeg<'_>> {
        self.legs.iter().zip(&self.leg_spans).zip(&self.tracks).map(|((leg, spans), t)| {
            CapturedLeg {
                foot: leg.foot,
                spans,
                hip: &t.h,
                knee: &t.k,
                ankle: &t.a,
                point: &t.p,
                sole: &t.sole,
            }
        })
    }

    /// Measures `bvh` for [`lock`]; `guided`: with each foot's sole.
    fn new(
        bvh: &Bvh,
        layouts: &[JointChannels],
        options: &super::Options,
        guided: bool,
    ) -> Capture {
        let q = &options.quality;
        let n = bvh.motion().n_frames();
        let mut notes = Vec::new();
        let report = quality::contacts(bvh, &lock_quality(q));
        let skel = bvh.skeleton().clone();
        let nj = skel.len();
        let names = skel.display_names();
        let bones = crate::retarget::names::classify(&skel);
        let parent = |j: usize| skel.joints()[j].parent().map(|p| p.index());
        let u = report.up.vector();

        // The feet and their spans: given, or lint's.
        let mut feet: Vec<(Foot, Vec<(usize, usize)>)> = Vec::new();
        match &options.contacts {
            Some(given) => {
                for c in given {
                    let Some(j) = skel.find(&c.joint).map(|id| id.index()) else { continue };
                    let foot =
                        report.feet.iter().find(|f| f.points.contains(&j)).cloned().unwrap_or(
                            Foot {
                                name: names[j].clone(),
                                points: (j..skel.subtree_end(crate::JointId::new(j))).collect(),
                                skate_point: j,
                                toe_point: j,
                            },
                        );
                    let span = (c.start, c.end.min(n - 1));
                    match feet.iter_mut().find(|(f, _)| f.points[0] == foot.points[0]) {
                        Some((_, spans)) => spans.push(span),
                        None => feet.push((foot, vec![span])),
                    }
                }
            }
            None => {
                for (fi, foot) in report.feet.iter().enumerate() {
                    let spans = report.series.contact.get(fi).map_or(Vec::new(), |c| {
                        runs(c.iter().copied()).into_iter().filter(|(s, e)| e > s).collect()
                    });
                    feet.push((foot.clone(), spans));
                }
            }
        }
        if feet.is_empty() {
            notes.push(match &options.contacts {
                Some(given) if given.is_empty() => {
                    "the contacts given have no contact rows: nothing locked".into()
                }
                _ => "no feet found: nothing locked".into(),
            });
            return Capture {
                report,
                legs: Vec::new(),
                leg_spans: Vec::new(),
                tracks: Vec::new(),
                notes,
            };
        }

        let mut legs = Vec::new();
        let mut leg_spans: Vec<Vec<(usize, usize)>> = Vec::new();
        for (foot, spans) in feet {
            let Some(&a) = foot.points.first() else { continue };
            let Some((h, k)) = leg_joints(&skel, &bones, a) else {
                notes.push(format!("{}: no knee and hip above the foot: not locked", names[a]));
                continue;
            };
            if layouts[h].n_rot != 3 || layouts[k].n_rot != 3 {
                notes.push(format!(
                    "{}: the hip ({}) and knee ({}) need three rotation channels: not locked",
                    names[a], names[h], names[k]
                ));
                continue;
            }
            legs.push(Leg {
                foot: a,
                knee: k,
                hip: h,
                hip_parent: parent(h),
                knee_parent: parent(k).unwrap_or(h),
                foot_parent: parent(a).unwrap_or(k),
                point: foot.skate_point,
                points: foot.points.clone(),
            });
            leg_spans.push(spans);
        }
        if legs.is_empty() {
            return Capture { report, legs, leg_spans, tracks: Vec::new(), notes };
        }

        // The captured world motion of the legs, one FK pass over the legs and
        // the joints above them alone (`Kinematics::subset`: the same bits as
        // the whole skeleton's FK; a tenth of a full body's joints).
        let mut need = vec![false; nj];
        for leg in &legs {
            let sole_points = if guided { &leg.points[..] } else { &[] };
            for &start in [leg.point, leg.foot].iter().chain(sole_points) {
                let mut j = Some(start);
                while let Some(i) = j.filter(|&i| !need[i]) {
                    need[i] = true;
                    j = parent(i);
                }
            }
        }
        let keep: Vec<usize> = (0..nj).filter(|&j| need[j]).collect();
        let mut at = vec![usize::MAX; nj];
        for (i, &j) in keep.iter().enumerate() {
            at[j] = i;
        }
        let (fk, gather) = Kinematics::new(&skel, q.position_channels).subset(&keep);
        let mut scratch = fk.scratch();
        let mut compact = vec![0.0; gather.len()];
        let mut tracks: Vec<Track> = legs
            .iter()
            .map(|_| Track {
                h: Vec::with_capacity(n),
                k: Vec::with_capacity(n),
                a: Vec::with_capacity(n),
                p: Vec::with_capacity(n),
                qp: Vec::with_capacity(n),
                qh: Vec::with_capacity(n),
                qk: Vec::with_capacity(n),
                qa: Vec::with_capacity(n),
                qkp: Vec::with_capacity(n),
                qap: Vec::with_capacity(n),
                lk: Vec::with_capacity(n),
                sole: Vec::new(),
                path: Vec::new(),
            })
            .collect();
        // With a guide, the heights of every point of each foot (for its sole).
        let mut point_heights: Vec<Vec<Vec<f64>>> = legs
            .iter()
            .map(|leg| {
                let k = if guided { leg.points.len() } else { 0 };
                vec![Vec::with_capacity(n); k]
            })
            .collect();
        let mut world = vec![DAffine3::IDENTITY; keep.len()];
        for f in 0..n {
            let frame = bvh.motion().frame(f);
            for (v, &c) in compact.iter_mut().zip(&gather) {
                *v = frame[c];
            }
            fk.world_with(&compact, &mut scratch, &mut world);
            let rot = |j: usize| DQuat::from_mat3(&world[at[j]].matrix3).normalize();
            let pos = |j: usize| world[at[j]].translation;
            for (leg, t) in legs.iter().zip(&mut tracks) {
                t.h.push(pos(leg.hip));
                t.k.push(pos(leg.knee));
                t.a.push(pos(leg.foot));
                t.p.push(pos(leg.point));
                t.qp.push(leg.hip_parent.map_or(DQuat::IDENTITY, rot));
                t.qh.push(rot(leg.hip));
                t.qk.push(rot(leg.knee));
                t.qa.push(rot(leg.foot));
                t.qkp.push(rot(leg.knee_parent));
                t.qap.push(rot(leg.foot_parent));
                t.lk.push(layouts[leg.knee].rotation(frame));
            }
            for (leg, hs) in legs.iter().zip(&mut point_heights) {
                for (&j, h) in leg.points.iter().zip(hs) {
                    h.push(pos(j).dot(u));
                }
            }
        }
        if guided {
            for (t, hs) in tracks.iter_mut().zip(&point_heights) {
                // Each point less its planted height (its 5th percentile less
                // the foot's lowest such), `quality`'s rule.
                t.sole = soles(hs, n);
            }
        }
        Capture { report, legs, leg_spans, tracks, notes }
    }
}

/// Locks the feet of `bvh` over `range` (the work of [`lock_feet_in`],
/// its arguments checked).
pub(crate) fn lock(
    bvh: &mut Bvh,
    layouts: &[JointChannels],
    options: &super::Options,
    range: Range<usize>,
    guide: Option<&Guide>,
    capture: Option<Capture>,
) -> Locked {
    let q = &options.quality;
    let mut done = Locked::default();
    let n = bvh.motion().n_frames();
    let width = bvh.motion().n_channels();
    if n < 2 || width == 0 {
        return done;
    }
    let cap = match capture {
        Some(cap) => cap,
        None => Capture::new(bvh, layouts, options, guide.is_some()),
    };
    let Capture { report, legs, leg_spans, mut tracks, notes } = cap;
    done.notes.extend(notes);
    if legs.is_empty() {
        return done;
    }
    let skel = bvh.skeleton().clone();
    let names = skel.display_names();
    let parent = |j: usize| skel.joints()[j].parent().map(|p| p.index());
    let fps = bvh.motion().fps();
    let u = report.up.vector();
    let mpu = report.metres_per_unit;
    if let Some(g) = guide {
        for (leg, t) in legs.iter().zip(&mut tracks) {
            if let Some((_, path)) = g.paths.iter().find(|(j, p)| *j == leg.foot && p.len() == n) {
                t.path = path.iter().map(|&v| v - u * v.dot(u)).collect();
            }
        }
    }

    // Spans, cut to the range, and their pins.
    let ramp0 = ((RAMP_SECONDS * fps).round() as usize).max(2);
    let ramp_max = ((MAX_RAMP_SECONDS * fps).round() as usize).max(ramp0);
    let mut spans: Vec<Span> = Vec::new();
    for (li, list) in leg_spans.iter().enumerate() {
        let t = &tracks[li];
        // Sorted, overlapping or touching spans merged (given spans may).
        let merged = merge_spans(list, ramp0);
        for &(s, e) in &merged {
            // Inside a part of the clip, spans keep the first ramp's length
            // from its ends, so that their ramps fit inside it.
            let margin = |at_end: bool| if at_end { 0 } else { ramp0 };
            let lo = range.start + margin(range.start == 0);
            let hi = (range.end - 1).saturating_sub(margin(range.end == n));
            let (s, e) = (s.max(lo), e.min(hi));
            if e <= s {
                continue;
            }
            // The pin: of the frames where the point is on the ground (at
            // most `lift` above its lowest in the span), the one whose
            // position is nearest, across the up axis, to the farthest of
            // the span's (the centre of its slide: the least correction);
            // along a guide's path, the point less the path.
            let lowest = (s..=e).map(|f| t.p[f].dot(u)).fold(f64::INFINITY, f64::min);
            let across = |v: DVec3| (v - u * v.dot(u)).length();
            let slid = |f: usize| t.p[f] - t.path.get(f).copied().unwrap_or(DVec3::ZERO);
            let step = (e - s) / 64 + 1;
            let m = (s..=e)
                .step_by(step)
                .filter(|&f| t.p[f].dot(u) <= lowest + LIFT_METRES / mpu)
                .map(|f| {
                    let worst = (s..=e).map(|g| across(slid(g) - slid(f))).fold(0.0, f64::max);
                    (worst, f)
                })
                .min_by(|x, y| x.0.total_cmp(&y.0))
                .map_or(s, |x| x.1);
            // With a guide the pin's height is the floor's, less the
            // contact point's own height above the sole there; across the
            // up axis where the guide's path stands then.
            let pin = match guide {
                Some(g) => {
                    let v = t.p[m] + u * (g.floor - t.sole[m]);
                    t.path.get(m).map_or(v, |&h| h + u * v.dot(u))
                }
                None => t.p[m],
            };
            if !pin.is_finite() {
                continue;
            }
            spans.push(Span {
                leg: li,
                s,
                e,
                m,
                pin,
                ankle_h: t.a[m].dot(u),
                ramp_in: ramp0,
                ramp_out: ramp0,
            });
        }
    }

    // The envelope of a locking over part of the clip.
    let whole = range.start == 0 && range.end == n;
    let env = |f: usize| -> f64 {
        if whole {
            1.0
        } else if !range.contains(&f) {
            0.0
        } else {
            let a = smoothstep((f - range.start + 1) as f64 / (ramp0 + 1) as f64);
            let b = smoothstep((range.end - f) as f64 / (ramp0 + 1) as f64);
            if range.start == 0 {
                b
            } else if range.end == n {
                a
            } else {
                a.min(b)
            }
        }
    };

    // The longest hip-to-ankle distance of each leg in the capture.
    let reach: Vec<f64> = tracks
        .iter()
        .map(|t| {
            let (l1, l2) = ((t.k[0] - t.h[0]).length(), (t.a[0] - t.k[0]).length());
            let most = (0..n).map(|f| (t.a[f] - t.h[f]).length()).fold(0.0, f64::max);
            // With a guide the leg is never solved straighter than
            // `STRAIGHT_DEGREES` of knee bend: at full stretch a hip's
            // millimetre moves the knee by centimetres (a one-frame bump of
            // CMU 01_01's hips at frame 1189 popped the knee 4 cm on two
            // rigs); the hips go down instead, spread.
            let most = match guide {
                Some(_) => {
                    let c = STRAIGHT_DEGREES.to_radians().cos();
                    most.min((l1 * l1 + l2 * l2 + 2.0 * l1 * l2 * c).sqrt())
                }
                None => most,
            };
            most.min((l1 + l2) * (1.0 - 1e-9))
        })
        .collect();

    // Each knee's hinge in its thigh's frame: the mean axis of the knee's
    // captured local rotations (weighted by their angles), turned to the
    // side the captured bend planes' normals take (weighted by how bent the
    // leg is).
    let hinge: Vec<DVec3> = tracks
        .iter()
        .map(|t| {
            let axis: DVec3 =
                t.lk.iter()
                    .map(|&q| crate::rotation::quat_to_scaled_axis(q))
                    .filter(|v| v.is_finite())
                    .sum();
            let side: f64 = (0..n)
                .map(|f| (t.h[f] - t.k[f]).cross(t.a[f] - t.k[f]).dot(t.qkp[f] * axis))
                .filter(|x| x.is_finite())
                .sum();
            axis.normalize_or_zero() * if side < 0.0 { -1.0 } else { 1.0 }
        })
        .collect();
    let knee_max: Vec<f64> = tracks
        .iter()
        .map(|t| (2..n).map(|f| t.lk[f].angle_between(t.lk[f - 1])).fold(0.0, f64::max))
        .collect();

    // With `flatten_feet`: each foot's toe direction in the rest pose (its
    // toe joint's offset from the foot, else its first child's), whose
    // side axis (up × toe) is the one the flattening makes horizontal.
    let toe_rest: Vec<Option<DVec3>> = legs
        .iter()
        .map(|leg| {
            if !options.flatten_feet {
                return None;
            }
            let o = if leg.point != leg.foot {
                let mut o = DVec3::ZERO;
                let mut j = Some(leg.point);
                while let Some(i) = j.filter(|&i| i != leg.foot) {
                    o += skel.joints()[i].offset();
                    j = parent(i);
                }
                o
            } else {
                skel.children(crate::JointId::new(leg.foot))
                    .next()
                    .map_or(DVec3::ZERO, |c| skel.joint(c).offset())
            };
            (o - u * o.dot(u)).try_normalize().map(|_| o)
        })
        .collect();
    if options.flatten_feet && toe_rest.iter().any(Option::is_none) {
        for (leg, o) in legs.iter().zip(&toe_rest) {
            if o.is_none() {
                done.notes.push(format!(
                    "{}: no toe pointing forward in the rest pose: the foot not flattened",
                    names[leg.foot]
                ));
            }
        }
    }

    let lift = LIFT_METRES / mpu;
    let mut pinned = vec![vec![false; n]; legs.len()];
    for sp in &spans {
        for x in &mut pinned[sp.leg][sp.s..=sp.e] {
            *x = true;
        }
    }
    // The file's own floor: the height given to lint, else 0 when the feet
    // stand near it (floor-normalised data, GMD's), else lint's ground.
    let floor_m = match q.ground {
        quality::Ground::Height(h) => h,
        _ if report.ground.abs() <= FLOOR_METRES => 0.0,
        _ => report.ground,
    };
    let mut clear = Clear {
        floor: guide.map_or(floor_m / mpu, |g| g.floor),
        low: (q.skate_height + 0.001) / mpu,
        to: (q.skate_height + CLEAR_METRES) / mpu,
        speed: SKIM_SPEED * q.skate_speed / mpu / fps,
        ramp: ((LIFT_RAMP_SECONDS * fps).round() as usize).max(2),
    };
    let mut hips_ramp = ((HIPS_RAMP_SECONDS * fps).round() as usize).max(2);
    let mut solved: Vec<Vec<Solved>>;
    let mut drop: Vec<f64>;
    let mut unsolved;
    let mut lengthened = 0usize;
    let mut round = 0;
    loop {
        round += 1;
        // Targets of each leg: the ankle's position and the foot's world
        // rotation (None: as captured).
        let targets: Vec<Vec<Option<(DVec3, DQuat)>>> = (0..legs.len())
            .map(|li| {
                let mine: Vec<&Span> = spans.iter().filter(|s| s.leg == li).collect();
                let has_toe = legs[li].point != legs[li].foot;
                let floor = guide.map(|g| g.floor);
                let toe_off_step = guide.map(|_| TOE_OFF_DEGREES_PER_SECOND.to_radians() / fps);
                let pins = Pins { has_toe, floor, reach: reach[li], lift, toe_off_step };
                targets(&tracks[li], &pins, &mine, u, &range, &clear, &env)
            })
            .collect();
        // The lowering of the hips each frame needs, then spread.
        let mut need = vec![0.0f64; n];
        for (li, t) in tracks.iter().enumerate() {
            for f in 0..n {
                if let Some((target, _)) = targets[li][f] {
                    need[f] = need[f].max(lowering(t.h[f], target, reach[li], u));
                }
            }
        }
        for x in &mut need {
            // Below a micrometre of lowering is rounding, not a lowering.
            if *x * mpu < 1e-6 {
                *x = 0.0;
            }
        }
        drop = spread(&need, hips_ramp);
        for (f, d) in drop.iter_mut().enumerate() {
            *d *= env(f);
        }
        // Solve every leg, its knee's bend outside the spans limited in
        // speed (`limit_bend`).
        unsolved = 0;
        solved = Vec::with_capacity(legs.len());
        for (li, t) in tracks.iter().enumerate() {
            let has_toe = legs[li].point != legs[li].foot;
            // With `flatten_feet`: each frame's weight of the flat foot.
            let flat_w = match toe_rest[li] {
                Some(_) => {
                    let mine: Vec<&Span> = spans.iter().filter(|s| s.leg == li).collect();
                    flat_weights(&mine, &range, n, &env)
                }
                None => Vec::new(),
            };
            let goal = limit_bend(
                t,
                &targets[li],
                &drop,
                &pinned[li],
                u,
                knee_max[li],
                has_toe,
                hinge[li],
                options.contacts.is_none() || guide.is_some(),
            );
            // With `flatten_feet`: the foot's planted pitch, the median of
            // its toe line's elevation (sine) over its spans' frames.
            // With `flatten_feet`: the foot's planted pitch and roll, the
            // medians of its toe line's elevation (sine) and of its roll
            // over its spans' frames (`pitch_roll`).
            let planted = toe_rest[li].and_then(|o| {
                let (e, r): (Vec<f64>, Vec<f64>) = (0..n)
                    .filter(|&f| pinned[li][f])
                    .filter_map(|f| goal[f].and_then(|(_, q)| pitch_roll(q, o, u)))
                    .unzip();
                Some((quality::stats::quantile(&e, 0.5)?, quality::stats::quantile(&r, 0.5)?))
            });
            // With a guide, each target's distance from the hip smoothed
            // (`smooth_reach`).
            let goal = match guide {
                Some(_) => smooth_reach(t, &goal, &drop, &pinned[li], u, (reach[li], fps)),
                None => goal,
            };
            let mut out: Vec<Solved> = vec![None; n];
            for f in 0..n {
                let dv = u * drop[f];
                let Some((target, qa)) = goal[f] else { continue };
                let qa = match (toe_rest[li], planted, flat_w.get(f)) {
                    (Some(o), Some((e, roll)), Some(&w)) if w > 0.0 => {
                        flatten(qa, &Flat { o, u, w, e, roll, mpu })
                    }
                    _ => qa,
                };
                let (h, k, a) = (t.h[f] - dv, t.k[f] - dv, t.a[f] - dv);
                // A leg captured straight or bent backwards is first bent
                // about its knee's hinge (its bend plane is noise there).
                let pre = prebend(h, k, a, target, t.qkp[f] * hinge[li]);
                let Some((d, r1, reached)) = two_bone(h, k, k + pre * (a - k), target) else {
                    unsolved += 1;
                    continue;
                };
                unsolved += usize::from(!reached);
                // The thigh's joints turn by `d`, the shin's by `d·r1·pre`
                // (on a plain leg the knee's parent is the hip and the
                // foot's the knee).
                let wh = d * t.qh[f];
                let wk = d * r1 * pre * t.qk[f];
                let lh = (t.qp[f].inverse() * wh).normalize();
                let lk = ((d * t.qkp[f]).inverse() * wk).normalize();
                let la = ((d * r1 * pre * t.qap[f]).inverse() * qa).normalize();
                out[f] = Some((lh, lk, la));
            }
            solved.push(out);
        }
        // Knee speed: lengthen the ramps at the edges where it pops.
        let mut changed = false;
        let mut drop_pop = false;
        let mut lift_pop = false;
        for (li, t) in tracks.iter().enumerate() {
            let lk = |f: usize| solved[li][f].map_or(t.lk[f], |x| x.1);
            let limit = KNEE_SPEED_FACTOR * knee_max[li];
            let mut grow: Vec<(usize, bool)> = Vec::new();
            for f in 2..n {
                if solved[li][f].is_none() && solved[li][f - 1].is_none() {
                    continue;
                }
                if lk(f).angle_between(lk(f - 1)) <= limit {
                    continue;
                }
                // The nearest edge of this leg's spans.
                let mut best: Option<(usize, usize, bool)> = None;
                for (si, s) in spans.iter().enumerate().filter(|(_, s)| s.leg == li) {
                    for (edge, is_in) in [(s.s, true), (s.e, false)] {
                        let dist = edge.abs_diff(f);
                        if best.is_none_or(|b| dist < b.0) {
                            best = Some((dist, si, is_in));
                        }
                    }
                }
                match best {
                    Some((dist, si, is_in))
                        if dist
                            <= if is_in { spans[si].ramp_in } else { spans[si].ramp_out } + 1 =>
                    {
                        grow.push((si, is_in))
                    }
                    _ if drop[f] > 0.0 || drop[f - 1] > 0.0 => drop_pop = true,
                    // Away from every span and its ramps: a lift.
                    _ => lift_pop = true,
                }
            }
            grow.sort_unstable();
            grow.dedup();
            for (si, is_in) in grow {
                let r = if is_in { &mut spans[si].ramp_in } else { &mut spans[si].ramp_out };
                if *r < ramp_max {
                    *r = (*r + (*r).div_ceil(2)).min(ramp_max);
                    lengthened += 1;
                    changed = true;
                }
            }
        }
        if lift_pop && clear.ramp < ramp_max {
            clear.ramp = (clear.ramp + clear.ramp.div_ceil(2)).min(ramp_max);
            changed = true;
        }
        if drop_pop && hips_ramp < ramp_max {
            hips_ramp = (hips_ramp + hips_ramp.div_ceil(2)).min(ramp_max);
            changed = true;
        }
        if !changed || round >= 12 {
            break;
        }
    }

    // Write back: the legs' rotations, the root's lowering.
    // Each joint's angles are written closest to the output's previous
    // frame; the first frame's, closest to the input's own (a copy of that
    // row alone: every later frame reads the row written before it).
    let first = bvh.motion().values()[..width].to_vec();
    let values = bvh.motion_mut().values_mut();
    for (li, leg) in legs.iter().enumerate() {
        for f in 0..n {
            let Some((lh, lk, la)) = solved[li][f] else { continue };
            let (prev, row) = if f == 0 {
                (None, &mut values[..width])
            } else {
                let (before, rest) = values.split_at_mut(f * width);
                (Some(&before[(f - 1) * width..]), &mut rest[..width])
            };
            for (j, q) in [(leg.hip, lh), (leg.knee, lk), (leg.foot, la)] {
                if j == leg.foot && layouts[j].n_rot == 0 {
                    continue;
                }
                let near = layouts[j].angles(prev.unwrap_or(&first));
                layouts[j].write_rotation(q, Some(near), row);
            }
        }
    }
    let root = &layouts[0];
    let lowered = drop.iter().any(|&d| d > 0.0);
    if lowered && root.n_pos == 3 && skel.joints()[0].parent().is_none() {
        for (f, &d) in drop.iter().enumerate() {
            if d > 0.0 {
                let row = &mut values[f * width..(f + 1) * width];
                let t = root.translation(row, q.position_channels) - u * d;
                root.write_translation(t, q.position_channels, row);
            }
        }
        done.hips_lowered = drop.iter().copied().fold(0.0, f64::max);
        done.hips_frames = drop.iter().filter(|&&d| d > 0.0).count();
        done.notes.push(format!(
            "hips lowered by up to {:.4} units ({:.1} mm) over {} frame(s) where a leg could not reach its pin",
            done.hips_lowered,
            done.hips_lowered * mpu * 1e3,
            done.hips_frames
        ));
    } else if lowered {
        done.notes.push(
            "a leg could not reach its pin and the root has no three position channels to lower"
                .into(),
        );
    }
    done.unsolved = unsolved;
    if unsolved > 0 {
        done.notes.push(format!(
            "{unsolved} foot-frame(s) out of the leg's reach or with a straight leg: not pinned exactly"
        ));
    }
    if lengthened > 0 {
        done.notes.push(format!(
            "{lengthened} ramp(s) lengthened so the knee turns at most {KNEE_SPEED_FACTOR} times its fastest"
        ));
    }
    for (li, leg) in legs.iter().enumerate() {
        let mine: Vec<&Span> = spans.iter().filter(|s| s.leg == li).collect();
        let laid = effective_ramps(&mine, &range);
        for (s, &ramps) in mine.iter().zip(&laid) {
            done.spans.push(LockedSpan {
                foot: leg.foot,
                point: leg.point,
                frames: (s.s, s.e),
                pin_frame: s.m,
                pin: s.pin,
                ramps,
            });
        }
    }
    done
}

/// Where the feet may not skim: the file's floor along the up axis and the
/// height and speed above which GMD's skating ratio counts a step (file
/// units, units per frame).
struct Clear {
    /// The floor (height along the up axis).
    floor: f64,
    /// GMD's contact height above the floor.
    low: f64,
    /// The height above the floor a foot is lifted to.
    to: f64,
    /// The fastest horizontal step of a foot below `low`.
    speed: f64,
    /// Half-width of the bump that spreads a lift (frames).
    ramp: usize,
}

/// How one leg's pins are held.
struct Pins {
    /// The contact point is the toe joint (not the foot joint).
    has_toe: bool,
    /// A [`Guide`]'s floor: the sole stands on it inside a span.
    floor: Option<f64>,
    /// The leg's longest hip-to-ankle distance in the capture.
    reach: f64,
    /// A point captured this far above its pin keeps what it rises beyond
    /// (file units; not with a floor).
    lift: f64,
    /// With a guide: the most a toe-off's turn of the foot about its
    /// pinned toe changes per frame (radians; `None`: unlimited).
    toe_off_step: Option<f64>,
}

/// Each frame's target of one leg from its spans: the ankle's world
/// position and the foot's world rotation, `None` where no span reaches
/// and no lift is needed.
fn targets(
    t: &Track,
    pins: &Pins,
    spans: &[&Span],
    u: DVec3,
    range: &Range<usize>,
    clear: &Clear,
    env: &dyn Fn(usize) -> f64,
) -> Vec<Option<(DVec3, DQuat)>> {
    let Pins { has_toe, floor, reach, lift, .. } = *pins;
    // Per frame the correction of the contact point and of the ankle's
    // height: inside a span onto its pin, in a ramp the correction at the
    // span's edge faded by w, `Σ wᵢ Δᵢ / max(1, Σ wᵢ)` where ramps overlap.
    let n = t.p.len();
    let ramps = effective_ramps(spans, range);
    // A span's target at frame f: the pin across the up axis; along it the
    // pin's height, except that a point captured more than `lift` above the
    // pin keeps what it rises beyond that (the toe still up at a heel
    // strike, the ball lifting at a toe-off): the foot is not pushed down
    // while it is in the air.
    //
    // With a guide's floor: the pin across the up axis, moved along the
    // guide's path from the pin's frame, and along it the sole on the
    // floor (the foot moves as one piece, so its sole moves with its
    // contact point).
    let inside = |s: &Span, f: usize| -> (DVec3, f64) {
        if let Some(floor) = floor {
            let at = t.path.get(f).copied().unwrap_or(s.pin);
            let d = at - t.p[f];
            return (d - u * d.dot(u) + u * (floor - t.sole[f]), 0.0);
        }
        let rise = (t.p[f].dot(u) - s.pin.dot(u) - lift).max(0.0);
        (s.pin + u * rise - t.p[f], s.ankle_h - t.a[f].dot(u))
    };
    let mut acc: Vec<(f64, DVec3, f64)> = vec![(0.0, DVec3::ZERO, 0.0); n];
    let mut pinned = vec![false; n];
    for (s, &(ri, ro)) in spans.iter().zip(&ramps) {
        for f in s.s..=s.e {
            let (d, h) = inside(s, f);
            acc[f] = (1.0, d, h);
            pinned[f] = true;
        }
        // In a ramp the correction at the span's edge, faded by w (an
        // offset that fades, not a pull towards the pin: the foot keeps its
        // captured speed).
        let (at_s, at_e) = (inside(s, s.s), inside(s, s.e));
        let ramp = (s.s - ri..s.s)
            .map(|f| (f, smoothstep(1.0 - (s.s - f) as f64 / (ri + 1) as f64), at_s))
            .chain(
                (s.e + 1..=s.e + ro)
                    .map(|f| (f, smoothstep(1.0 - (f - s.e) as f64 / (ro + 1) as f64), at_e)),
            );
        for (f, w, (d, h)) in ramp {
            let c = &mut acc[f];
            c.0 += w;
            c.1 += w * d;
            c.2 += w * h;
        }
    }
    let mut corr: Vec<Option<(DVec3, f64)>> =
        acc.iter().map(|&(w, d, h)| (w > 0.0).then(|| (d / w.max(1.0), h / w.max(1.0)))).collect();
    // With a guide, across a short gap between two spans the correction
    // changes as the contact point's own steps do (`retarget::swing`).
    if floor.is_some() {
        let laid: Vec<(usize, usize)> = spans.iter().map(|s| (s.s, s.e)).collect();
        crate::retarget::swing::bridge(&mut corr, &t.p, &laid, &ramps, u, clear.ramp);
    }

    // The lift: a foot below GMD's contact height that moves faster than
    // its skating speed (between spans, in a ramp) is raised above it, with
    // a smoothstep bump over the frames around; never inside a span.
    let toe0: Vec<DVec3> = (0..n).map(|f| t.p[f] + corr[f].map_or(DVec3::ZERO, |c| c.0)).collect();
    let mut up = vec![0.0f64; n];
    // With a guide's floor the lift fades to nothing at a span's edge
    // (`wall_fade`): cut off there, a foot lifted in the frame before a
    // span and on the floor in its first frame snapped the knee (4-8 cm in
    // one frame on CMU 12_01's retargets).
    let fade = if floor.is_some() { wall_fade(&pinned, clear.ramp) } else { Vec::new() };
    for _ in 0..6 {
        let h = |f: usize| toe0[f].dot(u) + up[f] - clear.floor;
        let mut need = vec![0.0f64; n];
        let mut any = false;
        for f in range.start..range.end.saturating_sub(1) {
            if h(f) >= clear.low || h(f + 1) >= clear.low {
                continue;
            }
            let d = toe0[f + 1] - toe0[f];
            if (d - u * d.dot(u)).length() <= clear.speed {
                continue;
            }
            for g in [f, f + 1] {
                if !pinned[g] {
                    need[g] = need[g].max(clear.to - h(g) + up[g]);
                    any = true;
                }
            }
        }
        if !any {
            break;
        }
        let bump = spread_between(&need, clear.ramp, &pinned);
        for (f, (x, b)) in up.iter_mut().zip(bump).enumerate() {
            *x = x.max(b * env(f) * fade.get(f).copied().unwrap_or(1.0));
        }
    }

    let mut placed: Vec<Option<(DVec3, DVec3, DQuat)>> = (0..n)
        .map(|f| {
            if corr[f].is_none() && up[f] == 0.0 {
                return None;
            }
            let (delta, dh) = corr[f].unwrap_or((DVec3::ZERO, 0.0));
            let toe = t.p[f] + delta + u * up[f];
            let mut r = t.a[f] - t.p[f];
            let mut qa = t.qa[f];
            if has_toe && floor.is_none() {
                // The ankle no lower than the lower of its captured height
                // and its height at the pin: pitch the foot about the toe
                // (on a floor the sole never goes below it).
                let want = t.a[f].dot(u) + dh.min(0.0) + up[f];
                if (toe + r).dot(u) < want - 1e-12 {
                    let len = r.length();
                    let v = (want - toe.dot(u)).clamp(-len, len);
                    if let Some(dir) = (r - u * r.dot(u)).try_normalize() {
                        let r2 = dir * (len * len - v * v).max(0.0).sqrt() + u * v;
                        if let (Some(x), Some(y)) = (r.try_normalize(), r2.try_normalize()) {
                            qa = (DQuat::from_rotation_arc(x, y) * qa).normalize();
                            r = r2;
                        }
                    }
                }
            }
            Some((toe, r, qa))
        })
        .collect();
    // Out of the leg's reach: the heel rises about the pinned toe towards
    // the hip (a toe-off) before the hips go down. Each frame's turn is the
    // least that brings the ankle into reach; with a guide's floor it
    // changes by at most `toe_off_step` per frame (raised in the frames
    // around, up to what each allows: the heel rises over several frames
    // instead of snapping 40° in one, the ankle's pops at the end of a
    // span on Rokoko's retargets onto Kinect v1 and Bandai Namco).
    let turn_of = |f: usize| -> Option<(DVec3, f64, f64)> {
        let (toe, r, _) = placed[f]?;
        if !has_toe {
            return None;
        }
        let to_hip = t.h[f] - toe;
        let axis = r.cross(to_hip).try_normalize()?;
        let most = r.angle_between(to_hip);
        if (toe + r - t.h[f]).length() <= reach {
            return Some((axis, 0.0, most));
        }
        let at = |phi: f64| DQuat::from_axis_angle(axis, phi) * r;
        let (mut lo, mut hi) = (0.0, most);
        if (toe + at(most) - t.h[f]).length() <= reach {
            for _ in 0..40 {
                let mid = 0.5 * (lo + hi);
                if (toe + at(mid) - t.h[f]).length() > reach {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
        }
        Some((axis, hi, most))
    };
    let turns: Vec<Option<(DVec3, f64, f64)>> = (0..n).map(turn_of).collect();
    let mut angle: Vec<f64> = turns.iter().map(|x| x.map_or(0.0, |(_, a, _)| a)).collect();
    if let Some(step) = pins.toe_off_step.filter(|s| *s > 0.0) {
        let most: Vec<f64> = turns.iter().map(|x| x.map_or(0.0, |(_, _, m)| m)).collect();
        spread_turns(&mut angle, &most, step);
    }
    for (f, x) in placed.iter_mut().enumerate() {
        let (Some((toe, r, qa)), Some((axis, _, _))) = (*x, turns[f]) else { continue };
        if angle[f] > 0.0 {
            let turn = DQuat::from_axis_angle(axis, angle[f]);
            *x = Some((toe, turn * r, (turn * qa).normalize()));
        }
    }
    placed.into_iter().map(|x| x.map(|(toe, r, qa)| (toe + r, qa))).collect()
}

/// One leg's targets with their distance from the hip smoothed: that
/// distance (the captured ankle's where the lock leaves the leg) filtered
/// by the binomial kernel `[1, 4, 6, 4, 1]/16` (twice from 100 fps, once
/// from 50 fps, not below), which passes no frame-to-frame zigzag, and
/// each target moved along the up axis to the smoothed distance (at most
/// `reach`), its place across it kept; outside the spans (`pinned`) only
/// up, so a lift keeps its clearance. The knee's bend follows
/// that distance, steeply near a straight leg: a pinned foot under hips
/// that shake by 2-3 mm from frame to frame (CMU 01_01's, frames
/// 1170-1176) shook the knee by three times as much, and a target's speed
/// that changes in one frame (a span's edge) did the same through the
/// knee (`bvh lint`'s acceleration spikes on the knees of CMU 01_01's
/// retargets, twice the unlocked result's). The foot moves up or down by
/// the difference (millimetres): what the source's foot itself shook by.
///
/// And a leg captured folded (more than [`FOLD_DEGREES`] of knee bend, in
/// full from 20° more: a crouch) is left as captured, by that weight (its
/// target and foot rotation moved to the captured ankle's): folded, the
/// knee turns by centimetres for a millimetre's change of where the ankle
/// is, and the Kinect v1 take's crouching legs, pinned, popped 2-11 cm at
/// the knee where the hips stepped 0.4 cm (the unlocked knee 1.3 cm).
fn smooth_reach(
    t: &Track,
    goal: &[Option<(DVec3, DQuat)>],
    drop: &[f64],
    pinned: &[bool],
    u: DVec3,
    (reach, fps): (f64, f64),
) -> Vec<Option<(DVec3, DQuat)>> {
    let n = goal.len();
    // Two passes at 100 fps and more, one from 50 fps, none below: the
    // kernel spans a tenth of a second at most (a pinned foot of a 25 fps
    // clip was held 3 cm off the floor by four frames of ramp either side
    // of a short span).
    let passes = ((fps / 50.0).floor().max(0.0) as usize).min(2);
    // How folded the captured leg is: 0 up to `FOLD_DEGREES` of knee bend,
    // 1 from 20° more.
    let fold: Vec<f64> = (0..n)
        .map(|f| {
            let b = (t.k[f] - t.h[f]).angle_between(t.a[f] - t.k[f]).to_degrees();
            if b.is_finite() { smoothstep((b - FOLD_DEGREES) / 20.0) } else { 0.0 }
        })
        .collect();
    let folded = fold.iter().any(|&w| w > 0.0);
    if passes == 0 && !folded {
        return goal.to_vec();
    }
    let hip = |f: usize| t.h[f] - u * drop[f];
    let mut d: Vec<f64> =
        (0..n).map(|f| (goal[f].map_or(t.a[f], |(x, _)| x) - hip(f)).length()).collect();
    for _ in 0..passes {
        d = binomial_pass(&d, true);
    }
    (0..n)
        .map(|f| {
            let (x, q) = goal[f]?;
            // A folded leg is left as captured, by its weight: its knee
            // would turn by centimetres for the pin's millimetres.
            let unfold = |x: DVec3| match fold[f] {
                w if w > 0.0 => (x.lerp(t.a[f] - u * drop[f], w), q.slerp(t.qa[f], w).normalize()),
                _ => (x, q),
            };
            // Moved along the up axis by the `y` nearest 0 that puts it at
            // the smoothed distance: `|v + u·y| = d`, a pin's place across
            // the up axis kept exactly.
            let v = x - hip(f);
            let (b, want) = (v.dot(u), d[f].min(reach));
            let disc = b * b - v.length_squared() + want * want;
            if passes == 0 || !(disc >= 0.0 && want.is_finite()) {
                return Some(unfold(x));
            }
            let r = disc.sqrt();
            let y = if (-b + r).abs() <= (-b - r).abs() { -b + r } else { -b - r };
            // Outside a span only up: a foot lifted to clear the floor
            // (`Clear`) keeps its clearance.
            let y = if pinned[f] { y } else { y.max(0.0) };
            Some(unfold(x + u * y))
        })
        .collect()
}

/// Raises each frame's toe-off turn `angle` (radians) so that it changes
/// by at most `step` from frame to frame, up to each frame's `most`: a
/// turn that must be reached is started in the frames before it and let go
/// over the frames after, never lowered.
fn spread_turns(angle: &mut [f64], most: &[f64], step: f64) {
    let n = angle.len();
    for f in 1..n {
        angle[f] = angle[f].max((angle[f - 1] - step).min(most[f]));
    }
    for f in (0..n.saturating_sub(1)).rev() {
        angle[f] = angle[f].max((angle[f + 1] - step).min(most[f]));
    }
}

/// Each frame's weight of the flat foot over one leg's spans: 1 inside a
/// span, the smoothstep of its ramps around it (the largest where ramps
/// overlap), times the envelope `env` of a locking over part of the clip.
fn flat_weights(
    spans: &[&Span],
    range: &Range<usize>,
    n: usize,
    env: &dyn Fn(usize) -> f64,
) -> Vec<f64> {
    let mut w = vec![0.0f64; n];
    for (s, &(ri, ro)) in spans.iter().zip(&effective_ramps(spans, range)) {
        for x in &mut w[s.s..=s.e] {
            *x = 1.0;
        }
        for (k, x) in w[s.s - ri..s.s].iter_mut().rev().enumerate() {
            *x = x.max(smoothstep(1.0 - (k + 1) as f64 / (ri + 1) as f64));
        }
        for (k, x) in w[s.e + 1..=s.e + ro].iter_mut().enumerate() {
            *x = x.max(smoothstep(1.0 - (k + 1) as f64 / (ro + 1) as f64));
        }
    }
    for (f, x) in w.iter_mut().enumerate() {
        *x *= env(f);
    }
    w
}

/// One frame's flattening of a foot (see [`flatten`]).
struct Flat {
    /// The toe's offset from the foot in the rest pose (file units).
    o: DVec3,
    /// The up axis.
    u: DVec3,
    /// The span's weight (1 inside it, its ramps' smoothstep around).
    w: f64,
    /// The foot's planted pitch: the sine of its toe line's elevation.
    e: f64,
    /// The foot's planted roll (radians, as [`pitch_roll`] gives it).
    roll: f64,
    /// Metres per file unit.
    mpu: f64,
}

/// The pitch and roll of a foot of world rotation `q` and rest-pose toe
/// offset `o`: the sine of its toe line's elevation, and the angle about
/// the toe line from the horizontal across it (`u × heading`) to the foot's
/// side axis (the rest pose's `u × o`, carried by `q`). `None` for a toe
/// line straight up or down.
fn pitch_roll(q: DQuat, o: DVec3, u: DVec3) -> Option<(f64, f64)> {
    let t = (q * o).try_normalize()?;
    let heading = (t - u * t.dot(u)).try_normalize()?;
    let rest = (o - u * o.dot(u)).try_normalize()?;
    let level = u.cross(heading);
    let side = q * u.cross(rest);
    Some((t.dot(u), level.cross(side).dot(t).atan2(level.dot(side))))
}

/// The foot's world rotation `q` flattened, in two turns about the ankle:
///
/// 1. **roll**, by `w`: about the ankle-to-toe line (the toe does not
///    move), by what brings the foot's roll ([`pitch_roll`]) to its
///    planted roll;
/// 2. **pitch**, by `w` times [`flat_pitch_weight`]: about the horizontal
///    across the toe line, by what brings the ankle-to-toe line to the
///    foot's planted pitch `e` at the captured heading (the roll stays).
///    The weight falls with how far that moves the pinned toe (a foot on
///    its ball or its heel keeps its pitch).
///
/// A toe pointing straight up or down keeps `q`.
fn flatten(q: DQuat, x: &Flat) -> DQuat {
    let Flat { o, u, w, e, roll, mpu } = *x;
    let w = w.clamp(0.0, 1.0);
    let Some((now_e, now_roll)) = pitch_roll(q, o, u) else { return q };
    let t = (q * o).normalize();
    let heading = (t - u * now_e).normalize();
    let level = u.cross(heading);
    let turn = roll - now_roll;
    let turn = turn.sin().atan2(turn.cos());
    // A toe line far steeper than planted (on tiptoe): its roll is a twist
    // of the foot about the shin more than a bank, and is kept.
    let steep = (now_e.clamp(-1.0, 1.0).asin() - e.clamp(-1.0, 1.0).asin()).abs().to_degrees();
    let wr = w * (1.0 - smoothstep((steep - FLAT_ROLL_DEGREES) / FLAT_ROLL_DEGREES));
    let q1 = (DQuat::from_axis_angle(t, wr * turn) * q).normalize();
    // The toe line at the planted pitch, at the captured heading.
    let e = e.clamp(-1.0, 1.0);
    let flat = heading * (1.0 - e * e).sqrt() + u * e;
    let pitch = t.cross(flat).dot(level).atan2(t.dot(flat));
    let len = o.length() * mpu;
    let rise = len * (e - now_e);
    let across = len * ((1.0 - e * e).sqrt() - (1.0 - now_e * now_e).max(0.0).sqrt()).abs();
    let wp = w * flat_pitch_weight(rise.abs().max(2.0 * across));
    (DQuat::from_axis_angle(level, wp * pitch) * q1).normalize()
}

/// The weight of the flattening's pitch for a toe that the full pitch
/// would move by `bad` metres (up, down, or half that across): 1 up to
/// [`FLAT_RISE_METRES`], 0 from [`FLAT_RISE_MAX_METRES`], a smoothstep
/// between, so the weight follows the captured pitch smoothly and nothing
/// pops; the toe moves by at most about 1 mm for it.
fn flat_pitch_weight(bad: f64) -> f64 {
    let x = (bad - FLAT_RISE_METRES) / (FLAT_RISE_MAX_METRES - FLAT_RISE_METRES);
    1.0 - smoothstep(x.clamp(0.0, 1.0))
}

/// Joints a leg's knee or hip may be above the joint below it: twist or
/// split joints between (MakeHuman's `upperleg01`-`upperleg02`-`lowerleg01`
/// -`lowerleg02`-`foot`).
const LEG_JOINTS_BETWEEN: usize = 2;

/// The hip (thigh) and knee joints of the leg above foot joint `foot`: the
/// nearest ancestors named as a lower and an upper leg
/// ([`crate::retarget::names`]) with at most [`LEG_JOINTS_BETWEEN`] joints
/// between, else the foot's parent and grandparent. On a leg whose bones
/// are split (MakeHuman's `lowerleg01`-`lowerleg02`), the parent and
/// grandparent would be half a shin: a leg that reaches nothing.
pub(crate) fn leg_joints(
    skel: &crate::Skeleton,
    bones: &[Option<crate::retarget::names::Bone>],
    foot: usize,
) -> Option<(usize, usize)> {
    use crate::retarget::names::{Bone, Limb};
    let parent = |j: usize| skel.joints()[j].parent().map(|p| p.index());
    let named = |from: usize, limb: Limb| {
        let mut at = parent(from);
        for _ in 0..=LEG_JOINTS_BETWEEN {
            let j = at?;
            if matches!(bones.get(j), Some(Some(Bone::Limb(_, l))) if *l == limb) {
                return Some(j);
            }
            at = parent(j);
        }
        None
    };
    let knee = named(foot, Limb::LowerLeg).or_else(|| parent(foot))?;
    let hip = named(knee, Limb::UpperLeg).or_else(|| parent(knee))?;
    Some((hip, knee))
}

/// The ramps of one leg's spans (sorted, disjoint) as they are laid: each
/// inside `range` (the clip, or the part of it being locked) and inside the
/// gap to the next span (where the ramps of two spans overlap, their
/// weights share the gap).
fn effective_ramps(spans: &[&Span], range: &Range<usize>) -> Vec<(usize, usize)> {
    (0..spans.len())
        .map(|i| {
            let s = spans[i];
            let lo = if i > 0 { spans[i - 1].e + 1 } else { range.start };
            let hi = spans.get(i + 1).map_or(range.end - 1, |x| x.s - 1);
            (s.ramp_in.min(s.s - lo), s.ramp_out.min(hi - s.e))
        })
        .collect()
}

/// The targets of one leg (`None` where it keeps its capture; the ankle
/// where only the hips go down) with the knee's bend limited in speed
/// outside its spans: the change of the knee's angle that the IK makes
/// (`θ₁ − θ₀`, the law of cosines' angle for the hip-to-target distance
/// less the captured one) moves by at most [`KNEE_BEND_FACTOR`] times the
/// knee's fastest step before, less the captured step, from frame to frame
/// (at least a quarter of that); frames in spans and frames the lock does
/// not touch are held, the others follow in passes forward and backward,
/// and a frame whose bend changed gets its target moved to the distance
/// from the hip that bend gives, at the target's height (the lift stays)
/// where it can, else along the line from the hip. Only with the contacts
/// lint finds or with a [`Guide`] (`ease`: retarget's lock, whose knees
/// popped 4-10 cm at span edges on CMU 01_01 without it): spans the caller
/// gives alone (`--contacts`) are followed as given.
#[allow(clippy::too_many_arguments)]
fn limit_bend(
    t: &Track,
    targets: &[Option<(DVec3, DQuat)>],
    drop: &[f64],
    pinned: &[bool],
    u: DVec3,
    knee_max: f64,
    has_toe: bool,
    hinge: DVec3,
    ease: bool,
) -> Vec<Option<(DVec3, DQuat)>> {
    let n = t.p.len();
    let mut goal: Vec<Option<(DVec3, DQuat)>> = (0..n)
        .map(|f| match targets[f] {
            Some(x) => Some(x),
            None if drop[f] > 0.0 => Some((t.a[f], t.qa[f])),
            None => None,
        })
        .collect();
    if n < 3 || knee_max.is_nan() || knee_max <= 0.0 || !ease {
        return goal;
    }
    let (l1, l2) = ((t.k[0] - t.h[0]).length(), (t.a[0] - t.k[0]).length());
    if !(l1 > 0.0 && l2 > 0.0) {
        return goal;
    }
    let bend = |d: f64| ((l1 * l1 + l2 * l2 - d * d) / (2.0 * l1 * l2)).clamp(-1.0, 1.0).acos();
    let hip = |f: usize| t.h[f] - u * drop[f];
    // The captured bend, past π where the leg is bent backwards about its
    // hinge (what `prebend` turns back).
    let captured: Vec<f64> = (0..n)
        .map(|f| {
            let b = bend((t.a[f] - t.h[f]).length());
            let (u, v) = (t.h[f] - t.k[f], t.a[f] - t.k[f]);
            let back = std::f64::consts::PI - BACKWARDS_DEGREES.to_radians();
            if u.cross(v).dot(t.qkp[f] * hinge) < 0.0 && b >= back {
                std::f64::consts::TAU - b
            } else {
                b
            }
        })
        .collect();
    let want: Vec<f64> = (0..n)
        .map(|f| goal[f].map_or(0.0, |(x, _)| bend((x - hip(f)).length()) - captured[f]))
        .collect();
    // Each frame's range of that change: none where the lock does not
    // touch; in a span (with a toe) what pitching the foot about its pinned
    // toe by up to 30° gives, the toe staying on its pin; else free.
    let reach = (l1 + l2) * (1.0 - 1e-9);
    let toe_of = |f: usize, x: DVec3, q: DQuat| x - (q * t.qa[f].inverse()) * (t.a[f] - t.p[f]);
    let range: Vec<(f64, f64)> = (0..n)
        .map(|f| match goal[f] {
            None => (0.0, 0.0),
            Some(_) if pinned[f] && !has_toe => (want[f], want[f]),
            Some((x, q)) if pinned[f] => {
                let toe = toe_of(f, x, q);
                let (rho, dd) = ((x - toe).length(), (toe - hip(f)).length());
                let d0 = (x - hip(f)).length();
                let most = 2.0 * (0.5 * PITCH_DEGREES.to_radians()).sin() * rho;
                let lo = (dd - rho).abs().max(d0 - most);
                let hi = (dd + rho).min(d0 + most).min(reach);
                if lo > hi {
                    (want[f], want[f])
                } else {
                    (bend(lo) - captured[f], bend(hi) - captured[f])
                }
            }
            Some(_) => (f64::NEG_INFINITY, f64::INFINITY),
        })
        .collect();
    let limit = KNEE_BEND_FACTOR * knee_max;
    let budget = |f: usize| (limit - t.lk[f].angle_between(t.lk[f - 1])).max(0.25 * limit);
    let mut c = want.clone();
    for _ in 0..3 {
        for f in 1..n {
            let b = budget(f);
            c[f] = c[f].max(c[f - 1] - b).min(c[f - 1] + b).max(range[f].0).min(range[f].1);
        }
        for f in (0..n - 1).rev() {
            let b = budget(f + 1);
            c[f] = c[f].max(c[f + 1] - b).min(c[f + 1] + b).max(range[f].0).min(range[f].1);
        }
    }
    for f in 0..n {
        if (c[f] - want[f]).abs() <= 1e-12 {
            continue;
        }
        let Some((x, q)) = goal[f] else { continue };
        let th = (captured[f] + c[f]).clamp(0.0, std::f64::consts::PI);
        let d = (l1 * l1 + l2 * l2 - 2.0 * l1 * l2 * th.cos()).max(0.0).sqrt();
        let h = hip(f);
        if pinned[f] {
            // The ankle on the circle at distance d from the hip and its
            // foot's length from the pinned toe, nearest its target.
            let toe = toe_of(f, x, q);
            let rho = (x - toe).length();
            let e = toe - h;
            let dd = e.length();
            let Some(axis) = e.try_normalize() else { continue };
            let along = (d * d - rho * rho + dd * dd) / (2.0 * dd);
            let rc = (d * d - along * along).max(0.0).sqrt();
            let centre = h + axis * along;
            let Some(side) = (x - centre - axis * (x - centre).dot(axis)).try_normalize() else {
                continue;
            };
            let y = centre + side * rc;
            if let (Some(a), Some(b)) = ((x - toe).try_normalize(), (y - toe).try_normalize())
                && a.angle_between(b) <= PITCH_DEGREES.to_radians() * 1.5
            {
                goal[f] = Some((y, (DQuat::from_rotation_arc(a, b) * q).normalize()));
            }
            continue;
        }
        // At the target's height where that distance allows it (the lift
        // keeps its effect), else along the line from the hip.
        let v = x - h;
        let y = v.dot(u);
        let across = (v - u * y).try_normalize();
        if let (Some(dir), true) = (across, d >= y.abs()) {
            goal[f] = Some((h + u * y + dir * (d * d - y * y).sqrt(), q));
        } else if let Some(dir) = v.try_normalize() {
            goal[f] = Some((h + dir * d, q));
        }
    }
    goal
}

/// The knee's rotation (world, about the knee) that bends a leg captured
/// within [`STRAIGHT_DEGREES`] of straight, or bent backwards (up to
/// [`BACKWARDS_DEGREES`]), about its `hinge` (world) to the bend the target
/// needs, at most that far short of straight: [`two_bone`] then does the
/// rest about a bend plane that is not noise. Identity for a leg bent the
/// right way, without a hinge, and for one bent far backwards (the hinge
/// is not that knee's).
fn prebend(h: DVec3, k: DVec3, a: DVec3, target: DVec3, hinge: DVec3) -> DQuat {
    let (u, v) = (h - k, a - k);
    let (l1, l2) = (u.length(), v.length());
    let Some(m) = crate::ik::perp(hinge, u.normalize_or_zero()).try_normalize() else {
        return DQuat::IDENTITY;
    };
    if !(l1 > 0.0 && l2 > 0.0) {
        return DQuat::IDENTITY;
    }
    // The bend from the thigh, signed about the hinge: (0, π) the right way.
    let phi = u.cross(v).dot(m).atan2(u.dot(v)).rem_euclid(std::f64::consts::TAU);
    let most = std::f64::consts::PI - STRAIGHT_DEGREES.to_radians();
    if phi <= most {
        return DQuat::IDENTITY;
    }
    if phi > std::f64::consts::PI + BACKWARDS_DEGREES.to_radians() {
        // Bent far the other way: the hinge is not this knee's (a rig
        // whose knee bends both ways, or a hinge of noise): the capture's.
        return DQuat::IDENTITY;
    }
    let d = (target - h).length();
    let want = ((l1 * l1 + l2 * l2 - d * d) / (2.0 * l1 * l2)).clamp(-1.0, 1.0).acos().min(most);
    DQuat::from_axis_angle(m, want - phi)
}

/// How far the hip at `h` must go down along `u` for a leg reaching `reach`
/// to touch `target` (0 when it reaches; the lowering that brings it
/// closest when no lowering reaches).
fn lowering(h: DVec3, target: DVec3, reach: f64, u: DVec3) -> f64 {
    let v = target - h;
    if v.length() <= reach {
        return 0.0;
    }
    // |v + x u| = reach: x² + 2x (v·u) + |v|² - reach² = 0, smallest root.
    let b = v.dot(u);
    let disc = b * b - (v.length_squared() - reach * reach);
    let x = if disc >= 0.0 { -b - disc.sqrt() } else { -b };
    x.max(0.0)
}

/// `need` spread over the frames around with a smoothstep bump of
/// half-width `r`: `out[f] = max_g need[g] · smoothstep(1 − |f − g| / (r + 1))`,
/// at least `need[f]`, without a jump.
fn spread(need: &[f64], r: usize) -> Vec<f64> {
    let n = need.len();
    let mut out = vec![0.0f64; n];
    for (g, &x) in need.iter().enumerate() {
        if x <= 0.0 {
            continue;
        }
        for (f, o) in out.iter_mut().enumerate().take((g + r + 1).min(n)).skip(g.saturating_sub(r))
        {
            let w = smoothstep(1.0 - f.abs_diff(g) as f64 / (r + 1) as f64);
            *o = o.max(x * w);
        }
    }
    out
}

/// Per frame, the weight a lift may have `r` frames or fewer from a frame
/// of `wall`: the smoothstep of the distance to the nearest such frame over
/// `r + 1` (0 on a wall frame, 1 farther than `r`).
fn wall_fade(wall: &[bool], r: usize) -> Vec<f64> {
    let dist = distance_to_nearest(wall);
    dist.iter().map(|&d| if d > r { 1.0 } else { smoothstep(d as f64 / (r + 1) as f64) }).collect()
}

/// For each frame, the number of frames to the nearest frame of `marks`,
/// before or after it (0 on a marked frame; `usize::MAX` when none is).
pub(crate) fn distance_to_nearest(marks: &[bool]) -> Vec<usize> {
    let n = marks.len();
    let mut dist = vec![usize::MAX; n];
    let mut last: Option<usize> = None;
    for f in 0..n {
        if marks[f] {
            last = Some(f);
        }
        if let Some(w) = last {
            dist[f] = f - w;
        }
    }
    last = None;
    for f in (0..n).rev() {
        if marks[f] {
            last = Some(f);
        }
        if let Some(w) = last {
            dist[f] = dist[f].min(w - f);
        }
    }
    dist
}

/// [`spread`] that never reaches a frame of `wall`: on each side of a
/// frame with a need, the bump's half-width is cut to the frames before the
/// nearest wall frame (a lift never enters a pinned span).
fn spread_between(need: &[f64], r: usize, wall: &[bool]) -> Vec<f64> {
    let n = need.len();
    let mut out = vec![0.0f64; n];
    for (g, &x) in need.iter().enumerate() {
        if x <= 0.0 || wall[g] {
            continue;
        }
        let left = (1..=r).take_while(|&k| g >= k && !wall[g - k]).count();
        let right = (1..=r).take_while(|&k| g + k < n && !wall[g + k]).count();
        out[g] = out[g].max(x);
        for k in 1..=left {
            let w = smoothstep(1.0 - k as f64 / (left + 1) as f64);
            out[g - k] = out[g - k].max(x * w);
        }
        for k in 1..=right {
            let w = smoothstep(1.0 - k as f64 / (right + 1) as f64);
            out[g + k] = out[g + k].max(x * w);
        }
    }
    out
}

/// A foot's sole height in each of `n` frames, from its points' heights
/// (`heights[point][frame]`): the lowest point, each less its planted
/// height (its 5th percentile less the foot's lowest such), `quality`'s
/// rule; points whose heights give no percentile are left out.
pub(crate) fn soles(heights: &[Vec<f64>], n: usize) -> Vec<f64> {
    let q: Vec<f64> =
        heights.iter().map(|h| quality::stats::quantile(h, 0.05).unwrap_or(f64::NAN)).collect();
    let base = q.iter().copied().filter(|x| x.is_finite()).fold(f64::INFINITY, f64::min);
    (0..n)
        .map(|f| {
            heights
                .iter()
                .zip(&q)
                .filter(|(_, c)| c.is_finite())
                .map(|(h, c)| h[f] - (c - base))
                .fold(f64::INFINITY, f64::min)
        })
        .collect()
}

/// One pass of the binomial kernel `[1, 4, 6, 4, 1]/16` over `a` (each
/// value spread over the two frames either side). Past the clip's ends
/// the kernel's missing taps read 0 (`renormalize` false: a curve that is
/// 0 outside, such as a lift) or are left out and the rest divided by
/// their own sum (`renormalize` true: a quantity that goes on as it is).
pub(crate) fn binomial_pass(a: &[f64], renormalize: bool) -> Vec<f64> {
    const K: [f64; 5] = [1.0, 4.0, 6.0, 4.0, 1.0];
    let n = a.len();
    (0..n)
        .map(|f| {
            let (mut s, mut w) = (0.0, 0.0);
            for (i, k) in K.iter().enumerate() {
                if let Some(g) = (f + i).checked_sub(2).filter(|&g| g < n) {
                    s += k * a[g];
                    w += k;
                }
            }
            s / if renormalize { w } else { 16.0 }
        })
        .collect()
}

/// Contact spans `(first, last)` sorted and merged where they overlap, touch
/// or stand closer than half a ramp (`ramp0 / 2` frames) apart, as the lock
/// merges them: two spans that close share one pin, with no ramp between.
pub(crate) fn merge_spans(list: &[(usize, usize)], ramp0: usize) -> Vec<(usize, usize)> {
    let mut list = list.to_vec();
    list.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in list {
        match merged.last_mut() {
            Some(last) if s <= last.1 + 1 + ramp0 / 2 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_toe_off_turn_is_spread_over_the_frames_around_never_lowered() {
        // 0.6 rad needed at frame 5 alone, a step of 0.2 per frame.
        let mut a = vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.6, 0.0, 0.0, 0.0];
        let most = vec![1.0; 9];
        spread_turns(&mut a, &most, 0.2);
        let want = [0.0, 0.0, 0.0, 0.2, 0.4, 0.6, 0.4, 0.2, 0.0];
        for (x, w) in a.iter().zip(want) {
            assert!((x - w).abs() < 1e-12, "{a:?}");
        }
        // A frame that may turn less (its `most`) holds the ramp back there
        // and the turn it needs is kept.
        let mut a = vec![0.0, 0.0, 0.0, 0.0, 0.6];
        spread_turns(&mut a, &[1.0, 1.0, 0.1, 1.0, 1.0], 0.2);
        assert!((a[2] - 0.1).abs() < 1e-12 && (a[3] - 0.4).abs() < 1e-12, "{a:?}");
        assert_eq!(a[4], 0.6);
    }

    #[test]
    fn a_leg_s_knee_and_hip_are_found_by_name_past_split_bones() {
        // MakeHuman's legs: each bone in two, the foot's parent and
        // grandparent half a shin; a plain leg and a leg of unnamed joints
        // take the parent and grandparent.
        let chain = |names: &[&str]| {
            let mut text = String::from(
                "HIERARCHY\nROOT Hips\n{ OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation\n",
            );
            for n in names {
                text += &format!(
                    "JOINT {n}\n{{ OFFSET 0 -10 0 CHANNELS 3 Zrotation Xrotation Yrotation\n"
                );
            }
            text += "End Site\n{ OFFSET 0 0 5 }\n";
            text += &"}\n".repeat(names.len() + 1);
            text += "MOTION\nFrames: 1\nFrame Time: 0.1\n";
            text += &"0 ".repeat(3 * (names.len() + 1));
            crate::Bvh::parse(&text).unwrap()
        };
        let legs = |names: &[&str]| {
            let b = chain(names);
            let bones = crate::retarget::names::classify(b.skeleton());
            let foot = names.len();
            leg_joints(b.skeleton(), &bones, foot)
        };
        let split = ["upperleg01.L", "upperleg02.L", "lowerleg01.L", "lowerleg02.L", "foot.L"];
        assert_eq!(legs(&split), Some((1, 3)));
        assert_eq!(legs(&["LeftUpLeg", "LeftLeg", "LeftFoot"]), Some((1, 2)));
        assert_eq!(legs(&["a", "b", "c"]), Some((1, 2)));
        assert_eq!(legs(&["LeftFoot"]), None);
    }

    #[test]
    fn lowering_brings_the_target_into_reach() {
        let u = DVec3::Y;
        let h = DVec3::new(0.0, 1.0, 0.0);
        let t = DVec3::new(0.3, 0.0, 0.0);
        let x = lowering(h, t, 0.9, u);
        assert!(x > 0.0);
        assert!(((t - (h - u * x)).length() - 0.9).abs() < 1e-12);
        assert_eq!(lowering(h, DVec3::new(0.0, 0.5, 0.0), 0.9, u), 0.0);
    }

    #[test]
    fn spread_covers_the_need_without_a_jump() {
        let mut need = vec![0.0; 40];
        need[20] = 1.0;
        need[21] = 0.5;
        let out = spread(&need, 6);
        assert!(out[20] >= 1.0 && out[21] >= 0.5);
        assert_eq!(out[13], 0.0);
        assert_eq!(out[28], 0.0);
        for f in 1..40 {
            assert!((out[f] - out[f - 1]).abs() <= 0.3, "{out:?}");
        }
    }

    #[test]
    fn wall_fade_is_nothing_on_a_wall_and_whole_beyond_the_ramp() {
        let mut wall = vec![false; 12];
        wall[5] = true;
        let w = wall_fade(&wall, 3);
        assert_eq!(w[5], 0.0);
        assert_eq!((w[0], w[1], w[9], w[10]), (1.0, 1.0, 1.0, 1.0));
        assert!(w[4] > 0.0 && w[4] < w[3] && w[3] < w[2] && w[2] < 1.0, "{w:?}");
        assert_eq!((w[4], w[3]), (w[6], w[7]));
        assert_eq!(wall_fade(&[false; 4], 3), vec![1.0; 4]);
    }

    #[test]
    fn spread_between_covers_the_need_and_never_enters_a_wall() {
        let mut wall = vec![false; 40];
        for w in &mut wall[24..30] {
            *w = true;
        }
        let mut need = vec![0.0; 40];
        need[20] = 1.0;
        need[27] = 5.0; // inside the wall: ignored
        let out = spread_between(&need, 8, &wall);
        assert_eq!(out[20], 1.0);
        assert!(out[24..30].iter().all(|&x| x == 0.0), "{out:?}");
        assert!(out[23] > 0.0 && out[23] < 1.0 && out[11] == 0.0 && out[12] > 0.0);
        for f in 1..24 {
            assert!((out[f] - out[f - 1]).abs() <= 0.35, "{out:?}");
        }
    }

    #[test]
    fn contacts_parse_and_fail_precisely() {
        let s = parse_contacts("joint,start,end\n\n# c\nL,1,2\n").unwrap();
        assert_eq!(s, vec![ContactSpan { joint: "L".into(), start: 1, end: 2 }]);
        let e = parse_contacts("L,3,2").unwrap_err().to_string();
        assert!(e.contains("line 1: end before start"), "{e}");
        let e = parse_contacts("L,3\n").unwrap_err().to_string();
        assert!(e.contains("three fields"), "{e}");
        let e = parse_contacts("x\nL,a,2\n").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn flatten_rolls_about_the_toe_line_and_pitches_only_where_the_toe_may_move() {
        // Y up, the toe 13 cm ahead of the ankle and 2 cm below it.
        let (u, o) = (DVec3::Y, DVec3::new(0.0, -0.02, 0.13));
        let elev = |v: DVec3| v.normalize().dot(u);
        let side = u.cross(o.normalize()).normalize();
        let turn = |yaw: f64, pitch: f64, roll: f64| {
            DQuat::from_axis_angle(u, yaw.to_radians())
                * DQuat::from_axis_angle(side, pitch.to_radians())
                * DQuat::from_axis_angle(o.normalize(), roll.to_radians())
        };
        let e = elev(o); // planted as in the rest pose
        let at = |q: DQuat, w: f64| flatten(q, &Flat { o, u, w, e, roll: 0.0, mpu: 1.0 });
        let heading = |v: DVec3| (v - u * v.dot(u)).normalize();
        // Rolled 20° and turned 30°: the toe does not move, the side axis
        // comes to horizontal, the heading stays.
        let q = turn(30.0, 0.0, 20.0);
        let r = at(q, 1.0);
        assert!((r * o - q * o).length() < 1e-12);
        assert!((r * side).dot(u).abs() < 1e-12);
        // Half the weight: half the roll.
        let h = at(q, 0.5);
        assert!((h.angle_between(q) - 0.5 * r.angle_between(q)).abs() < 1e-9);
        assert!((r.angle_between(q).to_degrees() - 20.0).abs() < 1e-9);
        // Toe up 0.1°: laid at the planted pitch (the toe 0.2 mm lower),
        // heading kept, side axis horizontal.
        let q = turn(-40.0, -0.1, 5.0);
        assert!(elev(q * o) > e + 0.001);
        let r = at(q, 1.0);
        assert!((elev(r * o) - e).abs() < 1e-12);
        assert!((heading(r * o) - heading(q * o)).length() < 1e-12);
        assert!((r * side).dot(u).abs() < 1e-12);
        // Toe up 0.5° (1.1 mm): laid down part of the way; up 15° (a heel
        // strike, 3.4 cm), not at all (the roll still goes).
        let q = turn(-40.0, -0.5, 5.0);
        let r = at(q, 1.0);
        assert!(elev(r * o) > e + 1e-5 && elev(r * o) < elev(q * o) - 1e-5);
        let q = turn(-40.0, -15.0, 5.0);
        let r = at(q, 1.0);
        assert!((r * o - q * o).length() < 1e-12);
        // Toe down 20° (on its ball, heel up): pitching would lift the toe
        // 4.5 cm, so the toe stays where it is.
        let q = turn(10.0, 20.0, -8.0);
        let r = at(q, 1.0);
        assert!((r * o - q * o).length() < 1e-12);
        assert!((r * side).dot(u).abs() < 1e-12);
        // Toe down 0.1° (0.2 mm): laid flat in full.
        let q = turn(10.0, 0.1, 0.0);
        assert!((elev(at(q, 1.0) * o) - e).abs() < 1e-12);
        // A planted roll of 15°: the foot rolled to it, the toe in place.
        let q = turn(30.0, 0.0, -20.0);
        let r = flatten(q, &Flat { o, u, w: 1.0, e, roll: 15f64.to_radians(), mpu: 1.0 });
        assert!((r * o - q * o).length() < 1e-12);
        let (_, roll) = pitch_roll(r, o, u).unwrap();
        assert!((roll.to_degrees() - 15.0).abs() < 1e-9, "{}", roll.to_degrees());
        let (_, roll) = pitch_roll(q, o, u).unwrap();
        assert!((roll.to_degrees() + 20.0).abs() < 1e-9, "{}", roll.to_degrees());
        // Weight 0: untouched; the pitch weight falls smoothly.
        let q = turn(10.0, 5.0, 7.0);
        assert!(at(q, 0.0).angle_between(q) < 1e-12);
        assert_eq!(flat_pitch_weight(FLAT_RISE_METRES), 1.0);
        assert_eq!(flat_pitch_weight(FLAT_RISE_MAX_METRES), 0.0);
        let mid = flat_pitch_weight(0.5 * (FLAT_RISE_METRES + FLAT_RISE_MAX_METRES));
        assert!((mid - 0.5).abs() < 1e-12);
        // The toe moves the wrong way by at most about 1 mm.
        let worst = (0..2000)
            .map(|i| i as f64 * 1e-5)
            .map(|b| b * flat_pitch_weight(b))
            .fold(0.0, f64::max);
        assert!(worst < 0.001, "{worst}");
    }
}
