//! Retargeting against the plain 4x4-matrix forward kinematics of
//! `tests/fk.rs`: onto a clip's own skeleton (the identity, every
//! well-formed corpus file), and across real corpus skeletons (CMU, Bandai
//! Namco, Rokoko, Perception Neuron, Xsens-style and back): mapped bones
//! point where the source's do, feet stay on the ground, knees and elbows
//! bend the same way.
use bvhkit::glam::{DMat4, DVec3};
use bvhkit::retarget::map::{JointMap, Reason};
use bvhkit::retarget::names::{Bone, Limb, Side};
use bvhkit::retarget::{Options, Reference, RestKind, retarget};
use bvhkit::{Bvh, PositionChannels, ReadOptions};

use crate::util::{corpus_dir, corpus_files, stem};

/// The exact transfer: every mapped limb where the source's points (the
/// feet not locked, `Options::lock_feet` off; the default locks them).
fn exact() -> Options {
    Options { lock_feet: false, ..Options::default() }
}

/// World matrices of every joint of one frame: the plain 4x4-matrix
/// reference of `tests/fk.rs`, straight from the format texts.
fn world(bvh: &Bvh, frame: usize) -> Vec<DMat4> {
    crate::fk::reference_world(bvh, frame, PositionChannels::Replace)
}

fn pos(m: &DMat4) -> DVec3 {
    m.w_axis.truncate()
}

/// At most about `n` frames spread over the clip.
fn sample(bvh: &Bvh, n: usize) -> Vec<usize> {
    let f = bvh.motion().n_frames();
    let step = f.div_ceil(n).max(1);
    (0..f).step_by(step).collect()
}

/// The figure's size over the frames: its largest extent.
fn height(bvh: &Bvh, frames: &[usize]) -> f64 {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for &f in frames {
        for m in world(bvh, f) {
            lo = lo.min(pos(&m));
            hi = hi.max(pos(&m));
        }
    }
    let e = hi - lo;
    e.x.max(e.y).max(e.z).max(1e-3)
}

fn read(path: &std::path::Path) -> Bvh {
    ReadOptions::new().lenient(true).parse(&std::fs::read(path).unwrap()).unwrap().0
}

fn corpus(name: &str) -> Option<Bvh> {
    let dir = corpus_dir()?;
    Some(read(&dir.join(format!("{name}.bvh"))))
}

#[test]
fn onto_its_own_skeleton_is_the_identity() {
    let mut checked = 0;
    for path in corpus_files() {
        let name = stem(&path);
        if name.starts_with("malformed_") {
            continue;
        }
        let bvh = read(&path);
        if bvh.motion().n_frames() == 0 {
            println!("{name}: no frames, nothing to retarget");
            continue;
        }
        // Joints below the root keep the target's offsets unless asked:
        // asked here, for the rigs with position channels on every joint
        // (their values differ from the offsets by rounding).
        let all = Options { joint_translations: true, ..exact() };
        let (out, report) = retarget(&bvh, &bvh, &all).unwrap();
        assert_eq!(report.scale, 1.0, "{name}");
        assert!(report.unmapped_target.is_empty(), "{name}: {:?}", report.unmapped_target);
        assert_eq!(out.motion().n_frames(), bvh.motion().n_frames(), "{name}");
        assert_eq!(out.skeleton(), bvh.skeleton(), "{name}");
        let frames = sample(&bvh, 100);
        let h = height(&bvh, &frames);
        let mut worst = 0.0f64;
        for &f in &frames {
            let (a, b) = (world(&bvh, f), world(&out, f));
            for (x, y) in a.iter().zip(&b) {
                worst = worst.max((pos(x) - pos(y)).abs().max_element());
            }
        }
        println!(
            "{name}: largest world position difference {:.2e} of height {h:.1} ({} pairs, rest {})",
            worst,
            report.pairs.len(),
            report.source.rest
        );
        assert!(worst <= 1e-9 * h, "{name}: {worst} > 1e-9 * {h}");
        checked += 1;
    }
    if corpus_dir().is_some() {
        assert!(checked >= 30, "only {checked} files checked");
    }
}

/// The axis conversion of the report's up axes, applied to a source vector
/// (both convention's forward the default one, as the retarget does).
fn to_target(
    v: DVec3,
    from: bvhkit::edit::axes::SignedAxis,
    to: bvhkit::edit::axes::SignedAxis,
) -> DVec3 {
    use bvhkit::edit::axes::Axes;
    Axes::with_up(from).conversion(Axes::with_up(to)) * v
}

fn index(bones: &[Option<Bone>], b: Bone) -> Option<usize> {
    bones.iter().position(|x| *x == Some(b))
}

/// The lowest of the foot joints (foot, toe and everything below) along up.
fn lowest_foot(
    s: &bvhkit::Skeleton,
    bones: &[Option<Bone>],
    w: &[DMat4],
    up: DVec3,
) -> Option<f64> {
    let mut low: Option<f64> = None;
    for side in [Side::Left, Side::Right] {
        let Some(f) = index(bones, Bone::Limb(side, Limb::Foot)) else { continue };
        for m in &w[f..s.subtree_end(bvhkit::JointId::new(f))] {
            let h = pos(m).dot(up);
            low = Some(low.map_or(h, |l: f64| l.min(h)));
        }
    }
    low
}

/// Bones checked for direction: (bone, the bone it points at).
const LIMBS: [(Limb, Limb); 6] = [
    (Limb::Clavicle, Limb::UpperArm),
    (Limb::UpperArm, Limb::LowerArm),
    (Limb::LowerArm, Limb::Hand),
    (Limb::UpperLeg, Limb::LowerLeg),
    (Limb::LowerLeg, Limb::Foot),
    (Limb::Foot, Limb::Toe),
];

/// Trunk segments whose angles to each other are checked: spine to chest
/// (across the unmapped middle of a spine chain), chest to neck, neck to
/// head.
const TRUNK: [(Bone, Bone); 3] =
    [(Bone::Spine, Bone::Chest), (Bone::Chest, Bone::Neck), (Bone::Neck, Bone::Head)];

