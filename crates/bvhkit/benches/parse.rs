//! Parse, stream and write throughput (MB/s of BVH text), with the
//! whitespace-split + `fast-float2` baseline and the `bvh_anim` crate
//! measured in the same groups.
//!
//! `cargo bench -p bvhkit --bench parse`; `BVHKIT_BENCH_MB=10` for a smaller
//! synthetic input. Inputs: the three largest files of the shared corpus
//! (skipped with a message when it is absent) and a synthetic text.

#[allow(dead_code)]
mod common;

use std::hint::black_box;

use bvhkit::Bvh;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn parse(c: &mut Criterion) {
    for input in common::all_inputs(3) {
        let mut g = c.benchmark_group(format!("parse/{}", input.name));
        common::configure(&mut g);
        g.throughput(Throughput::Bytes(input.bytes.len() as u64));
        let single = input.options(false);
        g.bench_function("bvhkit_1core", |b| {
            b.iter(|| single.parse(black_box(&input.bytes)).map(|(bvh, _)| bvh))
        });
        let all = input.options(true);
        g.bench_function("bvhkit_all_cores", |b| {
            b.iter(|| all.parse(black_box(&input.bytes)).map(|(bvh, _)| bvh))
        });
        g.bench_function("baseline_split_fast_float2", |b| {
            b.iter(|| bvhkit_testdata::split_floor(black_box(&input.bytes)))
        });
        // The comparison: the bvh_anim crate on the same bytes.
        match bvh_anim::from_bytes(&input.bytes) {
            Ok(_) => {
                g.bench_function("bvh_anim", |b| {
                    b.iter(|| {
                        bvh_anim::from_bytes(black_box(&input.bytes[..])).map(|b| b.num_frames())
                    })
                });
            }
            Err(e) => eprintln!("note: bvh_anim cannot parse {} ({e}); skipped for it", input.name),
        }
        g.finish();
    }
}

fn stream(c: &mut Criterion) {
    for input in common::all_inputs(3) {
        let mut g = c.benchmark_group(format!("stream/{}", input.name));
        common::configure(&mut g);
        g.throughput(Throughput::Bytes(input.bytes.len() as u64));
        let opts = input.options(false);
        g.bench_function("frame_reader", |b| {
            b.iter(|| common::stream_all(&opts, black_box(&input.bytes)))
        });
        // The target: the in-memory parse on one core, in the same run.
        g.bench_function("parse_1core", |b| {
            b.iter(|| opts.parse(black_box(&input.bytes)).map(|(bvh, _)| bvh))
        });
        g.finish();
    }
}

fn write(c: &mut Criterion) {
    for input in common::all_inputs(3) {
        let bvh: Bvh = input.parse();
        let out_len = bvh.to_bytes().expect("finite values").len();
        let mut g = c.benchmark_group(format!("write/{}", input.name));
        common::configure(&mut g);
        g.throughput(Throughput::Bytes(out_len as u64));
        // Written on pools of one and two threads (the bytes are the same).
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            g.bench_function(format!("write_canonical_{threads}thread"), |b| {
                b.iter(|| pool.install(|| black_box(&bvh).write(std::io::sink()).expect("write")))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, parse, stream, write);
criterion_main!(benches);
