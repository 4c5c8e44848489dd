//! `replay` then `record` with `bind_all` on every well-formed corpus file
//! gives back the world positions.

use bvhkit::glam::DVec3;
use bvhkit::{Bvh, Kinematics, PositionChannels};
use bvhkit_capture::{Config, LineReader, Reading, Recorder, Stats, replay_csv};

#[test]
fn replay_then_record_gives_back_world_positions_on_the_corpus() {
    if bvhkit_testdata::corpus_or_skip(
        "replay_then_record_gives_back_world_positions_on_the_corpus",
    )
    .is_none()
    {
        return;
    }
    let mut checked = 0;
    for path in bvhkit_testdata::corpus_files() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("malformed_") {
            continue;
        }
        let Ok(bvh) = Bvh::from_path(&path) else { continue };
        let motion = bvh.motion();
        if motion.n_frames() == 0 {
            continue;
        }
        let config = Config::bind_all(bvh.skeleton().clone(), path.clone(), motion.fps());
        let mut csv = Vec::new();
        replay_csv(&bvh, &config, &mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();

        let (frames, stats) = record(&config, &csv);
        assert_eq!(stats.dropped(), 0, "{name}: {stats:?}");
        assert_eq!(frames.len(), motion.values().len(), "{name}: frame count");

        let fk = Kinematics::new(bvh.skeleton(), PositionChannels::Replace);
        // Height: the largest extent of the rest pose (all channels zero), or 1.
        let mut a = vec![DVec3::ZERO; fk.len()];
        fk.positions(&vec![0.0; motion.n_channels()], &mut a);
        let (lo, hi) = a
            .iter()
            .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(l, h), p| (l.min(*p), h.max(*p)));
        let height = (hi - lo).max_element().max(1.0);
        let worst = worst_position_error(&bvh, &frames);
        assert!(worst <= 1e-6 * height, "{name}: worst position error {worst} (height {height})");
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} corpus files checked");
}

#[test]
fn replay_then_record_with_z_up_fixed_mount_and_root_position_sensor() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("clip.bvh"), bvhkit_testdata::synth_text(11, 9, 30)).unwrap();
    let bvh = Bvh::from_path(dir.join("clip.bvh")).unwrap();
    let skel = bvh.skeleton();
    let root = skel.joint(skel.roots().next().unwrap()).name().to_string();
    let second = skel.joint(skel.ids().nth(1).unwrap()).name().to_string();
    let text = format!(
        "skeleton = \"clip.bvh\"\nframe_rate = {}\nsensor_frame = \"z-up\"\nbind_all = true\n\
         [[bind]]\nsensor = \"pelvis-imu\"\njoint = \"{root}\"\nmount = [0.5, 0.5, 0.5, 0.5]\n\
         [[bind]]\nsensor = \"imu-2\"\njoint = \"{second}\"\nmount = [0.9238795325112867, 0, 0, 0.3826834323650898]\n\
         [root_position]\nsensor = \"tracker\"\nscale = 0.01\n",
        bvh.motion().fps()
    );
    let config = Config::parse(&text, dir).unwrap();
    let mut csv = Vec::new();
    replay_csv(&bvh, &config, &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    // The tracker, bound to no joint, gets its own line: identity orientation, the root's position.
    let tracker = csv.lines().find(|l| l.contains(",tracker,")).unwrap();
    assert!(tracker.starts_with("0,tracker,1,0,0,0,"), "{tracker}");
    let (frames, stats) = record(&config, &csv);
    assert_eq!(stats.dropped(), 0);
    assert_eq!(frames.len(), bvh.motion().values().len());
    let worst = worst_position_error(&bvh, &frames);
    assert!(worst < 1e-6, "worst position error {worst}");
    // Recording the same samples without the mounts puts the figure elsewhere:
    // the mounts are not no-ops.
    let plain =
        Config::parse(&text.replace("mount = [0.5, 0.5, 0.5, 0.5]", "mount = \"identity\""), dir)
            .unwrap();
    let (other, _) = record(&plain, &csv);
    let fk = Kinematics::new(skel, PositionChannels::Replace);
    let (mut a, mut b) = (vec![DVec3::ZERO; fk.len()], vec![DVec3::ZERO; fk.len()]);
    fk.positions(&frames[..bvh.motion().n_channels()], &mut a);
    fk.positions(&other[..bvh.motion().n_channels()], &mut b);
    assert!(a.iter().zip(&b).any(|(p, q)| (*p - *q).length() > 1e-3));
}

