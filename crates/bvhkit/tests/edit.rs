//! The edit transforms against independent references written out here
//! (4x4 matrices for forward kinematics, quaternion SLERP from its formula)
//! and on every well-formed corpus file.
use bvhkit::edit::axes::{Axes, AxesMap, Evidence, SignedAxis, detect_up};
use bvhkit::edit::layout::{LayoutMap, Positions};
use bvhkit::edit::order::OrderMap;
use bvhkit::edit::scale::ScaleMap;
use bvhkit::edit::{FrameMap, frames, map_frames, resample, rest_height};
use bvhkit::glam::{DMat3, DMat4, DQuat};
use bvhkit::rotation::RotationOrder;
use bvhkit::{Bvh, Channel, JointId, PositionChannels, ReadOptions};

use crate::fk::reference_world;
use crate::util::{corpus_files, local_quat, stem};

/// Every well-formed corpus file, parsed strictly.
fn corpus() -> Vec<(String, Bvh)> {
    corpus_files()
        .iter()
        .filter(|p| !stem(p).starts_with("malformed_"))
        .map(|p| {
            let (bvh, _) = ReadOptions::new().lenient(true).read_path(p).unwrap();
            (stem(p), bvh)
        })
        .collect()
}

/// At most `n` frame indices spread over the clip, first and last included.
fn sample_frames(n_frames: usize, n: usize) -> Vec<usize> {
    if n_frames <= n {
        return (0..n_frames).collect();
    }
    let mut v: Vec<usize> = (0..n).map(|k| k * (n_frames - 1) / (n - 1)).collect();
    v.dedup();
    v
}

