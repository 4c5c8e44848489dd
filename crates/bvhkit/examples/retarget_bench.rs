//! A retarget over one clip, or forward kinematics over it (the
//! yardstick), for whole-process timings in paired runs
//! (`docs/performance.md`).
//!
//! ```text
//! cargo run --release -p bvhkit --example retarget_bench -- retarget SRC.bvh TARGET.bvh [PASSES]
//! cargo run --release -p bvhkit --example retarget_bench -- lock SRC.bvh TARGET.bvh [OUT.bvh]
//! cargo run --release -p bvhkit --example retarget_bench -- fk SRC.bvh
//! ```
//!
//! `retarget` maps every frame with `Retarget::map_frame` into one reused
//! output frame (the streamed default of `bvh retarget`, less the text;
//! PASSES times, for a profile); `lock` makes the whole output with
//! `retarget()` and `Options::lock_feet` (the feet planted and lifted in the
//! swing: the output held whole; written to OUT.bvh when given, inside
//! the timed step: leave it out to time); `fk` the world positions of every joint
//! of every frame of SRC. Each parses its files first and prints the
//! joint-frames (target joints for a retarget) and the wall and CPU seconds
//! of the step alone (the target's parse included in a retarget's; Linux).

use std::time::Instant;

/// This process's CPU seconds (every thread), Linux.
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to write.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

use bvhkit::retarget::{Options, Retarget, retarget};
use bvhkit::{Kinematics, PositionChannels, ReadOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let read = |p: &str| ReadOptions::new().lenient(true).read_path(p.as_ref()).map(|r| r.0);
    let usage = "usage: retarget_bench retarget|lock SRC.bvh TARGET.bvh | fk SRC.bvh";
    let mode = args.get(1).ok_or(usage)?.as_str();
    let src = read(args.get(2).ok_or(usage)?)?;
    let n = src.motion().n_frames();
    let cpu0 = cpu_seconds();
    let (joint_frames, secs, check) = match mode {
        "retarget" | "lock" => {
            let tgt = read(args.get(3).ok_or(usage)?)?;
            let jf = tgt.skeleton().len() * n;
            let start = Instant::now();
            let check = if mode == "lock" {
                let opts = Options { lock_feet: true, ..Options::default() };
                let (out, report) = retarget(&src, &tgt, &opts)?;
                for note in report.locked.iter().flat_map(|l| &l.notes) {
                    eprintln!("note: {note}");
                }
                if let Some(path) = args.get(4) {
                    out.write(std::fs::File::create(path)?)?;
                }
                out.motion().values().iter().sum::<f64>()
            } else {
                let map = Retarget::new(&src, &tgt, &Options::default())?;
                let set_up = cpu_seconds() - cpu0;
                eprintln!(
                    "set-up (Retarget::new): {:.3} s, {set_up:.3} CPU s",
                    start.elapsed().as_secs_f64()
                );
                let mut frame = vec![0.0; tgt.skeleton().n_channels()];
                let mut sum = 0.0;
                // Passes over the clip (for profiles), each from a fresh
                // copy of the set-up.
                let passes: usize = args.get(4).map_or(Ok(1), |p| p.parse())?;
                for _ in 0..passes {
                    let mut map = map.clone();
                    for input in src.motion().frames() {
                        map.map_frame(input, &mut frame);
                        sum += frame[0];
                    }
                }
                let jf = jf * passes;
                let frames = cpu_seconds() - cpu0 - set_up;
                eprintln!(
                    "map_frame alone: {frames:.3} CPU s ({:.2} M joint-frames per CPU second)",
                    jf as f64 / frames / 1e6
                );
                sum
            };
            (jf, start.elapsed().as_secs_f64(), check)
        }
        "fk" => {
            let start = Instant::now();
            let fk = Kinematics::new(src.skeleton(), PositionChannels::Replace);
            let check = fk.positions_all(src.motion()).iter().map(|p| p.x).sum::<f64>();
            (src.skeleton().len() * n, start.elapsed().as_secs_f64(), check)
        }
        _ => return Err(usage.into()),
    };
    let cpu = cpu_seconds() - cpu0;
    println!(
        "{mode}: {joint_frames} joint-frames in {secs:.3} s, {cpu:.3} CPU s ({:.2} M joint-frames/s, \
         {:.2} M per CPU second; check {check:.3e})",
        joint_frames as f64 / secs / 1e6,
        joint_frames as f64 / cpu / 1e6
    );
    Ok(())
}