/// Records the sample lines of `csv` with `config`: every frame's channel
/// values, one after another, and the recorder's counts.
fn record(config: &Config, csv: &str) -> (Vec<f64>, Stats) {
    let mut rec = Recorder::new(config);
    let mut reader = LineReader::new();
    let mut reading = Reading::default();
    let mut frames = Vec::new();
    for line in csv.lines() {
        if reader.read(line, &mut reading).unwrap() {
            rec.push(&reading.sample(), &mut frames);
        }
    }
    rec.finish(&mut frames);
    (frames, rec.stats())
}

/// The largest distance between a joint of `bvh`'s frames and the same
/// joint of the recorded `frames` (same channel layout), by the core's FK.
fn worst_position_error(bvh: &Bvh, frames: &[f64]) -> f64 {
    let motion = bvh.motion();
    let fk = Kinematics::new(bvh.skeleton(), PositionChannels::Replace);
    let (mut a, mut b) = (vec![DVec3::ZERO; fk.len()], vec![DVec3::ZERO; fk.len()]);
    let mut worst: f64 = 0.0;
    for (orig, got) in motion.frames().zip(frames.chunks(motion.n_channels())) {
        fk.positions(orig, &mut a);
        fk.positions(got, &mut b);
        for (p, q) in a.iter().zip(&b) {
            worst = worst.max((*p - *q).length());
        }
    }
    worst
}

/// The quality oracle on `record`: a take recorded from a clip's replayed
/// sensor samples lints as its source (the same feet, ground, skating,
/// pops, spikes and wraps) and `diff` puts it within 1e-6 of the figure.
#[test]
fn recorded_takes_lint_as_their_source() {
    use bvhkit::quality::{self, DiffOptions, Options};
    let test = "recorded_takes_lint_as_their_source";
    let mut checked = 0;
    for name in [
        "cmu_12_01_walk_cgspeed_pybvh.bvh",
        "pymo_demo_av_8walk_meredith.bvh",
        "rokoko_jesse_dance_yxz_fingers.bvh",
        "perception_neuron_axis_yxz_fingers_crlf.bvh",
    ] {
        let Some(path) = bvhkit_testdata::corpus_file_or_skip(test, name) else { return };
        let bvh = Bvh::from_path(&path).unwrap();
        let motion = bvh.motion();
        let config = Config::bind_all(bvh.skeleton().clone(), path.clone(), motion.fps());
        let mut csv = Vec::new();
        replay_csv(&bvh, &config, &mut csv).unwrap();
        let (frames, _) = record(&config, &String::from_utf8(csv).unwrap());
        let take = Bvh::new(
            bvh.skeleton().clone(),
            bvhkit::Motion::new(motion.frame_time(), motion.n_channels(), frames).unwrap(),
        )
        .unwrap();
        let (a, b) =
            (quality::lint(&bvh, &Options::default()), quality::lint(&take, &Options::default()));
        assert_eq!(a.units, b.units, "{name}");
        assert!((a.ground - b.ground).abs() <= 1e-6, "{name}: ground {} -> {}", a.ground, b.ground);
        assert_eq!(a.metrics.pops, b.metrics.pops, "{name}");
        assert_eq!(a.metrics.far_joints, b.metrics.far_joints, "{name}");
        assert!(
            b.metrics.spikes <= a.metrics.spikes + 2,
            "{name}: spikes {} -> {}",
            a.metrics.spikes,
            b.metrics.spikes
        );
        let (sa, sb) = (a.metrics.skate_ratio.unwrap(), b.metrics.skate_ratio.unwrap());
        assert!((sa - sb).abs() <= 0.01, "{name}: skate_ratio {sa} -> {sb}");
        let d = quality::diff(&bvh, &take, &DiffOptions::default()).unwrap();
        assert!(d.mpjpe <= 1e-6 * a.size, "{name}: MPJPE {} m", d.mpjpe);
        checked += 1;
    }
    assert_eq!(checked, 4);
}