/// Largest difference of world positions (`a` against `c·b`) and world
/// rotations (`a` against `c·b·cᵀ`) over the given frames of two clips with
/// the same joints, by the 4x4 reference.
fn world_difference(a: &Bvh, fa: &[usize], b: &Bvh, fb: &[usize], c: DMat3) -> (f64, f64) {
    let c4 = DMat4::from_mat3(c);
    let mut dp: f64 = 0.0;
    let mut dr: f64 = 0.0;
    for (&i, &k) in fa.iter().zip(fb) {
        let wa = reference_world(a, i, PositionChannels::Replace);
        let wb = reference_world(b, k, PositionChannels::Replace);
        for (x, y) in wa.iter().zip(&wb) {
            let y = c4 * *y * c4.transpose();
            dp = dp.max((x.w_axis - y.w_axis).truncate().length());
            for col in 0..3 {
                dr = dr.max((x.col(col) - y.col(col)).truncate().abs().max_element());
            }
        }
    }
    (dp, dr)
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn frames_range_every_and_reverse_copy_frames_bit_for_bit_on_the_corpus() {
    for (name, bvh) in corpus() {
        let m = bvh.motion();
        let n = m.n_frames();
        let r = frames::range(&bvh, n / 3..n / 2).unwrap();
        assert_eq!(r.motion().n_frames(), n / 2 - n / 3, "{name}");
        for k in 0..r.motion().n_frames() {
            assert_eq!(bits(r.motion().frame(k)), bits(m.frame(n / 3 + k)), "{name}");
        }
        let e = frames::every(&bvh, 3).unwrap();
        assert_eq!(e.motion().n_frames(), n.div_ceil(3), "{name}");
        assert_eq!(e.motion().frame_time(), m.frame_time() * 3.0);
        for k in 0..e.motion().n_frames() {
            assert_eq!(bits(e.motion().frame(k)), bits(m.frame(3 * k)), "{name}");
        }
        let rev = frames::reverse(&frames::reverse(&bvh).unwrap()).unwrap();
        bvhkit_testdata::assert_bit_identical(&rev, &bvh, &name);
        assert_eq!(rev.skeleton(), bvh.skeleton());
    }
}

#[test]
fn resampling_to_the_same_rate_is_the_identity_on_the_corpus() {
    let files = corpus();
    assert!(!files.is_empty() || !bvhkit_testdata::skips_fail());
    for (name, bvh) in files {
        let fps = bvh.motion().fps();
        for f in [fps, fps * (1.0 + 0.9e-4), fps * (1.0 - 0.9e-4)] {
            let same = resample::to_fps(&bvh, f).unwrap();
            bvhkit_testdata::assert_bit_identical(&same, &bvh, &name);
            assert_eq!(same.to_bytes().unwrap(), bvh.to_bytes().unwrap(), "{name}");
        }
    }
    // 120 fps on a file written with Frame Time 0.0083333 is the same rate.
    let mut bvh = Bvh::parse(bvhkit_testdata::synth_text(1, 4, 10)).unwrap();
    bvh.motion_mut().set_frame_time(0.0083333).unwrap();
    assert_eq!(bvh.motion().frame_time(), 0.0083333);
    assert_eq!(resample::to_fps(&bvh, 120.0).unwrap(), bvh);
}

#[test]
fn resampling_keeps_the_frames_it_lands_on_bit_for_bit_and_writes_the_exact_frame_time() {
    for (name, bvh) in corpus() {
        let m = bvh.motion();
        // Half the rate: every output frame is an input frame.
        let half = resample::to_fps(&bvh, m.fps() / 2.0).unwrap();
        assert_eq!(half.motion().n_frames(), m.n_frames().div_ceil(2), "{name}");
        for k in 0..half.motion().n_frames() {
            assert_eq!(bits(half.motion().frame(k)), bits(m.frame(2 * k)), "{name} frame {k}");
        }
        // Two thirds of the rate: every second output frame lands on every third input frame.
        let two_thirds = resample::to_fps(&bvh, m.fps() * 2.0 / 3.0).unwrap();
        for k in (0..two_thirds.motion().n_frames()).step_by(2) {
            assert_eq!(bits(two_thirds.motion().frame(k)), bits(m.frame(3 * k / 2)), "{name} {k}");
        }
        assert_eq!(half.skeleton(), bvh.skeleton());
    }
    // 30 fps: Frame Time is 1/30 to the last bit, written as its shortest round trip.
    let bvh = Bvh::parse(bvhkit_testdata::synth_text(3, 5, 50)).unwrap();
    let at30 = resample::to_fps(&bvh, 30.0).unwrap();
    let text = at30.to_string();
    assert!(
        text.contains("\nFrame Time: 0.03333333333333333\n"),
        "{}",
        &text[text.find("Frame Time").unwrap()..][..40]
    );
    assert_eq!(Bvh::parse(&text).unwrap().motion().frame_time(), 1.0 / 30.0);
}

/// SLERP from its formula: q0·sin((1-t)θ)/sin θ + q1·sin(tθ)/sin θ, with
/// cos θ = q0·q1 after flipping q1 to the same hemisphere.
fn reference_slerp(q0: DQuat, q1: DQuat, t: f64) -> DQuat {
    let (mut q1, mut d) = (q1, q0.dot(q1));
    if d < 0.0 {
        q1 = -q1;
        d = -d;
    }
    let theta = d.min(1.0).acos();
    if theta < 1e-6 {
        // The formula's limit as θ → 0 (acos cannot resolve such angles).
        return (q0 * (1.0 - t) + q1 * t).normalize();
    }
    q0 * (((1.0 - t) * theta).sin() / theta.sin()) + q1 * ((t * theta).sin() / theta.sin())
}

fn same_rotation(a: DQuat, b: DQuat) -> f64 {
    // The rotation matrices' largest entry difference (q and -q are the same rotation).
    let (ma, mb) = (DMat3::from_quat(a), DMat3::from_quat(b));
    (0..3).map(|c| (ma.col(c) - mb.col(c)).abs().max_element()).fold(0.0, f64::max)
}

#[test]
fn resampling_turns_joints_by_slerp_and_moves_positions_linearly_on_the_corpus() {
    let mut interpolated = 0usize;
    for (name, bvh) in corpus() {
        let bvh = frames::range(&bvh, 0..200).unwrap();
        let m = bvh.motion();
        // 2.5 times the rate: output frame k is at input time 0.4 k.
        let up = resample::to_fps(&bvh, m.fps() * 2.5).unwrap();
        let out = up.motion();
        let joints = bvh.skeleton().joints();
        let mut prev: Option<&[f64]> = None;
        for k in 0..out.n_frames() {
            let s = k as f64 * 0.4;
            let i0 = s.floor() as usize;
            let t = s - i0 as f64;
            let f = out.frame(k);
            if t.abs() < 1e-6 || (1.0 - t).abs() < 1e-6 {
                let i = s.round() as usize;
                assert_eq!(bits(f), bits(m.frame(i)), "{name}: output {k} is input {i}");
                prev = Some(f);
                continue;
            }
            let (a, b) = (m.frame(i0), m.frame(i0 + 1));
            for (ji, j) in joints.iter().enumerate() {
                for (c, ch) in j.channels().iter().enumerate() {
                    let idx = j.first_channel() + c;
                    if ch.is_position() {
                        let e = a[idx] + t * (b[idx] - a[idx]);
                        // Rounded to nine decimals (`snap_angle`: 5e-10).
                        assert!((f[idx] - e).abs() <= 5e-10 + 1e-12 * e.abs(), "{name}");
                    }
                }
                if j.rotation_order().is_some() {
                    let q0 = local_quat(&bvh, ji, a);
                    let q1 = local_quat(&bvh, ji, b);
                    let expected = reference_slerp(q0, q1, t);
                    let got = local_quat(&up, ji, f);
                    let d = same_rotation(expected, got);
                    assert!(
                        d < 1e-8,
                        "{name} output {k} joint {}: {d} dot {} a {:?} b {:?} out {:?}",
                        j.name(),
                        q0.dot(q1),
                        &a[j.channel_range()],
                        &b[j.channel_range()],
                        &f[j.channel_range()]
                    );
                    interpolated += 1;
                    // Continuity: every angle within 180 degrees of the previous output frame.
                    if let Some(p) = prev {
                        for c in j.channel_range() {
                            if j.channels()[c - j.first_channel()].is_rotation() {
                                assert!(
                                    (f[c] - p[c]).abs() <= 180.0,
                                    "{name} {k} {}: {} after {}",
                                    j.name(),
                                    f[c],
                                    p[c]
                                );
                            }
                        }
                    }
                }
            }
            prev = Some(f);
        }
    }
    assert!(interpolated > 1000 || !bvhkit_testdata::skips_fail(), "{interpolated}");
}

#[test]
fn resampled_euler_angles_stay_continuous_across_180_degrees() {
    // A joint turning steadily about Y past 180 degrees: the written angles keep
    // increasing instead of wrapping to -180.
    let mut text = String::from(
        "HIERARCHY\nROOT A\n{\n\tOFFSET 0 0 0\n\tCHANNELS 3 Zrotation Xrotation Yrotation\n\tEnd Site\n\t{\n\t\tOFFSET 0 0 1\n\t}\n}\nMOTION\nFrames: 10\nFrame Time: 0.1\n",
    );
    for i in 0..10 {
        text.push_str(&format!("0 10 {}\n", 150 + 10 * i));
    }
    let bvh = Bvh::parse(&text).unwrap();
    let up = resample::to_fps(&bvh, 30.0).unwrap();
    let ys: Vec<f64> = up.motion().frames().map(|f| f[2]).collect();
    for w in ys.windows(2) {
        assert!(w[1] > w[0] && w[1] - w[0] < 5.0, "{ys:?}");
    }
    assert!((ys.last().unwrap() - 240.0).abs() < 1e-9, "{ys:?}");
}

#[test]
fn slerp_matches_its_formula() {
    let mut x = 1u64;
    let mut next = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    for _ in 0..1000 {
        let q0 = DQuat::from_xyzw(next(), next(), next(), next()).normalize();
        let q1 = DQuat::from_xyzw(next(), next(), next(), next()).normalize();
        let t = next().abs();
        let got = resample::slerp(q0, q1, t);
        let want = reference_slerp(q0, q1, t);
        assert!(got.abs_diff_eq(want, 1e-12), "{got} {want}");
    }
    // Nearly equal rotations do not divide by zero.
    let q = DQuat::from_rotation_y(0.3);
    assert!(resample::slerp(q, q, 0.5).abs_diff_eq(q, 1e-15));
}

#[test]
fn rotation_order_there_and_back_keeps_world_motion_on_the_corpus() {
    for (name, bvh) in corpus() {
        let bvh = frames::range(&bvh, 0..120).unwrap();
        let h = rest_height(bvh.skeleton());
        let fr = sample_frames(bvh.motion().n_frames(), 12);
        for order in RotationOrder::ALL {
            let there = map_frames(&bvh, &mut OrderMap::all(bvh.skeleton(), order)).unwrap();
            for j in there.skeleton().joints() {
                if j.rotation_axes().count() == 3 {
                    assert_eq!(j.rotation_order(), Some(order), "{name}");
                }
            }
            let (dp, dr) = world_difference(&bvh, &fr, &there, &fr, DMat3::IDENTITY);
            assert!(dp <= 1e-9 * h && dr <= 1e-9, "{name} to {order}: {dp} (height {h}), {dr}");
            // Back, joint by joint, to each joint's own order.
            let mut back = there;
            for (i, j) in bvh.skeleton().joints().iter().enumerate() {
                if let Some(o) = j.rotation_order() {
                    let mut map = OrderMap::joint(back.skeleton(), JointId::new(i), o).unwrap();
                    back = map_frames(&back, &mut map).unwrap();
                }
            }
            assert_eq!(back.skeleton(), bvh.skeleton(), "{name}");
            let (dp, dr) = world_difference(&bvh, &fr, &back, &fr, DMat3::IDENTITY);
            assert!(dp <= 1e-9 * h && dr <= 1e-9, "{name} back from {order}: {dp}, {dr}");
            // Angles come back to the same values up to whole turns and the choice
            // between the two Euler solutions (a, b, c) and (a+180, 180-b, c+180),
            // which continuity makes where the file itself jumps between them;
            // away from gimbal lock, where the split of a and c is a convention.
            let turn = |x: f64| {
                let d = x.rem_euclid(360.0);
                d.min(360.0 - d)
            };
            for j in bvh.skeleton().joints().iter().filter(|j| j.rotation_order().is_some()) {
                let jc = bvhkit::edit::JointChannels::of(j);
                for (fa, fb) in bvh.motion().frames().zip(back.motion().frames()) {
                    let (a, b) = (jc.angles(fa), jc.angles(fb));
                    if turn(a[1] - 90.0).min(turn(a[1] + 90.0)) > 10.0 {
                        let same = (0..3).all(|k| turn(a[k] - b[k]) < 1e-6);
                        let other = turn(a[0] + 180.0 - b[0]) < 1e-6
                            && turn(180.0 - a[1] - b[1]) < 1e-6
                            && turn(a[2] + 180.0 - b[2]) < 1e-6;
                        assert!(same || other, "{name} {}: {a:?} came back as {b:?}", j.name());
                    }
                }
            }
        }
    }
}

#[test]
fn axis_conversion_there_and_back_is_the_identity_on_the_corpus() {
    let conventions = [
        Axes::BVH,
        Axes::with_up(SignedAxis::PosZ),
        Axes::with_up(SignedAxis::NegY),
        Axes::new(SignedAxis::PosX, SignedAxis::NegZ).unwrap(),
    ];
    for (name, bvh) in corpus() {
        let bvh = frames::range(&bvh, 0..120).unwrap();
        let h = rest_height(bvh.skeleton());
        let fr = sample_frames(bvh.motion().n_frames(), 12);
        for &to in &conventions[1..] {
            let mut map = AxesMap::new(bvh.skeleton(), Axes::BVH, to);
            let c = map.matrix();
            let there = map_frames(&bvh, &mut map).unwrap();
            // Every world position is C·p and every world rotation C·W·Cᵀ.
            let (dp, dr) = world_difference(&there, &fr, &bvh, &fr, c);
            assert!(dp <= 1e-9 * h && dr <= 1e-9, "{name} to {to}: {dp} (height {h}), {dr}");
            let back =
                map_frames(&there, &mut AxesMap::new(there.skeleton(), to, Axes::BVH)).unwrap();
            let (dp, dr) = world_difference(&back, &fr, &bvh, &fr, DMat3::IDENTITY);
            assert!(dp <= 1e-9 * h && dr <= 1e-9, "{name} back from {to}: {dp}, {dr}");
            for (a, b) in back.skeleton().joints().iter().zip(bvh.skeleton().joints()) {
                assert_eq!((a.name(), a.channels()), (b.name(), b.channels()), "{name}");
                assert_eq!(
                    a.offset(),
                    b.offset(),
                    "{name}: offsets move by signed permutations, exactly"
                );
            }
        }
    }
}

#[test]
fn axis_conversion_of_a_z_up_skeleton_by_4x4_matrices() {
    // Blender's import of a Z-up file with forward Y, into BVH's Y up, forward -Z:
    // a rotation of -90 degrees about X.
    let text = "HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
        JOINT Head { OFFSET 0 0 50 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 0 10 } }
        JOINT LeftFoot { OFFSET 10 0 -90 CHANNELS 1 Xrotation End Site { OFFSET 0 5 0 } } }
        MOTION Frames: 2 Frame Time: 0.1
        1 2 95 10 20 30 40 -50 60 15
        2 3 94 -170 80 5 0 0 0 -15";
    let bvh = Bvh::parse(text).unwrap();
    let up = detect_up(&bvh);
    // The two frames disagree (the root is turned), so the rest pose decides.
    assert_eq!((up.axis, up.source), (Some(SignedAxis::PosZ), Evidence::RestPose), "{up}");
    let mut map = AxesMap::new(bvh.skeleton(), Axes::with_up(up.axis.unwrap()), Axes::BVH);
    let c = map.matrix();
    let expected = DMat3::from_rotation_x(-std::f64::consts::FRAC_PI_2);
    assert!(c.abs_diff_eq(expected, 1e-15), "{c}");
    let out = map_frames(&bvh, &mut map).unwrap();
    assert_eq!(detect_up(&out).axis, Some(SignedAxis::PosY));
    let (dp, dr) = world_difference(&out, &[0, 1], &bvh, &[0, 1], c);
    // Rewritten angles are written to 1e-9 degrees (`edit::order`'s
    // `snap_angle`): under 1e-11 radians each, so under 1e-9 for joints
    // about 100 units from their ancestors.
    assert!(dp < 1e-9 && dr < 5e-11, "{dp} {dr}");
    // The one-channel joint's Xrotation is still about X (C fixes X): same channel, same value.
    assert_eq!(out.skeleton().joints()[3].channels(), [Channel::Xrotation]);
    assert_eq!(out.motion().frame(1)[9], -15.0);
    // Root positions (1, 2, 95) become C·p = (1, 95, -2).
    assert_eq!(out.motion().frame(0)[..3], [1.0, 95.0, -2.0]);
}