/// Largest angles found (degrees): limb bones but the clavicles, the
/// clavicles, the change of a clavicle's angle to the hips-to-head line,
/// the angles between trunk segments.
struct Angles {
    limbs: f64,
    clavicles: f64,
    elevation: f64,
    trunk: f64,
}

/// Checks `out` (the retarget of `src`) frame by frame against `src`, with
/// the reference FK, and returns the largest angles.
fn check_cross(src: &Bvh, out: &Bvh, what: &str) -> Angles {
    let (_, report) = retarget(src, out, &exact()).unwrap();
    let (bs, bt) = (&report.source.bones, &report.target.bones);
    let (up_s, up_t) = (report.source.up, report.target.up);
    let (us, ut) = (up_s.vector(), up_t.vector());
    let frames = sample(src, 200);
    let dir = |w: &[DMat4], a: usize, b: usize| (pos(&w[b]) - pos(&w[a])).normalize();
    let mut angles = Angles { limbs: 0.0, clavicles: 0.0, elevation: 0.0, trunk: 0.0 };
    // The ground of each: its lowest foot over the clip.
    let (mut ground_s, mut ground_t) = (f64::INFINITY, f64::INFINITY);
    let mut lows = Vec::new();
    for &f in &frames {
        let (ws, wt) = (world(src, f), world(out, f));
        let (ls, lt) = (
            lowest_foot(src.skeleton(), bs, &ws, us).unwrap(),
            lowest_foot(out.skeleton(), bt, &wt, ut).unwrap(),
        );
        ground_s = ground_s.min(ls);
        ground_t = ground_t.min(lt);
        lows.push((ls, lt));
        for side in [Side::Left, Side::Right] {
            for (a, b) in LIMBS {
                let ids = (
                    index(bs, Bone::Limb(side, a)),
                    index(bs, Bone::Limb(side, b)),
                    index(bt, Bone::Limb(side, a)),
                    index(bt, Bone::Limb(side, b)),
                );
                if let (Some(sa), Some(sb), Some(ta), Some(tb)) = ids {
                    let (vs, vt) = (to_target(dir(&ws, sa, sb), up_s, up_t), dir(&wt, ta, tb));
                    let d = vs.angle_between(vt).to_degrees();
                    if a != Limb::Clavicle {
                        angles.limbs = angles.limbs.max(d);
                        continue;
                    }
                    // A clavicle turns with the twist of the upper body
                    // about its axis: its angle to the hips-to-head line
                    // is the source's.
                    angles.clavicles = angles.clavicles.max(d);
                    let axis = |b: &[Option<Bone>], w: &[DMat4]| {
                        Some(dir(w, index(b, Bone::Hips)?, index(b, Bone::Head)?))
                    };
                    if let (Some(hs), Some(ht)) = (axis(bs, &ws), axis(bt, &wt)) {
                        let hs = to_target(hs, up_s, up_t);
                        let e = vs.angle_between(hs) - vt.angle_between(ht);
                        angles.elevation = angles.elevation.max(e.abs().to_degrees());
                    }
                }
            }
            // Knees bend forward in both (and elbows in the same plane).
            let knee = |bones: &[Option<Bone>], w: &[DMat4], up: DVec3| {
                let g = |l| index(bones, Bone::Limb(side, l)).map(|i| pos(&w[i]));
                let (hip, knee, ankle) = (g(Limb::UpperLeg)?, g(Limb::LowerLeg)?, g(Limb::Foot)?);
                let left = pos(&w[index(bones, Bone::Limb(Side::Left, Limb::UpperLeg))?])
                    - pos(&w[index(bones, Bone::Limb(Side::Right, Limb::UpperLeg))?]);
                let forward = left.cross(up).normalize();
                let bend = (knee - hip).angle_between(ankle - knee).to_degrees();
                Some((bend, (knee - (hip + ankle) / 2.0).dot(forward)))
            };
            if let (Some((bend_s, fs)), Some((bend_t, ft))) = (knee(bs, &ws, us), knee(bt, &wt, ut))
                && bend_s > 15.0
            {
                assert!(
                    fs.signum() == ft.signum() && (bend_s - bend_t).abs() < 5.0,
                    "{what} frame {f}: {side:?} knee bends {bend_s:.1}° ({fs:+.2}) in the source, {bend_t:.1}° ({ft:+.2}) in the result"
                );
            }
        }
        // The trunk keeps the source's shape: the angles between its
        // segments are the source's (the upper body as a whole is turned
        // so that the hips-to-head direction is the source's, whatever the
        // proportions: `retarget_pairs` judges that direction).
        let segs: Vec<(DVec3, DVec3)> = TRUNK
            .iter()
            .filter_map(|&(from, to)| {
                let (sa, sb) = (index(bs, from)?, index(bs, to)?);
                let (ta, tb) = (index(bt, from)?, index(bt, to)?);
                let (vs, vt) = (pos(&ws[sb]) - pos(&ws[sa]), pos(&wt[tb]) - pos(&wt[ta]));
                (vs.length() > 1e-9 && vt.length() > 1e-9).then_some((vs, vt))
            })
            .collect();
        for (i, a) in segs.iter().enumerate() {
            for b in &segs[i + 1..] {
                let d = a.0.angle_between(b.0) - a.1.angle_between(b.1);
                angles.trunk = angles.trunk.max(d.abs().to_degrees());
            }
        }
    }
    // Feet on the ground where the source's are: the lowest foot joint
    // within 3.5% of the target's height of the target's ground. (The
    // retarget corrects the height only while a source foot is in contact,
    // by at most 1% of the hip height per frame, instead of matching the
    // lowest joint exactly in every frame, which made the hips jump: the
    // lowest joints differ by up to 3.2% here (Bandai Namco onto CMU, frame
    // 16); `retarget_pairs` judges the feet by contacts.)
    let (hs, ht) = (height(src, &frames), height(out, &frames));
    let mut contacts = 0;
    for (k, &(ls, lt)) in lows.iter().enumerate() {
        if ls - ground_s <= 0.02 * hs {
            contacts += 1;
            assert!(
                lt - ground_t <= 0.035 * ht,
                "{what} frame {}: source foot on the ground ({:.2} of {hs:.1}), result foot {:.2} above its ground (height {ht:.1})",
                frames[k],
                ls - ground_s,
                lt - ground_t
            );
        }
    }
    assert!(contacts > 0, "{what}: the source never touches the ground");
    println!(
        "{what}: scale {:.3}, {} pairs, source rest {} ({:.0}°), target rest {} ({:.0}°); largest angles: limbs {:.2}°, clavicles {:.2}° (their angle to the hips-to-head line {:.2}°), trunk {:.2}°; {contacts} contact frames of {}",
        report.scale,
        report.pairs.len(),
        report.source.rest,
        report.source.rest_deviation,
        report.target.rest,
        report.target.rest_deviation,
        angles.limbs,
        angles.clavicles,
        angles.elevation,
        angles.trunk,
        frames.len()
    );
    angles
}

