//! Retargets over every ordered pair of human skeletons of the corpus,
//! judged by `bvhkit::quality` and by the body's own lines (issue #27's
//! proof): the hip and shoulder lines (left to right) within 5° of the
//! source's in every frame, hips to head within 5° (10° onto a single-spine
//! target), no joint farther than the figure's size from the hips, no
//! vertical pop of the hips larger than the source's own (scaled) plus 1% of
//! the height, the lowest foot within 2% of the height of its ground (or of
//! anywhere between its ground and the source's lowest foot, scaled, where
//! that is below the source's ground) wherever a source foot is in contact
//! (`feet_off`), the skating ratio no worse than the source's plus 0.02,
//! and the output's unit guess the target's.
//!
//! Both clips are measured against the ground the retarget places the
//! feet by (`judged`). The retarget judged plants the feet over the
//! source's contacts (`Options::lock_feet`, the `LOOKS` options);
//! `retarget.rs` tests the default, exact transfer of every limb. Sources
//! are cut to their first 120 frames (debug builds); the failures of every
//! pair are gathered and printed as one table.
use bvhkit::edit::axes::Axes;
use bvhkit::edit::{JointChannels, frames};
use bvhkit::glam::DVec3;
use bvhkit::quality::{self, Report};
use bvhkit::retarget::names::{Bone, Limb, Side, classify};
use bvhkit::retarget::{Options, retarget};
use bvhkit::units::UnitGuess;
use bvhkit::{Bvh, Kinematics, PositionChannels, ReadOptions};

/// Human skeletons of a dozen tools (each with its own naming, rest pose,
/// unit and up axis): CMU (cgspeed), Bandai Namco, Rokoko, Perception
/// Neuron, Second Life, Xsens style, Daz (CMU on Daz names), Kinect v1 and
/// MediaPipe (single spine), PyMO, MakeHuman (one frame, six channels on
/// every joint).
pub(crate) const HUMANS: [&str; 11] = [
    "cmu_12_01_walk_cgspeed_pybvh.bvh",
    "bandai_namco_ds1_kick_6ch_every_joint.bvh",
    "rokoko_jesse_dance_yxz_fingers.bvh",
    "perception_neuron_axis_yxz_fingers_crlf.bvh",
    "second_life_avatar_walk_poser_per_joint_orders.bvh",
    "xsens_mvn_style_mpi_1space_yxz_crlf.bvh",
    "cmu_02_03_daz_names_165_joints_face_hands.bvh",
    "kinect_v1_custom_writer_nonzero_root_offset.bvh",
    "mediapipe_to_bvh_dance_zxy.bvh",
    "pymo_demo_av_8walk_meredith.bvh",
    "makehuman_163_joints_6ch_every_joint_deep.bvh",
];

/// The retarget judged: the feet planted over the source's contacts
/// (`lock_feet`; the default leaves the legs exact instead).
const LOOKS: Options = Options {
    map: None,
    reference: bvhkit::retarget::Reference::TPose,
    source_reference: None,
    source_up: None,
    target_up: None,
    mode: PositionChannels::Replace,
    joint_translations: false,
    lock_feet: true,
};

/// Frames of each source.
const FRAMES: usize = 120;

fn clip(name: &str) -> Option<Bvh> {
    let path = bvhkit_testdata::corpus_file_or_skip("retarget pairs", name)?;
    Some(ReadOptions::new().lenient(true).read_path(&path).unwrap().0)
}

/// World positions of every frame, frame-major.
fn positions(bvh: &Bvh) -> Vec<DVec3> {
    Kinematics::new(bvh.skeleton(), PositionChannels::Replace).positions_all(bvh.motion())
}

/// The joints of the lines measured: (left, right) upper legs, (left,
/// right) upper arms, hips, head.
struct Body {
    legs: Option<(usize, usize)>,
    arms: Option<(usize, usize)>,
    hips: usize,
    head: Option<usize>,
    spines: usize,
    /// The trunk and neck: the joints from the hips to the head.
    path: Vec<usize>,
}