#[test]
fn detected_up_axes_of_the_corpus() {
    let mut lines = Vec::new();
    for (name, bvh) in corpus() {
        let up = detect_up(&bvh);
        lines.push(format!("{name}: {up}"));
        // Converting to the detected axis's opposite and detecting again gives it back.
        if let Some(axis) = up.axis {
            let to = Axes::with_up(axis.negate());
            let flipped =
                map_frames(&bvh, &mut AxesMap::new(bvh.skeleton(), Axes::with_up(axis), to))
                    .unwrap();
            assert_eq!(detect_up(&flipped).axis, Some(axis.negate()), "{name}");
        }
    }
    let all = lines.join("\n");
    eprintln!("{all}");
    let get = |n: &str| lines.iter().find(|l| l.starts_with(n)).cloned().unwrap_or_default();
    if !lines.is_empty() {
        assert!(get("cmu_01_01_walk").contains(": y ("), "{all}");
        assert!(get("azure_kinect").contains(": -y ("), "{all}");
        // One frame: MakeHuman's take stands on z in its frame; the C++
        // parser's test rig, its root tilted 45° about three axes, does
        // not stand within 30° of any axis and keeps its rest pose's y.
        assert!(
            get("makehuman_163").contains(": z (")
                && get("makehuman_163").contains("in 1 of 1 frames"),
            "{all}"
        );
        assert!(get("cpp_bvh_parser_test_simple_single_frame").contains(": y ("), "{all}");
        assert!(get("cpp_bvh_parser_test_simple_single_frame").contains("rest pose"), "{all}");
    }
}

