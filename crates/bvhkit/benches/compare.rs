//! bvhkit against the `bvh_anim` crate on the same inputs (MB/s of text).
//!
//! `cargo bench -p bvhkit --bench compare`. A file `bvh_anim` cannot parse
//! is skipped for it with a printed note.

#[allow(dead_code)]
mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn compare(c: &mut Criterion) {
    for input in common::all_inputs(3) {
        let mut g = c.benchmark_group(format!("compare/{}", input.name));
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
        match bvh_anim::from_bytes(&input.bytes) {
            Ok(parsed) => {
                drop(parsed);
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

criterion_group!(benches, compare);
criterion_main!(benches);