#[test]
fn across_corpus_skeletons() {
    let pairs = [
        ("cmu_01_01_walk_cgspeed_mb_names", "bandai_namco_ds1_kick_6ch_every_joint"),
        ("cmu_01_01_walk_cgspeed_mb_names", "rokoko_jesse_dance_yxz_fingers"),
        ("bandai_namco_ds1_kick_6ch_every_joint", "cmu_01_01_walk_cgspeed_mb_names"),
        ("rokoko_jesse_dance_yxz_fingers", "cmu_01_01_walk_cgspeed_mb_names"),
        ("cmu_01_01_walk_cgspeed_mb_names", "perception_neuron_axis_yxz_fingers_crlf"),
        ("xsens_mvn_style_mpi_1space_yxz_crlf", "bandai_namco_ds1_kick_6ch_every_joint"),
        ("second_life_avatar_walk_poser_per_joint_orders", "rokoko_jesse_dance_yxz_fingers"),
        ("fair_zombie_animated_drawings_xyz_yxz", "cmu_01_01_walk_cgspeed_mb_names"),
        ("cmu_01_01_walk_cgspeed_mb_names", "fair_zombie_animated_drawings_xyz_yxz"),
    ];
    for (a, b) in pairs {
        let (Some(src), Some(tgt)) = (corpus(a), corpus(b)) else { return };
        let (out, _) = retarget(&src, &tgt, &exact()).unwrap();
        assert_eq!(out.skeleton(), tgt.skeleton());
        let what = format!("{a} onto {b}");
        let angles = check_cross(&src, &out, &what);
        assert!(angles.limbs <= 1.0, "{what}: a limb bone is {:.2}° off", angles.limbs);
        // The clavicles turn with the upper body's twist about its axis,
        // which lays the line between the upper arms along the source's
        // (`retarget_pairs`): each keeps its angle to the hips-to-head line
        // (0.17° measured) but not its direction about it (6.6° measured,
        // Bandai Namco's short clavicles onto CMU's long ones).
        assert!(
            angles.elevation <= 0.5,
            "{what}: a clavicle's angle to the hips-to-head line is {:.2}° off the source's",
            angles.elevation
        );
        assert!(angles.clavicles <= 10.0, "{what}: a clavicle is {:.2}° off", angles.clavicles);
        assert!(
            angles.trunk <= 1.0,
            "{what}: the angle between two trunk segments is {:.2}° off",
            angles.trunk
        );
    }
}

#[test]
fn there_and_back_gives_the_source_motion() {
    for via in ["bandai_namco_ds1_kick_6ch_every_joint", "rokoko_jesse_dance_yxz_fingers"] {
        let name = "cmu_01_01_walk_cgspeed_mb_names";
        let (Some(src), Some(mid)) = (corpus(name), corpus(via)) else { return };
        let (there, _) = retarget(&src, &mid, &exact()).unwrap();
        let (back, report) = retarget(&there, &src, &exact()).unwrap();
        assert!(
            (report.scale * 1.0 - 1.0 / retarget(&src, &mid, &exact()).unwrap().1.scale).abs()
                < 1e-9
        );
        let angles = check_cross(&src, &back, &format!("{name} onto {via} and back"));
        assert!(angles.limbs <= 1.0 && angles.trunk <= 1.0);
        // The root comes back where it was: the hips within 2.5% of the
        // height (the two height corrections by contacts, each smoothed, do
        // not undo each other exactly: 1.9% measured through Bandai Namco).
        let frames = sample(&src, 100);
        let h = height(&src, &frames);
        let hips = src.skeleton().find("Hips").unwrap().index();
        for &f in &frames {
            let d = pos(&world(&src, f)[hips]) - pos(&world(&back, f)[hips]);
            assert!(d.length() <= 0.025 * h, "{via} frame {f}: hips {:.3} away", d.length());
        }
    }
}

#[test]
fn a_map_file_and_other_references() {
    let Some(src) = corpus("cmu_01_01_walk_cgspeed_mb_names") else { return };
    let Some(tgt) = corpus("bandai_namco_ds1_kick_6ch_every_joint") else { return };
    // The automatic map written out as a file gives the same result.
    let auto = JointMap::auto(src.skeleton(), tgt.skeleton());
    let text: String = auto
        .pairs()
        .iter()
        .map(|p| {
            format!(
                "{} = {}  # {:?}\n",
                src.skeleton().joints()[p.source].name(),
                tgt.skeleton().joints()[p.target].name(),
                p.reason
            )
        })
        .collect();
    let map = JointMap::parse(&text, src.skeleton(), tgt.skeleton()).unwrap();
    assert!(map.pairs().iter().all(|p| p.reason == Reason::MapFile));
    let (a, _) = retarget(&src, &tgt, &exact()).unwrap();
    let (b, _) = retarget(&src, &tgt, &Options { map: Some(map), ..exact() }).unwrap();
    assert_eq!(a.motion().values(), b.motion().values());
    // Errors name the line.
    let e = JointMap::parse("\n\nHips = Nope\n", src.skeleton(), tgt.skeleton()).unwrap_err();
    assert!(e.to_string().contains("line 3"), "{e}");
    let e = JointMap::parse("Hips Hips\n", src.skeleton(), tgt.skeleton()).unwrap_err();
    assert!(e.to_string().contains("line 1"), "{e}");
    let e =
        JointMap::parse("Hips = Hips\nHips = Spine\n", src.skeleton(), tgt.skeleton()).unwrap_err();
    assert!(e.to_string().contains("twice"), "{e}");
    // A frame as the reference of both, onto the same skeleton: the identity.
    let opts = Options { reference: Reference::Frame(10), ..exact() };
    let (same, report) = retarget(&src, &src, &opts).unwrap();
    assert_eq!(report.target.reference, Reference::Frame(10));
    let h = height(&src, &[0, 100]);
    for f in [0, 50, 100] {
        for (x, y) in world(&src, f).iter().zip(&world(&same, f)) {
            let d = (pos(x) - pos(y)).length();
            assert!(d <= 1e-9 * h, "frame {f}: {d:e} of {h}");
        }
    }
    let bad = Options { reference: Reference::Frame(1_000_000), ..exact() };
    assert!(retarget(&src, &tgt, &bad).is_err());
    // Rest-pose kinds: Perception Neuron stands in a T-pose, Bandai Namco's
    // rest pose does not stand.
    let Some(pn) = corpus("perception_neuron_axis_yxz_fingers_crlf") else { return };
    let (_, r) = retarget(&src, &pn, &exact()).unwrap();
    assert_eq!(r.target.rest, RestKind::TPose);
    let (_, r) = retarget(&src, &tgt, &exact()).unwrap();
    assert_eq!(r.target.rest, RestKind::Other);
}