#[test]
fn a_single_frame_decides_the_up_axis_only_when_it_stands() {
    // The rest pose lies along X (Bandai Namco's way); its one frame turns
    // it upright on Y (-90° about Z), or 35° short of that (-55° about Z:
    // 35° off Y, standing on no axis within 30°).
    let clip = |z: f64| {
        Bvh::parse(format!(
            "HIERARCHY ROOT Hips {{ OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
            JOINT Head {{ OFFSET 60 0 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site {{ OFFSET 10 0 0 }} }}
            JOINT LeftFoot {{ OFFSET -90 0 10 CHANNELS 3 Zrotation Xrotation Yrotation End Site {{ OFFSET 0 0 5 }} }} }}
            MOTION Frames: 1 Frame Time: 0.1
            0 90 0 {z} 0 0 0 0 0 0 0 0"
        ))
        .unwrap()
    };
    let up = detect_up(&clip(90.0));
    assert_eq!(up.axis, Some(SignedAxis::PosY), "{up}");
    assert_eq!(up.source, Evidence::Frames { agreeing: 1, sampled: 1 }, "{up}");
    let up = detect_up(&clip(55.0));
    assert_eq!((up.axis, up.source), (Some(SignedAxis::PosX), Evidence::RestPose), "{up}");
    // The same frame twice: two agreeing frames decide, as before.
    let one = clip(55.0);
    let mut values = one.motion().frame(0).to_vec();
    values.extend_from_slice(one.motion().frame(0));
    let two = Bvh::new(
        one.skeleton().clone(),
        bvhkit::Motion::new(0.1, one.skeleton().n_channels(), values).unwrap(),
    )
    .unwrap();
    assert_eq!(detect_up(&two).axis, Some(SignedAxis::PosY));
}