fn body(bvh: &Bvh) -> Body {
    let bones = classify(bvh.skeleton());
    let find = |b| bones.iter().position(|x| *x == Some(b));
    let pair = |l| find(Bone::Limb(Side::Left, l)).zip(find(Bone::Limb(Side::Right, l)));
    // Joints strictly between the hips and the neck.
    let hips = quality::hips_of(bvh).index();
    let neck = find(Bone::Neck);
    let mut spines = 0;
    if let Some(n) = neck {
        let mut j = bvh.skeleton().joints()[n].parent();
        while let Some(p) = j {
            if p.index() == hips {
                break;
            }
            spines += 1;
            j = bvh.skeleton().joints()[p.index()].parent();
        }
    }
    let head = find(Bone::Head);
    let mut path = Vec::new();
    let mut j = head;
    while let Some(x) = j {
        path.push(x);
        if x == hips {
            break;
        }
        j = bvh.skeleton().joints()[x].parent().map(|p| p.index());
    }
    if path.last() != Some(&hips) {
        path.clear();
    }
    path.reverse();
    Body {
        path,
        legs: pair(Limb::UpperLeg),
        arms: pair(Limb::UpperArm),
        hips,
        head: find(Bone::Head),
        spines,
    }
}

/// Largest angle (degrees) over frames between the source's vector `a→b`
/// (turned into the target's axes) and the output's.
fn worst_angle(
    (ps, ns): (&[DVec3], usize),
    (pt, nt): (&[DVec3], usize),
    (sa, sb): (usize, usize),
    (ta, tb): (usize, usize),
    c: bvhkit::glam::DMat3,
) -> f64 {
    let n = ps.len() / ns;
    (0..n)
        .map(|f| {
            let vs = c * (ps[f * ns + sb] - ps[f * ns + sa]);
            let vt = pt[f * nt + tb] - pt[f * nt + ta];
            vs.angle_between(vt).to_degrees()
        })
        .fold(0.0, f64::max)
}

/// The bones of the trunk and neck in one frame (`p`: its positions), from
/// the hips to the head, each with the joint it starts at; a joint at its
/// parent's place on the path (CMU's neck at its chest) adds no bone.
fn trunk_bones(p: &[DVec3], path: &[usize]) -> Vec<(usize, DVec3)> {
    let total: f64 = path.windows(2).map(|w| (p[w[1]] - p[w[0]]).length()).sum();
    let mut bones = Vec::new();
    let mut from = path[0];
    for &j in &path[1..] {
        let v = p[j] - p[from];
        if v.length() > 1e-4 * total {
            bones.push((from, v));
            from = j;
        }
    }
    bones
}

/// Per joint of a clip's trunk (`path`), its largest bend over the first
/// `FRAMES` frames of the clip itself (degrees; 0 off the path).
fn own_bends(bvh: &Bvh, path: &[usize]) -> Vec<f64> {
    let nj = bvh.skeleton().len();
    let p = positions(bvh);
    let mut own = vec![0.0f64; nj];
    for f in 0..(p.len() / nj).min(FRAMES) {
        for w in trunk_bones(&p[f * nj..(f + 1) * nj], path).windows(2) {
            let a = w[0].1.angle_between(w[1].1).to_degrees();
            own[w[1].0] = own[w[1].0].max(a);
        }
    }
    own
}

/// Margin (degrees) of the trunk bend bound over the source's largest bend.
const BEND_MARGIN: f64 = 15.0;

