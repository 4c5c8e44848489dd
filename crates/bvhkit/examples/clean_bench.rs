//! Smoothing plus foot locking over one clip, or forward kinematics over it
//! (the yardstick), for whole-process timings in paired runs
//! (`docs/performance.md`).
//!
//! ```text
//! cargo run --release -p bvhkit --example clean_bench -- clean FILE.bvh
//! cargo run --release -p bvhkit --example clean_bench -- fk FILE.bvh
//! ```
//!
//! `clean` runs `bvh clean --butterworth 6 --lock-feet` (no output file),
//! `smooth` and `lock` each step alone, `fk` the world positions of every joint of every frame. Both parse the
//! file first and print the joint-frames and the seconds of the step alone.

use std::time::Instant;

use bvhkit::clean::{self, Butterworth, Options};
use bvhkit::{Kinematics, PositionChannels, ReadOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (mode, path) = match args.as_slice() {
        [_, mode, path] => (mode.as_str(), path.as_str()),
        _ => return Err("usage: clean_bench clean|smooth|lock|fk FILE.bvh".into()),
    };
    let bvh = ReadOptions::new().lenient(true).read_path(path.as_ref())?.0;
    let joint_frames = bvh.skeleton().len() * bvh.motion().n_frames();
    let start = Instant::now();
    let check = match mode {
        "clean" | "smooth" | "lock" => {
            let opts = Options {
                butterworth: (mode != "lock").then_some(Butterworth { cutoff_hz: 6.0, order: 4 }),
                lock_feet: mode != "smooth",
                ..Options::default()
            };
            let (out, report) = clean::clean(&bvh, &opts)?;
            eprintln!("{report}");
            out.motion().values().iter().sum::<f64>()
        }
        "fk" => {
            let fk = Kinematics::new(bvh.skeleton(), PositionChannels::Replace);
            fk.positions_all(bvh.motion()).iter().map(|p| p.x).sum::<f64>()
        }
        _ => return Err(format!("unknown mode {mode:?}").into()),
    };
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{mode}: {joint_frames} joint-frames in {secs:.3} s ({:.2} M joint-frames/s; check {check:.3e})",
        joint_frames as f64 / secs / 1e6
    );
    Ok(())
}
