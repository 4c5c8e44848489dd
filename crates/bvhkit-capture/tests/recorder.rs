//! The data-glove text's own test (two joints, two sensors) for all six
//! rotation orders, plus timing and sample bookkeeping. References are
//! written plainly here: quaternions from half-angle formulas, matrices
//! from their entries.

use std::path::{Path, PathBuf};

use bvhkit_capture::{Config, Recorder, Sample};

const ORDERS: [&str; 6] = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"];

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The fixture skeleton with both joints' channels in `order`, and its
/// config, in a fresh folder (removed when the returned guard is dropped;
/// some tests parse other configs beside the skeleton).
fn setup(order: &str, extra: &str) -> (tempfile::TempDir, Config) {
    // One folder per call: tests run in parallel and must not read each
    // other's half-written files.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let chans: String = order.chars().map(|c| format!("{c}rotation ")).collect();
    let bvh = std::fs::read_to_string(data().join("two_joints.bvh")).unwrap();
    std::fs::write(
        dir.join("two_joints.bvh"),
        bvh.replace("Zrotation Xrotation Yrotation ", &chans)
            .replace("Zrotation Xrotation Yrotation\n", &format!("{}\n", chans.trim_end())),
    )
    .unwrap();
    let toml = std::fs::read_to_string(data().join("two_sensors.toml")).unwrap();
    let config = Config::parse(&format!("{toml}\n{extra}"), dir).unwrap();
    let skel = &config.skeleton;
    for j in ["Parent", "Child"] {
        assert_eq!(skel.joint(skel.find(j).unwrap()).rotation_order().unwrap().name(), order);
    }
    (tmp, config)
}

/// `[w, x, y, z]` of a turn of `deg` degrees about `axis` (unit).
fn axis_angle(axis: [f64; 3], deg: f64) -> [f64; 4] {
    let h = deg.to_radians() / 2.0;
    [h.cos(), h.sin() * axis[0], h.sin() * axis[1], h.sin() * axis[2]]
}

fn unit(letter: char) -> [f64; 3] {
    match letter {
        'X' => [1.0, 0.0, 0.0],
        'Y' => [0.0, 1.0, 0.0],
        _ => [0.0, 0.0, 1.0],
    }
}

/// Hamilton product of `[w, x, y, z]` quaternions.
fn qmul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

type M3 = [[f64; 3]; 3];

fn mmul(a: M3, b: M3) -> M3 {
    let mut m = [[0.0; 3]; 3];
    for (r, row) in m.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[r][k] * b[k][c]).sum();
        }
    }
    m
}

