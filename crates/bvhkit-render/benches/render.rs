//! Rendering throughput: a synthetic 1000-frame, 26-joint walk to a
//! 320x240 GIF, reported in frames per second.

#[path = "../tests/common/walker.rs"]
mod walker;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use bvhkit_render::raster::{AnimationOptions, RenderOptions, render_gif, render_png};

fn gif_1000_frames(c: &mut Criterion) {
    let clip = walker::walker("walk", 1000, 0.0);
    let opts = RenderOptions { width: 320, height: 240, ..RenderOptions::default() };
    let anim = AnimationOptions::default();
    let mut group = c.benchmark_group("render");
    group.sample_size(10);
    group.throughput(Throughput::Elements(1000));
    group.bench_function("gif_1000_frames_320x240", |b| {
        b.iter(|| render_gif(&[&clip], &opts, &anim).unwrap());
    });
    group.throughput(Throughput::Elements(1));
    group.bench_function("png_1_frame_320x240", |b| {
        b.iter(|| render_png(&[&clip], 500, &opts).unwrap());
    });
    group.finish();
}

criterion_group!(benches, gif_1000_frames);
criterion_main!(benches);