#[test]
fn scaling_scales_world_positions_and_keeps_rotations_on_the_corpus() {
    for (name, bvh) in corpus() {
        let bvh = frames::range(&bvh, 0..60).unwrap();
        let fr = sample_frames(bvh.motion().n_frames(), 6);
        let mut map = ScaleMap::new(bvh.skeleton(), 0.25).unwrap();
        let out = map_frames(&bvh, &mut map).unwrap();
        // A power of two: exactly a quarter of every world position.
        for &i in &fr {
            let a = reference_world(&bvh, i, PositionChannels::Replace);
            let b = reference_world(&out, i, PositionChannels::Replace);
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(x.w_axis.truncate() * 0.25, y.w_axis.truncate(), "{name}");
                assert_eq!(x.x_axis, y.x_axis, "{name}");
            }
        }
        let back = map_frames(&out, &mut ScaleMap::new(out.skeleton(), 4.0).unwrap()).unwrap();
        bvhkit_testdata::assert_bit_identical(&back, &bvh, &name);
    }
}

/// What users may give as a factor or a height: a millionth to a million
/// (1e300 wrote 300-digit offsets); `ScaleMap` itself takes any finite
/// positive factor, which a height within the limits may need.
#[test]
fn given_scale_factors_and_heights_have_limits() {
    use bvhkit::edit::scale::check_given;
    for bad in [1e300, 1.000001e6, 9.99999e-7, 0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = check_given("scale factor", bad).unwrap_err().to_string();
        assert!(e.contains("is out of range: expected a number from 0.000001 to 1000000"), "{e}");
        assert!(e.starts_with("scale factor "), "{e}");
    }
    for good in [1e6, 1e-6, 0.01] {
        assert_eq!(check_given("height", good).unwrap(), good);
    }
    let bvh = Bvh::parse(
        "HIERARCHY ROOT A { OFFSET 0 90 0 CHANNELS 4 Xposition Yposition Zposition Zrotation }
         MOTION Frames: 1 Frame Time: 0.1 10 90 -5 33",
    )
    .unwrap();
    let out = map_frames(&bvh, &mut ScaleMap::new(bvh.skeleton(), 1e-9).unwrap()).unwrap();
    assert_eq!(out.motion().frame(0)[1], 90.0 * 1e-9);
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(ScaleMap::new(bvh.skeleton(), bad).is_err());
    }
}