/// The elementary matrix of the rotation convention (right-hand rule).
fn elementary(letter: char, deg: f64) -> M3 {
    let (s, c) = deg.to_radians().sin_cos();
    match letter {
        'X' => [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
        'Y' => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
        _ => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
    }
}

/// The matrix of a `[w, x, y, z]` unit quaternion.
fn qmat(q: [f64; 4]) -> M3 {
    let [w, x, y, z] = q;
    [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
        [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
        [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)],
    ]
}

/// The joint matrix of BVH angles in listing order.
fn euler_matrix(order: &str, angles: &[f64]) -> M3 {
    order
        .chars()
        .zip(angles)
        .fold([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], |m, (l, &a)| {
            mmul(m, elementary(l, a))
        })
}

fn assert_mat_eq(a: M3, b: M3, what: &str) {
    for r in 0..3 {
        for c in 0..3 {
            assert!((a[r][c] - b[r][c]).abs() < 1e-12, "{what}: {a:?} != {b:?}");
        }
    }
}

fn assert_angles(got: &[f64], want: [f64; 3], what: &str) {
    for k in 0..3 {
        assert!((got[k] - want[k]).abs() < 1e-9, "{what}: got {got:?}, want {want:?}");
    }
}

/// One frame from one sample per sensor at t = 0.
fn one_frame(config: &Config, parent: [f64; 4], child: [f64; 4]) -> Vec<f64> {
    let mut rec = Recorder::new(config);
    let mut out = Vec::new();
    assert_eq!(rec.push(&Sample { t: 0.0, sensor: "s-parent", q: parent, p: None }, &mut out), 0);
    // Every sensor has reported: the frame is emitted at once.
    assert_eq!(rec.push(&Sample { t: 0.0, sensor: "s-child", q: child, p: None }, &mut out), 1);
    assert_eq!(rec.finish(&mut out), 0);
    assert_eq!(out.len(), 6);
    let s = rec.stats();
    assert_eq!((s.frames, s.samples, s.dropped(), s.held), (1, 2, 0, 0));
    out
}

const GENERAL: [f64; 4] = [0.8, 0.2, -0.5, 0.26]; // not normalised on purpose

fn normalised(q: [f64; 4]) -> [f64; 4] {
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    q.map(|v| v / n)
}

#[test]
fn parent_turned_alone_with_child_attached_leaves_child_at_zero() {
    for order in ORDERS {
        let (_dir, config) = setup(order, "");
        // A single-axis turn of the parent gives that single angle.
        for (slot, letter) in order.chars().enumerate() {
            let q = axis_angle(unit(letter), 37.0);
            let f = one_frame(&config, q, q);
            let mut want = [0.0; 3];
            want[slot] = 37.0;
            assert_angles(&f[..3], want, &format!("{order} parent about {letter}"));
            assert_angles(&f[3..], [0.0; 3], &format!("{order} child, parent about {letter}"));
        }
        // A general turn: the parent's angles rebuild the sensor's matrix.
        let f = one_frame(&config, GENERAL, GENERAL);
        assert_mat_eq(euler_matrix(order, &f[..3]), qmat(normalised(GENERAL)), order);
        assert_angles(&f[3..], [0.0; 3], &format!("{order} child, general parent turn"));
    }
}

#[test]
fn child_turned_about_each_axis_gives_that_single_angle() {
    for order in ORDERS {
        let (_dir, config) = setup(order, "");
        for (slot, letter) in order.chars().enumerate() {
            for deg in [-75.0, 12.5, 60.0] {
                let f = one_frame(&config, [1.0, 0.0, 0.0, 0.0], axis_angle(unit(letter), deg));
                let mut want = [0.0; 3];
                want[slot] = deg;
                assert_angles(&f[..3], [0.0; 3], &format!("{order} parent, child about {letter}"));
                assert_angles(&f[3..], want, &format!("{order} child about {letter} by {deg}"));
            }
        }
    }
}

#[test]
fn both_turned_together_change_the_parent_and_not_the_child() {
    for order in ORDERS {
        let (_dir, config) = setup(order, "");
        for (slot, letter) in order.chars().enumerate() {
            let local = axis_angle(unit(letter), -40.0);
            let mut want = [0.0; 3];
            want[slot] = -40.0;
            let alone = one_frame(&config, [1.0, 0.0, 0.0, 0.0], local);
            assert_angles(&alone[3..], want, order);
            // The parent turns; the child's sensor turns with it and keeps its bend.
            let parent = normalised(GENERAL);
            let both = one_frame(&config, parent, qmul(parent, local));
            assert_mat_eq(euler_matrix(order, &both[..3]), qmat(parent), order);
            assert_angles(
                &both[3..],
                want,
                &format!("{order} child about {letter} with the parent turned"),
            );
        }
    }
}

#[test]
fn z_up_sensor_frame_turns_heading_about_bvh_y() {
    // East-north-up: a turn about the sensor's Z (up) is a turn about BVH Y.
    let (_dir, config) = setup("ZXY", "");
    let mut text = std::fs::read_to_string(data().join("two_sensors.toml")).unwrap();
    text = text.replace("sensor_frame = \"y-up\"", "sensor_frame = \"z-up\"");
    let dir = config.skeleton_path.parent().unwrap();
    let zup = Config::parse(&text, dir).unwrap();
    let q = axis_angle([0.0, 0.0, 1.0], 30.0);
    let f = one_frame(&zup, q, q);
    assert_angles(&f[..3], [0.0, 0.0, 30.0], "z-up heading");
    // Sensor north (+Y) is BVH -Z: a turn about sensor Y is minus a turn about BVH Z.
    let f = one_frame(&zup, axis_angle([0.0, 1.0, 0.0], 20.0), [1.0, 0.0, 0.0, 0.0]);
    assert_angles(&f[..3], [-20.0, 0.0, 0.0], "z-up north axis");
    // An explicit matrix equal to z-up gives the same.
    let explicit = text
        .replace("sensor_frame = \"z-up\"", "sensor_frame = [[1, 0, 0], [0, 0, 1], [0, -1, 0]]");
    let f2 = one_frame(
        &Config::parse(&explicit, dir).unwrap(),
        axis_angle([0.0, 1.0, 0.0], 20.0),
        [1.0, 0.0, 0.0, 0.0],
    );
    assert_eq!(f, f2);
}

#[test]
fn mounts_calibrate_and_fixed() {
    let (_dir, config) = setup("ZXY", "");
    let dir = config.skeleton_path.parent().unwrap();
    let text = std::fs::read_to_string(data().join("two_sensors.toml")).unwrap();
    let cal =
        Config::parse(&text.replace("mount = \"identity\"", "mount = \"calibrate\""), dir).unwrap();
    let mut rec = Recorder::new(&cal);
    let mut out = Vec::new();
    let q0 = normalised(GENERAL);
    // Frame 0: whatever the sensors read is the rest pose.
    rec.push(&Sample { t: 1.0, sensor: "s-parent", q: q0, p: None }, &mut out);
    rec.push(&Sample { t: 1.0, sensor: "s-child", q: q0, p: None }, &mut out);
    // Frame 1: the parent's sensor turned 25 degrees about world X from there.
    let turned = qmul(axis_angle([1.0, 0.0, 0.0], 25.0), q0);
    assert_eq!(rec.push(&Sample { t: 1.01, sensor: "s-parent", q: turned, p: None }, &mut out), 0);
    assert_eq!(rec.push(&Sample { t: 1.01, sensor: "s-child", q: turned, p: None }, &mut out), 1);
    rec.finish(&mut out);
    assert_angles(&out[..3], [0.0; 3], "calibration frame parent");
    assert_angles(&out[3..6], [0.0; 3], "calibration frame child");
    assert_angles(&out[6..9], [0.0, 25.0, 0.0], "parent after the turn");
    assert_angles(&out[9..12], [0.0; 3], "child after the turn");

    // Fixed: the sensor sits turned 90 degrees about the bone's Y; joint = sensor · mount⁻¹.
    let fixed = text.replacen(
        "mount = \"identity\"",
        "mount = [0.7071067811865476, 0, 0.7071067811865476, 0]",
        1,
    );
    let fixed = Config::parse(&fixed, dir).unwrap();
    let m = axis_angle([0.0, 1.0, 0.0], 90.0);
    let bone = axis_angle([0.0, 0.0, 1.0], 15.0);
    let f = one_frame(&fixed, qmul(bone, m), bone);
    assert_angles(&f[..3], [15.0, 0.0, 0.0], "fixed mount");
    assert_angles(&f[3..], [0.0; 3], "child of fixed-mount parent");
}

fn push_all(rec: &mut Recorder, samples: &[(f64, &str, [f64; 4])]) -> Vec<f64> {
    let mut out = Vec::new();
    for &(t, sensor, q) in samples {
        rec.push(&Sample { t, sensor, q, p: None }, &mut out);
    }
    rec.finish(&mut out);
    out
}

#[test]
fn frames_by_time_with_holds_and_bookkeeping() {
    let (_dir, config) = setup("ZXY", "");
    let id = [1.0, 0.0, 0.0, 0.0];
    let z = |d: f64| axis_angle([0.0, 0.0, 1.0], d);
    let mut rec = Recorder::new(&config);
    let out = push_all(
        &mut rec,
        &[
            (5.000, "s-parent", z(10.0)),
            (5.004, "s-child", z(10.0)),  // rounds to frame 0
            (5.011, "s-parent", z(20.0)), // frame 1; the child misses it
            (5.002, "s-parent", z(99.0)), // frame 0 again: out of order
            (5.010, "glove-9", id),       // unknown sensor
            (5.010, "s-child", [0.0; 4]), // zero quaternion
            (5.010, "s-child", [f64::NAN, 0.0, 0.0, 1.0]),
            (f64::INFINITY, "s-child", id),
            (5.030, "s-child", z(30.0)), // frame 3; frame 2 has no sample at all
            (500.0, "s-child", id),      // far beyond the gap limit
        ],
    );
    let s = rec.stats();
    assert_eq!(out.len(), 4 * 6, "{out:?}");
    assert_eq!(
        (s.frames, s.samples, s.out_of_order, s.unknown_sensor, s.malformed, s.too_far),
        (4, 4, 1, 1, 3, 1)
    );
    // Held sensor-frames: child in frame 1, both in frame 2, parent in frame 3.
    assert_eq!(s.held, 4);
    let parent_z: Vec<f64> = out.chunks(6).map(|f| f[0]).collect();
    let child_z: Vec<f64> = out.chunks(6).map(|f| f[3]).collect();
    for (got, want) in parent_z.iter().zip([10.0, 20.0, 20.0, 20.0]) {
        assert!((got - want).abs() < 1e-9, "parent {parent_z:?}");
    }
    // Child world 10, 10 (held), 10 (held), 30; local = world - parent.
    for (got, want) in child_z.iter().zip([0.0, -10.0, -10.0, 10.0]) {
        assert!((got - want).abs() < 1e-9, "child {child_z:?}");
    }
}

#[test]
fn euler_angles_stay_continuous_across_180() {
    let (_dir, config) = setup("ZXY", "");
    let mut rec = Recorder::new(&config);
    let mut samples = Vec::new();
    for i in 0..40 {
        let q = axis_angle([0.0, 0.0, 1.0], 150.0 + 2.0 * i as f64);
        samples.push((i as f64 / 100.0, "s-parent", q));
        samples.push((i as f64 / 100.0, "s-child", q));
    }
    let out = push_all(&mut rec, &samples);
    let z: Vec<f64> = out.chunks(6).map(|f| f[0]).collect();
    assert_eq!(z.len(), 40);
    for (i, v) in z.iter().enumerate() {
        assert!((v - (150.0 + 2.0 * i as f64)).abs() < 1e-9, "{z:?}");
    }
}

#[test]
fn a_long_pause_is_cut_and_the_recording_resumes() {
    let (_dir, config) = setup("ZXY", "");
    let z = |d: f64| axis_angle([0.0, 0.0, 1.0], d);
    let mut rec = Recorder::new(&config);
    // 100 frames a second: frames 0 and 1, then the device pauses for 60 s
    // (past the 10 s limit) and goes on with both sensors.
    let out = push_all(
        &mut rec,
        &[
            (0.000, "s-parent", z(10.0)),
            (0.000, "s-child", z(10.0)),
            (0.010, "s-parent", z(20.0)),
            (0.010, "s-child", z(20.0)),
            (60.000, "s-parent", z(30.0)), // far ahead: kept, for now
            (60.000, "s-child", z(30.0)),  // every sensor in a row...
            (60.010, "s-parent", z(40.0)), // ...and the source goes on: resume
            (60.010, "s-child", z(40.0)),
        ],
    );
    let s = rec.stats();
    assert_eq!((s.frames, s.samples, s.too_far, s.resumed), (4, 8, 0, 1), "{s:?}");
    let parent_z: Vec<f64> = out.chunks(6).map(|f| f[0]).collect();
    // The resumed frame is the pause's first, with the samples kept for it.
    for (got, want) in parent_z.iter().zip([10.0, 20.0, 30.0, 40.0]) {
        assert!((got - want).abs() < 1e-9, "parent {parent_z:?}");
    }
    // One bad time stamp alone is dropped and changes nothing after it.
    let mut rec = Recorder::new(&config);
    push_all(
        &mut rec,
        &[
            (0.000, "s-parent", z(10.0)),
            (0.000, "s-child", z(10.0)),
            (900.0, "s-parent", z(99.0)),
            (0.010, "s-parent", z(20.0)),
            (0.010, "s-child", z(20.0)),
        ],
    );
    let s = rec.stats();
    assert_eq!((s.frames, s.samples, s.too_far, s.resumed), (2, 4, 1, 0), "{s:?}");
}

/// Every sensor stamped far ahead once, in the middle of a take, is no
/// pause: the samples after it go on from the frame being filled, so the
/// bad ones are dropped and nothing else (this used to cut a "pause" and
/// drop the rest of the take as out of order).
#[test]
fn one_bad_time_stamp_on_every_sensor_does_not_end_the_recording() {
    let (_dir, config) = setup("ZXY", "");
    let z = |d: f64| axis_angle([0.0, 0.0, 1.0], d);
    let mut samples = Vec::new();
    // 30 s at 100 fps, the two sensors of frame 1500 stamped 1e6.
    for i in 0..3000 {
        let t = if i == 1500 { 1e6 } else { i as f64 / 100.0 };
        samples.push((t, "s-parent", z(i as f64 / 100.0)));
        samples.push((t, "s-child", z(i as f64 / 100.0)));
    }
    let mut rec = Recorder::new(&config);
    let out = push_all(&mut rec, &samples);
    let s = rec.stats();
    assert_eq!(
        (s.frames, s.samples, s.too_far, s.out_of_order, s.resumed),
        (3000, 5998, 2, 0, 0),
        "{s:?}"
    );
    assert_eq!(out.len(), 3000 * 6);
    // Frame 1500 held frame 1499's pose; frame 1501 is its own.
    assert!((out[1500 * 6] - 14.99).abs() < 1e-9 && (out[1501 * 6] - 15.01).abs() < 1e-9);
    // A bad stamp at the very end is dropped too (no sample confirms it).
    let mut rec = Recorder::new(&config);
    push_all(
        &mut rec,
        &[(0.0, "s-parent", z(1.0)), (0.0, "s-child", z(1.0)), (1e6, "s-parent", z(2.0))],
    );
    assert_eq!((rec.stats().frames, rec.stats().too_far), (1, 1));
}

/// Gaps are filled with held frames one at a time up to 10 s, and in total
/// up to `EMPTY_PER_SAMPLE_FRAME` per frame with a sample plus
/// `MAX_EMPTY_FRAMES`: 400 samples 9.9 s apart used to make 1.97 million
/// frames.
#[test]
fn held_frames_over_gaps_are_bounded_in_total() {
    let (_dir, config) = setup("ZXY", "");
    let config = Config { frame_rate: 500.0, ..config };
    let z = |d: f64| axis_angle([0.0, 0.0, 1.0], d);
    let samples: Vec<_> = (0..400).map(|i| (i as f64 * 9.9, "s-parent", z(i as f64))).collect();
    let mut rec = Recorder::new(&config);
    let out = push_all(&mut rec, &samples);
    let s = rec.stats();
    assert_eq!(s.samples, 400, "{s:?}");
    let max = 400 * (1 + Recorder::EMPTY_PER_SAMPLE_FRAME) + Recorder::MAX_EMPTY_FRAMES;
    assert!(s.frames <= max && s.frames >= 400 + 2 * 4949, "{s:?}");
    assert!(s.gaps_cut >= 380, "{s:?}");
    assert_eq!(out.len() as u64, s.frames * 6);
    // A sensor at 10 Hz recorded at 500 fps: 49 held frames after each
    // sample, all filled.
    let samples: Vec<_> = (0..2000).map(|i| (i as f64 * 0.1, "s-parent", z(i as f64))).collect();
    let mut rec = Recorder::new(&config);
    push_all(&mut rec, &samples);
    let s = rec.stats();
    assert_eq!((s.frames, s.gaps_cut), (1999 * 50 + 1, 0), "{s:?}");
}

/// A pause after which only some of the sensors go on (the others were
/// switched off) is still cut once as many samples in a row as there are
/// sensors come from the new timeline, over several frames.
#[test]
fn a_pause_after_which_some_sensors_are_off_is_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("four.bvh"),
        "HIERARCHY ROOT J0 { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
         JOINT J1 { OFFSET 0 1 0 CHANNELS 3 Zrotation Xrotation Yrotation
         JOINT J2 { OFFSET 0 1 0 CHANNELS 3 Zrotation Xrotation Yrotation
         JOINT J3 { OFFSET 0 1 0 CHANNELS 3 Zrotation Xrotation Yrotation
         End Site { OFFSET 0 1 0 } } } } }
         MOTION Frames: 0 Frame Time: 0.01",
    )
    .unwrap();
    let mut toml = "skeleton = \"four.bvh\"\nframe_rate = 100\n".to_string();
    for j in 0..4 {
        toml.push_str(&format!("[[bind]]\nsensor = \"s{j}\"\njoint = \"J{j}\"\n"));
    }
    let config = Config::parse(&toml, d).unwrap();
    let z = |deg: f64| axis_angle([0.0, 0.0, 1.0], deg);
    let names = ["s0", "s1", "s2", "s3"];
    let mut samples = Vec::new();
    for i in 0..10 {
        for s in names {
            samples.push((i as f64 / 100.0, s, z(1.0)));
        }
    }
    // 60 s later, only s0 and s1 go on, for 20 frames.
    for i in 0..20 {
        for s in &names[..2] {
            samples.push((60.0 + i as f64 / 100.0, *s, z(2.0)));
        }
    }
    let mut rec = Recorder::new(&config);
    let out = push_all(&mut rec, &samples);
    let s = rec.stats();
    // Two samples at the pause's frame 0, then s0's of frame 1 (dropped:
    // the run is three of four), and s1's of frame 1, the fourth, confirms
    // it: the 20 frames of the new timeline follow the 10 before, one
    // sample short.
    assert_eq!((s.resumed, s.too_far, s.samples), (1, 1, 40 + 39), "{s:?}");
    assert_eq!(s.frames, 10 + 20, "{s:?}");
    assert_eq!(out.len() as u64, s.frames * 12);
}