#[test]
fn nothing_to_map_is_an_error() {
    let a = Bvh::parse("HIERARCHY ROOT a { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 1 0 } } MOTION Frames: 1 Frame Time: 0.1 0 0 0").unwrap();
    let b = Bvh::parse("HIERARCHY ROOT b { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 1 0 } } MOTION Frames: 1 Frame Time: 0.1 0 0 0").unwrap();
    // Both roots are taken as hips, so they pair; an empty map file pairs
    // nothing.
    assert!(retarget(&a, &b, &exact()).is_ok());
    let empty = JointMap::parse("# nothing\n", a.skeleton(), b.skeleton()).unwrap();
    let e = retarget(&a, &b, &Options { map: Some(empty), ..exact() }).unwrap_err();
    assert!(e.to_string().contains("no joint"), "{e}");
}

/// A target of very many channels: the output, held in memory whole, is
/// refused before it is allocated when it passes 4 GiB and its source
/// (a 200,000-channel target used to abort at 4.4 GB).
#[test]
fn an_output_too_large_to_hold_is_refused_before_it_is_allocated() {
    let humanoid = |extra: &str| {
        format!(
            "HIERARCHY ROOT Hips {{ OFFSET 0 40 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
            JOINT LeftUpLeg {{ OFFSET 5 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
              JOINT LeftLeg {{ OFFSET 0 -20 0 CHANNELS 3 Zrotation Xrotation Yrotation
                JOINT LeftFoot {{ OFFSET 0 -20 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site {{ OFFSET 0 0 5 }} }} }} }}
            JOINT RightUpLeg {{ OFFSET -5 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
              JOINT RightLeg {{ OFFSET 0 -20 0 CHANNELS 3 Zrotation Xrotation Yrotation
                JOINT RightFoot {{ OFFSET 0 -20 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site {{ OFFSET 0 0 5 }} }} }} }}
            JOINT Spine {{ OFFSET 0 10 0 CHANNELS 3 Zrotation Xrotation Yrotation
              JOINT Head {{ OFFSET 0 30 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site {{ OFFSET 0 10 0 }} }} {extra} }} }}
            MOTION Frames: 0 Frame Time: 0.1"
        )
    };
    let (skel, _) = Bvh::parse(humanoid("")).unwrap().into_parts();
    let nc = skel.n_channels();
    let frames = 3000;
    let motion = bvhkit::Motion::new(0.1, nc, vec![0.0; frames * nc]).unwrap();
    let source = Bvh::new(skel, motion).unwrap();
    // 33,330 more joints of six channels: about 200,000 channels.
    let extra: String = (0..33_330)
        .map(|i| {
            format!(
                "JOINT Prop{i} {{ OFFSET 0 1 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation End Site {{ OFFSET 0 1 0 }} }}\n"
            )
        })
        .collect();
    let target = Bvh::parse(humanoid(&extra)).unwrap();
    let tc = target.skeleton().n_channels();
    assert!(tc > 200_000, "{tc}");
    let e = retarget(&source, &target, &exact()).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("retargeting {frames} frames onto a skeleton of {tc} channels")),
        "{e}"
    );
    assert!(e.contains("a retarget's output has at most 536870912 values (4 GiB)"), "{e}");
    // A few frames of it are made.
    let short = bvhkit::edit::frames::range(&source, 0..10).unwrap();
    let (out, _) = retarget(&short, &target, &exact()).unwrap();
    assert_eq!(out.motion().values().len(), 10 * tc);
}