#[test]
fn channel_layout_keeps_world_motion_or_reports_its_largest_error_on_the_corpus() {
    for (name, bvh) in corpus() {
        let bvh = frames::range(&bvh, 0..60).unwrap();
        let h = rest_height(bvh.skeleton());
        let fr: Vec<usize> = (0..bvh.motion().n_frames()).collect();
        for positions in [Positions::Keep, Positions::All, Positions::Root] {
            let mut map = LayoutMap::new(
                bvh.skeleton(),
                RotationOrder::ZXY,
                positions,
                PositionChannels::Replace,
            )
            .unwrap();
            let out = map_frames(&bvh, &mut map).unwrap();
            for j in out.skeleton().joints().iter().filter(|j| !j.is_end_site()) {
                let rot: Vec<Channel> =
                    j.channels().iter().copied().filter(|c| c.is_rotation()).collect();
                assert_eq!(
                    rot,
                    [Channel::Zrotation, Channel::Xrotation, Channel::Yrotation],
                    "{name}"
                );
                let n_pos = j.channels().len() - 3;
                match positions {
                    Positions::All => assert_eq!(n_pos, 3),
                    Positions::Root => assert_eq!(n_pos, if j.parent().is_none() { 3 } else { 0 }),
                    _ => {}
                }
            }
            let (dp, dr) = world_difference(&bvh, &fr, &out, &fr, DMat3::IDENTITY);
            assert!(dr <= 1e-9, "{name} {positions:?}: rotations are always kept ({dr})");
            if map.is_lossy() {
                // The reported error is the largest world position difference.
                let e = map.max_position_error();
                assert!(
                    (e - dp).abs() <= 1e-9 * h.max(e),
                    "{name} {positions:?}: reported {e}, reference {dp}"
                );
            } else {
                assert!(dp <= 1e-9 * h, "{name} {positions:?}: {dp}");
                assert_eq!(map.max_position_error(), 0.0);
            }
        }
    }
}

