//! One table of the headline figures, best of N runs each (robust on a
//! shared machine where Criterion's means swing with the load).
//!
//! `cargo bench -p bvhkit --bench summary` (`-- 20` for 20 runs each,
//! `-- fk` or `-- parse` for one table;
//! `BVHKIT_BENCH_MB`, `BVHKIT_FK_FRAMES` as for the other benches). Prints
//! Markdown: parse MB/s on one core and all cores against the
//! whitespace-split + `fast_float2` baseline, streaming, writing and
//! `bvh_anim`; then FK joint transforms/s against the `sin_cos` floor.

#[allow(dead_code)]
mod common;

use std::hint::black_box;
use std::time::Instant;

use bvhkit::glam::DVec3;
use bvhkit::{Bvh, Kinematics, PositionChannels};

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        black_box(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

fn parse_table(runs: usize) {
    println!(
        "| input | MB | 1 core MB/s | all cores MB/s | baseline MB/s | 1 core / baseline | all / baseline | stream MB/s | stream / 1 core | write 1 thread MB/s | write 2 threads MB/s | bvh_anim MB/s |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let pools = [1, 2]
        .map(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().expect("thread pool"));
    for input in common::all_inputs(3) {
        let bytes = &input.bytes[..];
        let mb = bytes.len() as f64 / 1e6;
        let runs = if mb > 20.0 { runs.min(10) } else { runs };
        let (one, all) = (input.options(false), input.options(true));
        let bvh = input.parse();
        let out_mb = bvh.to_bytes().expect("finite").len() as f64 / 1e6;
        // Interleaved, so that a slow spell of the machine hits all of them.
        let mut t = [f64::INFINITY; 6];
        for _ in 0..runs {
            t[0] = t[0].min(best_of(1, || one.parse(bytes).map(|(b, _)| b)));
            t[1] = t[1].min(best_of(1, || all.parse(bytes).map(|(b, _)| b)));
            t[2] = t[2].min(best_of(1, || bvhkit_testdata::split_floor(bytes)));
            t[3] = t[3].min(best_of(1, || common::stream_all(&one, bytes)));
            for (k, pool) in pools.iter().enumerate() {
                t[4 + k] = t[4 + k].min(best_of(1, || pool.install(|| bvh.write(std::io::sink()))));
            }
        }
        let [t1, ta, tb, ts, tw1, tw2] = t;
        let anim = match bvh_anim::from_bytes(bytes) {
            Ok(_) => {
                let t = best_of(runs, || bvh_anim::from_bytes(bytes).map(|b| b.num_frames()));
                format!("{:.0}", mb / t)
            }
            Err(_) => "fails".to_string(),
        };
        println!(
            "| {}{} | {mb:.1} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} | {:.0} | {:.2} | {:.0} | {:.0} | {anim} |",
            input.name,
            if input.lenient { " (lenient)" } else { "" },
            mb / t1,
            mb / ta,
            mb / tb,
            tb / t1,
            tb / ta,
            mb / ts,
            t1 / ts,
            out_mb / tw1,
            out_mb / tw2,
        );
    }
}

fn fk_table(runs: usize) {
    let mut cases: Vec<(String, Bvh)> = Vec::new();
    if let Some(input) = common::corpus_inputs(1).pop() {
        cases.push((input.name.clone(), input.parse()));
    }
    let frames = common::fk_frames();
    cases.push((format!("synth 100 joints x {frames}"), common::synth_fk(100, frames)));
    println!();
    println!(
        "| input | joints x frames | serial M/s | all cores M/s | kernel (reused buffers) M/s | floor: std sin_cos M/s | serial / std floor | floor: sin_cos_deg M/s | serial / that floor |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for (name, bvh) in &cases {
        let (skel, m) = (bvh.skeleton(), bvh.motion());
        let joints = skel.len();
        let n = (m.n_frames() * joints) as f64 / 1e6;
        let fk = Kinematics::new(skel, PositionChannels::Replace);
        let runs = runs.min(7);
        let ts = best_of(runs, || fk.positions_all_serial(m));
        let ta = best_of(runs, || fk.positions_all(m));
        let (mut scratch, mut out) = (fk.scratch(), vec![DVec3::ZERO; joints]);
        let tk = best_of(runs, || {
            for frame in m.frames() {
                fk.positions_with(frame, &mut scratch, &mut out);
            }
            out[joints - 1]
        });
        let idx = common::floor_indices(m, joints);
        let tf = best_of(runs, || common::fk_floor(m, &idx, common::std_sin_cos_deg));
        // The same three angles per joint through bvhkit's own degree kernel.
        let td = best_of(runs, || common::fk_floor(m, &idx, bvhkit::rotation::sin_cos_deg));
        println!(
            "| {name} | {joints} x {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {:.1} | {:.2} |",
            m.n_frames(),
            n / ts,
            n / ta,
            n / tk,
            n / tf,
            tf / ts,
            n / td,
            td / ts
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a bare number is the run count.
    let runs = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10);
    // `-- parse` or `-- fk` runs one table only.
    let only = |t: &str| {
        !std::env::args().any(|a| a == "parse" || a == "fk") || std::env::args().any(|a| a == t)
    };
    println!("best of {runs} runs (at most 10 for inputs over 20 MB, 7 for FK)\n");
    if only("parse") {
        parse_table(runs);
    }
    if only("fk") {
        fk_table(runs);
    }
}
