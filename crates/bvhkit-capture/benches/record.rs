//! Sensor samples per second into BVH frames, beside forward kinematics on
//! the same frames in the same run.
//!
//! `cargo bench -p bvhkit-capture --bench record`. Inputs: the corpus's
//! Perception Neuron clip (72 joints) when the corpus is there, and a
//! synthetic 72-joint clip of 1,000 frames; each replayed as sensor samples
//! (`replay_csv`, every joint a sensor, positions on every line). Benches:
//! - `csv_to_frames`: CSV text through `LineReader` and `Recorder` (what
//!   `bvh record` does per line, minus writing);
//! - `parsed_to_frames`: the same samples already parsed, `Recorder` alone;
//! - `fk_positions`: `Kinematics::positions_with` on the recorded frames,
//!   the FK baseline (one joint position per sample's worth of work).
//!
//! Throughput is in samples (or joint positions for FK) per second, one thread.

use std::hint::black_box;
use std::time::Duration;

use bvhkit::glam::DVec3;
use bvhkit::{Bvh, Kinematics, PositionChannels};
use bvhkit_capture::{Config, LineReader, Reading, Recorder, replay_csv};
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};

fn record_csv(config: &Config, csv: &str, out: &mut Vec<f64>) -> u64 {
    out.clear();
    let mut rec = Recorder::new(config);
    let mut lines = LineReader::new();
    let mut reading = Reading::default();
    for line in csv.lines() {
        if lines.read(line, &mut reading).unwrap() {
            rec.push(&reading.sample(), out);
        }
    }
    rec.finish(out);
    rec.stats().frames
}

fn bench(c: &mut Criterion, name: &str, bvh: &Bvh) {
    let motion = bvh.motion();
    let config = Config::bind_all(bvh.skeleton().clone(), "clip.bvh".into(), motion.fps());
    let mut csv = Vec::new();
    let samples = replay_csv(bvh, &config, &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let mut frames = Vec::new();
    assert_eq!(record_csv(&config, &csv, &mut frames) as usize, motion.n_frames());
    let mut lines = LineReader::new();
    let mut parsed = Vec::new();
    for line in csv.lines() {
        let mut r = Reading::default();
        if lines.read(line, &mut r).unwrap() {
            parsed.push(r);
        }
    }
    let fk = Kinematics::new(bvh.skeleton(), PositionChannels::Replace);
    eprintln!(
        "record/{name}: {} sensors x {} frames = {samples} samples ({} MB of CSV); FK {} joints",
        config.bindings.len(),
        motion.n_frames(),
        csv.len() / 1_000_000,
        fk.len()
    );

    let mut g = c.benchmark_group(format!("record/{name}"));
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(samples));
    let mut out = Vec::with_capacity(frames.len());
    g.bench_function("csv_to_frames", |b| {
        b.iter(|| record_csv(&config, black_box(&csv), &mut out))
    });
    g.bench_function("parsed_to_frames", |b| {
        b.iter(|| {
            out.clear();
            let mut rec = Recorder::new(&config);
            for r in black_box(&parsed) {
                rec.push(&r.sample(), &mut out);
            }
            rec.finish(&mut out);
        })
    });
    g.throughput(Throughput::Elements((motion.n_frames() * fk.len()) as u64));
    let mut scratch = fk.scratch();
    let mut pos = vec![DVec3::ZERO; fk.len()];
    g.bench_function("fk_positions", |b| {
        b.iter(|| {
            for f in black_box(&frames).chunks(motion.n_channels()) {
                fk.positions_with(f, &mut scratch, &mut pos);
            }
            pos[0]
        })
    });
    g.finish();
}

fn record(c: &mut Criterion) {
    let corpus = bvhkit_testdata::corpus_files()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("perception_neuron"));
    match corpus {
        Some(p) => bench(c, "perception_neuron", &Bvh::from_path(&p).unwrap()),
        None => bvhkit_testdata::skip("record bench (corpus clip)", "no corpus"),
    }
    let synth = Bvh::parse(bvhkit_testdata::synth_text(3, 72, 1000)).unwrap();
    bench(c, "synth_72j_1000f", &synth);
}

criterion_group!(benches, record);
criterion_main!(benches);