/// `Options::lock_feet`: the CMU 12_01 walk onto Bandai Namco with the feet
/// planted over the source's contacts. Inside every locked span the
/// target's contact point stays on its pin (measured with the plain 4x4
/// FK), where without the lock it slides; only the legs' rotation channels
/// and the root's position channels differ from the retarget without the
/// lock (every other channel bit for bit: arms, spine and head keep the
/// exact transfer); the skating ratio does not rise, and with the swing
/// feet lifted to the source's clearance it is at most the source's plus
/// 0.02.
#[test]
fn locking_the_feet_plants_them_over_the_source_contacts() {
    let (Some(src), Some(tgt)) =
        (corpus("cmu_12_01_walk_cgspeed_pybvh"), corpus("bandai_namco_ds1_kick_6ch_every_joint"))
    else {
        return;
    };
    let n = src.motion().n_frames().min(240);
    let src = bvhkit::edit::frames::range(&src, 0..n).unwrap();
    let (plain, r0) = retarget(&src, &tgt, &exact()).unwrap();
    assert!(r0.locked.is_none());
    // The default locks.
    let lock = Options::default();
    assert!(lock.lock_feet);
    let (locked, report) = retarget(&src, &tgt, &lock).unwrap();
    let done = report.locked.expect("locked");
    assert!(done.spans.len() >= 3, "{:?}", done.spans);
    let skel = locked.skeleton();
    // The channels the lock may change.
    let parent = |j: usize| skel.joints()[j].parent().unwrap().index();
    let mut may = vec![false; skel.n_channels()];
    let mut mark = |j: usize, position: bool| {
        let jt = &skel.joints()[j];
        for (c, ch) in jt.channel_range().zip(jt.channels()) {
            may[c] |= ch.is_position() == position;
        }
    };
    for s in &done.spans {
        for j in [s.foot, parent(s.foot), parent(parent(s.foot))] {
            mark(j, false);
        }
    }
    mark(0, true);
    let nc = skel.n_channels();
    let (a, b) = (plain.motion().values(), locked.motion().values());
    let mut changed = 0;
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x.to_bits() != y.to_bits() {
            assert!(may[i % nc], "channel {} of frame {} changed", i % nc, i / nc);
            changed += 1;
        }
    }
    assert!(changed > 0);
    // Pinned: the contact point (the toe joints, both have one) stands on
    // its pin across the up axis at the pin's frame, and inside its span it
    // stands still where the leg reaches it, sliding only by what the leg
    // asks, spread over the span: it travels at most a third of what it
    // travels without the lock and less than the source's toe (the CMU
    // walk's feet slide inside its contacts; turned into the target's axes
    // and scaled by the ratio of hip heights), and no step is faster than
    // half GMD's skating speed (0.25 m/s) but at a span's edges, where it
    // blends into its own speed: no faster than its unlocked step there.
    // The plain FK of both files.
    let size = height(&plain, &sample(&plain, 50));
    let up = report.target.up.vector();
    let across = |v: DVec3| v - up * v.dot(up);
    let c = bvhkit::edit::axes::Axes::with_up(report.source.up)
        .conversion(bvhkit::edit::axes::Axes::with_up(report.target.up));
    let lint = |b: &Bvh| bvhkit::quality::lint(b, &bvhkit::quality::Options::default());
    let (qs, q1) = (lint(&src), lint(&locked));
    let most = 0.25 / q1.metres_per_unit / locked.motion().fps();
    let (mut slid, mut sole) = (0.0f64, 0.0f64);
    for s in &done.spans {
        let side = match bvhkit::retarget::names::classify(skel)[s.foot] {
            Some(Bone::Limb(Side::Left, _)) => "left",
            _ => "right",
        };
        let sf = qs.feet.iter().find(|f| f.name == side).unwrap();
        let of = q1.feet.iter().position(|f| f.points[0] == s.foot).unwrap();
        let toe = |f: usize| pos(&world(&src, f)[sf.skate_point]);
        let at = |b: &Bvh, f: usize| across(pos(&world(b, f)[s.point]));
        let off = (at(&locked, s.pin_frame) - across(s.pin)).length();
        assert!(off < 1e-6 * size, "span {:?}: {off} off its pin", s.frames);
        let (mut locked_t, mut source_t, mut plain_t) = (0.0, 0.0, 0.0);
        for f in s.frames.0 + 1..=s.frames.1 {
            let step = (at(&locked, f) - at(&locked, f - 1)).length();
            let own = (at(&plain, f) - at(&plain, f - 1)).length();
            let ok = step <= most || step <= own + 1e-9 * size;
            assert!(ok, "span {:?} frame {f}: a step of {step} (unlocked {own})", s.frames);
            locked_t += step;
            source_t += across(c * (toe(f) - toe(f - 1)) * report.scale).length();
            plain_t += own;
        }
        println!(
            "span {:?}: the pin travels {locked_t:.2}, the source's toe scaled {source_t:.2}, unlocked {plain_t:.2}",
            s.frames
        );
        assert!(locked_t <= plain_t / 3.0 && locked_t < source_t, "span {:?}", s.frames);
        slid = slid.max(plain_t);
        for f in s.frames.0..=s.frames.1 {
            // The sole on the ground: lint's foot height within issue #27's
            // 2% of the figure's size. Lint measures each point's planted
            // height (its 5th percentile) on the output, the lock on its
            // input, where the free feet sank or rose elsewhere: below
            // 0.1 mm in most frames, 2-3 mm in five, 14 mm in one (the toe
            // rolling off at the end of the long contact 23-126).
            let h = q1.series.foot_height[of][f];
            sole = sole.max(h.abs());
            assert!(
                h.abs() < 0.02 * q1.size,
                "span {:?} frame {f}: the sole {h:.4} m off (size {:.3} m; {:?})",
                s.frames,
                q1.size,
                done.notes
            );
        }
    }
    // Without the lock the same points slid (more than 1% of the size).
    assert!(slid > 0.01 * size, "{slid}");
    let q0 = lint(&plain);
    let (s0, s1) = (q0.metrics.skate_ratio.unwrap(), q1.metrics.skate_ratio.unwrap());
    println!(
        "skate ratio {s0:.3} without the lock, {s1:.3} with; {} span(s), soles at most {:.1} mm off",
        done.spans.len(),
        sole * 1e3
    );
    assert!(s1 <= s0, "{s0} -> {s1}");
    // The swing feet were lifted (Bandai Namco's toe passes lower than
    // CMU's), and the locked retarget skates no more than its source plus
    // issue #27's 0.02 (0.454 against the source's 0.336 over 120 frames
    // before the lift).
    assert!(done.notes.iter().any(|n| n.starts_with("swing feet lifted")), "{:?}", done.notes);
    let source = lint(&src).metrics.skate_ratio.unwrap();
    assert!(s1 <= source + 0.02, "source {source:.3}, locked {s1:.3}");
}

/// The human rigs of the corpus other than the CMU 12_01 walk's
/// (`retarget_pairs::HUMANS` after its first), by corpus name.
fn other_humans() -> impl Iterator<Item = &'static str> {
    crate::retarget_pairs::HUMANS[1..].iter().map(|f| f.trim_end_matches(".bvh"))
}

/// `bvh lint`'s one-frame pops of `b` (a joint's step four times its
/// neighbours'), as their messages.
fn pops(b: &Bvh) -> Vec<String> {
    let q = bvhkit::quality::lint(b, &bvhkit::quality::Options::default());
    q.findings
        .iter()
        .filter(|f| f.kind == bvhkit::quality::Kind::Pop)
        .map(|f| f.message.clone())
        .collect()
}