#[test]
fn frame_maps_compose_and_stream_like_whole_clips() {
    // The same transforms through a FrameReader, one frame at a time, give the
    // same bits as on the parsed clip.
    let text = bvhkit_testdata::synth_text(9, 12, 40);
    let bvh = Bvh::parse(&text).unwrap();
    let mut maps: Vec<Box<dyn FrameMap>> = Vec::new();
    let mut skel = bvh.skeleton().clone();
    maps.push(Box::new(ScaleMap::new(&skel, 0.01).unwrap()));
    skel = maps.last().unwrap().output_skeleton().clone();
    maps.push(Box::new(OrderMap::all(&skel, RotationOrder::XYZ)));
    skel = maps.last().unwrap().output_skeleton().clone();
    maps.push(Box::new(AxesMap::new(&skel, Axes::BVH, Axes::with_up(SignedAxis::PosZ))));
    let mut whole = bvh.clone();
    for m in &mut maps {
        whole = map_frames(&whole, m.as_mut()).unwrap();
    }
    // Fresh maps for the stream.
    let mut skel = bvh.skeleton().clone();
    let mut a = ScaleMap::new(&skel, 0.01).unwrap();
    skel = a.output_skeleton().clone();
    let mut b = OrderMap::all(&skel, RotationOrder::XYZ);
    skel = b.output_skeleton().clone();
    let mut c = AxesMap::new(&skel, Axes::BVH, Axes::with_up(SignedAxis::PosZ));
    let mut rdr = ReadOptions::new().frame_reader(text.as_bytes()).unwrap();
    let mut f0 = vec![0.0; rdr.skeleton().n_channels()];
    let (mut f1, mut f2, mut f3) = (f0.clone(), f0.clone(), f0.clone());
    let mut k = 0;
    while rdr.read_frame(&mut f0).unwrap() {
        a.map(&f0, &mut f1);
        b.map(&f1, &mut f2);
        c.map(&f2, &mut f3);
        assert_eq!(bits(&f3), bits(whole.motion().frame(k)));
        k += 1;
    }
    assert_eq!(k, 40);
}