/// The worst trunk bend of the output against the source's, over frames:
/// each joint of the output's trunk and neck bent (the angle between its
/// bone and its parent's) by at most the source's largest bend in the same
/// frame plus `BEND_MARGIN`. The chains differ in length (Kinect v1's one
/// spine joint against CMU's three), so the source's largest bend is the
/// largest angle between any two of its trunk bones (hips to chest, chest
/// to neck, neck to head and every segment between), which is what one
/// joint of a shorter chain stands for; a joint the target's own clip bends
/// farther (`own`, per joint: Kinect v1's tracked neck, MakeHuman's curved
/// spine) may bend as far as that. Returns (excess, the output's
/// bend, the source's, the output's joint, frame) of the worst frame.
fn worst_bend(
    (ps, ns, sp): (&[DVec3], usize, &[usize]),
    (pt, nt, tp): (&[DVec3], usize, &[usize]),
    own: &[f64],
) -> Option<(f64, f64, f64, usize, usize)> {
    let n = ps.len() / ns;
    let mut worst: Option<(f64, f64, f64, usize, usize)> = None;
    for f in 0..n {
        let sb = trunk_bones(&ps[f * ns..(f + 1) * ns], sp);
        let mut s: f64 = 0.0;
        for (i, a) in sb.iter().enumerate() {
            for b in &sb[i + 1..] {
                s = s.max(a.1.angle_between(b.1).to_degrees());
            }
        }
        let tb = trunk_bones(&pt[f * nt..(f + 1) * nt], tp);
        for w in tb.windows(2) {
            let a = w[0].1.angle_between(w[1].1).to_degrees();
            let s = s.max(own[w[1].0]);
            if worst.is_none_or(|x| a - s > x.0) {
                worst = Some((a - s, a, s, w[1].0, f));
            }
        }
    }
    worst
}

/// Largest one-frame change of the hips' height (file units).
fn hip_pop(p: &[DVec3], nj: usize, hips: usize, up: DVec3) -> f64 {
    let n = p.len() / nj;
    (1..n).map(|f| (p[f * nj + hips] - p[(f - 1) * nj + hips]).dot(up).abs()).fold(0.0, f64::max)
}

/// Every failed bound of one pair.
fn judge(src: &Bvh, qs: &Report, tgt: &Bvh, out: &Bvh, qo: &Report, scale: f64) -> Vec<String> {
    let mut bad = Vec::new();
    let (bs, bt) = (body(src), body(out));
    let (ps, pt) = (positions(src), positions(out));
    let (ns, nt) = (src.skeleton().len(), out.skeleton().len());
    let c = Axes::with_up(qs.up).conversion(Axes::with_up(qo.up));
    let s = (&ps[..], ns);
    let t = (&pt[..], nt);
    for (what, a, b) in [("hip line", bs.legs, bt.legs), ("shoulder line", bs.arms, bt.arms)] {
        if let (Some((sl, sr)), Some((tl, tr))) = (a, b) {
            let d = worst_angle(s, t, (sr, sl), (tr, tl), c);
            if d > 5.0 {
                bad.push(format!("{what} {d:.1}°"));
            }
        }
    }
    if let (Some(sh), Some(th)) = (bs.head, bt.head) {
        let d = worst_angle(s, t, (bs.hips, sh), (bt.hips, th), c);
        let limit = if bt.spines == 1 && bs.spines != 1 { 10.0 } else { 5.0 };
        if d > limit {
            bad.push(format!("hips to head {d:.1}° (limit {limit}°)"));
        }
    }
    if bs.path.len() > 2
        && bt.path.len() > 2
        && let Some((excess, a, b, j, f)) =
            worst_bend((&ps, ns, &bs.path), (&pt, nt, &bt.path), &own_bends(tgt, &bt.path))
        && excess > BEND_MARGIN
    {
        let name = &out.skeleton().display_names()[j];
        bad.push(format!(
            "trunk bend {a:.0}° at {name} (frame {f}), the source's or the target's own largest {b:.0}° (limit +{BEND_MARGIN}°)"
        ));
    }
    if qo.metrics.far_joints > 0 {
        bad.push(format!("{} far joint(s)", qo.metrics.far_joints));
    }
    // Vertical pops of the hips, in the target's units.
    let mpu_t = qo.metres_per_unit;
    let pop_s = hip_pop(&ps, ns, bs.hips, qs.up.vector()) * scale;
    let pop_t = hip_pop(&pt, nt, bt.hips, qo.up.vector());
    let size_t = qo.size / mpu_t;
    if pop_t > pop_s + 0.01 * size_t {
        bad.push(format!(
            "hip pop {:.1} cm against the source's {:.1} cm scaled",
            pop_t * mpu_t * 100.0,
            pop_s * mpu_t * 100.0
        ));
    }
    // The lowest foot on its ground, or down to the source's below its
    // own, scaled, wherever a source foot is in contact (see `feet_off`).
    let km = scale * qo.metres_per_unit / qs.metres_per_unit;
    if let Some((worst, f)) = feet_off(qs, qo, km)
        && worst > 0.02 * qo.size
    {
        bad.push(format!("feet {:.1} cm off the source's in contact (frame {f})", worst * 100.0));
    }
    // Skating, like with like (see `skating`): GMD's rule on the soles.
    let (a, b) = (sole_skate(qs), sole_skate(qo));
    if b > a + 0.02 {
        bad.push(format!("skate ratio {a:.3} -> {b:.3} (soles)"));
    }
    let (ut, uo) = (
        UnitGuess::of_bvh(tgt, PositionChannels::Replace).units,
        UnitGuess::of_bvh(out, PositionChannels::Replace).units,
    );
    if ut != uo {
        bad.push(format!("unit {uo:?}, the target's {ut:?}"));
    }
    bad
}