/// The default retarget (the feet locked) of the whole CMU 12_01 walk
/// onto every human rig of the corpus makes no one-frame pop (`bvh lint`'s
/// `pop`: a joint's step four times its neighbours') where the source has
/// none: before the lock's lift faded towards its spans and the swing lift
/// limited the knee's extra bend, it left 1-5 knee or toe pops of 4-14 cm
/// per rig (issue #27).
#[test]
fn the_default_lock_adds_no_pop_to_the_cmu_walk() {
    let Some(src) = corpus("cmu_12_01_walk_cgspeed_pybvh") else { return };
    let own = pops(&src).len();
    for name in other_humans() {
        let Some(tgt) = corpus(name) else { return };
        let (out, report) = retarget(&src, &tgt, &Options::default()).unwrap();
        let done = report.locked.expect("the default locks the feet");
        assert!(done.spans.len() >= 6, "{name}: {:?}", done.spans);
        let n = pops(&out).len();
        assert!(n <= own, "{name}: {n} pop(s), the source {own}");
    }
}

/// The default lock adds no pop where it used to (issue #27): the whole CMU
/// 01_01 walk onto ten human rigs (knees eased only under `clean`'s own
/// contacts; a leg solved straight, its knee moved 4 cm by a 3.6 mm bump
/// of the hips), and the pairs test's first 120 frames of Rokoko's dance onto
/// Bandai Namco and Kinect v1 (a toe-off turned the foot about its pinned
/// toe by 40° in a frame at the end of a span, the ankle 7 cm). Each asserts the source has none, the output none either.
#[test]
fn the_default_lock_adds_no_pop_to_cmu_01_01_nor_rokoko_s_clip() {
    let Some(walk) = corpus("cmu_01_01_walk_cgspeed_mb_names") else { return };
    let Some(dance) = corpus("rokoko_jesse_dance_yxz_fingers") else { return };
    let dance = bvhkit::edit::frames::range(&dance, 0..120).unwrap();
    let humans: Vec<&str> = other_humans().collect();
    let cases: &[(&Bvh, &[&str])] = &[
        (&walk, &humans),
        (
            &dance,
            &[
                "bandai_namco_ds1_kick_6ch_every_joint",
                "kinect_v1_custom_writer_nonzero_root_offset",
            ],
        ),
    ];
    for (src, targets) in cases {
        assert_eq!(pops(src), Vec::<String>::new());
        for name in *targets {
            let Some(tgt) = corpus(name) else { return };
            let (out, report) = retarget(src, &tgt, &Options::default()).unwrap();
            assert!(!report.locked.expect("the default locks the feet").spans.is_empty(), "{name}");
            assert_eq!(pops(&out), Vec::<String>::new(), "{name}");
        }
    }
}

/// `bvh lint`'s acceleration spikes of `b` (findings: a joint's
/// acceleration above its own median plus 40 MADs, neighbouring frames
/// grouped).
fn spikes(b: &Bvh) -> usize {
    let q = bvhkit::quality::lint(b, &bvhkit::quality::Options::default());
    q.findings.iter().filter(|f| f.kind == bvhkit::quality::Kind::Spike).count()
}

