//! `replay` then `record` with `bind_all` on every well-formed corpus file
//! gives back the world positions.

use bvhkit::glam::DVec3;
use bvhkit::{Bvh, Kinematics, PositionChannels};
use bvhkit_capture::{Config, LineReader, Reading, Recorder, replay_csv};

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

        let mut rec = Recorder::new(&config);
        let mut reader = LineReader::new();
        let mut reading = Reading::default();
        let mut frames = Vec::new();
        for line in csv.lines() {
            if reader.read(line, &mut reading).unwrap() {
                rec.push(&reading.sample(), &mut frames);
            }
        }
        rec.finish(&mut frames);
        let stats = rec.stats();
        assert_eq!(stats.dropped(), 0, "{name}: {stats:?}");
        assert_eq!(frames.len(), motion.values().len(), "{name}: frame count");

        let fk = Kinematics::new(bvh.skeleton(), PositionChannels::Replace);
        let n = fk.len();
        let (mut a, mut b) = (vec![DVec3::ZERO; n], vec![DVec3::ZERO; n]);
        // Height: the largest extent of the rest pose (all channels zero), or 1.
        fk.positions(&vec![0.0; motion.n_channels()], &mut a);
        let (lo, hi) = a
            .iter()
            .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(l, h), p| (l.min(*p), h.max(*p)));
        let height = (hi - lo).max_element().max(1.0);
        let mut worst: f64 = 0.0;
        for (orig, got) in motion.frames().zip(frames.chunks(motion.n_channels())) {
            fk.positions(orig, &mut a);
            fk.positions(got, &mut b);
            for (p, q) in a.iter().zip(&b) {
                worst = worst.max((*p - *q).length());
            }
        }
        assert!(worst <= 1e-6 * height, "{name}: worst position error {worst} (height {height})");
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} corpus files checked");
}