/// The feet bound's measure (issue #27: "the lowest foot within 2% of the
/// height of the ground wherever the source's foot is in contact"): over
/// the frames in which a source foot is in contact, the largest distance
/// of the output's lowest foot height above its own ground from the
/// heights the source's lowest foot allows, with its frame; `None` without
/// feet. Allowed: from the ground (0) down to the source's lowest foot
/// height above the source's ground, scaled by `km` (the target's metres
/// per metre of the source), where that is below the ground; the ground
/// alone where it is above.
///
/// **Why against the source's own height, not against zero alone.** Each
/// clip's ground is one constant. A source standing at two levels has
/// contacts below its ground, a contact being within the contact height
/// (5 cm) of the ground or anywhere below it (Rokoko's dance: both feet at
/// 1 cm for its first 15 frames, then the right foot at 9 to 11 cm for a
/// second while the left kicks; `bvh lint`'s default ground on its first
/// 120 frames is 10.7 cm, the level holding the most contacts), and a
/// target that follows it faithfully has them as far below its own ground:
/// measured against zero it failed for standing where the source stands
/// (6.9 to 11.5 cm onto the ten rigs, with lint's default ground in the
/// judge and in the retarget). A target standing on its ground where the
/// source's foot sinks below the source's is right too (the stance does not
/// copy a sinking foot: CMU 12_01's feet sink below its ground in its last
/// frames, and measured from the source's depth its target onto PyMO stood
/// 3.7 cm off at frame 119), so both are allowed. Above its ground a source
/// foot in contact is landing or lifting within the contact height, and
/// the target's stands on its ground (the stance's rule,
/// `retarget::stance`; the Daz-named CMU take's left foot lands at 4.6 cm
/// in frame 48 while the right lifts at 5.5, its targets stand at 0):
/// there the bound is the one against zero. A target that floats above
/// both or sinks below both fails (`the_feet_bound_catches_a_float_and_a_sink`);
/// a constant offset of the whole output is no defect (its ground moves
/// with it) and is not caught, as it was not against zero.
fn feet_off(qs: &Report, qo: &Report, km: f64) -> Option<(f64, usize)> {
    let (cs, hs, ho) = (&qs.series.contact, &qs.series.foot_height, &qo.series.foot_height);
    if cs.is_empty() || hs.is_empty() || ho.is_empty() {
        return None;
    }
    let low = |h: &[Vec<f64>], f: usize| h.iter().map(|h| h[f]).fold(f64::INFINITY, f64::min);
    let off = |f: usize| {
        let (h, deepest) = (low(ho, f), km * low(hs, f).min(0.0));
        if h > 0.0 { h } else { (deepest - h).max(0.0) }
    };
    (0..qs.frames.min(qo.frames))
        .filter(|&f| cs.iter().any(|c| c[f]))
        .map(|f| (off(f), f))
        .filter(|(d, _)| d.is_finite())
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// The options the judge lints the source and the output with: the
/// ground the retarget places the feet by ([`quality::Ground::Pooled`],
/// lint's default until 2026-11-30; `retarget`'s module notes say why it
/// keeps it), so that each bound measures the retarget against its own
/// reference: with lint's default since then (the densest band of
/// contacts, the lowest foot's median there) the sources' grounds move
/// and the outputs' do not (CMU 12_01's cut 5.2 to 3.9 cm: its left foot's
/// End Site stands 1.2 cm above its right's, its output's 5.0 cm both
/// ways), and four skating bounds compared a source measured from its
/// lower foot with outputs measured from both (CMU 12_01 onto Perception
/// Neuron 0.588 against 0.639).
fn judged() -> quality::Options {
    quality::Options { ground: quality::Ground::Pooled, ..quality::Options::default() }
}

/// GMD's skating ratio (`quality`'s `skate_ratio`: a step skates when the
/// point is below 5 cm in both its frames and moves faster than 0.5 m/s,
/// and so does the mean over 5 steps, SciPy's `uniform_filter1d` with
/// zeros outside) measured on each foot's sole: its height the lowest of
/// its points, each less its planted height (`Series::foot_height`), its
/// speed the slowest point's (`Series::foot_speed`, the point it rolls
/// over); the fraction of steps in which either foot skates.
///
/// **Why the judge measures skating on the soles** (issue #27 asks for
/// "the skating ratio no worse than the source's plus 0.02"): lint's
/// `skate_ratio` measures one joint per foot, the toe joint, else the foot
/// joint (GMD's definition, kept as it is in lint). Between two skeletons
/// that joint is often not the same body point: a source without a toe
/// joint (the Second Life, MediaPipe and Daz-named CMU takes) is measured
/// at its ankle, 8-15 cm above the floor, which never passes below 5 cm,
/// while a target's toe joint does and counts the same motion: the Second
/// Life in-place walk, whose feet slide at 1.98 m/s, has a ratio of 0 and
/// its retargets 0.6-1.0. Measured on both soles the same body point is
/// compared on both sides (the retarget's ratio is then its own skating,
/// not the joint's height) and a sliding source shows its slide.
fn sole_skate(q: &Report) -> f64 {
    let o = quality::Options::default();
    let steps = q.frames.saturating_sub(1);
    if steps == 0 {
        return 0.0;
    }
    let mut skating = vec![false; steps];
    for (h, v) in q.series.foot_height.iter().zip(&q.series.foot_speed) {
        let half = o.skate_window / 2;
        let mean = |f: usize| {
            let from = f as isize - half as isize;
            let sum: f64 = (from..from + o.skate_window as isize)
                .filter(|&k| k >= 0 && (k as usize) < v.len())
                .map(|k| v[k as usize])
                .sum();
            sum / o.skate_window as f64
        };
        for (f, s) in skating.iter_mut().enumerate() {
            let low = h[f] < o.skate_height && h[f + 1] < o.skate_height;
            *s |= low && v[f] > o.skate_speed && mean(f) > o.skate_speed;
        }
    }
    skating.iter().filter(|&&s| s).count() as f64 / steps as f64
}

/// Failed bounds not fixed yet (issue #27), each with why: (bound, reason,
/// `source>target` pairs by the short names of the table). Every other
/// pair must meet every bound, and a listed pair that meets its bound must
/// leave the list (the test fails on both), so the list only shrinks.
const KNOWN: [(&str, &str, &[&str]); 1] = [(
    "shoulder line",
    "no pose of the rig meets both lines: from the Kinect v1 take (its 120 frames nearly \
         still, its neck 76° off its trunk, its shoulder line 107° from its hips-to-head line) \
         onto MediaPipe, whose one spine joint carries the neck and both upper arms (the \
         shoulder line square to the neck bone): the least over every pose of the larger of \
         the two angles is 10.8° (`kinect_v1_onto_mediapipe_cannot_meet_both_lines`, computed \
         over the free rotations); the trunk's solve (`retarget::trunk`) puts the head first, \
         within 4.5° of its line, and the shoulder line as near as that allows: 18.4° (19.2° \
         before its secant model, 18.9° before it stopped on a crawl; a grid search with \
         the head within 4.5° found 18.7°, so it was coarser than the solve; 26.4° before \
         the solve)",
    &["kinect_v1>mediapipe_to"],
)];

#[test]
fn every_pair_of_human_skeletons_looks_right() {
    let mut clips = Vec::new();
    for name in HUMANS {
        let Some(bvh) = clip(name) else { return };
        let n = bvh.motion().n_frames().min(FRAMES);
        let cut = frames::range(&bvh, 0..n).unwrap();
        let short = name.split('_').take(2).collect::<Vec<_>>().join("_");
        clips.push((short, bvh, cut));
    }
    let lint = |b: &Bvh| quality::lint(b, &judged());
    let known = |pair: &str, line: &str| {
        KNOWN.iter().find(|(bound, _, pairs)| line.starts_with(bound) && pairs.contains(&pair))
    };
    let (mut table, mut unexpected, mut met) = (Vec::new(), Vec::new(), Vec::new());
    let mut pairs = 0;
    for (sn, _, src) in &clips {
        let qs = lint(src);
        for (tn, tgt, _) in &clips {
            if sn == tn {
                continue;
            }
            pairs += 1;
            let pair = format!("{sn}>{tn}");
            let (out, report) = retarget(src, tgt, &LOOKS).unwrap();
            let qo = lint(&out);
            let lines = judge(src, &qs, tgt, &out, &qo, report.scale);
            for line in &lines {
                let row = format!("{sn:>14} -> {tn:<14} {line}");
                if known(&pair, line).is_none() {
                    unexpected.push(row.clone());
                }
                table.push(row);
            }
            for (bound, _, listed) in &KNOWN {
                if listed.contains(&pair.as_str()) && !lines.iter().any(|l| l.starts_with(bound)) {
                    met.push(format!("{pair}: {bound}"));
                }
            }
        }
    }
    println!(
        "{pairs} pairs, {} failed bounds ({} known)",
        table.len(),
        table.len() - unexpected.len()
    );
    for line in &table {
        println!("{line}");
    }
    assert!(pairs >= 90, "{pairs} pairs");
    assert!(unexpected.is_empty(), "failed bounds not in KNOWN: {unexpected:#?}");
    assert!(met.is_empty(), "listed in KNOWN but met now (take them out): {met:#?}");
}

#[test]
fn a_single_spine_target_follows_the_whole_chain() {
    // Kinect v1's Hip - Spine - ShoulderCenter: its one spine joint must
    // point the head where the source's whole chain points it.
    let (Some(src), Some(tgt)) = (
        clip("cmu_12_01_walk_cgspeed_pybvh.bvh"),
        clip("kinect_v1_custom_writer_nonzero_root_offset.bvh"),
    ) else {
        return;
    };
    let src = frames::range(&src, 0..FRAMES).unwrap();
    let exact = Options { lock_feet: false, ..Options::default() };
    let (out, r) = retarget(&src, &tgt, &exact).unwrap();
    let (bs, bt) = (body(&src), body(&out));
    assert_eq!(bt.spines, 1);
    let c = Axes::with_up(r.source.up).conversion(Axes::with_up(r.target.up));
    let (ps, pt) = (positions(&src), positions(&out));
    let d = worst_angle(
        (&ps, src.skeleton().len()),
        (&pt, out.skeleton().len()),
        (bs.hips, bs.head.unwrap()),
        (bt.hips, bt.head.unwrap()),
        c,
    );
    assert!(d <= 10.0, "hips to head {d:.1}° off");
}

/// The feet bound fails on a target that floats or sinks where the source
/// stands: a pair that meets it (the CMU 12_01 walk onto Bandai Namco),
/// its output raised, then lowered, by 5% of its height over frames 45-74
/// (a quarter of the cut, the source's feet in contact in all of them).
#[test]
fn the_feet_bound_catches_a_float_and_a_sink() {
    let (Some(src), Some(tgt)) = (
        clip("cmu_12_01_walk_cgspeed_pybvh.bvh"),
        clip("bandai_namco_ds1_kick_6ch_every_joint.bvh"),
    ) else {
        return;
    };
    let src = frames::range(&src, 0..FRAMES).unwrap();
    let qs = quality::lint(&src, &judged());
    let (out, report) = retarget(&src, &tgt, &LOOKS).unwrap();
    let qo = quality::lint(&out, &judged());
    let km = report.scale * qo.metres_per_unit / qs.metres_per_unit;
    let (own, _) = feet_off(&qs, &qo, km).unwrap();
    println!("as retargeted: {:.2} cm (bound {:.2} cm)", own * 100.0, 2.0 * qo.size);
    assert!(own <= 0.02 * qo.size, "{own} m");
    assert!((45..75).all(|f| qs.series.contact.iter().any(|c| c[f])));
    let ch = JointChannels::of(&out.skeleton().joints()[0]);
    let vertical = (0..ch.n_pos as usize)
        .find(|&k| ch.pos_axes[k].index() == qo.up.axis().index())
        .map(|k| ch.pos_index[k])
        .unwrap();
    for sign in [1.0, -1.0] {
        let mut moved = out.clone();
        let shift = sign * qo.up.sign() * 0.05 * qo.size / qo.metres_per_unit;
        for f in 45..75 {
            moved.motion_mut().frame_mut(f)[vertical] += shift;
        }
        let qm = quality::lint(&moved, &judged());
        let (off, f) = feet_off(&qs, &qm, km).unwrap();
        println!("moved by {sign:+} x 5%: {:.2} cm at frame {f}", off * 100.0);
        assert!(off > 0.02 * qo.size, "{sign:+}: {off} m");
    }
}

/// Writes the retargets behind `docs/img/retarget.png` (the CMU 01_01 walk
/// onto Bandai Namco, Rokoko and Kinect v1) into the folder
/// `RETARGET_OUT`, for `bvh render`.
#[test]
#[ignore = "writes files: RETARGET_OUT=dir cargo test -p bvhkit --test main write_the_retargets_of_the_docs -- --ignored"]
fn write_the_retargets_of_the_docs() {
    let Some(dir) = std::env::var_os("RETARGET_OUT") else { return };
    let Some(src) = clip("cmu_01_01_walk_cgspeed_mb_names.bvh") else { return };
    for (name, target) in [
        ("bandai", "bandai_namco_ds1_kick_6ch_every_joint.bvh"),
        ("rokoko", "rokoko_jesse_dance_yxz_fingers.bvh"),
        ("kinect", "kinect_v1_custom_writer_nonzero_root_offset.bvh"),
    ] {
        let Some(tgt) = clip(target) else { return };
        let (out, _) = retarget(&src, &tgt, &Options::default()).unwrap();
        let path = std::path::Path::new(&dir).join(format!("{name}_out.bvh"));
        out.write(std::fs::File::create(path).unwrap()).unwrap();
    }
}

/// The proof of the `shoulder line` entry of `KNOWN` for Kinect v1 onto
/// MediaPipe: no pose of MediaPipe's free joints meets both lines. Its
/// spine joint carries the neck and both upper arms at rest offsets
/// `(0, 30, 0)` and `(±15, 25, 0)`, so the shoulder line is square to the
/// neck bone `n` (the spine's rotation about `n` is free: the line's
/// least angle to the source's is `asin |s·n|`); the head hangs 10 from
/// the neck in any direction `u`. Relaxed (the neck's bend left free, `u`
/// the best for the hips-to-head line: the angle of the sphere of radius
/// 10 about the neck seen from the hips), the least of the larger of the
/// two angles, over every `n` that keeps the spine's bend within the trunk
/// bend bound, on a 0.25° grid of directions, is above 10° in every frame
/// checked: both lines within 5° cannot be had, the bound is the geometry
/// of the rig, not the solve's.
#[test]
fn kinect_v1_onto_mediapipe_cannot_meet_both_lines() {
    let (Some(src), Some(tgt)) = (
        clip("kinect_v1_custom_writer_nonzero_root_offset.bvh"),
        clip("mediapipe_to_bvh_dance_zxy.bvh"),
    ) else {
        return;
    };
    let src = frames::range(&src, 0..FRAMES).unwrap();
    let (out, _) = retarget(&src, &tgt, &LOOKS).unwrap();
    let opts = quality::Options::default();
    let (qs, qo) = (quality::lint(&src, &opts), quality::lint(&out, &opts));
    let c = Axes::with_up(qs.up).conversion(Axes::with_up(qo.up));
    let (bs, bt) = (body(&src), body(&out));
    let (ps, pt) = (positions(&src), positions(&out));
    let (ns, nt) = (src.skeleton().len(), out.skeleton().len());
    // MediaPipe's path: hips, spine, neck, head; the rig's rest offsets.
    assert_eq!(bt.path.len(), 4);
    let (spine, neck, head) = (bt.path[1], bt.path[2], bt.path[3]);
    let joints = out.skeleton().joints();
    let (tl, tr) = bt.arms.unwrap();
    let (neck_o, head_o) = (joints[neck].offset(), joints[head].offset());
    let line_o = joints[tl].offset() - joints[tr].offset();
    assert!(line_o.dot(neck_o).abs() < 1e-9, "the shoulder line square to the neck");
    assert_eq!(joints[tl].parent().unwrap().index(), spine);
    let own = own_bends(&tgt, &bt.path);
    let (sl, sr) = bs.arms.unwrap();
    let sh = bs.head.unwrap();
    for f in [0, 40, 80, FRAMES - 1] {
        let s = &ps[f * ns..(f + 1) * ns];
        let t = &pt[f * nt..(f + 1) * nt];
        let d = (c * (s[sh] - s[bs.hips])).normalize();
        let line = (c * (s[sl] - s[sr])).normalize();
        let bones = trunk_bones(s, &bs.path);
        let mut big: f64 = 0.0;
        for (i, a) in bones.iter().enumerate() {
            for b in &bones[i + 1..] {
                big = big.max(a.1.angle_between(b.1).to_degrees());
            }
        }
        let limit = big.max(own[spine]) + BEND_MARGIN;
        let (h, p) = (t[bt.hips], t[spine]);
        let below = p - h;
        let step = 0.25f64.to_radians();
        let mut least = f64::INFINITY;
        let rings = (std::f64::consts::PI / step).ceil() as usize;
        for i in 0..=rings {
            let theta = i as f64 * step;
            let around = ((std::f64::consts::TAU * theta.sin() / step).ceil() as usize).max(1);
            for k in 0..around {
                let phi = k as f64 * std::f64::consts::TAU / around as f64;
                let n = DVec3::new(theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin());
                if below.angle_between(n).to_degrees() > limit {
                    continue;
                }
                let a_s = line.dot(n).abs().min(1.0).asin().to_degrees();
                let q = below + n * neck_o.length();
                let r = head_o.length();
                let a_h = if q.length() <= r {
                    0.0
                } else {
                    (q.angle_between(d) - (r / q.length()).asin()).max(0.0).to_degrees()
                };
                least = least.min(a_s.max(a_h));
            }
        }
        println!("frame {f}: least of the larger angle {least:.2}° (bend limit {limit:.1}°)");
        assert!(least > 10.0, "frame {f}: {least}°");
    }
}