/// The default lock adds no acceleration spikes (issue #27): the whole
/// CMU 01_01 walk onto every other human rig of the corpus has no more of
/// `bvh lint`'s spikes locked than the more of the source's and the
/// unlocked result's (no margin: the counts are exact and deterministic).
/// Onto Bandai Namco the lock made 41 against the source's 31 and the
/// unlocked 21, nearly all on the knees (200-650 m/s² where the unlocked
/// knee has 20-150): a pinned foot under hips that shake by 2-3 mm from
/// frame to frame shook the nearly straight knee three times as much, and
/// the swing lift's corners stepped the foot's velocity; the lock now
/// smooths each target's distance from the hip and the lift
/// (`clean::footlock`'s `smooth_reach`, `retarget::swing`).
#[test]
fn the_default_lock_adds_no_acceleration_spike_to_cmu_01_01() {
    let Some(walk) = corpus("cmu_01_01_walk_cgspeed_mb_names") else { return };
    let own = spikes(&walk);
    let mut bad = Vec::new();
    for name in other_humans() {
        let Some(tgt) = corpus(name) else { return };
        let (locked, _) = retarget(&walk, &tgt, &Options::default()).unwrap();
        let (free, _) = retarget(&walk, &tgt, &exact()).unwrap();
        let (l, u) = (spikes(&locked), spikes(&free));
        println!("{name}: {l} spike(s) locked, {u} unlocked, the source {own}");
        if l > own.max(u) {
            bad.push(format!("{name}: {l} locked, {u} unlocked, the source {own}"));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// `bvh lint`'s pops of `b` as (frames, the joint they start from).
fn pop_places(b: &Bvh) -> Vec<((usize, usize), usize)> {
    let q = bvhkit::quality::lint(b, &bvhkit::quality::Options::default());
    q.findings
        .iter()
        .filter(|f| f.kind == bvhkit::quality::Kind::Pop)
        .map(|f| (f.frames, f.joints.iter().copied().min().unwrap_or(0)))
        .collect()
}

/// The default lock adds no pop to the whole Kinect v1 take (1860 frames at
/// 30 fps, each pose held for 20 frames, the legs folded: 173° of knee
/// bend) onto every other human rig (issue #27): no pop of the locked
/// result that the unlocked one lacks (some rigs' arms and trunk pop
/// unlocked where the take's pose steps: not the lock's). It made knee
/// pops of 2-9 cm at frames 1640 and 1660 onto eight rigs where the
/// unlocked knee steps 1.3 cm. A folded knee turns by centimetres for a
/// millimetre's change of the hip-to-ankle distance: with the foot
/// pinned, the hips' 0.4 cm step changed it by 0.4 cm (the knee 4.3 cm),
/// and the swing lift of the other, folded leg did the same; the lock's
/// target on a folded leg now follows the captured distance's changes and
/// the swing lift fades out on it.
#[test]
fn the_default_lock_adds_no_pop_to_the_held_kinect_take() {
    let Some(take) = corpus("kinect_v1_custom_writer_nonzero_root_offset") else { return };
    assert_eq!(pops(&take), Vec::<String>::new());
    let mut bad = Vec::new();
    for name in other_humans().filter(|n| !n.starts_with("kinect_v1")) {
        let Some(tgt) = corpus(name) else { return };
        let (out, report) = retarget(&take, &tgt, &Options::default()).unwrap();
        assert!(!report.locked.expect("the default locks the feet").spans.is_empty(), "{name}");
        let (free, _) = retarget(&take, &tgt, &exact()).unwrap();
        let own = pop_places(&free);
        let names = out.skeleton().display_names();
        let new: Vec<String> = pop_places(&out)
            .into_iter()
            .filter(|p| !own.contains(p))
            .map(|(frames, j)| format!("{frames:?} {}", names[j]))
            .collect();
        if !new.is_empty() {
            bad.push(format!("{name}: {new:?}"));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// Pops of the pairs test's retargets the lock leaves for now, each with
/// why: (`source>target` by the pairs table's short names, frame). Empty:
/// CMU 12_01 onto Kinect v1 at frame 5 (the walk's first frame a glitch,
/// the lock lifting the right foot up to 24 cm in frames 0-3 and dropping
/// it 14-16 cm a frame) left when the lock stopped reaching across the
/// source's jump at frame 1 (`the_default_lock_does_not_reach_across_the_source_s_jump`).
const POPS_LEFT: [(&str, usize, &str); 0] = [];

/// The default lock adds no pop to the pairs test's retargets (issue #27):
/// over every ordered pair of `retarget_pairs::HUMANS`, each source cut to
/// its first 120 frames, no `bvh lint` pop of the locked result at frames
/// where the unlocked one (the exact transfer) has none, but the listed
/// ones (`POPS_LEFT`, which must still pop: the list only shrinks). Bandai
/// Namco's kick onto CMU 12_01 popped at frame 44 (the toe's End Site 4.1
/// cm against 2.9 unlocked): two spans three frames apart whose still
/// pins differ, the change of the lock's correction in the gap where the
/// source's own slide peaks; `retarget::swing::bridge` spreads it.
#[test]
fn the_default_lock_adds_no_pop_to_any_pair_of_the_pairs_test() {
    let mut clips = Vec::new();
    for name in crate::retarget_pairs::HUMANS {
        let Some(bvh) = corpus(name.trim_end_matches(".bvh")) else { return };
        let n = bvh.motion().n_frames().min(120);
        let cut = bvhkit::edit::frames::range(&bvh, 0..n).unwrap();
        clips.push((name.split('_').take(2).collect::<Vec<_>>().join("_"), bvh, cut));
    }
    let (mut bad, mut left) = (Vec::new(), Vec::new());
    for (sn, _, src) in &clips {
        for (tn, tgt, _) in &clips {
            if sn == tn {
                continue;
            }
            let pair = format!("{sn}>{tn}");
            let (out, _) = retarget(src, tgt, &Options::default()).unwrap();
            let (free, _) = retarget(src, tgt, &exact()).unwrap();
            let own: Vec<(usize, usize)> = pop_places(&free).into_iter().map(|p| p.0).collect();
            let names = out.skeleton().display_names();
            for ((a, b), j) in pop_places(&out) {
                if own.contains(&(a, b)) {
                    continue;
                }
                if POPS_LEFT.iter().any(|x| x.0 == pair && x.1 == a) {
                    left.push((pair.clone(), a));
                    continue;
                }
                bad.push(format!("{pair}: frames {a}..={b} at {}", names[j]));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
    for (pair, frame, _) in POPS_LEFT {
        assert!(left.contains(&(pair.to_string(), frame)), "{pair} at {frame} pops no more");
    }
}

/// Per side, the directions of a figure's leg bones in one frame (hip to
/// knee, knee to ankle, ankle to toe, by the name families), from the
/// plain 4x4-matrix reference FK.
fn leg_bones(bvh: &Bvh, frame: usize) -> Vec<(String, DVec3)> {
    let w = world(bvh, frame);
    let bones = bvhkit::retarget::names::classify(bvh.skeleton());
    let names = bvh.skeleton().display_names();
    let mut out = Vec::new();
    for side in [Side::Left, Side::Right] {
        let chain: Vec<usize> = [Limb::UpperLeg, Limb::LowerLeg, Limb::Foot, Limb::Toe]
            .iter()
            .filter_map(|l| bones.iter().position(|b| *b == Some(Bone::Limb(side, *l))))
            .collect();
        for pair in chain.windows(2) {
            let d = pos(&w[pair[1]]) - pos(&w[pair[0]]);
            out.push((format!("{}->{}", names[pair[0]], names[pair[1]]), d.normalize()));
        }
    }
    out
}

/// CMU 12_01 stands in a T-pose in frame 0 and is mid-walk from frame 1
/// (the source's own jump, `bvh lint`'s pop rule judged at the clip's
/// edge): the default lock leaves frame 0's legs as the unlocked retarget
/// has them (every leg bone within 0.5°) onto every other human rig, and
/// still locks the walk after it. Before, the contact starting at frame 1
/// ramped back across the jump and bent a leg of the T-pose towards the
/// walk's pin (onto Bandai Namco the knees 22° and 75°, a foot 17 cm up).
#[test]
fn the_default_lock_does_not_reach_across_the_source_s_jump() {
    let Some(src) = corpus("cmu_12_01_walk_cgspeed_pybvh") else { return };
    let mut bad = Vec::new();
    for name in other_humans() {
        let Some(tgt) = corpus(name) else { return };
        let (locked, report) = retarget(&src, &tgt, &Options::default()).unwrap();
        let done = report.locked.expect("the default locks the feet");
        assert!(done.spans.len() >= 6, "{name}: {:?}", done.spans);
        assert!(done.spans.iter().all(|s| s.frames.0 >= 1), "{name}: {:?}", done.spans);
        // The note says plainly that the clip is locked in pieces either
        // side of the jump.
        let note = "the source's hips or legs jump at frame(s) 1: the clip is locked in separate \
                    pieces either side of that frame, so no foot is held across it";
        assert!(done.notes.iter().any(|n| n == note), "{name}: {:?}", done.notes);
        let (free, _) = retarget(&src, &tgt, &exact()).unwrap();
        let (l, f) = (leg_bones(&locked, 0), leg_bones(&free, 0));
        assert!(l.len() >= 4, "{name}: {l:?}");
        for ((bone, a), (_, b)) in l.iter().zip(&f) {
            let angle = a.angle_between(*b).to_degrees();
            println!("{name}: {bone} {angle:.3}°");
            if angle > 0.5 {
                bad.push(format!("{name}: {bone} {angle:.1}° off the unlocked frame 0"));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// A figure of one root and single-joint limbs, each an End Site 5 units
/// on, in three frames of the rest pose.
fn figure(root: &str, joints: &[(&str, &str)]) -> Bvh {
    let mut t = format!(
        "HIERARCHY\nROOT {root}\n{{\n\tOFFSET 0 90 0\n\tCHANNELS 6 Xposition Yposition \
         Zposition Zrotation Xrotation Yrotation\n"
    );
    for (name, offset) in joints {
        t += &format!(
            "\tJOINT {name}\n\t{{\n\t\tOFFSET {offset}\n\t\tCHANNELS 3 Zrotation Xrotation \
             Yrotation\n\t\tEnd Site\n\t\t{{\n\t\t\tOFFSET 0 0 5\n\t\t}}\n\t}}\n"
        );
    }
    t += "}\nMOTION\nFrames: 3\nFrame Time: 0.04\n";
    t += &format!("0 90 0 0 0 0{}\n", " 0 0 0".repeat(joints.len())).repeat(3);
    Bvh::parse(&t).unwrap()
}

/// The report says what the map leaves out (`Report::notes`, which `bvh
/// retarget` prints as `bvh: note:` lines): a hand-only rig onto a body
/// (its root alone mapped) keeps the body's limbs in the reference pose, a
/// body onto the hand drops its limbs' motion, and a figure on all fours
/// onto one standing, either way round, has its front legs mapped as arms;
/// like onto like says nothing. With an explicit map the same rules hold.
#[test]
fn the_report_notes_what_the_map_leaves_out() {
    let body = figure(
        "Hips",
        &[
            ("Head", "0 60 0"),
            ("LeftFoot", "10 -85 0"),
            ("RightFoot", "-10 -85 0"),
            ("LeftHand", "40 40 0"),
            ("RightHand", "-40 40 0"),
        ],
    );
    let quad = figure(
        "Hips",
        &[
            ("Head", "0 30 60"),
            ("LeftFoot", "10 -85 -40"),
            ("RightFoot", "-10 -85 -40"),
            ("LeftHand", "10 -85 40"),
            ("RightHand", "-10 -85 40"),
        ],
    );
    let hand = figure("Wrist", &[("Index1", "0 0 5"), ("Thumb1", "3 0 2")]);
    let notes = |a: &Bvh, b: &Bvh, opts: &Options| retarget(a, b, opts).unwrap().1.notes;
    let all = "left leg, right leg, left arm or right arm";
    assert_eq!(
        notes(&hand, &body, &exact()),
        [format!(
            "no {all} found in the source to drive the target's: kept in the reference pose \
             (the map covers 1 of the target's 6 joints; --map FILE names more)"
        )]
    );
    assert_eq!(
        notes(&body, &hand, &exact()),
        [format!("no {all} found in the target: the source's motion there is dropped")]
    );
    let fours = "hands stand as low as its feet in its first frame (a quadruped?): its front \
                 legs are mapped as arms, its hind legs as legs";
    assert_eq!(notes(&quad, &body, &exact()), [format!("the source's {fours}")]);
    assert_eq!(notes(&body, &quad, &exact()), [format!("the target's {fours}")]);
    // Names with runs of spaces (printed folded to one) are reached all
    // the same.
    let spaced = figure(
        "Hips",
        &[
            ("Head", "0 60 0"),
            ("Left  Foot", "10 -85 0"),
            ("Right  Foot", "-10 -85 0"),
            ("Left  Hand", "40 40 0"),
            ("Right  Hand", "-40 40 0"),
        ],
    );
    for (a, b) in [(&body, &body), (&quad, &quad), (&spaced, &spaced), (&body, &spaced)] {
        assert_eq!(notes(a, b, &exact()), Vec::<String>::new());
    }
    // A map of the hips and the left arm alone: the legs and the right arm
    // kept, two of six joints covered; the lock does not change the notes.
    let map =
        JointMap::parse("Hips = Hips\nLeftHand = LeftHand\n", body.skeleton(), body.skeleton())
            .unwrap();
    let opts = Options { map: Some(map), ..Options::default() };
    assert_eq!(
        notes(&body, &body, &opts),
        ["no left leg, right leg or right arm found in the source to drive the target's: kept \
          in the reference pose (the map covers 2 of the target's 6 joints; --map FILE names \
          more)"]
    );
}

/// On the corpus: the elephant onto a person is noted as a quadruped, the
/// hand-only rig onto the CMU walk as leaving the body's limbs in the
/// reference pose; the CMU walk onto every human rig of the corpus says
/// nothing.
#[test]
fn the_report_notes_a_quadruped_and_a_hand_onto_a_body_and_nothing_between_humans() {
    let Some(cmu) = corpus("cmu_12_01_walk_cgspeed_pybvh") else { return };
    let elephant = corpus("truebones_elephant_idle_6ch_every_joint").unwrap();
    let hand = corpus("hand_only_skeleton_lhand_crlf").unwrap();
    let (_, r) = retarget(&elephant, &cmu, &exact()).unwrap();
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    assert!(r.notes[0].starts_with("the source's hands stand as low as its feet"), "{:?}", r.notes);
    let (_, r) = retarget(&hand, &cmu, &exact()).unwrap();
    assert_eq!(r.pairs.len(), 1);
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    assert!(
        r.notes[0].starts_with(
            "no left leg, right leg, left arm or right arm found in the source to drive the \
             target's: kept in the reference pose (the map covers 1 of the target's 31 joints"
        ),
        "{:?}",
        r.notes
    );
    for name in other_humans() {
        let tgt = corpus(name).unwrap();
        let (_, r) = retarget(&cmu, &tgt, &exact()).unwrap();
        assert!(r.notes.is_empty(), "{name}: {:?}", r.notes);
    }
}
