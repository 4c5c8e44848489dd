//! Retarget throughput in joint-frames per second (one element = one target
//! joint, End Sites included, in one frame), beside forward kinematics of
//! the result (the same joints and frames) measured in the same run.
//!
//! `cargo bench -p bvhkit --bench retarget`. Inputs: corpus clips onto
//! other corpus skeletons (a CMU walk onto Bandai Namco, Rokoko and Kinect v1,
//! Perception Neuron onto CMU).

#[allow(dead_code)]
mod common;

use std::hint::black_box;

use bvhkit::retarget::{Options, Retarget, retarget};
use bvhkit::{Bvh, ReadOptions};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn read(dir: &std::path::Path, name: &str) -> Bvh {
    let bytes = std::fs::read(dir.join(format!("{name}.bvh"))).expect("corpus file");
    ReadOptions::new().lenient(true).parse(&bytes).expect("parse").0
}

fn bench(c: &mut Criterion, name: &str, source: &Bvh, target: &Bvh) {
    let r = Retarget::new(source, target, &Options::default()).expect("retarget");
    let joints = target.skeleton().len();
    let frames = source.motion().n_frames();
    eprintln!(
        "retarget/{name}: {joints} target joints x {frames} frames, {} pairs",
        r.report().pairs.len()
    );
    let mut g = c.benchmark_group(format!("retarget/{name}"));
    common::configure(&mut g);
    g.throughput(Throughput::Elements((frames * joints) as u64));
    // The kernel: one reused output frame, no allocation.
    let mut out = vec![0.0; target.skeleton().n_channels()];
    let mut map = r.clone();
    g.bench_function("retarget_map_frame", |b| {
        b.iter(|| {
            let mut acc = 0.0;
            for frame in black_box(source.motion()).frames() {
                map.map_frame(frame, &mut out);
                acc += out[0];
            }
            acc
        })
    });
    let (result, _) = retarget(source, target, &Options::default()).expect("retarget");
    common::bench_fk(&mut g, result.skeleton(), result.motion());
    g.finish();
}

fn retarget_benches(c: &mut Criterion) {
    let Some(dir) = bvhkit_testdata::corpus_dir() else {
        eprintln!(
            "skipped: retarget benches (no shared corpus at ../shared/corpus; set BVHKIT_CORPUS)"
        );
        return;
    };
    let cmu = read(&dir, "cmu_01_01_walk_cgspeed_mb_names");
    let bandai = read(&dir, "bandai_namco_ds1_kick_6ch_every_joint");
    let rokoko = read(&dir, "rokoko_jesse_dance_yxz_fingers");
    let neuron = read(&dir, "perception_neuron_axis_yxz_fingers_crlf");
    bench(c, "cmu_walk_onto_bandai_namco", &cmu, &bandai);
    bench(c, "cmu_walk_onto_rokoko", &cmu, &rokoko);
    bench(c, "perception_neuron_onto_cmu", &neuron, &cmu);
    // The shoulder line from the joint carrying the arms and the spine
    // bent for the head (no clavicles in the target).
    let kinect = read(&dir, "kinect_v1_custom_writer_nonzero_root_offset");
    bench(c, "cmu_walk_onto_kinect_v1", &cmu, &kinect);
}

criterion_group!(benches, retarget_benches);
criterion_main!(benches);