/// Extreme rates and Frame Times are refused with the count they would
/// need and the limit, before anything is allocated (they used to panic
/// with "capacity overflow" or abort asking for terabytes).
#[test]
fn resampling_to_extreme_rates_is_refused_before_allocating() {
    let text = |ft: &str| {
        format!(
            "HIERARCHY ROOT A {{ OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation End Site {{ OFFSET 0 1 0 }} }}
             MOTION Frames: 3 Frame Time: {ft}
             0 0 0 0 0 0
             1 0 0 10 0 0
             2 0 0 20 0 0"
        )
    };
    let bvh = Bvh::parse(text("0.1")).unwrap();
    for (fps, shown) in
        [(1e300, "1e300"), (1e12, "1000000000000"), (f64::MAX, "1.7976931348623157e308")]
    {
        let e = resample::to_fps(&bvh, fps).unwrap_err().to_string();
        assert!(e.contains(&format!("to {shown} fps would make")), "{e}");
        assert!(e.contains("at most 4294967295 frames and 536870912 values"), "{e}");
    }
    // Within the frame limit but not the value limit: 6 channels.
    let e = resample::to_fps(&bvh, 1e9).unwrap_err().to_string();
    assert!(e.contains("would make 2.0000e8 frames (1.2000e9 values)"), "{e}");
    for fps in [f64::INFINITY, f64::NAN, 0.0, -30.0] {
        let e = resample::to_fps(&bvh, fps).unwrap_err().to_string();
        assert!(e.contains("must be finite and positive"), "{e}");
    }
    // A Frame Time of 1e300 in the file: 30 fps is 3e301 frames per frame.
    let slow = Bvh::parse(text("1e300")).unwrap();
    let e = resample::to_fps(&slow, 30.0).unwrap_err().to_string();
    assert!(e.contains("from 1e-300 fps (Frame Time 1e300) to 30 fps would make"), "{e}");
    // The file's own rate in seven significant digits beside its exact Frame
    // Time (1/0.0083333 is 120.00048000192001 in full).
    let odd = Bvh::parse(text("0.0083333")).unwrap();
    let e = resample::to_fps(&odd, 1e12).unwrap_err().to_string();
    assert!(e.contains("from 120.0005 fps (Frame Time 0.0083333) to 1000000000000 fps"), "{e}");
    // 1e-300: downsampling to 30 fps keeps one frame, as it should.
    let fast = Bvh::parse(text("1e-300")).unwrap();
    assert_eq!(resample::to_fps(&fast, 30.0).unwrap().motion().n_frames(), 1);
    // Within the limits it still works, to the last value the limit allows.
    let n = resample::output_frames(bvh.motion(), 1e6).unwrap();
    assert_eq!(n, 200_001);
}
